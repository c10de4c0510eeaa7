package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	// ConversationPrefix keeps sessions whose conversation id starts with
	// it, byte for byte: no character in it is a wildcard. Only List
	// reads it.
	ConversationPrefix string
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
	for _, x := range []struct{ field, v string }{{"tenant", f.Tenant}, {"tool", f.Tool}, {"conversation_prefix", f.ConversationPrefix}} {
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

// tenantsShown bounds the tenants an ambiguous lookup names.
const tenantsShown = 5

// Find reads the session an operator's lookup names: by id, or the
// conversation's open session (of l.Tool), else its latest one. With
// anyTenant, l.Tenant is not read: the session is looked for under the one
// tenant that holds it, and a lookup several tenants hold is refused with
// their count. Not found says what was looked up, and under which tenant
// it is when another one than named holds it.
func (e *Engine) Find(ctx context.Context, l Lookup, anyTenant bool) (*Session, error) {
	if anyTenant {
		l.Tenant = ""
	}
	l, err := e.lookup(l)
	if err != nil {
		return nil, err
	}
	if anyTenant {
		tenants, err := e.store.Tenants(ctx, l, tenantsShown+1)
		if err != nil {
			return nil, err
		}
		switch len(tenants) {
		case 0:
			return nil, notFound(l, anyTenant, nil)
		case 1:
			l.Tenant = tenants[0]
		default:
			return nil, ambiguous(l, tenants)
		}
	}
	s, err := e.store.Session(ctx, l)
	if errors.Is(err, ErrNotFound) && l.SessionID == "" && l.Tool == "" {
		// No open session: the conversation's latest, ended or not.
		s, err = e.store.Session(ctx, Lookup{Tenant: l.Tenant, ConversationID: l.ConversationID, Latest: true})
	}
	if !errors.Is(err, ErrNotFound) {
		return s, err
	}
	var others []string
	if !anyTenant {
		if others, err = e.store.Tenants(ctx, l, 2); err != nil {
			return nil, err
		}
	}
	return nil, notFound(l, false, others)
}

// sought says what a lookup looks for, for an operator.
func sought(l Lookup) string {
	switch {
	case l.SessionID != "":
		return "session " + problem.Quote(l.SessionID)
	case l.Tool != "":
		return "open session of " + problem.Quote(l.Tool) + " in conversation " + problem.Quote(l.ConversationID)
	}
	return "session of conversation " + problem.Quote(l.ConversationID)
}

func tenantName(t string) string {
	if t == "" {
		return "the default tenant"
	}
	return "tenant " + problem.Quote(t)
}

// notFound is a lookup that found nothing, under its tenant or any; others
// are the tenants that hold what it looked for, when it named another.
func notFound(l Lookup, anyTenant bool, others []string) error {
	under := tenantName(l.Tenant)
	if anyTenant {
		under = "any tenant"
	}
	pe := problem.NotFound(sought(l) + " under " + under)
	switch {
	case len(others) == 1:
		pe.Problem.Detail += "; " + tenantName(others[0]) + " holds it"
	case len(others) > 1:
		pe.Problem.Detail += "; other tenants hold it"
	}
	return pe
}

// ambiguous refuses a lookup without a tenant that several tenants hold.
func ambiguous(l Lookup, tenants []string) error {
	count := fmt.Sprint(len(tenants))
	if len(tenants) > tenantsShown {
		tenants, count = tenants[:tenantsShown], fmt.Sprintf("more than %d", tenantsShown)
	}
	names := make([]string, len(tenants))
	for i, t := range tenants {
		names[i] = tenantName(t)
	}
	return problem.InvalidRequest("tenant", fmt.Sprintf("%s is held by %s tenants (%s); name the tenant",
		sought(l), count, strings.Join(names, ", ")))
}
