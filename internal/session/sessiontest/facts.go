package sessiontest

import (
	"reflect"
	"testing"

	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/session"
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
	first := func(slots ...string) []session.ValidAfter {
		out := make([]session.ValidAfter, len(slots))
		for i, s := range slots {
			out[i] = session.ValidAfter{Slot: s, Attempts: 1}
		}
		return out
	}
	check("first turn", h.send(Dispute, map[string]any{"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽"}),
		want{clarify.Ask, session.Facts{Valid: first("card_last4", "operation_date", "amount")}})
	check("reason", h.send(Dispute, map[string]any{"reason": "Duplicate"}),
		want{clarify.Ask, session.Facts{Valid: first("reason")}})
	check("nothing new", h.send(Dispute, map[string]any{"reason": nil}),
		want{clarify.Ask, session.Facts{Reasked: "original_operation_id"}})
	check("refused values", h.send(Dispute, map[string]any{"amount": "много", "merchant": "ООО Ромашка", "operation_date": "когда-то"}),
		want{clarify.Ask, session.Facts{Rejected: []session.Rejection{
			{Slot: "operation_date", Normalizer: "date"},
			{Slot: "amount", Normalizer: "amount"},
			{Slot: session.UnknownArgument, Normalizer: session.UnknownArgument},
		}}})
	check("original operation", h.send(Dispute, map[string]any{"original_operation_id": "op-20260822-0117"}),
		want{clarify.Confirm, session.Facts{Valid: first("original_operation_id")}})
	check("approval", h.do(h.confirm(Dispute, true)),
		want{clarify.Ready, session.Facts{FirstReady: true}})
	check("READY again", h.send(Dispute, map[string]any{"reason": "duplicate"}),
		want{clarify.Ready, session.Facts{}})
	if got, w := h.load(h.active()).Marks, (session.Marks{Ready: true, Flawed: true}); got != w {
		t.Errorf("stored marks %+v, want %+v", got, w)
	}

	r := h.req(Flights, map[string]any{"from": "mad", "to": "KBP", "date": "2026-09-01"})
	r.ConversationID = "conv-clean"
	check("clean flight search", h.do(r), want{clarify.Ready, session.Facts{FirstReady: true, FirstAttempt: true, Valid: first("from", "to", "date")}})

	// A value accepted after refusals counts every attempt.
	r = h.req(Flights, map[string]any{"from": "Madrid"})
	r.ConversationID = "conv-attempts"
	h.do(r)
	r = h.req(Flights, map[string]any{"from": "MAD"})
	r.ConversationID = "conv-attempts"
	if res := h.do(r); !reflect.DeepEqual(res.Facts.Valid, []session.ValidAfter{{Slot: "from", Attempts: 2}}) {
		t.Errorf("a code after a city name: valid %+v, want from after 2 attempts", res.Facts.Valid)
	}

	// A replay reports no facts: its turn was counted when it ran.
	if res := h.do(r); !res.Replayed || !reflect.DeepEqual(res.Facts, session.Facts{}) {
		t.Errorf("replay: replayed %v, facts %+v; want true and none", res.Replayed, res.Facts)
	}
}
