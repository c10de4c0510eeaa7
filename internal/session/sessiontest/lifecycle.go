package sessiontest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/session"
)

// turnAt sends a turn of the harness conversation at a given clock.
func (h *harness) turnAt(at time.Time, tool string, args map[string]any, confirm *bool) *session.Result {
	h.t.Helper()
	r := h.req(tool, args)
	r.Now, r.Confirmation = at, confirm
	res, err := h.engine.Turn(h.ctx, r)
	if err != nil {
		h.t.Fatalf("turn at %s: %v", at.Format(time.RFC3339), err)
	}
	return res
}

func yes() *bool { v := true; return &v }

func testStaleResume(t *testing.T, h *harness) {
	first := h.turnAt(Now, Dispute, disputeArgs(), nil)
	res := h.turnAt(Now.Add(31*time.Minute), Dispute, map[string]any{"reason": "fraud"}, nil)
	if res.Action != clarify.Resume {
		t.Fatalf("a turn 31 minutes later: %s, want RESUME", res.Action)
	}
	stored, err := h.store.Session(h.ctx, h.active())
	if err != nil {
		t.Fatal(err)
	}
	if stored.Held["reason"] != "fraud" || stored.State.Slots["reason"] == "fraud" {
		t.Errorf("held %v, slots %v: the argument must be held, not applied", stored.Held, stored.State.Slots)
	}
	res = h.turnAt(Now.Add(32*time.Minute), Dispute, nil, yes())
	if res.Session.ID != first.Session.ID || res.Session.Slots["reason"] != "fraud" {
		t.Errorf("after yes: session %s slots %v, want the same session with the held reason", res.Session.ID, res.Session.Slots)
	}
}

// testEndSessionsSkipsBusy ends idle sessions in a batch while a turn holds
// one of the conversations: that one is skipped, not waited for.
func testEndSessionsSkipsBusy(t *testing.T, h *harness) {
	for i := 0; i < 3; i++ {
		r := h.req(Dispute, disputeArgs())
		r.ConversationID = fmt.Sprintf("idle-%d", i)
		if _, err := h.engine.Turn(h.ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	busy := session.Key{Tenant: h.tenant, ConversationID: "idle-0"}
	holding, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, _, err := h.storeTurn(busy, "held-turn", func(session.Conversation) (*session.Commit, error) {
			close(holding)
			<-release
			return nil, errors.New("give up")
		})
		done <- err
	}()
	<-holding
	f := session.Filter{AnyTenant: true, IdleBefore: Now.Add(time.Hour), Limit: 10}
	end := func(s *session.Session) (*session.Commit, error) {
		out := s.Clone()
		out.Status, out.EndedAt, out.Version = session.Reset, Now, s.Version+1
		return &session.Commit{Ended: []*session.Session{out}}, nil
	}
	dry, err := h.store.EndSessions(h.ctx, f, true, end)
	if err != nil || len(dry) != 2 {
		t.Fatalf("dry run while idle-0 is held: %v, %v; want 2", dry, err)
	}
	ended, err := h.store.EndSessions(h.ctx, f, false, end)
	if err != nil || len(ended) != 2 {
		t.Fatalf("real run: %v, %v; want 2", ended, err)
	}
	close(release)
	<-done
	if s, err := h.store.Session(h.ctx, session.Lookup{Tenant: h.tenant, ConversationID: "idle-0"}); err != nil || s.Status != session.Active {
		t.Errorf("the held conversation was touched: %v, %v", s, err)
	}
	for _, conv := range []string{"idle-1", "idle-2"} {
		if _, err := h.store.Session(h.ctx, session.Lookup{Tenant: h.tenant, ConversationID: conv}); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("%s still has an active session: %v", conv, err)
		}
		s, err := h.store.Session(h.ctx, session.Lookup{Tenant: h.tenant, ConversationID: conv, Latest: true})
		if err != nil || s.Status != session.Reset {
			t.Errorf("%s latest: %v, %v; want reset", conv, s, err)
		}
	}
}

func testListAndPurge(t *testing.T, h *harness) {
	var ids []string
	for i := 0; i < 5; i++ {
		r := h.req(Flights, map[string]any{"from": "mad"})
		r.ConversationID = fmt.Sprintf("list-%d", i)
		res, err := h.engine.Turn(h.ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Session.ID)
	}
	page, next, err := h.engine.ListSessions(h.ctx, session.Filter{Tenant: h.tenant, Limit: 2})
	if err != nil || len(page) != 2 || next == "" {
		t.Fatalf("page 1: %d, next %q, %v", len(page), next, err)
	}
	seen := len(page)
	for next != "" {
		page, next, err = h.engine.ListSessions(h.ctx, session.Filter{Tenant: h.tenant, Limit: 2, After: next})
		if err != nil {
			t.Fatal(err)
		}
		seen += len(page)
	}
	if seen != 5 {
		t.Errorf("paging saw %d sessions, want 5", seen)
	}
	if other, _, _ := h.engine.ListSessions(h.ctx, session.Filter{Tenant: "someone-else"}); len(other) != 0 {
		t.Errorf("another tenant lists %d sessions", len(other))
	}
	for _, id := range ids[:3] {
		if _, _, err := h.engine.Reset(h.ctx, h.byID(id), Now); err != nil {
			t.Fatal(err)
		}
	}
	purged, err := h.engine.Purge(h.ctx, session.Filter{AnyTenant: true, EndedBefore: Now.Add(time.Minute)}, false)
	if err != nil || len(purged) != 3 {
		t.Fatalf("purge: %v, %v; want 3", purged, err)
	}
	if _, err := h.store.Session(h.ctx, h.byID(ids[0])); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a purged session is still there: %v", err)
	}
	if _, err := h.store.Session(h.ctx, h.byID(ids[4])); err != nil {
		t.Errorf("an active session was purged: %v", err)
	}
}

func testAttemptsPersist(t *testing.T, h *harness) {
	h.turnAt(Now, Dispute, disputeArgs(), nil)
	h.turnAt(Now, Dispute, map[string]any{"reason": "chargeback"}, nil)
	h.turnAt(Now, Dispute, map[string]any{"reason": "refund"}, nil)
	s, err := h.store.Session(h.ctx, h.active())
	if err != nil {
		t.Fatal(err)
	}
	if s.Attempts["reason"] != 2 {
		t.Errorf("attempts after a reload = %v, want reason: 2", s.Attempts)
	}
	res := h.turnAt(Now, Dispute, map[string]any{"reason": "nope"}, nil)
	if res.Action != clarify.Handoff || res.Session.Status != session.Failed {
		t.Errorf("third bad reason: %s, %s; want HANDOFF, failed", res.Action, res.Session.Status)
	}
}

// testLifecyclePerSession: the janitor and the admin batches end a
// conversation's open sessions one by one, each by its own idle time; the
// conversation's other open session goes on untouched.
func testLifecyclePerSession(t *testing.T, h *harness) {
	dispute := h.turnAt(Now, Dispute, disputeArgs(), nil).Session.ID
	flights := h.turnAt(Now.Add(50*time.Minute), Flights, map[string]any{"from": "mad"}, nil).Session.ID

	f := session.Filter{Tenant: h.tenant, Tool: Dispute, IdleBefore: Now.Add(10 * time.Minute)}
	expired, err := h.engine.Expire(h.ctx, f, Now.Add(51*time.Minute))
	if err != nil || len(expired) != 1 || expired[0] != dispute {
		t.Fatalf("expiring idle disputes: %v, %v; want the dispute alone", expired, err)
	}
	f = session.Filter{Tenant: h.tenant, IdleBefore: Now.Add(10 * time.Minute)}
	if reset, err := h.engine.ResetStale(h.ctx, f, false, Now.Add(51*time.Minute)); err != nil || len(reset) != 0 {
		t.Errorf("resetting sessions idle before the flight search's turn: %v, %v; want none", reset, err)
	}
	if s := h.load(h.byID(flights)); s.Status != session.Active || !s.Open || s.Version != 1 {
		t.Errorf("the flight search: %s open %v v%d, want active, open, untouched", s.Status, s.Open, s.Version)
	}
	if s := h.load(h.byID(dispute)); s.Status != session.Expired {
		t.Errorf("the dispute: %s, want expired", s.Status)
	}

	// The dispute's next turn hears that it expired and starts anew; the
	// flight search is still the conversation's to come back to.
	res := h.turnAt(Now.Add(52*time.Minute), Dispute, map[string]any{"reason": "fraud"}, nil)
	if res.Session.ID == dispute || res.Notice == "" {
		t.Errorf("the dispute after its expiry: session %s notice %q, want a new one, said so", res.Session.ID, res.Notice)
	}
	if len(res.OpenSessions) != 1 || res.OpenSessions[0].SessionID != flights {
		t.Errorf("open sessions after the dispute's expiry: %+v, want the flight search", res.OpenSessions)
	}
}
