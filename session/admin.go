package session

import (
	"context"
	"fmt"
	"time"

	"github.com/slotd/slotd/internal/redact"
	"github.com/slotd/slotd/problem"
)

// Filter selects sessions for operators and the janitor.
type Filter struct {
	// Tenant limits to one tenant unless AnyTenant.
	Tenant    string
	AnyTenant bool
	// Status limits to one status; any when empty.
	Status Status
	// Tool limits to one tool; any when empty.
	Tool string
	// IdleBefore keeps sessions whose last turn was before it.
	IdleBefore time.Time
	// EndedBefore keeps ended sessions that ended before it.
	EndedBefore time.Time
	// After is a cursor: only sessions with a larger id.
	After string
	// Limit bounds the batch; DefaultLimit when 0, never above MaxLimit.
	Limit int
}

// Batch bounds for admin work: a call never holds more locks than this.
const (
	DefaultLimit = 100
	// MaxLimit keeps a batch short enough that a turn waiting on one of
	// its conversations stays well inside the lock timeout.
	MaxLimit = 200
)

// Bounded returns the filter's limit within [1, MaxLimit].
func (f Filter) Bounded() int {
	switch {
	case f.Limit <= 0:
		return DefaultLimit
	case f.Limit > MaxLimit:
		return MaxLimit
	}
	return f.Limit
}

// validate refuses filters no session can match before they reach a store:
// names too long or with control characters, card numbers, a cursor that is
// not a session id.
func (f Filter) validate() error {
	for _, x := range []struct{ field, v string }{{"tenant", f.Tenant}, {"tool", f.Tool}} {
		if !validID(x.v) || redact.HasCard(x.v) {
			return problem.InvalidRequest(x.field, fmt.Sprintf("at most %d bytes of UTF-8 without control characters", maxIDLength))
		}
	}
	if f.After != "" && !CanonicalID(f.After) {
		return problem.InvalidRequest("page_token", "not a page token from this listing")
	}
	return nil
}

// EndFunc decides how one locked session ends: its commit (status set,
// history records), or an error to skip it.
type EndFunc func(s *Session) (*Commit, error)

// ListSessions lists sessions matching f, ordered by id (time-ordered), with
// a cursor for the next page ("" when there is none).
func (e *Engine) ListSessions(ctx context.Context, f Filter) ([]*Session, string, error) {
	if err := f.validate(); err != nil {
		return nil, "", err
	}
	limit := f.Bounded()
	f.Limit = limit + 1
	out, err := e.store.List(ctx, f)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		next = out[limit-1].ID
	}
	return out, next, nil
}

// ResetStale resets active sessions idle since before f.IdleBefore, in one
// bounded batch that skips conversations a turn holds right now. With
// dryRun it reports what it would reset and changes nothing.
func (e *Engine) ResetStale(ctx context.Context, f Filter, dryRun bool, now time.Time) ([]string, error) {
	if f.IdleBefore.IsZero() {
		return nil, problem.InvalidRequest("idle_longer_than", "required and positive")
	}
	if err := f.validate(); err != nil {
		return nil, err
	}
	if now.IsZero() {
		now = e.clock()
	}
	f.Status = Active
	return e.store.EndSessions(ctx, f, dryRun, func(s *Session) (*Commit, error) {
		return endCommit(e.contracts, s, Reset, now), nil
	})
}

// Expire ends active sessions of one tool idle since before f.IdleBefore as
// expired: the janitor's work.
func (e *Engine) Expire(ctx context.Context, f Filter, now time.Time) ([]string, error) {
	if f.IdleBefore.IsZero() || f.Tool == "" {
		return nil, problem.InvalidRequest("idle_longer_than", "expiry needs a tool and an idle time")
	}
	f.Status = Active
	return e.store.EndSessions(ctx, f, false, func(s *Session) (*Commit, error) {
		return endCommit(e.contracts, s, Expired, now), nil
	})
}

// Purge deletes ended sessions, with their turns and history, that ended
// before f.EndedBefore, in one bounded batch.
func (e *Engine) Purge(ctx context.Context, f Filter, dryRun bool) ([]string, error) {
	if f.EndedBefore.IsZero() {
		return nil, problem.InvalidRequest("ended_longer_than", "required and positive")
	}
	return e.store.Purge(ctx, f, dryRun)
}
