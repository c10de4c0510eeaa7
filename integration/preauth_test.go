package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/edgeload"
)

// Attacks on the HTTP listener by clients without a key (internal/edgeload
// plays them), against a slotd process whose memory is capped.

// TestRefusalWithoutAKeyDoesNotWaitForTheBody sends the headers of a
// request without a key and then its body a byte every 200 ms, as a client
// holding a connection open would: the 401 comes at once, not after the
// body (net/http reads up to 256 KiB of an unread body before answering),
// and the connection is closed with it.
func TestRefusalWithoutAKeyDoesNotWaitForTheBody(t *testing.T) {
	t.Parallel()
	p := startProcess(t, "--api-keys", "bank:"+bankKey)
	for _, path := range []string{"/v1/turn", "/mcp"} {
		res, err := edgeload.SlowBody(context.Background(), edgeload.Target{Addr: p.httpAddr}, path, 200*time.Millisecond, 5*time.Second)
		switch {
		case err != nil:
			t.Errorf("POST %s with a slow body: %v", path, err)
		case res.Status != 401 || res.Answered > time.Second:
			t.Errorf("POST %s with a slow body and no key: %d after %s, want 401 in under 1 s", path, res.Status, res.Answered)
		case res.Closed == 0 || res.Closed > time.Second:
			t.Errorf("POST %s with a slow body and no key: the connection was closed after %s (0: not in 5 s), want under 1 s", path, res.Closed)
		}
	}
}

// TestSlowConnectionsWithoutAKeyLeaveTurnsAlone holds 3 000 connections
// from 127.0.0.1 that send their headers a line a second without a key,
// while a tenant's client on 127.0.0.2 takes a turn every 50 ms, each on a
// new connection: the slow connections are held within their budget (the
// rest closed as they come), and the tenant's turns are answered with a
// p99 under 1 s.
func TestSlowConnectionsWithoutAKeyLeaveTurnsAlone(t *testing.T) {
	t.Parallel()
	p := startProcess(t, "--api-keys", "bank:"+bankKey)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Second)
	defer cancel()
	attack := make(chan edgeload.SlowStats, 1)
	go func() {
		attack <- edgeload.SlowHeaders(ctx, edgeload.Target{Addr: p.httpAddr, From: "127.0.0.1"}, 3000, time.Second, time.Second)
	}()
	time.Sleep(3 * time.Second) // the attack takes hold
	lat := edgeload.Probe(ctx, edgeload.Target{Addr: p.httpAddr, From: "127.0.0.2"}, "/v1/turn", bankKey, func(i int) string {
		return fmt.Sprintf(`{"conversation_id": "probe-%d", "tool": "bank.open_dispute", "turn_id": "probe-%d/1", "locale": "ru", "arguments": {"card_last4": "•• 4417"}}`, i, i)
	}, 50*time.Millisecond)
	st := <-attack
	p99 := lat.Quantile(0.99)
	t.Logf("slow connections: opened %d, cut %d, held at most %d; turns: %d answered, %d failed, p50 %s, p99 %s",
		st.Opened, st.Cut, st.Held, len(lat.Times), lat.Failed, lat.Quantile(0.5), p99)
	if lat.Failed > 0 || len(lat.Times) < 50 || p99 > time.Second {
		t.Errorf("under 3 000 slow connections without a key, the tenant's turns: %d answered, %d failed (%v), p99 %s; want all answered, p99 under 1 s",
			len(lat.Times), lat.Failed, lat.FirstError, p99)
	}
	m := p.metrics(t, `slotd_http_refused_connections_total{budget="source"}`)
	if m[`slotd_http_refused_connections_total{budget="source"}`] == 0 {
		t.Error("no connection was refused for its source's budget")
	}
}
