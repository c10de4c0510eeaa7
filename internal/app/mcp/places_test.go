package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/app/mcp"
	"github.com/slotd/slotd/internal/app/mcpload"
	"github.com/slotd/slotd/internal/app/server"
)

// limited is a slotd whose MCP limits are lim (defaults elsewhere), and a
// load client of each tenant.
func limited(t *testing.T, lim mcp.Limits) (*server.Server, *mcpload.Client, *mcpload.Client) {
	t.Helper()
	srv, url := slotd(t, func(c *server.Config) { c.MCP = lim })
	return srv, &mcpload.Client{URL: url, Key: bankKey}, &mcpload.Client{URL: url, Key: shopKey}
}

func open(t *testing.T, c *mcpload.Client, elicit bool) string {
	t.Helper()
	sid, err := c.Open(context.Background(), elicit)
	if err != nil {
		t.Fatalf("open a session: %v", err)
	}
	return sid
}

func ping(t *testing.T, c *mcpload.Client, sid string) int {
	t.Helper()
	status, err := c.Ping(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	return status
}

// leaveForm makes a tool call on sid that waits on a form nobody answers.
func leaveForm(t *testing.T, c *mcpload.Client, sid string, id int) *mcpload.Form {
	t.Helper()
	f, err := c.LeaveForm(context.Background(), sid, id)
	if err != nil {
		t.Fatalf("tools/call waiting on a form: %v", err)
	}
	t.Cleanup(f.Hangup)
	return f
}

// refusal is the problem a refused request got.
func refusal(t *testing.T, err error, status int) {
	t.Helper()
	se, ok := err.(*mcpload.StatusError)
	if !ok || se.Status != status || !strings.Contains(se.Body, `"type":"https://`) {
		t.Fatalf("got %v, want %d with a problem", err, status)
	}
}

// A tenant at its cap gives up its least recently used idle session for a
// new one; its other sessions and the other tenant's are untouched.
func TestTenantAtItsCapGivesUpItsOldestIdleSession(t *testing.T) {
	t.Parallel()
	srv, bank, shop := limited(t, mcp.Limits{MaxTenantSessions: 3})
	theirs := open(t, shop, false)
	a, b, c := open(t, bank, false), open(t, bank, false), open(t, bank, false)
	if ping(t, bank, a) != http.StatusOK { // a is used: b is now the oldest idle
		t.Fatal("ping a")
	}
	d := open(t, bank, false)
	for sid, want := range map[string]int{a: 200, b: 404, c: 200, d: 200} {
		if got := ping(t, bank, sid); got != want {
			t.Errorf("ping of bank's session %s after the 4th opened: %d, want %d (b, the least recently used, evicted)", sid[:6], got, want)
		}
	}
	if got := ping(t, shop, theirs); got != 200 {
		t.Errorf("shop's session: %d", got)
	}
	if got := counter(t, srv, "slotd_mcp_sessions_evicted_total", nil); got != 1 {
		t.Errorf("slotd_mcp_sessions_evicted_total = %v, want 1", got)
	}
	if got := counter(t, srv, "slotd_mcp_sessions", nil); got != 4 {
		t.Errorf("slotd_mcp_sessions = %v, want 4 (bank's 3 and shop's)", got)
	}
}

// A tenant at its cap with every session busy is refused (429) and
// nothing of another tenant's is closed for it; at the global cap with
// nothing of its own idle, a tenant gets 503.
func TestSessionsPastTheCapsAreRefused(t *testing.T) {
	t.Parallel()
	srv, bank, shop := limited(t, mcp.Limits{MaxTenantSessions: 2, MaxSessions: 3})
	for i := range 2 {
		leaveForm(t, bank, open(t, bank, true), i+1)
	}
	_, err := bank.Open(context.Background(), false)
	refusal(t, err, http.StatusTooManyRequests)

	theirs := open(t, shop, true)
	leaveForm(t, shop, theirs, 1)
	_, err = shop.Open(context.Background(), false)
	refusal(t, err, http.StatusServiceUnavailable)
	if got := counter(t, srv, "slotd_mcp_refused_requests_total", map[string]string{"reason": "tenant_sessions_full"}); got != 1 {
		t.Errorf("refused tenant_sessions_full = %v, want 1", got)
	}
	if got := counter(t, srv, "slotd_mcp_sessions_evicted_total", nil); got != 0 {
		t.Errorf("a busy session was evicted: %v", got)
	}
}

// A batch opens at most one session, which takes its place like any
// other: batches of initialize are refused, and so is any batch on a
// protocol version that removed them.
func TestBatchIsNoWayPastTheCap(t *testing.T) {
	t.Parallel()
	srv, bank, _ := limited(t, mcp.Limits{MaxTenantSessions: 2})
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		n       int
		version string
	}{
		{"five initializes", 5, mcpload.BatchVersion},
		{"one initialize of 2025-11-25", 1, mcpload.Version},
		{"one initialize of 2025-06-18", 1, "2025-06-18"},
	} {
		r, err := bank.Batch(ctx, tc.n, tc.version)
		if err != nil || r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), `"type":"https://`) || r.Session != "" {
			t.Errorf("%s: %d %s session %q, want 400 with a problem and no session", tc.name, r.Status, r.Body, r.Session)
		}
	}
	r, _ := bank.Post(ctx, "", "2025-11-25", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`)
	if r.Status != http.StatusBadRequest {
		t.Errorf("a batch with Mcp-Protocol-Version 2025-11-25: %d, want 400", r.Status)
	}
	// A batch of one 2025-03-26 initialize is a session, counted.
	for range 3 {
		if r, _ := bank.Batch(ctx, 1, mcpload.BatchVersion); r.Status != http.StatusOK || r.Session == "" {
			t.Fatalf("a batch of one initialize of 2025-03-26: %d %s", r.Status, r.Body)
		}
	}
	if got := counter(t, srv, "slotd_mcp_sessions", nil); got != 2 {
		t.Errorf("slotd_mcp_sessions = %v after 3 sessions by batches, want the cap, 2", got)
	}
	if got := counter(t, srv, "slotd_mcp_refused_requests_total", map[string]string{"reason": "batch"}); got != 4 {
		t.Errorf("refused batch = %v, want 4", got)
	}
}

// A session no request uses closes after SessionIdle; one in use stays.
func TestIdleSessionCloses(t *testing.T) {
	t.Parallel()
	srv, bank, _ := limited(t, mcp.Limits{SessionIdle: 400 * time.Millisecond})
	idle, used := open(t, bank, false), open(t, bank, false)
	for range 6 {
		time.Sleep(150 * time.Millisecond)
		if got := ping(t, bank, used); got != 200 {
			t.Fatalf("a session used every 150ms: %d", got)
		}
	}
	if got := ping(t, bank, idle); got != http.StatusNotFound {
		t.Errorf("a session idle for 900ms with --mcp-session-idle 400ms: %d, want 404", got)
	}
	if got := counter(t, srv, "slotd_mcp_sessions", nil); got != 1 {
		t.Errorf("slotd_mcp_sessions = %v, want 1", got)
	}
}

// Forms waiting are capped per session and per tenant; a call past a cap
// is answered at once, its question handed to the model.
func TestWaitingFormsAreCapped(t *testing.T) {
	t.Parallel()
	srv, bank, shop := limited(t, mcp.Limits{MaxSessionForms: 2, MaxTenantForms: 3})
	s1, s2 := open(t, bank, true), open(t, bank, true)
	steps := []struct {
		sid     string
		waiting bool
	}{{s1, true}, {s1, true}, {s1, false}, {s2, true}, {s2, false}}
	for i, st := range steps {
		f := leaveForm(t, bank, st.sid, i+1)
		if f.Waiting() != st.waiting {
			t.Fatalf("call %d: waiting %v, want %v (2 per session, 3 per tenant); result %s", i+1, f.Waiting(), st.waiting, f.Result)
		}
		if !st.waiting && !strings.Contains(string(f.Result), "No form was shown") {
			t.Errorf("call %d past the cap: %s", i+1, f.Result)
		}
	}
	if f := leaveForm(t, shop, open(t, shop, true), 1); !f.Waiting() {
		t.Errorf("shop's first form is refused: %s", f.Result)
	}
	if got := counter(t, srv, "slotd_mcp_forms_waiting", nil); got != 4 {
		t.Errorf("slotd_mcp_forms_waiting = %v, want 4", got)
	}
	for reason, want := range map[string]float64{"session": 1, "tenant": 1} {
		if got := counter(t, srv, "slotd_mcp_forms_refused_total", map[string]string{"reason": reason}); got != want {
			t.Errorf("slotd_mcp_forms_refused_total{reason=%s} = %v, want %v", reason, got, want)
		}
	}
}

// An unanswered form ends after FormTimeout with the question handed to
// the model.
func TestFormTimesOut(t *testing.T) {
	t.Parallel()
	srv, bank, _ := limited(t, mcp.Limits{FormTimeout: 300 * time.Millisecond})
	f := leaveForm(t, bank, open(t, bank, true), 1)
	start := time.Now()
	res, err := f.Wait()
	if err != nil || !strings.Contains(string(res), "not answered in time") {
		t.Fatalf("after the form timed out: %s %v", res, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the call ended %s after its form, want about 300ms", d)
	}
	if got := counter(t, srv, "slotd_mcp_forms_waiting", nil); got != 0 {
		t.Errorf("slotd_mcp_forms_waiting = %v", got)
	}
}

// A form wait ends the moment its client hangs up, or cancels the call,
// not at the form's timeout.
func TestFormWaitEndsWithItsClient(t *testing.T) {
	t.Parallel()
	srv, bank, _ := limited(t, mcp.Limits{FormTimeout: time.Minute})
	sid := open(t, bank, true)
	leaveForm(t, bank, sid, 1).Hangup()
	waitGauge(t, srv, "after the client hung up")

	leaveForm(t, bank, sid, 2)
	cancel, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": 2}})
	if r, err := bank.Post(context.Background(), sid, mcpload.Version, string(cancel)); err != nil || r.Status != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: %v %v", r.Status, err)
	}
	waitGauge(t, srv, "after the client cancelled the call")
}

func waitGauge(t *testing.T, srv *server.Server, when string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for counter(t, srv, "slotd_mcp_forms_waiting", nil) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a form still waits 2s %s", when)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
