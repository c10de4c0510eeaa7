package integration

import (
	"strings"
	"testing"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// A null for a required slot that was never filled is said: a client may
// have coerced the model's value into null (the MCP Inspector passes
// "1 200,50 ₽" for a number field through Number()), and a bare question
// again would not tell the model why. It is no failed attempt: four in a
// row still ask, they do not hand off. A null for a filled slot says
// nothing, and the value sent as text is taken.
func TestNullForAnEmptySlotIsSaid(t *testing.T) {
	t.Parallel()
	inst, _ := newPostgresServer(t)
	c := newConvo(t, inst.client, "bank.open_dispute")
	for i := range 4 {
		r := c.send(`{"card_last4": "•• 4417", "operation_date": "вчера", "amount": null, "reason": "Duplicate"}`)
		wantAsk(t, r, "amount")
		var fe *slotdv1.FieldError
		for _, e := range r.GetProblem().GetErrors() {
			if e.Pointer == "/amount" {
				fe = e
			}
		}
		if fe == nil || fe.Input != "null" || !strings.Contains(fe.Message, "null") || !strings.Contains(fe.Format, "1200.50") {
			t.Fatalf("call %d: the null amount is not said: problem %v", i+1, r.GetProblem())
		}
		if decisionOf(r, "amount") != slotdv1.Decision_DECISION_IGNORED_NULL {
			t.Errorf("call %d: amount decision = %v, want IGNORED_NULL", i+1, decisionOf(r, "amount"))
		}
	}
	r := c.send(`{"amount": "1 200,50 ₽", "card_last4": null}`)
	wantAsk(t, r, "original_operation_id")
	if r.Problem != nil {
		t.Errorf("a null for a filled slot is said: %v", r.Problem)
	}
	wantSlots(t, r, map[string]any{"card_last4": "4417", "amount": "1200.50", "reason": "duplicate"})
}
