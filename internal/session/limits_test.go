package session_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
	"github.com/slotd/slotd/problem"
)

// A session keeps at most MaxTurnsPerSession turns; past that it must be
// reset, but one that expired meanwhile simply starts over.
func TestTurnsPerSessionAreBounded(t *testing.T) {
	t.Parallel()
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)
	e := session.NewEngine(memstore.New(), cat, session.Config{Clock: func() time.Time { return now }, TrustClientClock: true})
	ctx := context.Background()
	turn := func(n int, at time.Time) (*session.Result, error) {
		return e.Turn(ctx, session.TurnRequest{ConversationID: "long", Tool: "travel.search_flights",
			TurnID: fmt.Sprintf("t%d", n), Arguments: map[string]any{"from": "MAD"}, Now: at})
	}
	for i := 1; i <= session.MaxTurnsPerSession; i++ {
		if _, err := turn(i, now); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
	}
	_, err = turn(session.MaxTurnsPerSession+1, now)
	var pe *problem.Error
	if !errors.As(err, &pe) || pe.Problem.Type != problem.TypeTooLong || !pe.Problem.OwnerActionRequired {
		t.Fatalf("turn past the limit: %v, want a conversation-too-long problem", err)
	}
	res, err := turn(session.MaxTurnsPerSession+2, now.Add(100*time.Hour))
	if err != nil || res.Previous == nil || res.Previous.Status != session.Expired || res.Session.Version != 1 {
		t.Fatalf("after the ttl: %v, %+v", err, res)
	}
}

// Expiry without a tool and an idle time would end every active session:
// it is refused.
func TestExpireNeedsAToolAndAnIdleTime(t *testing.T) {
	t.Parallel()
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)
	e := session.NewEngine(memstore.New(), cat, session.Config{Clock: func() time.Time { return now }, TrustClientClock: true})
	ctx := context.Background()
	if _, err := e.Turn(ctx, session.TurnRequest{ConversationID: "c", Tool: "travel.search_flights", TurnID: "1",
		Arguments: map[string]any{"from": "MAD"}, Now: now}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []session.Filter{
		{AnyTenant: true},
		{AnyTenant: true, Tool: "travel.search_flights"},
		{AnyTenant: true, IdleBefore: now.Add(time.Hour)},
	} {
		if ids, err := e.Expire(ctx, f, now); err == nil || len(ids) != 0 {
			t.Errorf("Expire(%+v) = %v, %v; want refused", f, ids, err)
		}
	}
	ids, err := e.Expire(ctx, session.Filter{AnyTenant: true, Tool: "travel.search_flights", IdleBefore: now.Add(time.Hour)}, now)
	if err != nil || len(ids) != 1 {
		t.Errorf("a proper expiry: %v, %v", ids, err)
	}
}

// Arguments held across RESUME questions stay within one request's bounds.
func TestHeldArgumentsAreBounded(t *testing.T) {
	t.Parallel()
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)
	e := session.NewEngine(memstore.New(), cat, session.Config{Clock: func() time.Time { return now }, TrustClientClock: true})
	ctx := context.Background()
	turn := func(id string, at time.Time, args map[string]any) (*session.Result, error) {
		return e.Turn(ctx, session.TurnRequest{ConversationID: "held", Tool: "bank.open_dispute", TurnID: id, Arguments: args, Now: at})
	}
	if _, err := turn("1", now, map[string]any{"card_last4": "4417"}); err != nil {
		t.Fatal(err)
	}
	later := now.Add(time.Hour)
	// Each turn stays under the limit of 64 arguments; held together they
	// would not.
	var err2 error
	for i := 0; i < 3 && err2 == nil; i++ {
		args := map[string]any{}
		for j := 0; j < 40; j++ {
			args[fmt.Sprintf("extra_%d_%d", i, j)] = "x"
		}
		var res *session.Result
		res, err2 = turn(fmt.Sprintf("r%d", i), later, args)
		if err2 == nil && res.Action != "RESUME" {
			t.Fatalf("turn %d: %s, want RESUME", i, res.Action)
		}
	}
	var pe *problem.Error
	if !errors.As(err2, &pe) || pe.Kind != problem.KindInvalidRequest {
		t.Fatalf("held arguments grew past one request's bounds: %v", err2)
	}
}

// A caller's clock is taken only within a window of the server's, unless
// the server trusts it: otherwise a client could date its turns so that
// its sessions never expire.
func TestClientClockWindow(t *testing.T) {
	t.Parallel()
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	server := time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		now   time.Time
		trust bool
		ok    bool
	}{
		{"no clock: the server's", time.Time{}, false, true},
		{"4m ahead", server.Add(4 * time.Minute), false, true},
		{"4m59s behind", server.Add(-4*time.Minute - 59*time.Second), false, true},
		{"5m1s ahead", server.Add(5*time.Minute + time.Second), false, false},
		{"a day behind", server.Add(-24 * time.Hour), false, false},
		{"the end of time", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), false, false},
		{"the end of time, trusted", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), true, true},
		{"a replay a year back, trusted", server.AddDate(-1, 0, 0), true, true},
	} {
		e := session.NewEngine(memstore.New(), cat, session.Config{Clock: func() time.Time { return server }, TrustClientClock: tc.trust})
		res, err := e.Turn(ctx, session.TurnRequest{ConversationID: "clock", Tool: "travel.search_flights", TurnID: "1",
			Arguments: map[string]any{"from": "MAD"}, Now: tc.now})
		if tc.ok {
			want := tc.now
			if want.IsZero() {
				want = server
			}
			if err != nil || !res.Session.UpdatedAt.Equal(want) {
				t.Errorf("%s: %v, %v; want the turn applied at %v", tc.name, res, err, want)
			}
			continue
		}
		var pe *problem.Error
		if !errors.As(err, &pe) || pe.Kind != problem.KindInvalidRequest || len(pe.Problem.Errors) != 1 || pe.Problem.Errors[0].Pointer != "/now" {
			t.Errorf("%s: %v, %v; want INVALID_ARGUMENT naming now", tc.name, res, err)
		}
	}
}
