package integration

import (
	"context"
	"strings"
	"testing"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

func TestThreeBadReasonsHandOff(t *testing.T) {
	t.Parallel()
	inst, _ := newPostgresServer(t)
	c := newConvo(t, inst.client, "bank.open_dispute")
	c.send(seedFirstTurn)
	for i, bad := range []string{"chargeback", "верните деньги", "idk"} {
		r := c.send(`{"reason": "` + bad + `"}`)
		if i < 2 {
			wantAsk(t, r, "reason")
			if got := r.Session.Attempts["reason"]; got != int32(i+1) {
				t.Errorf("attempt %d: count %d", i+1, got)
			}
			continue
		}
		wantAction(t, r, slotdv1.Action_ACTION_HANDOFF)
		if r.Problem == nil || !r.Problem.OwnerActionRequired || r.Problem.Type != "https://slotd.dev/problems/handoff" {
			t.Fatalf("handoff problem = %v", r.Problem)
		}
		if len(r.Problem.Errors) == 0 || r.Problem.Errors[0].Pointer != "/reason" || len(r.Problem.Errors[0].AllowedValues) != 4 {
			t.Errorf("the handoff does not say what failed and why: %v", r.Problem.Errors)
		}
		if !strings.Contains(r.Question.Text, "4417") || !strings.Contains(r.Question.Text, "1200.50") {
			t.Errorf("the handoff summary lacks what is filled: %q", r.Question.Text)
		}
		if r.Session.Status != slotdv1.SessionStatus_SESSION_STATUS_FAILED {
			t.Errorf("status = %v, want failed", r.Session.Status)
		}
	}
	if s, err := inst.client.GetSession(context.Background(), &slotdv1.GetSessionRequest{ConversationId: c.id}); err == nil {
		t.Errorf("the handed-off session is still the active one: %v", s.Session)
	}
	// An operator still finds it: a conversation without an open session
	// shows its latest.
	h, err := inst.admin.GetSessionHistory(context.Background(), &slotdv1.GetSessionHistoryRequest{ConversationId: c.id})
	if err != nil || h.Session.Status != slotdv1.SessionStatus_SESSION_STATUS_FAILED || len(h.Turns) != 4 {
		t.Errorf("history of the handed-off conversation: %v, %v; want its failed session and 4 turns", h.GetSession(), err)
	}
}

func TestGoodValueResetsTheCount(t *testing.T) {
	t.Parallel()
	inst, _ := newPostgresServer(t)
	c := newConvo(t, inst.client, "bank.open_dispute")
	c.send(seedFirstTurn)
	c.send(`{"reason": "chargeback"}`)
	r := c.send(`{"reason": "refund"}`)
	if r.Session.Attempts["reason"] != 2 {
		t.Fatalf("after two bad reasons: attempts %v", r.Session.Attempts)
	}
	r = c.send(`{"reason": "Not received"}`)
	wantAction(t, r, slotdv1.Action_ACTION_CONFIRM)
	if _, ok := r.Session.Attempts["reason"]; ok {
		t.Errorf("a good value did not reset the count: %v", r.Session.Attempts)
	}
	got, err := inst.client.GetSession(context.Background(), &slotdv1.GetSessionRequest{ConversationId: c.id})
	if err != nil || len(got.Session.Attempts) != 0 {
		t.Errorf("GetSession attempts = %v, %v", got.GetSession().GetAttempts(), err)
	}
	// A fresh bad value starts counting from one again.
	r = c.send(`{"reason": "???"}`)
	if r.Action != slotdv1.Action_ACTION_ASK || r.Session.Attempts["reason"] != 1 {
		t.Errorf("after the reset: %v, attempts %v", r.Action, r.Session.Attempts)
	}
}
