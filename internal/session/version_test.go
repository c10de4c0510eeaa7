package session_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/merge"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
	"github.com/slotd/slotd/internal/session/sessiontest"
)

// Two replicas on one store: one loaded the dispute example, the other its
// v2 (examples/dispute-v2: merchant newly required, wrong_amount retired,
// original_operation_id removed, operation_date made irreversible).

// replica is an engine serving cat on st, registered at at.
func replica(t *testing.T, st *memstore.Store, cat *contract.Catalog, name string, at time.Time) *session.Engine {
	t.Helper()
	e := session.NewEngine(st, cat, session.Config{TrustClientClock: true, Clock: func() time.Time { return now }})
	v := session.NewVersions(st, cat)
	if _, err := v.Register(context.Background(), name, at); err != nil {
		t.Fatal(err)
	}
	e.UseVersions(v)
	return e
}

func twoReplicas(t *testing.T, upgrade string) (v1, v2 *session.Engine, st *memstore.Store, ver1, ver2 string) {
	t.Helper()
	cat1, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	cat2 := sessiontest.DisputeV2(t, upgrade)
	st = memstore.New()
	v1 = replica(t, st, cat1, "replica-a", now.Add(-time.Hour))
	v2 = replica(t, st, cat2, "replica-b", now.Add(-time.Minute))
	ver1, ver2 = cat1.Get("bank.open_dispute").Version, cat2.Get("bank.open_dispute").Version
	if ver1 == ver2 {
		t.Fatal("v1 and v2 share a version")
	}
	return v1, v2, st, ver1, ver2
}

func TestPinnedSessionFinishesOnItsVersionOnEveryReplica(t *testing.T) {
	t.Parallel()
	a, b, st, ver1, _ := twoReplicas(t, "pin")
	r := turn(t, a, "1", map[string]any{"card_last4": "•• 4417", "operation_date": "2026-08-20"})
	if r.Session.ContractVersion != ver1 {
		t.Fatalf("started on %q, want %s", r.Session.ContractVersion, ver1)
	}
	// The v2 replica takes the next turns: v1 still has wrong_amount and
	// no merchant, so the dispute goes to CONFIRM without one.
	r = turn(t, b, "2", map[string]any{"amount": "1 200,50 ₽", "reason": "wrong_amount"})
	if r.Action != clarify.Confirm || r.Session.ContractVersion != ver1 || r.Migration != nil {
		t.Fatalf("on the v2 replica: %s on %q (migration %+v), want CONFIRM on %s", r.Action, r.Session.ContractVersion, r.Migration, ver1)
	}
	r = turn(t, a, "3", nil, true)
	if r.Action != clarify.Ready || r.Session.ContractVersion != ver1 || r.Arguments["reason"] != "wrong_amount" {
		t.Fatalf("approval: %s on %q with %v", r.Action, r.Session.ContractVersion, r.Arguments)
	}
	h, err := st.History(context.Background(), session.Lookup{Tenant: "bank", SessionID: r.Session.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range h.Turns {
		if tr.ContractVersion != ver1 {
			t.Errorf("turn %s recorded on %q, want %s", tr.ID, tr.ContractVersion, ver1)
		}
	}
	// A new conversation on the v2 replica starts on v2.
	res, err := b.Turn(context.Background(), session.TurnRequest{Tenant: "bank", ConversationID: "chat-43", Tool: "bank.open_dispute",
		TurnID: "1", Arguments: map[string]any{"reason": "wrong_amount"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Session.ContractVersion == ver1 || res.Problem == nil || !slices.Contains(res.Problem.Errors[0].Allowed, "not_received") {
		t.Errorf("a new session on v2: version %s, problem %+v; want v2, wrong_amount refused", res.Session.ContractVersion, res.Problem)
	}
}

func TestMigrateMovesOnceSlotBySlotAndNeverBack(t *testing.T) {
	t.Parallel()
	a, b, st, ver1, ver2 := twoReplicas(t, "migrate")
	turn(t, a, "1", map[string]any{"card_last4": "4417", "operation_date": "2026-08-20", "amount": "1200.50",
		"reason": "wrong_amount", "original_operation_id": "OP-77812"})
	r := turn(t, b, "2", nil)
	m := r.Migration
	if m == nil || m.From != ver1 || m.To != ver2 || r.Session.ContractVersion != ver2 {
		t.Fatalf("migration %+v on %q, want %s -> %s", m, r.Session.ContractVersion, ver1, ver2)
	}
	if !slices.Equal(m.Dropped, []string{"original_operation_id"}) || !slices.Equal(m.Refused, []string{"reason"}) ||
		!slices.Equal(m.Reconfirm, []string{"operation_date"}) {
		t.Errorf("dropped %v refused %v reconfirm %v", m.Dropped, m.Refused, m.Reconfirm)
	}
	if r.Problem == nil || len(r.Problem.Errors) != 1 || r.Problem.Errors[0].Pointer != "/reason" ||
		!slices.Equal(r.Problem.Errors[0].Allowed, []string{"duplicate", "fraud", "not_received"}) {
		t.Errorf("the retired reason: problem %+v, want a repair of /reason with the three allowed values", r.Problem)
	}
	if !strings.Contains(r.Notice, "original_operation_id") || !strings.Contains(r.Notice, "Форма") {
		t.Errorf("notice %q does not say what was dropped", r.Notice)
	}
	if _, ok := r.Session.Slots["original_operation_id"]; ok {
		t.Errorf("dropped slot still held: %v", r.Session.Slots)
	}
	// Back on the v1 replica: the session stays on v2, which asks what v1
	// never would.
	seen := map[string]bool{}
	for i, step := range []struct {
		args    map[string]any
		confirm []bool
	}{
		{map[string]any{"reason": "fraud"}, nil},
		{nil, []bool{true}},
		{map[string]any{"merchant": "Ozon"}, nil},
		{nil, []bool{true}},
	} {
		e := a
		if i%2 == 1 {
			e = b
		}
		r = turn(t, e, string(rune('3'+i)), step.args, step.confirm...)
		if r.Session.ContractVersion != ver2 || r.Migration != nil {
			t.Fatalf("turn %d: on %q, migration %+v; want %s for good", i+3, r.Session.ContractVersion, r.Migration, ver2)
		}
		seen[string(r.Action)] = true
		if r.Question != nil {
			seen[r.Question.Slot] = true
		}
	}
	if r.Action != clarify.Ready || r.Arguments["merchant"] != "Ozon" || r.Arguments["reason"] != "fraud" {
		t.Fatalf("last turn %s with %v, want READY with the merchant and the new reason", r.Action, r.Arguments)
	}
	if !seen["merchant"] || !seen["operation_date"] {
		t.Errorf("asked %v: want the new merchant asked and the date re-confirmed", seen)
	}
	// The audit trail: one change per slot the session held, each naming
	// both versions.
	h, err := st.History(context.Background(), session.Lookup{Tenant: "bank", SessionID: r.Session.ID})
	if err != nil {
		t.Fatal(err)
	}
	moved := map[string]merge.Decision{}
	for _, ch := range h.Changes {
		if ch.Note == "" {
			continue
		}
		if !strings.Contains(ch.Note, ver1) || !strings.Contains(ch.Note, ver2) || ch.TurnID != "2" {
			t.Errorf("change %s %s note %q of turn %s", ch.Slot, ch.Decision, ch.Note, ch.TurnID)
		}
		if _, twice := moved[ch.Slot]; twice {
			t.Errorf("slot %s moved twice", ch.Slot)
		}
		moved[ch.Slot] = ch.Decision
	}
	want := map[string]merge.Decision{"card_last4": merge.Migrated, "operation_date": merge.Pending, "amount": merge.Migrated,
		"reason": merge.Rejected, "original_operation_id": merge.Cleared}
	if len(moved) != len(want) {
		t.Errorf("moved %v, want %v", moved, want)
	}
	for k, d := range want {
		if moved[k] != d {
			t.Errorf("slot %s moved as %s, want %s", k, moved[k], d)
		}
	}
}

func TestPurgedVersionIsAClearProblem(t *testing.T) {
	t.Parallel()
	a, b, st, ver1, _ := twoReplicas(t, "pin")
	turn(t, a, "1", map[string]any{"card_last4": "4417"})
	st.ForgetVersion("bank.open_dispute", ver1)
	_, err := b.Turn(context.Background(), session.TurnRequest{Tenant: "bank", ConversationID: "chat-42", Tool: "bank.open_dispute",
		TurnID: "2", Arguments: map[string]any{"amount": "100"}})
	pe := problemOf(t, err)
	if !strings.Contains(pe.Problem.Title, "version is gone") || !strings.Contains(pe.Problem.Detail, ver1) || !pe.Problem.OwnerActionRequired {
		t.Errorf("problem %+v", pe.Problem)
	}
	// The replica that loaded it still serves it.
	if r := turn(t, a, "3", map[string]any{"amount": "100"}); r.Session.ContractVersion != ver1 {
		t.Errorf("on its own replica: %q", r.Session.ContractVersion)
	}
}

func TestVersionsListCountsActiveSessions(t *testing.T) {
	t.Parallel()
	a, b, st, ver1, ver2 := twoReplicas(t, "pin")
	turn(t, a, "1", map[string]any{"card_last4": "4417"})
	if _, err := b.Turn(context.Background(), session.TurnRequest{Tenant: "bank", ConversationID: "chat-9", Tool: "bank.open_dispute", TurnID: "1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Turn(context.Background(), session.TurnRequest{Tenant: "bank", ConversationID: "chat-10", Tool: "bank.open_dispute", TurnID: "1"}); err != nil {
		t.Fatal(err)
	}
	vs, err := st.ContractVersions(context.Background(), "bank.open_dispute")
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0].Version != ver1 || vs[0].Active != 1 || vs[1].Version != ver2 || vs[1].Active != 2 ||
		vs[0].Replica != "replica-a" || vs[1].Replica != "replica-b" {
		t.Errorf("versions %+v", vs)
	}
}
