package session

import (
	"context"
	"time"

	"github.com/slotd/slotd/merge"
)

// View reports a session as the orchestrator sees it, with its missing slots.
func (e *Engine) View(s *Session) View { return viewFor(e.contracts, s) }

// Get reads a session.
func (e *Engine) Get(ctx context.Context, l Lookup) (*Session, error) {
	if err := l.validate(); err != nil {
		return nil, err
	}
	return e.store.Session(ctx, l)
}

// History reads a session's turns and slot changes.
func (e *Engine) History(ctx context.Context, l Lookup) (*History, error) {
	if err := l.validate(); err != nil {
		return nil, err
	}
	return e.store.History(ctx, l)
}

// Reset ends a session explicitly; every slot it held is recorded as
// cleared. The next turn of the conversation starts a fresh session.
func (e *Engine) Reset(ctx context.Context, l Lookup, now time.Time) (*Session, []merge.Change, error) {
	if err := l.validate(); err != nil {
		return nil, nil, err
	}
	if now.IsZero() {
		now = e.clock()
	}
	commit, err := e.store.Update(ctx, l, func(s *Session) (*Commit, error) {
		if s.Status != Active {
			return nil, ErrNotActive
		}
		return endCommit(e.contracts, s, Reset, now), nil
	})
	if err != nil {
		return nil, nil, err
	}
	var changes []merge.Change
	for _, ch := range commit.Changes {
		changes = append(changes, merge.Change{Slot: ch.Slot, Old: ch.Old, Decision: ch.Decision})
	}
	return commit.Ended[0], changes, nil
}
