package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
	"github.com/slotd/slotd/problem"
)

// FuzzTurn drives the whole request path (arguments → normalize → merge →
// clarify → store) with arbitrary JSON: it never panics, answers a result or
// a problem and nothing else, and never stores a value the contract refuses.
func FuzzTurn(f *testing.F) {
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		`{"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽"}`,
		`{"reason": "Duplicate", "original_operation_id": null}`,
		`{"amount": "-0", "reason": {"x": [1, 2, {"y": null}]}}`,
		`{"operation_date": "31.02", "card_last4": 4417.5}`,
		`{"amount": "1,200.50.30", "": "", "__proto__": {}}`,
		`{"amount": 1e308, "card_last4": "4276 1234 5678 4417"}`,
	} {
		f.Add(seed, "bank.open_dispute", true, false)
	}
	f.Add(`{"from": "mad", "to": "Kyiv", "date": "tomorrow"}`, "travel.search_flights", false, true)
	now := time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, args, tool string, confirm, accept bool) {
		var m map[string]any
		if json.Unmarshal([]byte(args), &m) != nil {
			return
		}
		e := session.NewEngine(memstore.New(), cat, session.Config{Clock: func() time.Time { return now }, TrustClientClock: true})
		ctx := context.Background()
		req := session.TurnRequest{ConversationID: "c", Tool: tool, TurnID: "1", Arguments: m, Now: now}
		if confirm {
			req.Confirmation = &accept
		}
		for i, r := range []session.TurnRequest{req, {ConversationID: "c", Tool: tool, TurnID: "2", Arguments: m, Now: now}} {
			res, err := e.Turn(ctx, r)
			var pe *problem.Error
			if err != nil {
				if !errors.As(err, &pe) {
					t.Fatalf("turn %d: an error that is not a problem: %v", i, err)
				}
				return
			}
			c := cat.Get(tool)
			for slot, v := range res.Session.Slots {
				if _, fe := c.Normalize(slot, v, contract.Env{Now: now}); fe != nil {
					t.Fatalf("stored %s=%#v, which the contract refuses: %v", slot, v, fe)
				}
			}
			if _, err := json.Marshal(res); err != nil {
				t.Fatalf("the result does not encode: %v", err)
			}
		}
	})
}
