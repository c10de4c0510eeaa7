// Package memstore keeps sessions in process memory: for demos and tests
// without Postgres. Nothing survives a restart.
package memstore

import (
	"context"
	"sort"
	"sync"

	"github.com/slotd/slotd/session"
)

// Store is an in-memory session.Store.
type Store struct {
	mu       sync.Mutex // guards the maps below, not the conversations
	convs    map[session.Key]*conversation
	sessions map[string]*session.Session
	turns    map[string][]session.TurnRecord
	changes  map[string][]session.ChangeRecord
}

type conversation struct {
	lock   chan struct{} // one writer per conversation: holding it is a token in the channel
	active string
	turns  map[string]storedTurn // by turn_id
}

type storedTurn struct {
	sessionID string
	response  []byte
}

// New returns an empty store.
func New() *Store {
	return &Store{
		convs:    map[session.Key]*conversation{},
		sessions: map[string]*session.Session{},
		turns:    map[string][]session.TurnRecord{},
		changes:  map[string][]session.ChangeRecord{},
	}
}

var _ session.Store = (*Store)(nil)

func (st *Store) conversation(key session.Key) *conversation {
	st.mu.Lock()
	defer st.mu.Unlock()
	c := st.convs[key]
	if c == nil {
		c = &conversation{turns: map[string]storedTurn{}, lock: make(chan struct{}, 1)}
		st.convs[key] = c
	}
	return c
}

// lockConversation waits for the conversation's lock or the context.
func lockConversation(ctx context.Context, c *conversation) error {
	select {
	case c.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return session.ErrBusy
	}
}

// tryLock takes the conversation's lock if it is free, like SKIP LOCKED.
func (c *conversation) tryLock() bool {
	select {
	case c.lock <- struct{}{}:
		return true
	default:
		return false
	}
}

func (c *conversation) unlock() { <-c.lock }

// Turn implements session.Store.
func (st *Store) Turn(ctx context.Context, key session.Key, turnID string, fn session.TurnFunc) (session.Applied, error) {
	c := st.conversation(key)
	if err := lockConversation(ctx, c); err != nil {
		return session.Applied{}, err
	}
	defer c.unlock()
	if t, ok := c.turns[turnID]; ok {
		return session.Applied{Replayed: true, Response: append([]byte(nil), t.response...)}, nil
	}
	var current *session.Session
	st.mu.Lock()
	if s := st.sessions[c.active]; s != nil {
		current = s.Clone()
	}
	st.mu.Unlock()
	commit, err := fn(current)
	if err != nil {
		return session.Applied{}, err
	}
	st.write(c, commit)
	applied := session.Applied{Commit: commit}
	if commit.Turn != nil {
		c.turns[turnID] = storedTurn{sessionID: commit.Turn.SessionID, response: append([]byte(nil), commit.Turn.Response...)}
		applied.Response = append([]byte(nil), commit.Turn.Response...)
	}
	return applied, nil
}

func (st *Store) write(c *conversation, commit *session.Commit) {
	st.mu.Lock()
	defer st.mu.Unlock()
	// The conversation points at its current session, ended or not: ending
	// a session outside a turn leaves the pointer, so the next turn sees
	// what ended and says so.
	for _, s := range commit.Ended {
		st.sessions[s.ID] = s.Clone()
	}
	if s := commit.Session; s != nil {
		st.sessions[s.ID] = s.Clone()
		c.active = s.ID
	}
	if t := commit.Turn; t != nil {
		st.turns[t.SessionID] = append(st.turns[t.SessionID], *t)
	}
	for _, ch := range commit.Changes {
		st.changes[ch.SessionID] = append(st.changes[ch.SessionID], ch)
	}
}

// Update implements session.Store.
func (st *Store) Update(ctx context.Context, l session.Lookup, fn func(s *session.Session) (*session.Commit, error)) (*session.Commit, error) {
	s, err := st.Session(ctx, l)
	if err != nil {
		return nil, err
	}
	c := st.conversation(s.Key)
	if err := lockConversation(ctx, c); err != nil {
		return nil, err
	}
	defer c.unlock()
	// Read again under the conversation's lock: a turn may have moved on,
	// even to a new session of the conversation.
	if l.SessionID != "" {
		l = session.Lookup{Tenant: l.Tenant, SessionID: s.ID}
	}
	if s, err = st.Session(ctx, l); err != nil {
		return nil, err
	}
	commit, err := fn(s)
	if err != nil {
		return nil, err
	}
	st.write(c, commit)
	return commit, nil
}

// Session implements session.Store.
func (st *Store) Session(_ context.Context, l session.Lookup) (*session.Session, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	id := l.SessionID
	if id == "" && l.Latest {
		var latest *session.Session
		for _, s := range st.sessions {
			if s.Key == (session.Key{Tenant: l.Tenant, ConversationID: l.ConversationID}) &&
				(latest == nil || s.ID > latest.ID) { // ids are time-ordered UUIDv7
				latest = s
			}
		}
		if latest == nil {
			return nil, session.ErrNotFound
		}
		id = latest.ID
	}
	if id == "" {
		c := st.convs[session.Key{Tenant: l.Tenant, ConversationID: l.ConversationID}]
		if c == nil || c.active == "" {
			return nil, session.ErrNotFound
		}
		if s := st.sessions[c.active]; s == nil || s.Status != session.Active {
			return nil, session.ErrNotFound
		}
		id = c.active
	}
	s := st.sessions[id]
	if s == nil || s.Key.Tenant != l.Tenant || (l.ConversationID != "" && s.Key.ConversationID != l.ConversationID) {
		return nil, session.ErrNotFound
	}
	return s.Clone(), nil
}

// History implements session.Store.
func (st *Store) History(ctx context.Context, l session.Lookup) (*session.History, error) {
	s, err := st.Session(ctx, l)
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	h := &session.History{
		Turns:   append([]session.TurnRecord(nil), st.turns[s.ID]...),
		Changes: append([]session.ChangeRecord(nil), st.changes[s.ID]...),
	}
	sort.SliceStable(h.Changes, func(i, j int) bool { return h.Changes[i].Version < h.Changes[j].Version })
	return h, nil
}

// Ready implements session.Store: memory is always ready.
func (st *Store) Ready(context.Context) error { return nil }
