package api

import (
	"context"
	"testing"
	"time"
)

// granted waits until the call's place is given, failing the test when it
// is not within a second.
func granted(t *testing.T, w <-chan error, who string) {
	t.Helper()
	select {
	case err := <-w:
		if err != nil {
			t.Fatalf("%s: %v", who, err)
		}
	case <-time.After(time.Second):
		t.Fatalf("%s is still waiting for a place", who)
	}
}

func waiting(t *testing.T, w <-chan error, who string) {
	t.Helper()
	select {
	case err := <-w:
		t.Fatalf("%s was given a place (%v), want it waiting", who, err)
	case <-time.After(20 * time.Millisecond):
	}
}

func TestATenantOverItsShareIsShedAndTheOthersAreNot(t *testing.T) {
	t.Parallel()
	s := newShares(Limits{MaxInFlight: 10, TenantMaxInFlight: 2, TenantLimits: map[string]int{"bank": 3}, MaxRunning: 8, TenantMaxRunning: 8})
	var held []*tenantCalls
	for i := range 3 {
		c, ok := s.take("bank")
		if !ok {
			t.Fatalf("bank's call %d shed, want bank's share of 3 (its override)", i+1)
		}
		held = append(held, c)
	}
	if _, ok := s.take("bank"); ok || !s.full("bank") {
		t.Fatal("bank's 4th call admitted over its share of 3")
	}
	for i := range 2 {
		if _, ok := s.take("shop"); !ok {
			t.Fatalf("shop's call %d shed while bank was at its share", i+1)
		}
	}
	if _, ok := s.take("shop"); ok {
		t.Fatal("shop's 3rd call admitted over the default share of 2")
	}
	s.put(held[0])
	if _, ok := s.take("bank"); !ok {
		t.Fatal("bank's call shed after one of its calls ended")
	}

	// A lone tenant's share is all of MaxInFlight: what binds it is the
	// whole server's bound, and the Tap leaves its calls to Limit to shed
	// as overloaded.
	lone := newShares(Limits{MaxInFlight: 2, TenantMaxInFlight: 2, MaxRunning: 8, TenantMaxRunning: 8})
	lone.take("")
	lone.take("")
	if lone.full("") {
		t.Error("a lone tenant at MaxInFlight is full at its share, want it left to the whole server's bound")
	}
}

// A place that frees goes to the tenants in turn: the flood's waiting calls
// do not go before another tenant's one, and a tenant never runs more than
// its part while the others wait.
func TestPlacesGoToTheTenantsInTurn(t *testing.T) {
	t.Parallel()
	s := newShares(Limits{TenantMaxInFlight: 100, MaxRunning: 2, TenantMaxRunning: 2})
	ctx := context.Background()
	run := func(tenant string) (*tenantCalls, <-chan error) {
		c, ok := s.take(tenant)
		if !ok {
			t.Fatalf("%s's call shed", tenant)
		}
		done := make(chan error, 1)
		go func() { done <- s.run(ctx, c) }()
		return c, done
	}
	b1, w := run("bank")
	granted(t, w, "bank's 1st call")
	b2, w := run("bank")
	granted(t, w, "bank's 2nd call")
	var floods []<-chan error
	for range 5 {
		_, w := run("bank")
		waiting(t, w, "bank's 3rd call")
		floods = append(floods, w)
	}
	_, shop := run("shop")
	waiting(t, shop, "shop's call, every place taken")
	s.done(b1)
	granted(t, floods[0], "bank's first waiting call") // bank's turn came first
	s.done(b2)
	granted(t, shop, "shop's call, behind one call of bank's flood of 5")
	for _, w := range floods[1:] {
		waiting(t, w, "bank's other waiting calls")
	}
}

func TestATenantRunsNoMoreThanItsPart(t *testing.T) {
	t.Parallel()
	s := newShares(Limits{TenantMaxInFlight: 100, MaxRunning: 4, TenantMaxRunning: 2})
	ctx := context.Background()
	for i := range 2 {
		c, _ := s.take("bank")
		if err := s.run(ctx, c); err != nil {
			t.Fatalf("bank's call %d: %v", i+1, err)
		}
	}
	c, _ := s.take("bank")
	third := make(chan error, 1)
	go func() { third <- s.run(ctx, c) }()
	waiting(t, third, "bank's 3rd call, over its part of 2 of 4 places")
	shop, _ := s.take("shop")
	if err := s.run(ctx, shop); err != nil {
		t.Fatalf("shop's call, with 2 places free: %v", err)
	}
}

// A call that gives up waiting leaves the line, and a place given to it as
// it gave up goes on to the next.
func TestAWaitingCallThatEndsLeavesTheLine(t *testing.T) {
	t.Parallel()
	s := newShares(Limits{TenantMaxInFlight: 100, MaxRunning: 1, TenantMaxRunning: 1})
	first, _ := s.take("bank")
	if err := s.run(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	gone, _ := s.take("shop")
	if err := s.run(ctx, gone); err != context.DeadlineExceeded {
		t.Fatalf("a call waiting past its deadline: %v, want DeadlineExceeded", err)
	}
	s.put(gone)
	next, _ := s.take("shop")
	w := make(chan error, 1)
	go func() { w <- s.run(context.Background(), next) }()
	waiting(t, w, "shop's next call")
	s.done(first)
	granted(t, w, "shop's next call, after the call that gave up")
	if len(s.turn) != 0 || s.running != 1 {
		t.Errorf("line %d tenants, %d running; want 0 and 1", len(s.turn), s.running)
	}
}
