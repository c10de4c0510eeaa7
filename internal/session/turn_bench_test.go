package session_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
	"github.com/slotd/slotd/internal/session/sessiontest"
)

// benchDialogue is the dispute example as a model sends it: four
// turns, the last (without arguments) an approval.
var benchDialogue = []struct {
	args map[string]any
	want clarify.Action
}{
	{args: map[string]any{"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽"}, want: clarify.Ask},
	{args: map[string]any{"reason": "Duplicate"}, want: clarify.Ask},
	{args: map[string]any{"original_operation_id": "op-20260822-0117", "reason": nil, "amount": ""}, want: clarify.Confirm},
	{want: clarify.Ready},
}

// BenchmarkTurn is one whole turn through the engine on the memory store:
// normalize, merge, decide, encode the response and the history records.
// An op is one turn; the dialogue repeats in new conversations.
func BenchmarkTurn(b *testing.B) {
	engine := session.NewEngine(memstore.New(), sessiontest.Catalog(b), session.Config{Clock: func() time.Time { return sessiontest.Now }})
	ctx := context.Background()
	accept := true
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		step := benchDialogue[n%len(benchDialogue)]
		conv := fmt.Sprintf("bench-%d", n/len(benchDialogue))
		req := session.TurnRequest{ConversationID: conv, Tool: sessiontest.Dispute, TurnID: fmt.Sprintf("%s/%d", conv, n),
			Arguments: step.args, Locale: "ru", TimeZone: "Europe/Moscow"}
		if step.args == nil {
			req.Confirmation = &accept
		}
		res, err := engine.Turn(ctx, req)
		if err != nil {
			b.Fatalf("Turn %d: %v", n, err)
		}
		if res.Action != step.want {
			b.Fatalf("Turn %d: action %s, want %s", n, res.Action, step.want)
		}
		n++
	}
}

// BenchmarkTurnReplay is a retried turn: answered from the stored response.
func BenchmarkTurnReplay(b *testing.B) {
	engine := session.NewEngine(memstore.New(), sessiontest.Catalog(b), session.Config{Clock: func() time.Time { return sessiontest.Now }})
	ctx := context.Background()
	req := session.TurnRequest{ConversationID: "bench", Tool: sessiontest.Dispute, TurnID: "bench/1",
		Arguments: benchDialogue[0].args, Locale: "ru"}
	if _, err := engine.Turn(ctx, req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := engine.Turn(ctx, req)
		if err != nil || !res.Replayed {
			b.Fatalf("Turn: replayed %v, error %v; want true, nil", res != nil && res.Replayed, err)
		}
	}
}
