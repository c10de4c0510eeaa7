package sessiontest

import (
	"errors"
	"strings"
	"testing"

	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/problem"
)

// testFindWithoutTenant: an operator finds a session by its id, or a
// conversation one tenant holds, without naming the tenant; a conversation
// two tenants hold is refused with their count; what is not found says
// what was looked up and who holds it.
func testFindWithoutTenant(t *testing.T, h *harness) {
	const other, lone = "globex-travel", "conv-lone"
	shared := h.send(Dispute, map[string]any{"card_last4": "4417"})
	reqB := h.req(Flights, map[string]any{"from": "MAD"})
	reqB.Tenant = other
	sharedB := h.do(reqB)
	reqC := h.req(Flights, map[string]any{"from": "LIS"})
	reqC.Tenant, reqC.ConversationID = other, lone
	alone := h.do(reqC)

	tenants := func(l session.Lookup) []string {
		t.Helper()
		got, err := h.store.Tenants(h.ctx, l, 10)
		if err != nil {
			t.Fatalf("Tenants(%+v): %v", l, err)
		}
		return got
	}
	wantList(t, "tenants of the shared conversation", tenants(session.Lookup{ConversationID: h.conv}), []string{"acme-bank", other})
	wantList(t, "tenants of the lone conversation", tenants(session.Lookup{ConversationID: lone}), []string{other})
	wantList(t, "tenants of a session id", tenants(session.Lookup{Tenant: "ignored", SessionID: shared.Session.ID}), []string{"acme-bank"})
	wantList(t, "tenants of a session id in another conversation", tenants(session.Lookup{SessionID: shared.Session.ID, ConversationID: lone}), []string{})
	wantList(t, "tenants of an unknown conversation", tenants(session.Lookup{ConversationID: "conv-none"}), []string{})
	if got, err := h.store.Tenants(h.ctx, session.Lookup{ConversationID: h.conv}, 1); err != nil || len(got) != 1 {
		t.Errorf("Tenants with limit 1 = %v, %v; want one tenant", got, err)
	}

	for what, tc := range map[string]struct {
		l    session.Lookup
		want string
	}{
		"a session id":          {session.Lookup{SessionID: sharedB.Session.ID}, sharedB.Session.ID},
		"a lone conversation":   {session.Lookup{ConversationID: lone}, alone.Session.ID},
		"a tool's open session": {session.Lookup{ConversationID: lone, Tool: Flights}, alone.Session.ID},
	} {
		s, err := h.engine.Find(h.ctx, tc.l, true)
		if err != nil || s.ID != tc.want {
			t.Errorf("Find %s without a tenant = %v, %v; want session %s", what, s, err, tc.want)
		}
	}

	_, err := h.engine.Find(h.ctx, session.Lookup{ConversationID: h.conv}, true)
	wantProblem(t, "a conversation two tenants hold", err, problem.KindInvalidRequest, "2 tenants", `"acme-bank"`, `"globex-travel"`)
	_, err = h.engine.Find(h.ctx, session.Lookup{ConversationID: "conv-none"}, true)
	wantProblem(t, "an unknown conversation", err, problem.KindNotFound, `"conv-none"`, "any tenant")
	_, err = h.engine.Find(h.ctx, session.Lookup{Tenant: "acme-bank", ConversationID: lone}, false)
	wantProblem(t, "a conversation under the wrong tenant", err, problem.KindNotFound, `"conv-lone"`, `tenant "acme-bank"`, `tenant "globex-travel" holds it`)
	_, err = h.engine.Find(h.ctx, session.Lookup{Tenant: other, SessionID: shared.Session.ID}, false)
	wantProblem(t, "a session id under the wrong tenant", err, problem.KindNotFound, shared.Session.ID, `tenant "acme-bank" holds it`)

	// A conversation without an open session shows its latest one.
	if _, _, err := h.engine.Reset(h.ctx, session.Lookup{Tenant: other, ConversationID: lone}, Now); err != nil {
		t.Fatal(err)
	}
	s, err := h.engine.Find(h.ctx, session.Lookup{ConversationID: lone}, true)
	if err != nil || s.ID != alone.Session.ID || s.Status != session.Reset {
		t.Errorf("Find of a conversation whose session was reset = %v, %v; want the reset session %s", s, err, alone.Session.ID)
	}
}

// wantProblem fails unless err is a problem of kind k whose detail says
// each of want.
func wantProblem(t *testing.T, what string, err error, k problem.Kind, want ...string) {
	t.Helper()
	var pe *problem.Error
	if !errors.As(err, &pe) || pe.Kind != k {
		t.Errorf("%s: error %v, want a problem of kind %v", what, err, k)
		return
	}
	for _, w := range want {
		if !strings.Contains(pe.Problem.Detail, w) {
			t.Errorf("%s: detail %q does not say %s", what, pe.Problem.Detail, w)
		}
	}
}
