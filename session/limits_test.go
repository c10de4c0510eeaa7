package session_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/problem"
	"github.com/slotd/slotd/session"
	"github.com/slotd/slotd/session/memstore"
)

// A session keeps at most MaxTurnsPerSession turns; past that it must be
// reset, but one that expired meanwhile simply starts over.
func TestTurnsPerSessionAreBounded(t *testing.T) {
	t.Parallel()
	cat, err := contract.LoadDir("../contracts")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)
	e := session.NewEngine(memstore.New(), cat, func() time.Time { return now })
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
