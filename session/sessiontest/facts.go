package sessiontest

import (
	"reflect"
	"testing"

	"github.com/slotd/slotd/clarify"
	"github.com/slotd/slotd/session"
)

// testFacts drives a dispute whose model needs a re-ask and refuses a value
// before READY, and a flight search right first time. The facts that depend
// on earlier turns (a re-ask, the first READY, a first attempt) come out
// right only when the store keeps the session's marks between turns.
func testFacts(t *testing.T, h *harness) {
	type want struct {
		action clarify.Action
		facts  session.Facts
	}
	check := func(what string, res *session.Result, w want) {
		t.Helper()
		if res.Action != w.action {
			t.Fatalf("%s: action %s, want %s (question %+v, problem %+v)", what, res.Action, w.action, res.Question, res.Problem)
		}
		if !reflect.DeepEqual(res.Facts, w.facts) {
			t.Errorf("%s: facts\n got %+v\nwant %+v", what, res.Facts, w.facts)
		}
	}
	check("first turn", h.send(Dispute, map[string]any{"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽"}),
		want{clarify.Ask, session.Facts{}})
	check("reason", h.send(Dispute, map[string]any{"reason": "Duplicate"}),
		want{clarify.Ask, session.Facts{}})
	check("nothing new", h.send(Dispute, map[string]any{"reason": nil}),
		want{clarify.Ask, session.Facts{Reasked: "original_operation_id"}})
	check("refused values", h.send(Dispute, map[string]any{"amount": "много", "merchant": "ООО Ромашка", "operation_date": "когда-то"}),
		want{clarify.Ask, session.Facts{Rejected: []session.Rejection{
			{Slot: "operation_date", Normalizer: "date"},
			{Slot: "amount", Normalizer: "amount"},
			{Slot: session.UnknownArgument, Normalizer: session.UnknownArgument},
		}}})
	check("original operation", h.send(Dispute, map[string]any{"original_operation_id": "op-20260822-0117"}),
		want{clarify.Confirm, session.Facts{}})
	check("approval", h.do(h.confirm(Dispute, true)),
		want{clarify.Ready, session.Facts{FirstReady: true}})
	check("READY again", h.send(Dispute, map[string]any{"reason": "duplicate"}),
		want{clarify.Ready, session.Facts{}})
	if got, w := h.load(h.active()).Marks, (session.Marks{Ready: true, Flawed: true}); got != w {
		t.Errorf("stored marks %+v, want %+v", got, w)
	}

	r := h.req(Flights, map[string]any{"from": "mad", "to": "KBP", "date": "2026-09-01"})
	r.ConversationID = "conv-clean"
	check("clean flight search", h.do(r), want{clarify.Ready, session.Facts{FirstReady: true, FirstAttempt: true}})

	// A replay reports no facts: its turn was counted when it ran.
	if res := h.do(r); !res.Replayed || !reflect.DeepEqual(res.Facts, session.Facts{}) {
		t.Errorf("replay: replayed %v, facts %+v; want true and none", res.Replayed, res.Facts)
	}
}
