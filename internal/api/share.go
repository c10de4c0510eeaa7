package api

import (
	"context"
	"slices"
	"sync"
)

// shares is the admission of SlotService calls between tenants. A tenant
// holds at most its share of the calls in flight: past it, its calls are
// shed while the other tenants' are still admitted. And of the calls
// admitted, at most MaxRunning run at once, TenantMaxRunning of a tenant; the
// others wait, and a place that frees goes to the tenants in turn, not to
// whoever queued most: a tenant's flood waits behind its own calls, so
// another tenant's turn waits for one place at most, not for the flood to
// drain.
type shares struct {
	// of is a tenant's share: TenantLimits, else TenantMaxInFlight.
	of   func(tenant string) int
	max  int // MaxInFlight
	runs int // MaxRunning
	part int // TenantMaxRunning

	mu      sync.Mutex
	tenants map[string]*tenantCalls // those with calls in flight
	running int
	// turn holds the tenants with calls waiting to run, in the order the
	// next places go to them.
	turn []*tenantCalls
}

// tenantCalls are one tenant's calls in flight.
type tenantCalls struct {
	name     string
	inFlight int // waiting or running
	running  int
	waiting  []*waiter
}

// waiter is a call waiting for a place to run; ready is closed when it
// is given one.
type waiter struct {
	ready   chan struct{}
	granted bool
}

func newShares(limits Limits) *shares {
	return &shares{max: limits.MaxInFlight, runs: limits.MaxRunning, part: limits.TenantMaxRunning, tenants: map[string]*tenantCalls{}, of: func(tenant string) int {
		if n, ok := limits.TenantLimits[tenant]; ok {
			return n
		}
		return limits.TenantMaxInFlight
	}}
}

// take counts a call of tenant in flight, unless the tenant already has its
// share; the caller gives it back with put.
func (s *shares) take(tenant string) (*tenantCalls, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tenants[tenant]
	if t == nil {
		t = &tenantCalls{name: tenant}
	}
	if t.inFlight >= s.of(tenant) {
		return nil, false
	}
	t.inFlight++
	s.tenants[tenant] = t
	return t, true
}

// full reports whether tenant has its share of calls in flight, when that
// share is less than MaxInFlight (a lone tenant's is not: MaxInFlight is
// what bounds it).
func (s *shares) full(tenant string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tenants[tenant]
	return t != nil && t.inFlight >= s.of(tenant) && s.of(tenant) < s.max
}

func (s *shares) put(t *tenantCalls) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.inFlight--; t.inFlight == 0 {
		delete(s.tenants, t.name)
	}
}

// run waits for a place to run a call of t (taken), in the tenants' turn;
// ctx's error when ctx ends first. The caller gives the place back with
// done.
func (s *shares) run(ctx context.Context, t *tenantCalls) error {
	w := &waiter{ready: make(chan struct{})}
	s.mu.Lock()
	if t.waiting = append(t.waiting, w); len(t.waiting) == 1 {
		s.turn = append(s.turn, t)
	}
	s.grant()
	s.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	if w.granted { // given a place as ctx ended: it goes to the next
		s.mu.Unlock()
		s.done(t)
		return ctx.Err()
	}
	t.waiting = slices.DeleteFunc(t.waiting, func(o *waiter) bool { return o == w })
	if len(t.waiting) == 0 {
		s.turn = slices.DeleteFunc(s.turn, func(o *tenantCalls) bool { return o == t })
	}
	s.mu.Unlock()
	return ctx.Err()
}

// done gives back the place a call of t ran in.
func (s *shares) done(t *tenantCalls) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t.running--
	s.running--
	s.grant()
}

// grant gives the free places to waiting calls, one to each tenant in
// turn (a tenant served goes to the end of the line), and to a tenant only
// while it runs fewer than its part of the places (TenantMaxRunning), so
// that a flood's calls never hold every place, and the CPU with them,
// when another tenant's turn comes: its calls come one by one, and would
// find every place taken each time.
func (s *shares) grant() {
	for i := 0; s.running < s.runs && i < len(s.turn); {
		t := s.turn[i]
		if t.running >= s.part {
			i++
			continue
		}
		s.turn = slices.Delete(s.turn, i, i+1)
		w := t.waiting[0]
		if t.waiting = slices.Delete(t.waiting, 0, 1); len(t.waiting) > 0 {
			s.turn = append(s.turn, t)
		}
		t.running++
		s.running++
		w.granted = true
		close(w.ready)
	}
}
