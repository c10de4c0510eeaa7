package metrics

import (
	"context"
	"sync"

	"github.com/slotd/slotd/internal/session"
)

// Store wraps st so that the sessions every written commit ends are
// counted: by turns (a change of topic, an expiry found by a turn, a
// declined approval), by ResetSession, CompleteSession and the stale-session
// reset, and by the janitor. A commit is observed only after the store
// reports it written.
func (m *Metrics) Store(st session.Store) session.Store { return &store{Store: st, m: m} }

type store struct {
	session.Store
	m *Metrics
}

func (s *store) Turn(ctx context.Context, key session.Key, turnID string, fn session.TurnFunc) (session.Applied, error) {
	a, err := s.Store.Turn(ctx, key, turnID, fn)
	if err == nil && !a.Replayed {
		s.m.commit(a.Commit)
	}
	return a, err
}

func (s *store) Update(ctx context.Context, l session.Lookup, fn func(*session.Session) (*session.Commit, error)) (*session.Commit, error) {
	c, err := s.Store.Update(ctx, l, fn)
	if err == nil {
		s.m.commit(c)
	}
	return c, err
}

func (s *store) UpdateOpen(ctx context.Context, key session.Key, fn session.OpenFunc) (*session.Commit, error) {
	c, err := s.Store.UpdateOpen(ctx, key, fn)
	if err == nil {
		s.m.commit(c)
	}
	return c, err
}

func (s *store) EndSessions(ctx context.Context, f session.Filter, dryRun bool, fn session.EndFunc) ([]string, error) {
	var mu sync.Mutex
	commits := map[string]*session.Commit{}
	ids, err := s.Store.EndSessions(ctx, f, dryRun, func(cur *session.Session) (*session.Commit, error) {
		c, err := fn(cur)
		if err == nil {
			mu.Lock()
			commits[cur.ID] = c
			mu.Unlock()
		}
		return c, err
	})
	if err == nil && !dryRun {
		for _, id := range ids {
			s.m.commit(commits[id])
		}
	}
	return ids, err
}

func (m *Metrics) commit(c *session.Commit) {
	if c == nil {
		return
	}
	for _, s := range c.Ended {
		m.sessionEnded(s)
	}
	if s := c.Session; s != nil && s.Status != session.Active {
		m.sessionEnded(s)
	}
}
