// Package memstore keeps sessions in process memory: for demos and tests
// without Postgres. Nothing survives a restart.
package memstore

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/slotd/slotd/internal/session"
)

// Store is an in-memory session.Store.
type Store struct {
	mu       sync.Mutex // guards the maps below, not the conversations
	convs    map[session.Key]*conversation
	sessions map[string]*session.Session
	// byConv are the sessions of each conversation, by id: what a turn
	// reads, without a scan of every conversation's sessions.
	byConv   map[session.Key]map[string]*session.Session
	turns    map[string][]session.TurnRecord
	changes  map[string][]session.ChangeRecord
	erasures []session.Erasure
	// contracts are the contract versions registered (versions.go).
	contracts versions
}

type conversation struct {
	lock  chan struct{}         // one writer per conversation: holding it is a token in the channel
	turns map[string]storedTurn // by turn_id
	// gone: a purge or an erasure removed the conversation while someone
	// waited for its lock; written and read only by its lock's holder.
	gone bool
}

type storedTurn struct {
	sessionID string
	tool      string
	request   []byte
	response  []byte
}

// New returns an empty store.
func New() *Store {
	return &Store{
		convs:    map[session.Key]*conversation{},
		sessions: map[string]*session.Session{},
		byConv:   map[session.Key]map[string]*session.Session{},
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

// lockConversation waits for the conversation's lock or the context; a
// context that ends first is the context's error (a cancelled call or a
// passed deadline), as a Postgres turn's would be.
func lockConversation(ctx context.Context, c *conversation) error {
	select {
	case c.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("memstore: waiting for the conversation: %w", ctx.Err())
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

// lock takes the lock of the conversation key, waiting for it or ctx. A
// conversation removed while this waited is made again, as pgstore's turn
// inserts its row again.
func (st *Store) lock(ctx context.Context, key session.Key) (*conversation, error) {
	for {
		c := st.conversation(key)
		if err := lockConversation(ctx, c); err != nil {
			return nil, err
		}
		if !c.gone {
			return c, nil
		}
		c.unlock()
	}
}

// tryLock takes the lock of the conversation key if it is free, like SKIP
// LOCKED; nil when it is not.
func (st *Store) tryLock(key session.Key) *conversation {
	for {
		c := st.conversation(key)
		if !c.tryLock() {
			return nil
		}
		if !c.gone {
			return c
		}
		c.unlock()
	}
}

// remove forgets the conversation c of key, whose lock the caller holds,
// once it holds no session.
func (st *Store) remove(key session.Key, c *conversation) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.byConv[key]) > 0 {
		return
	}
	c.gone = true
	delete(st.convs, key)
}

// Turn implements session.Store.
func (st *Store) Turn(ctx context.Context, key session.Key, turnID string, fn session.TurnFunc) (session.Applied, error) {
	c, err := st.lock(ctx, key)
	if err != nil {
		return session.Applied{}, err
	}
	defer c.unlock()
	if t, ok := c.turns[turnID]; ok {
		st.replayed(t.sessionID, turnID)
		return session.Applied{Replayed: true, Tool: t.tool, Request: append([]byte(nil), t.request...),
			Response: append([]byte(nil), t.response...)}, nil
	}
	commit, err := fn(session.Conversation{Open: st.open(key), Left: st.left(key)})
	if err != nil {
		return session.Applied{}, err
	}
	st.write(commit)
	applied := session.Applied{Commit: commit}
	// The commit's response is the store's from here, as its turn record
	// in the history is: it is copied when a replay hands it out.
	if t := commit.Turn; t != nil {
		c.turns[turnID] = storedTurn{sessionID: t.SessionID, tool: commit.Session.Tool, request: t.Request, response: t.Response}
		applied.Response = t.Response
	}
	return applied, nil
}

// replayed records a delivery of a turn_id seen before on its turn, at the
// machine's time: the store has no clock of its own.
func (st *Store) replayed(sessionID, turnID string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for i := range st.turns[sessionID] {
		t := &st.turns[sessionID][i]
		if t.ID == turnID {
			t.Replays++
			at := append(t.ReplayedAt[:len(t.ReplayedAt):len(t.ReplayedAt)], time.Now())
			t.ReplayedAt = at[max(0, len(at)-session.MaxReplayTimes):]
			return
		}
	}
}

// open are copies of a conversation's open sessions.
func (st *Store) open(key session.Key) []*session.Session {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []*session.Session
	for _, s := range st.byConv[key] {
		if s.Open {
			out = append(out, s.Clone())
		}
	}
	return out
}

// left is the last use of a conversation's session that has left the open
// set: the one that left last, of the greatest id among those that left
// together, as pgstore reads it.
func (st *Store) left(key session.Key) session.Use {
	st.mu.Lock()
	defer st.mu.Unlock()
	var last *session.Session
	for _, s := range st.byConv[key] {
		if !s.Open && (last == nil || s.WrittenAfter(last)) {
			last = s
		}
	}
	if last == nil {
		return session.Use{}
	}
	return last.Use()
}

func (st *Store) write(commit *session.Commit) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, s := range append(append([]*session.Session{}, commit.Ended...), commit.Session) {
		if s != nil {
			st.put(s.Clone())
		}
	}
	if t := commit.Turn; t != nil {
		st.turns[t.SessionID] = append(st.turns[t.SessionID], *t)
	}
	for _, ch := range commit.Changes {
		st.changes[ch.SessionID] = append(st.changes[ch.SessionID], ch)
	}
}

// put keeps s, replacing the session of its id; the caller holds st.mu.
func (st *Store) put(s *session.Session) {
	st.sessions[s.ID] = s
	conv := st.byConv[s.Key]
	if conv == nil {
		conv = map[string]*session.Session{}
		st.byConv[s.Key] = conv
	}
	conv[s.ID] = s
}

// drop forgets s with its turns and changes; the caller holds st.mu.
func (st *Store) drop(s *session.Session) {
	delete(st.sessions, s.ID)
	delete(st.turns, s.ID)
	delete(st.changes, s.ID)
	if conv := st.byConv[s.Key]; conv != nil {
		delete(conv, s.ID)
		if len(conv) == 0 {
			delete(st.byConv, s.Key)
		}
	}
}

// Update implements session.Store.
func (st *Store) Update(ctx context.Context, l session.Lookup, fn func(s *session.Session) (*session.Commit, error)) (*session.Commit, error) {
	s, err := st.Session(ctx, l)
	if err != nil {
		return nil, err
	}
	c, err := st.lock(ctx, s.Key)
	if err != nil {
		return nil, err
	}
	defer c.unlock()
	// Read again under the conversation's lock: a turn may have moved on,
	// even to a new session of the tool.
	l.Tenant, l.ConversationID = s.Key.Tenant, s.Key.ConversationID
	if l.SessionID == "" && !l.Latest {
		l.Tool = s.Tool
	}
	if s, err = st.Session(ctx, l); err != nil {
		return nil, err
	}
	commit, err := fn(s)
	if err != nil {
		return nil, err
	}
	st.write(commit)
	return commit, nil
}

// UpdateOpen implements session.Store.
func (st *Store) UpdateOpen(ctx context.Context, key session.Key, fn session.OpenFunc) (*session.Commit, error) {
	c, err := st.lock(ctx, key)
	if err != nil {
		return nil, err
	}
	defer c.unlock()
	open := st.open(key)
	if len(open) == 0 {
		return nil, session.ErrNotFound
	}
	commit, err := fn(open)
	if err != nil {
		return nil, err
	}
	st.write(commit)
	return commit, nil
}

// Session implements session.Store.
func (st *Store) Session(_ context.Context, l session.Lookup) (*session.Session, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if l.SessionID != "" {
		s := st.sessions[l.SessionID]
		if s == nil || s.Key.Tenant != l.Tenant || l.ConversationID != "" && s.Key.ConversationID != l.ConversationID {
			return nil, session.ErrNotFound
		}
		return s.Clone(), nil
	}
	var found *session.Session
	for _, s := range st.byConv[session.Key{Tenant: l.Tenant, ConversationID: l.ConversationID}] {
		switch {
		case l.Latest:
			if found != nil && s.ID < found.ID { // ids are time-ordered UUIDv7
				continue
			}
		case !s.Open || s.Status != session.Active || l.Tool != "" && s.Tool != l.Tool:
			continue
		case found != nil && !s.WrittenAfter(found):
			continue
		}
		found = s
	}
	if found == nil {
		return nil, session.ErrNotFound
	}
	return found.Clone(), nil
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
