package memstore

import (
	"context"
	"sort"
	"strings"

	"github.com/slotd/slotd/internal/session"
)

func matches(s *session.Session, f session.Filter) bool {
	switch {
	case !f.AnyTenant && s.Key.Tenant != f.Tenant:
	case f.Status != "" && s.Status != f.Status:
	case f.Tool != "" && s.Tool != f.Tool:
	case !strings.HasPrefix(s.Key.ConversationID, f.ConversationPrefix):
	case !f.IdleBefore.IsZero() && !s.UpdatedAt.Before(f.IdleBefore):
	case !f.EndedBefore.IsZero() && (s.EndedAt.IsZero() || !s.EndedAt.Before(f.EndedBefore)):
	case f.After != "" && s.ID <= f.After:
	default:
		return true
	}
	return false
}

// List implements session.Store.
func (st *Store) List(_ context.Context, f session.Filter) ([]*session.Session, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []*session.Session
	for _, s := range st.sessions {
		if matches(s, f) {
			out = append(out, s.Clone())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// EndSessions implements session.Store.
func (st *Store) EndSessions(ctx context.Context, f session.Filter, dryRun bool, fn session.EndFunc) ([]string, error) {
	f.Status = session.Active
	candidates, err := st.List(ctx, session.Filter{AnyTenant: f.AnyTenant, Tenant: f.Tenant, Status: f.Status, Tool: f.Tool, IdleBefore: f.IdleBefore})
	if err != nil {
		return nil, err
	}
	sort.Slice(candidates, func(i, j int) bool {
		a, b := candidates[i], candidates[j]
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.Before(b.CreatedAt)
		}
		return a.ID < b.ID
	})
	var ids []string
	for _, s := range candidates {
		if len(ids) >= f.Bounded() {
			break
		}
		c := st.tryLock(s.Key)
		if c == nil {
			continue // a turn holds it: skip, like SKIP LOCKED
		}
		// Read again under the lock: a turn may have landed first.
		cur, err := st.Session(ctx, session.Lookup{Tenant: s.Key.Tenant, SessionID: s.ID})
		if err != nil || cur.Status != session.Active || !matches(cur, f) {
			c.unlock()
			continue
		}
		commit, err := fn(cur)
		if err == nil {
			if !dryRun {
				st.write(commit)
			}
			ids = append(ids, cur.ID)
		}
		c.unlock()
	}
	return ids, nil
}

// Purge implements session.Store.
func (st *Store) Purge(_ context.Context, f session.Filter, dryRun bool) ([]string, error) {
	st.mu.Lock()
	var doomed []*session.Session
	for _, s := range st.sessions {
		if s.Status != session.Active && matches(s, session.Filter{AnyTenant: f.AnyTenant, Tenant: f.Tenant, EndedBefore: f.EndedBefore}) {
			doomed = append(doomed, s)
		}
	}
	st.mu.Unlock()
	sort.Slice(doomed, func(i, j int) bool { return doomed[i].EndedAt.Before(doomed[j].EndedAt) })
	var ids []string
	for _, s := range doomed {
		if len(ids) >= f.Bounded() {
			break
		}
		if dryRun {
			ids = append(ids, s.ID)
			continue
		}
		c := st.tryLock(s.Key)
		if c == nil {
			continue // a turn holds the conversation: skip, like SKIP LOCKED
		}
		st.mu.Lock()
		st.drop(s)
		st.mu.Unlock()
		for id, t := range c.turns {
			if t.sessionID == s.ID {
				delete(c.turns, id)
			}
		}
		st.remove(s.Key, c)
		c.unlock()
		ids = append(ids, s.ID)
	}
	return ids, nil
}

// Tenants implements session.Store.
func (st *Store) Tenants(_ context.Context, l session.Lookup, limit int) ([]string, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	seen := map[string]bool{}
	for _, s := range st.sessions {
		switch {
		case l.SessionID != "" && s.ID != l.SessionID:
		case l.ConversationID != "" && s.Key.ConversationID != l.ConversationID:
		default:
			seen[s.Key.Tenant] = true
		}
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	sort.Strings(out)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Erase implements session.Store.
func (st *Store) Erase(ctx context.Context, key session.Key, rec session.Erasure) (session.Erased, error) {
	c, err := st.lock(ctx, key)
	if err != nil {
		return session.Erased{}, err
	}
	defer c.unlock()
	st.mu.Lock()
	var out session.Erased
	for _, s := range st.byConv[key] {
		st.drop(s)
		out.Sessions++
	}
	out.Found = len(c.turns) > 0 || out.Sessions > 0
	c.turns = map[string]storedTurn{}
	c.gone = true
	delete(st.convs, key)
	st.erasures = append(st.erasures, rec)
	st.mu.Unlock()
	return out, nil
}

// Erasures are the erasures recorded, oldest first.
func (st *Store) Erasures() []session.Erasure {
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]session.Erasure(nil), st.erasures...)
}
