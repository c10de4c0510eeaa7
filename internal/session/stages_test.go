package session

import (
	"testing"
	"time"

	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/merge"
)

// Each stage of the planner on its own, from a turn built by hand.

func stagedTurn(t *testing.T, current *Session, args map[string]any, confirm *bool) *turn {
	t.Helper()
	cat := testCatalog(t)
	req := TurnRequest{Tenant: "bank", ConversationID: "c", Tool: dispute, TurnID: "t", Arguments: args, Confirmation: confirm, Now: seedNow}
	var open []*Session
	if current != nil {
		open = []*Session{current}
	}
	return &turn{in: planInput{contract: cat.Get(dispute), contracts: cat, config: Config{MaxAttempts: 3, MaxOpenSessions: 8}, req: req,
		open: open, newID: constID("0190a1b2-c3d4-7e5f-8a9b-000000000001")}, c: cat.Get(dispute)}
}

func disputeSession(updated time.Time, lastAction string, slots map[string]any) *Session {
	return &Session{ID: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", Key: Key{Tenant: "bank", ConversationID: "c"}, Tool: dispute,
		Status: Active, Version: 3, State: merge.State{Slots: slots}, LastAction: lastAction, Locale: "ru",
		TimeZone: "Europe/Moscow", CreatedAt: updated, UpdatedAt: updated}
}

func TestStageLifetime(t *testing.T) {
	t.Parallel()
	ended := disputeSession(seedNow, "ASK", map[string]any{"card_last4": "4417"})
	ended.Status = Expired
	other := disputeSession(seedNow, "ASK", map[string]any{"from": "MAD"})
	other.Tool = flights
	for _, tc := range []struct {
		name     string
		current  *Session
		confirm  *bool
		session  bool   // the turn goes on with the current session
		resume   bool   // it asks whether to go on
		previous Status // the session it reports ended, "" for none
	}{
		{"no session", nil, nil, false, false, ""},
		{"a fresh one", disputeSession(seedNow.Add(-time.Minute), "ASK", map[string]any{}), nil, true, false, ""},
		{"ended outside a turn", ended, nil, false, false, Expired},
		{"past its ttl", disputeSession(seedNow.Add(-25*time.Hour), "ASK", map[string]any{}), nil, false, false, Expired},
		{"of another tool: parked, not ended", other, nil, false, false, ""},
		{"stale", disputeSession(seedNow.Add(-31*time.Minute), "ASK", map[string]any{}), nil, true, true, ""},
		{"asked to resume, no answer", disputeSession(seedNow, "RESUME", map[string]any{}), nil, true, true, ""},
		{"asked to resume, yes", disputeSession(seedNow, "RESUME", map[string]any{}), ptr(true), true, false, ""},
		{"asked to resume, no", disputeSession(seedNow, "RESUME", map[string]any{}), ptr(false), false, false, Reset},
	} {
		tt := stagedTurn(t, tc.current, map[string]any{"reason": "fraud"}, tc.confirm)
		if err := tt.lifetime(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if (tt.s != nil) != tc.session || tt.resume != tc.resume {
			t.Errorf("%s: goes on %v, resume %v; want %v, %v", tc.name, tt.s != nil, tt.resume, tc.session, tc.resume)
		}
		switch {
		case tc.previous == "" && len(tt.ended) > 0:
			t.Errorf("%s: reports %s ended", tc.name, tt.ended[0].Status)
		case tc.previous != "" && (len(tt.ended) != 1 || tt.ended[0].Status != tc.previous || tt.ended[0].Open):
			t.Errorf("%s: ended %v, want one %s, no longer open", tc.name, tt.ended, tc.previous)
		}
		if tc.confirm != nil && tt.confirm != nil {
			t.Errorf("%s: the answer to RESUME was not consumed", tc.name)
		}
	}
}

func TestStageAnswer(t *testing.T) {
	t.Parallel()
	slots := map[string]any{"amount": "1200.00"}
	for _, tc := range []struct {
		name       string
		lastAction string
		pending    map[string]any
		confirm    *bool
		changes    []string
		approved   bool
		declined   bool
	}{
		{"no answer", "RECONFIRM", map[string]any{"amount": "1340.00"}, nil, []string{}, false, false},
		{"yes to a re-confirmation", "RECONFIRM", map[string]any{"amount": "1340.00"}, ptr(true), []string{"amount:CONFIRMED"}, false, false},
		{"no to a re-confirmation", "RECONFIRM", map[string]any{"amount": "1340.00"}, ptr(false), []string{"amount:DISCARDED"}, false, false},
		{"yes to the approval", "CONFIRM", nil, ptr(true), []string{}, true, false},
		{"no to the approval", "CONFIRM", nil, ptr(false), []string{}, false, true},
		{"yes to a question", "ASK", nil, ptr(true), []string{}, false, false},
	} {
		s := disputeSession(seedNow, tc.lastAction, slots)
		s.State.Pending = tc.pending
		tt := stagedTurn(t, nil, nil, tc.confirm)
		tt.s, tt.confirm = s.Clone(), tc.confirm
		tt.answer()
		var got []string
		for _, ch := range tt.changes {
			got = append(got, ch.Slot+":"+string(ch.Decision))
		}
		wantList(t, tc.name, append([]string{}, got...), tc.changes)
		if (tt.s.ApprovedKey != "") != tc.approved || tt.declined != tc.declined {
			t.Errorf("%s: approved %q, declined %v; want %v, %v", tc.name, tt.s.ApprovedKey, tt.declined, tc.approved, tc.declined)
		}
	}
}

func TestStageDecideAndCap(t *testing.T) {
	t.Parallel()
	full := map[string]any{"card_last4": "4417", "operation_date": "2026-08-22", "amount": "1200.00", "reason": "fraud"}
	for _, tc := range []struct {
		name     string
		slots    map[string]any
		declined bool
		merged   []merge.Change
		attempts map[string]int
		rejected []string
		action   clarify.Action
		status   Status
	}{
		{"missing slots", map[string]any{"card_last4": "4417"}, false, nil, nil, nil, clarify.Ask, Active},
		{"complete", full, false, nil, nil, nil, clarify.Confirm, Active},
		{"declined, nothing changed", full, true, nil, nil, nil, clarify.Cancelled, Cancelled},
		{"declined with a change", full, true, []merge.Change{{Slot: "reason", Decision: merge.Overwritten}}, nil, nil, clarify.Confirm, Active},
		{"a third refusal", map[string]any{"card_last4": "4417"}, false, nil, map[string]int{"reason": 2}, []string{"reason"}, clarify.Handoff, Failed},
		{"declined at the cap", full, true, nil, map[string]int{"reason": 3}, nil, clarify.Cancelled, Cancelled},
	} {
		tt := stagedTurn(t, nil, nil, nil)
		tt.s = disputeSession(seedNow, "CONFIRM", tc.slots)
		tt.s.Attempts = tc.attempts
		tt.declined, tt.merged, tt.rejected = tc.declined, tc.merged, tc.rejected
		tt.decide()
		tt.cap()
		if tt.step.Action != tc.action || tt.s.Status != tc.status {
			t.Errorf("%s: %s, %s; want %s, %s", tc.name, tt.step.Action, tt.s.Status, tc.action, tc.status)
		}
		if tc.action == clarify.Handoff && (tt.problem == nil || !tt.problem.OwnerActionRequired || tt.step.Question.Slot != "reason") {
			t.Errorf("%s: hand-off problem %+v", tc.name, tt.problem)
		}
	}
}

func TestStageOpen(t *testing.T) {
	t.Parallel()
	tt := stagedTurn(t, nil, nil, nil)
	tt.in.req.Locale, tt.in.req.TimeZone = "uk", "Europe/Kyiv"
	kyiv, _ := time.LoadLocation("Europe/Kyiv")
	tt.in.zones = map[string]*time.Location{"Europe/Kyiv": kyiv}
	other := disputeSession(seedNow, "ASK", map[string]any{"card_last4": "4417", "amount": "много", "from": "MAD"})
	other.Tool, other.ID = "test.carry", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a00"
	tt.others = []*Session{other}
	tt.open()
	if tt.s.ID != tt.in.newID() || tt.s.Locale != "uk" || tt.s.TimeZone != "Europe/Kyiv" || tt.env.Location != kyiv {
		t.Errorf("a new session: %+v, env %+v", tt.s, tt.env)
	}
	wantList(t, "carried", []string{tt.changes[0].Slot + ":" + string(tt.changes[0].Decision)}, []string{"card_last4:CARRIED"})
	if len(tt.changes) != 1 {
		t.Errorf("carried %+v: want only the value that fits", tt.changes)
	}
	cur := disputeSession(seedNow, "ASK", map[string]any{"card_last4": "4417"})
	cur.Held = map[string]any{"x": 1}
	tt = stagedTurn(t, cur, nil, nil)
	tt.s = cur
	tt.open()
	if tt.s == cur || tt.s.Held != nil || tt.s.Locale != "ru" || tt.env.Location.String() != "Europe/Moscow" && tt.env.Location.String() != "UTC" {
		t.Errorf("an existing session: %+v, env %v", tt.s, tt.env.Location)
	}
	if cur.Held == nil {
		t.Error("open changed the session it was given")
	}
}
