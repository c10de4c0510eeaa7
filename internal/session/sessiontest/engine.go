package sessiontest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/merge"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/problem"
)

// A dispute as a model fills it in one go, with the dirt models leave in.
func disputeArgs() map[string]any {
	return map[string]any{
		"card_last4":     "карта •• 4417",
		"operation_date": "вчера",
		"amount":         "1 200 ₽",
		"reason":         "не та сумма",
	}
}

// disputeSlots is disputeArgs normalized.
func disputeSlots() map[string]any {
	return map[string]any{
		"card_last4":     "4417",
		"operation_date": "2026-08-22",
		"amount":         "1200.00",
		"reason":         "wrong_amount",
	}
}

func testReady(t *testing.T, h *harness) {
	if err := h.store.Ready(h.ctx); err != nil {
		t.Errorf("Ready() = %v, want nil", err)
	}
}

func testSameTurnTwice(t *testing.T, h *harness) {
	req := h.req(Dispute, map[string]any{"card_last4": "карта •• 4417", "amount": "1 340 ₽"})
	first := h.do(req)
	if first.Replayed {
		t.Errorf("first delivery: Replayed = true, want false")
	}
	// A retry carries the same turn_id and the same request: the first
	// answer stands, and nothing is applied twice.
	second := h.do(req)
	if !second.Replayed {
		t.Errorf("second delivery: Replayed = false, want true")
	}
	if a, b := js(first), js(second); a != b {
		t.Errorf("second delivery answered\n%s\nwant the stored response\n%s", b, a)
	}

	s := h.get(h.active())
	if s.Version != 1 {
		t.Errorf("session version after a retry = %d, want 1", s.Version)
	}
	wantSlots(t, "after a retry", s, map[string]any{"card_last4": "4417", "amount": "1340.00"})
	hist := h.history(h.active())
	if len(hist.Turns) != 1 {
		t.Fatalf("history holds %d turns, want 1", len(hist.Turns))
	}
	if hist.Turns[0].ID != req.TurnID {
		t.Errorf("history turn id = %q, want %q", hist.Turns[0].ID, req.TurnID)
	}
	if !sameJSON(hist.Turns[0].Response, []byte(js(first))) {
		t.Errorf("stored response = %s, want %s", hist.Turns[0].Response, js(first))
	}
	wantList(t, "history changes", recorded(hist, 1), []string{"card_last4:FILLED", "amount:FILLED"})
	if n := len(hist.Changes); n != 2 {
		t.Errorf("history holds %d changes, want 2 (the retry must add none)", n)
	}

	// The same turn_id with other content is no retry: answering it with
	// the stored response would drop what the user said this time.
	for _, rewrite := range []func(*session.TurnRequest){
		func(r *session.TurnRequest) { r.Arguments = map[string]any{"amount": "99", "reason": "fraud"} },
		func(r *session.TurnRequest) {
			r.Arguments = map[string]any{"card_last4": "карта •• 4417", "amount": "1 341 ₽"}
		},
		func(r *session.TurnRequest) { r.Arguments = nil },
		func(r *session.TurnRequest) { r.Locale = "en" },
		func(r *session.TurnRequest) { yes := true; r.Confirmation = &yes },
	} {
		changed := req
		rewrite(&changed)
		_, err := h.engine.Turn(h.ctx, changed)
		wantProblem(t, "a turn_id reused with other content", err, problem.KindConflict, req.TurnID, "other arguments")
	}
	if s := h.get(h.active()); s.Version != 1 {
		t.Errorf("session version after rewritten retries = %d, want 1", s.Version)
	}
}

func testRetryAfterLaterTurns(t *testing.T, h *harness) {
	req := h.req(Dispute, map[string]any{"card_last4": "4417"})
	first := h.do(req)
	h.send(Dispute, map[string]any{"amount": "1 200 ₽"})
	h.send(Dispute, map[string]any{"card_last4": "0001"}) // irreversible: pending

	// A late retry of the first turn gets the first answer, not the state now,
	// and does not touch the pending change.
	again := h.do(req)
	if !again.Replayed {
		t.Errorf("late retry: Replayed = false, want true")
	}
	if a, b := js(first), js(again); a != b {
		t.Errorf("late retry answered\n%s\nwant the stored response\n%s", b, a)
	}
	s := h.load(h.active())
	if s.Version != 3 {
		t.Errorf("session version = %d, want 3", s.Version)
	}
	wantSlots(t, "after a late retry", s, map[string]any{"card_last4": "4417", "amount": "1200.00"})
	wantPending(t, "after a late retry", s, map[string]any{"card_last4": "0001"})
	if n := len(h.history(h.active()).Turns); n != 3 {
		t.Errorf("history holds %d turns, want 3", n)
	}
}

func testConcurrentSameTurn(t *testing.T, h *harness) {
	// Once as the conversation's first turn, once in the middle of it: a
	// store may serialize the first by creating the conversation and still
	// let two deliveries of a later turn through.
	deliver8(t, h, h.req(Dispute, map[string]any{"card_last4": "4417", "amount": "1 200 ₽"}), 1,
		map[string]any{"card_last4": "4417", "amount": "1200.00"}, 2)
	deliver8(t, h, h.req(Dispute, map[string]any{"operation_date": "вчера", "reason": "не та сумма"}), 2,
		disputeSlots(), 4)
}

// deliver8 sends one turn from 8 goroutines at once and checks it was
// applied once, as version, leaving those slots and that many changes in the history.
func deliver8(t *testing.T, h *harness, req session.TurnRequest, version int64, slots map[string]any, changes int) {
	t.Helper()
	const n = 8
	engine := h.slowEngine()
	results := make([]*session.Result, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			results[i], errs[i] = engine.Turn(h.ctx, req)
		})
	}
	close(start)
	wg.Wait()

	applied := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("%s delivery %d: unexpected error: %v", req.TurnID, i, errs[i])
		}
		if !results[i].Replayed {
			applied++
		}
	}
	if applied != 1 {
		t.Errorf("%d of %d deliveries of %s were applied, want exactly 1", applied, n, req.TurnID)
	}
	want := js(results[0])
	for i := 1; i < n; i++ {
		if got := js(results[i]); got != want {
			t.Errorf("%s delivery %d answered\n%s\nwant the same as delivery 0\n%s", req.TurnID, i, got, want)
		}
	}
	if results[0].Session.Version != version {
		t.Errorf("%s answered version %d, want %d", req.TurnID, results[0].Session.Version, version)
	}
	s := h.load(h.active())
	if s.Version != version {
		t.Errorf("after concurrent deliveries of %s: session version = %d, want %d", req.TurnID, s.Version, version)
	}
	wantSlots(t, "after concurrent deliveries of "+req.TurnID, s, slots)
	hist := h.history(h.active())
	if len(hist.Turns) != int(version) {
		t.Errorf("after concurrent deliveries of %s: history holds %d turns, want %d", req.TurnID, len(hist.Turns), version)
	}
	if len(hist.Changes) != changes {
		t.Errorf("after concurrent deliveries of %s: history holds %d changes, want %d", req.TurnID, len(hist.Changes), changes)
	}
}

func testPending(t *testing.T, h *harness, accept bool) {
	first := h.send(Dispute, disputeArgs())
	if first.Action != clarify.Confirm {
		t.Fatalf("a complete dispute: action = %s, want %s", first.Action, clarify.Confirm)
	}
	id := first.Session.ID

	// The amount is irreversible: a new one waits for the user.
	res := h.send(Dispute, map[string]any{"amount": float64(1340)})
	if res.Action != clarify.Reconfirm {
		t.Errorf("a changed amount: action = %s, want %s", res.Action, clarify.Reconfirm)
	}
	wantList(t, "changes of the amount turn", decisions(res.Changes), []string{"amount:PENDING"})
	if got := res.Session.Slots["amount"]; got != "1200.00" {
		t.Errorf("amount while pending = %v, want the old 1200.00", got)
	}
	wantPendingView := []merge.Change{{Slot: "amount", Old: "1200.00", New: "1340.00", Decision: merge.Pending}}
	if js(res.Session.Pending) != js(wantPendingView) {
		t.Errorf("view pending = %s, want %s", js(res.Session.Pending), js(wantPendingView))
	}
	if q := res.Question; q == nil || q.Slot != "amount" || q.Old != "1200.00" || q.New != "1340.00" {
		t.Errorf("reconfirm question = %s, want amount 1200.00 → 1340.00", js(q))
	}

	// The pending value lives in the store, not in the engine.
	for what, s := range map[string]*session.Session{
		"Get(conversation)":           h.get(h.active()),
		"store.Session(conversation)": h.load(h.active()),
		"store.Session(id)":           h.load(h.byID(id)),
	} {
		wantSlots(t, what, s, disputeSlots())
		wantPending(t, what, s, map[string]any{"amount": "1340.00"})
		if s.Version != 2 {
			t.Errorf("%s: version = %d, want 2", what, s.Version)
		}
	}

	// A fresh engine on the same store answers the re-confirmation.
	other := NewEngine(h.store, h.engine.Contracts())
	ans, err := other.Turn(h.ctx, h.confirm(Dispute, accept))
	if err != nil {
		t.Fatalf("answer: unexpected error: %v", err)
	}
	decision, amount := merge.Discarded, "1200.00"
	if accept {
		decision, amount = merge.Confirmed, "1340.00"
	}
	wantList(t, "changes of the answer", decisions(ans.Changes), []string{"amount:" + string(decision)})
	if ans.Action != clarify.Confirm {
		t.Errorf("after the answer: action = %s, want %s (the summary to approve)", ans.Action, clarify.Confirm)
	}
	if len(ans.Session.Pending) != 0 {
		t.Errorf("after the answer: view pending = %s, want none", js(ans.Session.Pending))
	}

	s := h.load(h.active())
	want := disputeSlots()
	want["amount"] = amount
	wantSlots(t, "after the answer", s, want)
	wantPending(t, "after the answer", s, nil)
	if s.Version != 3 {
		t.Errorf("after the answer: version = %d, want 3", s.Version)
	}
	if s.ID != id {
		t.Errorf("after the answer: session id = %s, want %s (the same session)", s.ID, id)
	}

	hist := h.history(h.byID(id))
	wantList(t, "history of version 2", recorded(hist, 2), []string{"amount:PENDING"})
	wantList(t, "history of version 3", recorded(hist, 3), []string{"amount:" + string(decision)})
	for _, ch := range hist.Changes {
		if ch.Version == 3 && (ch.Old != "1200.00" || ch.New != "1340.00") {
			t.Errorf("history of the answer: %v → %v, want 1200.00 → 1340.00", ch.Old, ch.New)
		}
	}
}

func testConcurrentDistinctTurns(t *testing.T, h *harness) {
	n := len(TwentySlots)
	reqs := make([]session.TurnRequest, n)
	want := map[string]any{}
	for i, slot := range TwentySlots {
		v := fmt.Sprintf("value of %s", slot)
		reqs[i] = h.req(Twenty, map[string]any{slot: v})
		want[slot] = v
	}
	engine := h.slowEngine()
	results := make([]*session.Result, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			results[i], errs[i] = engine.Turn(h.ctx, reqs[i])
		})
	}
	close(start)
	wg.Wait()

	versions := map[int64]string{}
	for i, res := range results {
		if errs[i] != nil {
			t.Fatalf("turn %s: unexpected error: %v", reqs[i].TurnID, errs[i])
		}
		if res.Replayed {
			t.Errorf("turn %s: Replayed = true, want false (a distinct turn_id)", reqs[i].TurnID)
		}
		if res.Session.ID != results[0].Session.ID {
			t.Errorf("turn %s: session %s, want %s (one session per conversation)", reqs[i].TurnID, res.Session.ID, results[0].Session.ID)
		}
		if prev, dup := versions[res.Session.Version]; dup {
			t.Errorf("turns %s and %s both answered version %d", prev, reqs[i].TurnID, res.Session.Version)
		}
		versions[res.Session.Version] = reqs[i].TurnID
		wantList(t, "changes of "+reqs[i].TurnID, decisions(res.Changes), []string{TwentySlots[i] + ":FILLED"})
	}

	s := h.load(h.active())
	if s.Version != int64(n) {
		t.Errorf("final version = %d, want %d (one per turn)", s.Version, n)
	}
	wantSlots(t, "after concurrent turns", s, want)

	hist := h.history(h.active())
	if len(hist.Turns) != n {
		t.Fatalf("history holds %d turns, want %d", len(hist.Turns), n)
	}
	turnVersion := map[string]int64{}
	for i, tr := range hist.Turns {
		if tr.Version != int64(i+1) {
			t.Errorf("history turn %d has version %d, want %d", i, tr.Version, i+1)
		}
		turnVersion[tr.ID] = tr.Version
	}
	filled := map[string]int{}
	for _, ch := range hist.Changes {
		if ch.Decision != merge.Filled {
			t.Errorf("history change %s:%s, want only FILLED", ch.Slot, ch.Decision)
		}
		filled[ch.Slot]++
		if v, ok := turnVersion[ch.TurnID]; !ok || v != ch.Version {
			t.Errorf("change of %s is version %d of turn %q, whose version is %d", ch.Slot, ch.Version, ch.TurnID, v)
		}
	}
	for _, slot := range TwentySlots {
		if filled[slot] != 1 {
			t.Errorf("history has %d FILLED changes of %s, want 1", filled[slot], slot)
		}
	}
}

// testConcurrentShippedSlots fills each slot of a dispute, and each of a
// flight search in another conversation, from its own goroutine.
func testConcurrentShippedSlots(t *testing.T, h *harness) {
	type turn struct {
		conv, tool, slot string
		value            any
	}
	turns := []turn{
		{"conv-dispute", Dispute, "card_last4", "•• 4417"},
		{"conv-dispute", Dispute, "operation_date", "22.08.2026"},
		{"conv-dispute", Dispute, "amount", "1 200,50 руб."},
		{"conv-dispute", Dispute, "reason", "списали дважды"},
		{"conv-dispute", Dispute, "original_operation_id", "OP-77812"},
		{"conv-flight", Flights, "from", "mad"},
		{"conv-flight", Flights, "to", " KBP "},
		{"conv-flight", Flights, "date", "2026-09-01"},
	}
	want := map[string]map[string]any{
		"conv-dispute": {"card_last4": "4417", "operation_date": "2026-08-22", "amount": "1200.50", "reason": "duplicate", "original_operation_id": "OP-77812"},
		"conv-flight":  {"from": "MAD", "to": "KBP", "date": "2026-09-01"},
	}
	engine := h.slowEngine()
	errs := make([]error, len(turns))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, tt := range turns {
		r := h.req(tt.tool, map[string]any{tt.slot: tt.value})
		r.ConversationID = tt.conv
		wg.Go(func() {
			<-start
			_, errs[i] = engine.Turn(h.ctx, r)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("turn filling %s: unexpected error: %v", turns[i].slot, err)
		}
	}
	for conv, slots := range want {
		s := h.load(session.Lookup{Tenant: h.tenant, ConversationID: conv})
		wantSlots(t, conv, s, slots)
		if s.Version != int64(len(slots)) {
			t.Errorf("%s: version = %d, want %d", conv, s.Version, len(slots))
		}
		hist := h.history(session.Lookup{Tenant: h.tenant, ConversationID: conv})
		if len(hist.Turns) != len(slots) || len(hist.Changes) != len(slots) {
			t.Errorf("%s: history holds %d turns and %d changes, want %d of each", conv, len(hist.Turns), len(hist.Changes), len(slots))
		}
	}
}

func testTenants(t *testing.T, h *harness) {
	const other = "globex-travel"
	reqA := h.req(Dispute, map[string]any{"card_last4": "4417", "amount": "1 200 ₽"})
	resA := h.do(reqA)
	// The same conversation_id and even the same turn_id under another
	// tenant is another conversation: not a replay of the first.
	reqB := reqA
	reqB.Tenant = other
	reqB.Arguments = map[string]any{"card_last4": "0001"}
	resB := h.do(reqB)
	if resB.Replayed {
		t.Fatalf("the same turn_id under another tenant was answered from the first tenant's turn: %s", js(resB))
	}
	if resA.Session.ID == resB.Session.ID {
		t.Fatalf("both tenants share session %s, want two sessions", resA.Session.ID)
	}
	if resB.Session.Version != 1 {
		t.Errorf("%s: version = %d, want 1", other, resB.Session.Version)
	}

	lookB := session.Lookup{Tenant: other, ConversationID: h.conv}
	wantSlots(t, h.tenant, h.get(h.active()), map[string]any{"card_last4": "4417", "amount": "1200.00"})
	wantSlots(t, other, h.get(lookB), map[string]any{"card_last4": "0001"})
	if n := len(h.history(lookB).Turns); n != 1 {
		t.Errorf("%s history holds %d turns, want 1", other, n)
	}

	idA := resA.Session.ID
	for what, l := range map[string]session.Lookup{
		"conversation under an unknown tenant":      {Tenant: "umbrella", ConversationID: h.conv},
		"conversation under no tenant":              {ConversationID: h.conv},
		"session id under the other tenant":         {Tenant: other, SessionID: idA},
		"session id and conversation, other tenant": {Tenant: other, ConversationID: h.conv, SessionID: idA},
		"session id with another conversation":      {Tenant: h.tenant, ConversationID: "conv-other", SessionID: idA},
	} {
		_, err := h.engine.Get(h.ctx, l)
		wantErr(t, "Get "+what, err, session.ErrNotFound)
		_, err = h.store.Session(h.ctx, l)
		wantErr(t, "store.Session "+what, err, session.ErrNotFound)
		_, err = h.engine.History(h.ctx, l)
		wantErr(t, "History "+what, err, session.ErrNotFound)
		_, _, err = h.engine.Reset(h.ctx, l, Now)
		wantErr(t, "Reset "+what, err, session.ErrNotFound)
	}
	// The wrong-tenant resets above changed nothing.
	for _, l := range []session.Lookup{h.active(), lookB} {
		if s := h.load(l); s.Status != session.Active || s.Version != 1 {
			t.Errorf("%s after foreign resets: %s v%d, want active v1", l.Tenant, s.Status, s.Version)
		}
	}
}

func testTurnIDPerConversation(t *testing.T, h *harness) {
	r1 := h.req(Flights, map[string]any{"from": "MAD"})
	res1 := h.do(r1)
	r2 := r1
	r2.ConversationID = "conv-second"
	r2.Arguments = map[string]any{"from": "KBP"}
	res2 := h.do(r2)
	if res2.Replayed {
		t.Fatalf("the same turn_id in another conversation was answered from the first: %s", js(res2))
	}
	if res1.Session.ID == res2.Session.ID {
		t.Errorf("two conversations share session %s", res1.Session.ID)
	}
	wantSlots(t, "second conversation", h.load(session.Lookup{Tenant: h.tenant, ConversationID: "conv-second"}), map[string]any{"from": "KBP"})
	wantSlots(t, "first conversation", h.load(h.active()), map[string]any{"from": "MAD"})
}

func testNotFound(t *testing.T, h *harness) {
	random := uuid.NewString()
	for what, l := range map[string]session.Lookup{
		"no conversation": h.active(),
		"no such session": h.byID(random),
	} {
		_, err := h.engine.Get(h.ctx, l)
		wantErr(t, "Get "+what, err, session.ErrNotFound)
		_, err = h.engine.History(h.ctx, l)
		wantErr(t, "History "+what, err, session.ErrNotFound)
		_, _, err = h.engine.Reset(h.ctx, l, Now)
		wantErr(t, "Reset "+what, err, session.ErrNotFound)
		err = h.storeUpdate(l, func(s *session.Session) (*session.Commit, error) {
			t.Errorf("Update %s called its function with %s", what, js(s))
			return nil, nil
		})
		wantErr(t, "store.Update "+what, err, session.ErrNotFound)
	}
}

func testReset(t *testing.T, h *harness) {
	first := h.send(Dispute, map[string]any{"card_last4": "4417", "amount": "1 200 ₽", "reason": "списали дважды"})
	oldID := first.Session.ID
	at := Now.Add(5 * time.Minute)

	all, changes, err := h.engine.Reset(h.ctx, h.active(), at)
	if err != nil || len(all) != 1 {
		t.Fatalf("Reset: %v, %v; want one session reset", all, err)
	}
	out := all[0]
	if out.ID != oldID || out.Status != session.Reset || out.Version != 2 || !out.EndedAt.Equal(at) {
		t.Errorf("Reset returned %s %s v%d ended %v, want %s reset v2 ended %v", out.ID, out.Status, out.Version, out.EndedAt, oldID, at)
	}
	wantCleared := []string{"card_last4:CLEARED", "amount:CLEARED", "reason:CLEARED"}
	var got []string
	for _, ch := range changes {
		got = append(got, ch.Slot+":"+string(ch.Decision))
	}
	wantList(t, "Reset changes", got, wantCleared)

	old := h.get(h.byID(oldID))
	if old.Status != session.Reset || old.Version != 2 || !old.EndedAt.Equal(at) {
		t.Errorf("stored reset session: %s v%d ended %v, want reset v2 ended %v", old.Status, old.Version, old.EndedAt, at)
	}
	_, err = h.engine.Get(h.ctx, h.active())
	wantErr(t, "active session after a reset", err, session.ErrNotFound)

	hist := h.history(h.byID(oldID))
	wantList(t, "history of the reset", recorded(hist, 2), wantCleared)
	olds := map[string]any{"card_last4": "4417", "amount": "1200.00", "reason": "duplicate"}
	for _, ch := range hist.Changes {
		if ch.Version != 2 {
			continue
		}
		if ch.Old != olds[ch.Slot] || ch.New != nil || ch.SessionID != oldID {
			t.Errorf("cleared %s: session %s, %v → %v, want session %s, %v → nil", ch.Slot, ch.SessionID, ch.Old, ch.New, oldID, olds[ch.Slot])
		}
	}
	if len(hist.Turns) != 1 {
		t.Errorf("history of the reset session holds %d turns, want 1 (a reset is not a turn)", len(hist.Turns))
	}

	// The next turn starts afresh.
	next := h.send(Dispute, map[string]any{"operation_date": "вчера"})
	if next.Session.ID == oldID {
		t.Errorf("the turn after a reset went to the reset session %s", oldID)
	}
	if next.Session.Version != 1 || next.Session.Status != session.Active {
		t.Errorf("the turn after a reset: v%d %s, want v1 active", next.Session.Version, next.Session.Status)
	}
	wantSlots(t, "the session after a reset", h.get(h.active()), map[string]any{"operation_date": "2026-08-22"})

	// An ended session takes no reset, and the new one is untouched by it.
	_, _, err = h.engine.Reset(h.ctx, h.byID(oldID), at)
	wantErr(t, "Reset of a reset session", err, session.ErrNotActive)
	if s := h.load(h.active()); s.ID != next.Session.ID || s.Version != 1 {
		t.Errorf("active session after a refused reset: %s v%d, want %s v1", s.ID, s.Version, next.Session.ID)
	}
	// The turn after the reset said so (version 3) and closed it.
	if s := h.load(h.byID(oldID)); s.Version != 3 || s.Status != session.Reset || s.Open {
		t.Errorf("reset session after a refused reset: %s v%d open %v, want reset v3, no longer open", s.Status, s.Version, s.Open)
	}
}

// testDigression parks a dispute while a flight search is filled, then
// comes back to it: both sessions stay open in the store, each keeps its
// slots, and a late retry of the first turn is a replay, not a move back.
func testDigression(t *testing.T, h *harness) {
	firstReq := h.req(Dispute, map[string]any{"card_last4": "4417", "amount": "1 200 ₽"})
	first := h.do(firstReq)
	disputeID := first.Session.ID

	r := h.req(Flights, map[string]any{"from": "mad", "to": "KBP"})
	r.Now = Now.Add(2 * time.Minute)
	flight := h.do(r)
	if flight.Session.ID == disputeID || flight.Session.Tool != Flights || flight.Previous != nil {
		t.Fatalf("a turn of another tool: %s %s previous %v, want a session of its own and nothing ended", flight.Session.ID, flight.Session.Tool, flight.Previous)
	}
	if len(flight.OpenSessions) != 1 || flight.OpenSessions[0].SessionID != disputeID {
		t.Errorf("open sessions %+v, want the parked dispute", flight.OpenSessions)
	}
	parked := h.load(h.byID(disputeID))
	if parked.Status != session.Active || !parked.Open || parked.Version != 1 {
		t.Errorf("parked dispute: %s open %v v%d, want active, open, untouched", parked.Status, parked.Open, parked.Version)
	}
	if s := h.get(h.active()); s.ID != flight.Session.ID {
		t.Errorf("the conversation's most recent session = %s, want the flight search %s", s.ID, flight.Session.ID)
	}
	if s := h.get(session.Lookup{Tenant: h.tenant, ConversationID: h.conv, Tool: Dispute}); s.ID != disputeID {
		t.Errorf("the dispute by its tool = %s, want %s", s.ID, disputeID)
	}

	back := h.req(Dispute, map[string]any{"reason": "fraud"})
	back.Now = Now.Add(5 * time.Minute)
	res := h.do(back)
	if res.Session.ID != disputeID || !res.Resumed || res.Notice == "" || res.Session.Slots["amount"] != "1200.00" {
		t.Errorf("back on the dispute: %s resumed %v notice %q slots %v, want the same session, said so", res.Session.ID, res.Resumed, res.Notice, res.Session.Slots)
	}

	again := h.do(firstReq)
	if !again.Replayed {
		t.Errorf("late retry of the first turn: Replayed = false, want true")
	}
	if s := h.load(h.byID(flight.Session.ID)); s.Status != session.Active || !s.Open || s.Version != 1 {
		t.Errorf("the flight search after a late retry: %s open %v v%d, want untouched", s.Status, s.Open, s.Version)
	}
	// A turn_id of one tool's call is no answer to another's.
	other := firstReq
	other.Tool = Flights
	if _, err := h.engine.Turn(h.ctx, other); err == nil {
		t.Error("a turn_id of the dispute answered a flight search's call")
	}
}

func testHistoryOrder(t *testing.T, h *harness) {
	// turn_ids that do not sort in the order they were sent
	turns := []struct {
		id   string
		args map[string]any
	}{
		{"t-zulu", map[string]any{"card_last4": "4417"}},
		{"t-alpha", map[string]any{"amount": "1 200 ₽", "operation_date": "вчера"}},
		{"t-mike", map[string]any{"amount": "1 340 ₽"}},
		{"t-bravo", map[string]any{"reason": "fraud", "card_last4": nil}},
	}
	var results []*session.Result
	for i, tt := range turns {
		r := h.req(Dispute, tt.args)
		r.TurnID = tt.id
		r.Now = Now.Add(time.Duration(i) * time.Minute)
		results = append(results, h.do(r))
	}
	id := results[0].Session.ID
	for name, l := range map[string]session.Lookup{"by conversation": h.active(), "by id": h.byID(id)} {
		hist := h.history(l)
		if len(hist.Turns) != len(turns) {
			t.Fatalf("%s: history holds %d turns, want %d", name, len(hist.Turns), len(turns))
		}
		for i, tr := range hist.Turns {
			res := results[i]
			if tr.ID != turns[i].id || tr.Version != int64(i+1) || tr.SessionID != id {
				t.Errorf("%s: turn %d is %s v%d of %s, want %s v%d of %s", name, i, tr.ID, tr.Version, tr.SessionID, turns[i].id, i+1, id)
			}
			if tr.Action != string(res.Action) {
				t.Errorf("%s: turn %s action = %s, want %s", name, tr.ID, tr.Action, res.Action)
			}
			if at := Now.Add(time.Duration(i) * time.Minute); !tr.At.Equal(at) {
				t.Errorf("%s: turn %s at %v, want %v", name, tr.ID, tr.At, at)
			}
			if !sameJSON(tr.Response, []byte(js(res))) {
				t.Errorf("%s: turn %s response = %s, want %s", name, tr.ID, tr.Response, js(res))
			}
			wantList(t, fmt.Sprintf("%s: history of version %d", name, i+1), recorded(hist, int64(i+1)), decisions(res.Changes))
		}
		for i, ch := range hist.Changes {
			if i > 0 && ch.Version < hist.Changes[i-1].Version {
				t.Errorf("%s: change %d (version %d) after version %d: want oldest first", name, i, ch.Version, hist.Changes[i-1].Version)
			}
			if ch.Version < 1 || ch.Version > int64(len(turns)) || ch.TurnID != turns[ch.Version-1].id {
				t.Errorf("%s: change of %s at version %d names turn %q", name, ch.Slot, ch.Version, ch.TurnID)
			}
		}
	}
}
