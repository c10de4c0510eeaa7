package integration

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/app/mcpload"
)

// One tenant attacking a slotd serve process's /mcp (memory capped,
// proc_test.go) with what a hostile MCP client does: floods of sessions,
// batches of initialize, forms left unanswered, hang-ups. The pass is
// always the other tenant: it still opens a session, and its turn is
// answered in under a second.

// mcpTenants are the attacking and the other tenant's clients of p, each
// with connections enough for a flood.
func mcpTenants(p *process) (bank, shop *mcpload.Client) {
	client := func(key string) *mcpload.Client {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		return &mcpload.Client{URL: "http://" + p.httpAddr + "/mcp", Key: key, HTTP: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
	}
	return client(bankKey), client(shopKey)
}

// otherTenantServed: shop opens a session and its HTTP turn is answered in
// under a second, while bank's attack holds what it holds.
func otherTenantServed(t *testing.T, p *process, shop *mcpload.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := shop.Open(ctx, false); err != nil {
		t.Errorf("the other tenant's initialize: %v", err)
	} else if d := time.Since(start); d > time.Second {
		t.Errorf("the other tenant's session took %s to open", d)
	}
	d, status, err := shop.Turn(ctx, "http://"+p.httpAddr, "other-tenant")
	if err != nil || status != http.StatusOK || d > time.Second {
		t.Errorf("the other tenant's HTTP turn: %d in %s (%v), want 200 in under 1s", status, d, err)
	}
	t.Logf("the other tenant's HTTP turn: %s", d.Round(time.Millisecond))
}

// mcpProcess is a slotd child with the tenants bank and shop.
//
// The budget of connections not yet authenticated (preauth_test.go) is
// raised past the attacks' bursts: 1 100 connections opened at once from
// one address would otherwise be cut at accept, before they could show
// what the MCP caps do.
func mcpProcess(t *testing.T, flags ...string) *process {
	return startProcess(t, append([]string{"--api-keys", "bank:" + bankKey + ",shop:" + shopKey,
		"--http-max-unauth-conns", "2048", "--http-max-unauth-conns-per-source", "2048"}, flags...)...)
}

// One tenant opening sessions without end holds at most its cap: each new
// one past it closes its least recently used idle one.
func TestMCPSessionFloodByOneTenant(t *testing.T) {
	// Not parallel: its latency bound needs the package to itself (see doc.go).
	p := mcpProcess(t, "--mcp-max-tenant-sessions", "50", "--mcp-max-sessions", "80")
	bank, shop := mcpTenants(p)
	f := bank.FloodSessions(context.Background(), 600, 16)
	t.Logf("bank's flood: %s", f)
	m := p.metrics(t, "slotd_mcp_sessions", "slotd_mcp_sessions_evicted_total")
	if m["slotd_mcp_sessions"] > 50 || m["slotd_mcp_sessions_evicted_total"] < 550 {
		t.Errorf("after 600 sessions of one tenant with a cap of 50: %v sessions held, %v evicted", m["slotd_mcp_sessions"], m["slotd_mcp_sessions_evicted_total"])
	}
	otherTenantServed(t, p, shop)
}

// A JSON-RPC batch opens at most one session, counted like any other: a
// batch of initializes is refused.
func TestMCPBatchedInitializeIsCounted(t *testing.T) {
	// Not parallel: its latency bound needs the package to itself (see doc.go).
	p := mcpProcess(t, "--mcp-max-tenant-sessions", "50")
	bank, shop := mcpTenants(p)
	ctx := context.Background()
	statuses := map[int]int{}
	for range 100 {
		r, err := bank.Batch(ctx, 5, mcpload.BatchVersion)
		if err != nil {
			t.Fatal(err)
		}
		statuses[r.Status]++
		r, err = bank.Batch(ctx, 1, mcpload.BatchVersion)
		if err != nil {
			t.Fatal(err)
		}
		statuses[r.Status]++
	}
	m := p.metrics(t, "slotd_mcp_sessions")
	if statuses[http.StatusBadRequest] != 100 || statuses[http.StatusOK] != 100 || m["slotd_mcp_sessions"] != 50 {
		t.Errorf("100 batches of 5 initializes and 100 of 1 with a cap of 50: statuses %v, %v sessions held; want 100 refused and 50 held", statuses, m["slotd_mcp_sessions"])
	}
	otherTenantServed(t, p, shop)
}

// 1 100 tool calls of one tenant waiting on forms nobody answers pin at
// most 64 handlers and connections (the default cap): the rest are
// answered at once, and the listener stays the other tenant's too.
func TestMCPUnansweredFormsAreCapped(t *testing.T) {
	// Not parallel: its latency bound needs the package to itself (see doc.go).
	p := mcpProcess(t)
	bank, shop := mcpTenants(p)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var (
		mu              sync.Mutex
		waiting, atOnce int
		failed          []error
		wg              sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		failed = append(failed, err)
	}
	for range 275 {
		wg.Go(func() {
			sid, err := bank.Open(ctx, true)
			if err != nil {
				fail(err)
				return
			}
			for i := range 4 {
				f, err := bank.LeaveForm(ctx, sid, i+1)
				if err != nil {
					fail(err)
					return
				}
				t.Cleanup(f.Hangup)
				mu.Lock()
				if f.Waiting() {
					waiting++
				} else {
					atOnce++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("1 100 calls: %d wait on a form, %d answered at once, %d failed", waiting, atOnce, len(failed))
	if len(failed) > 0 {
		t.Errorf("%d of the attacker's calls failed, e.g. %v: the test measures nothing past them", len(failed), failed[0])
	}
	if waiting != 64 || atOnce != 1100-64 {
		t.Errorf("of 1 100 calls %d wait on a form and %d were answered at once; want 64 and the rest", waiting, atOnce)
	}
	m := p.metrics(t, "slotd_mcp_forms_waiting")
	if m["slotd_mcp_forms_waiting"] != 64 {
		t.Errorf("slotd_mcp_forms_waiting = %v, want 64", m["slotd_mcp_forms_waiting"])
	}
	otherTenantServed(t, p, shop)
	sid, err := shop.Open(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := shop.LeaveForm(ctx, sid, 1); err != nil || !f.Waiting() {
		t.Errorf("the other tenant's form is not shown: %v", err)
	} else {
		f.Hangup()
	}
}

// Clients that hang up on calls waiting on forms leave nothing pinned: each
// wait ends when its request does, long before the form's timeout.
func TestMCPHangupEndsTheFormWait(t *testing.T) {
	// Not parallel: its latency bound needs the package to itself (see doc.go).
	p := mcpProcess(t)
	bank, shop := mcpTenants(p)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	base := p.metrics(t, "go_goroutines")["go_goroutines"]
	var forms []*mcpload.Form
	for range 16 {
		sid, err := bank.Open(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			f, err := bank.LeaveForm(ctx, sid, i+1)
			if err != nil || !f.Waiting() {
				t.Fatalf("call %d: a form, not %v", i, err)
			}
			forms = append(forms, f)
		}
	}
	held := p.metrics(t, "go_goroutines")["go_goroutines"]
	for _, f := range forms {
		f.Hangup()
	}
	start := time.Now()
	for p.metrics(t, "slotd_mcp_forms_waiting")["slotd_mcp_forms_waiting"] != 0 {
		if time.Since(start) > 2*time.Second {
			t.Fatalf("64 form waits still pinned 2s after their clients hung up (the form timeout is 2m)")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("goroutines: %v before, %v with 64 forms waiting, %v %s after the hang-ups", base, held,
		p.metrics(t, "go_goroutines")["go_goroutines"], time.Since(start).Round(time.Millisecond))
	otherTenantServed(t, p, shop)
}
