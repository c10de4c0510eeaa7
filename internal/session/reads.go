package session

import (
	"context"
	"time"

	"github.com/slotd/slotd/internal/merge"
)

// View reports a session as the orchestrator sees it, with its missing slots.
func (e *Engine) View(s *Session) View { return viewFor(e.contracts, s) }

// Get reads a session.
func (e *Engine) Get(ctx context.Context, l Lookup) (*Session, error) {
	l, err := e.lookup(l)
	if err != nil {
		return nil, err
	}
	return e.store.Session(ctx, l)
}

// History reads a session's turns and slot changes.
func (e *Engine) History(ctx context.Context, l Lookup) (*History, error) {
	l, err := e.lookup(l)
	if err != nil {
		return nil, err
	}
	return e.store.History(ctx, l)
}

// lookup validates a lookup and names its tool as the catalog does (a
// provider's name for it finds it too).
func (e *Engine) lookup(l Lookup) (Lookup, error) {
	if err := l.validate(); err != nil {
		return l, err
	}
	if c := e.contracts.Get(l.Tool); c != nil {
		l.Tool = c.Name
	}
	return l, nil
}

// Reset ends sessions explicitly: the one l names by id or tool, or every
// open session of the conversation; every slot they held is recorded as
// cleared. The next turn of each tool starts a fresh session, and says so.
func (e *Engine) Reset(ctx context.Context, l Lookup, now time.Time) ([]*Session, []merge.Change, error) {
	l, err := e.lookup(l)
	if err != nil {
		return nil, nil, err
	}
	if now.IsZero() {
		now = e.clock()
	}
	var commit *Commit
	if l.SessionID == "" && l.Tool == "" {
		commit, err = e.store.UpdateOpen(ctx, Key{Tenant: l.Tenant, ConversationID: l.ConversationID}, func(open []*Session) (*Commit, error) {
			out := &Commit{}
			for _, s := range open {
				if s.Status == Active {
					ended := endCommit(e.contracts, s, Reset, now)
					out.Ended = append(out.Ended, ended.Ended...)
					out.Changes = append(out.Changes, ended.Changes...)
				}
			}
			if len(out.Ended) == 0 {
				return nil, ErrNotFound
			}
			return out, nil
		})
	} else {
		commit, err = e.store.Update(ctx, l, func(s *Session) (*Commit, error) {
			if s.Status != Active {
				return nil, ErrNotActive
			}
			return endCommit(e.contracts, s, Reset, now), nil
		})
	}
	if err != nil {
		return nil, nil, err
	}
	var changes []merge.Change
	for _, ch := range commit.Changes {
		changes = append(changes, merge.Change{Slot: ch.Slot, Old: ch.Old, Decision: ch.Decision})
	}
	return commit.Ended, changes, nil
}
