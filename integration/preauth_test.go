package integration

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/app/edgeload"
	"github.com/slotd/slotd/internal/certs/certstest"
)

// Attacks on the HTTP listener by clients without a key (internal/app/edgeload
// plays them), against a slotd process whose memory is capped.

// TestRefusalWithoutAKeyDoesNotWaitForTheBody sends the headers of a
// request without a key and then its body a byte every 200 ms, as a client
// holding a connection open would: the 401 comes at once, not after the
// body (net/http reads up to 256 KiB of an unread body before answering),
// and the connection is closed with it.
func TestRefusalWithoutAKeyDoesNotWaitForTheBody(t *testing.T) {
	// Not parallel: its latency bound needs the package to itself (see doc.go).
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
	// Not parallel: the attack takes both cores, and a test beside it would
	// measure the machine, not slotd.
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

// TestRapidResetFloodKeepsMemoryBounded floods slotd's HTTPS listener with
// HTTP/2 rapid reset (HEADERS, then RST_STREAM at once, over and over) on
// 256 connections with a tenant's key, for 15 s. slotd runs as in a
// container of 256 MiB: --memory-limit 192MiB is what the default (auto)
// derives from such a cgroup, given here because the test's cap is an
// address-space limit, which auto does not read; GOMEMLIMIT is cleared so
// that nothing else bounds the heap. The budget of streams a connection may
// cancel bounds the work; the memory limit keeps the collector ahead of a
// flood that takes most of both cores. Its RSS stays under 300 MiB, and a
// turn is answered after the flood.
func TestRapidResetFloodKeepsMemoryBounded(t *testing.T) {
	// Not parallel: the attack takes both cores, and a test beside it would
	// measure the machine, not slotd.
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Fatal("this test caps the memory of the slotd it attacks with prlimit (util-linux), which is not on PATH")
	}
	ca := certstest.NewCA(t, "slotd test CA")
	certFile, keyFile := ca.Server(t, "slotd").Write(t, t.TempDir(), "server")
	p, _ := launch(t, prlimit, buildSlotd(t), []string{"GOMEMLIMIT="},
		[]string{"--api-keys", "bank:" + bankKey, "--tls-cert", certFile, "--tls-key", keyFile, "--memory-limit", "192MiB"})
	cfg := &tls.Config{RootCAs: certstest.Pool(ca), MinVersion: tls.VersionTLS12}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	defer hc.CloseIdleConnections()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := hc.Get("https://" + p.httpAddr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) || !p.alive() {
			t.Fatalf("slotd did not serve over TLS: %v", err)
		}
	}
	pid := p.cmd.Process.Pid
	before, err := edgeload.RSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	peak := make(chan int64, 1)
	go func() { peak <- edgeload.PeakRSS(ctx, pid, 100*time.Millisecond) }()
	streams := edgeload.RapidReset(ctx, edgeload.Target{Addr: p.httpAddr, TLS: cfg}, 256, "/v1/turn", bankKey)
	top := <-peak
	t.Logf("rapid reset: %d streams in 15 s; RSS %s before, at most %s during", streams, mib(float64(before)), mib(float64(top)))
	if !p.alive() {
		t.Fatal("slotd died under the flood")
	}
	if top > 300<<20 {
		t.Errorf("RSS under a rapid reset flood reached %s, want under 300 MiB", mib(float64(top)))
	}
	// The flood's last frames are still being read when it stops: a turn
	// is answered within seconds.
	end := time.Now()
	for {
		req, _ := http.NewRequest(http.MethodPost, "https://"+p.httpAddr+"/v1/turn", strings.NewReader(
			`{"conversation_id": "after-flood", "tool": "bank.open_dispute", "turn_id": "after-flood/1", "locale": "ru", "arguments": {"card_last4": "•• 4417"}}`))
		req.Header.Set("Authorization", "Bearer "+bankKey)
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Logf("a turn answered %s after the flood", time.Since(end).Round(time.Millisecond))
				return
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Since(end) > 10*time.Second {
			t.Fatalf("no turn answered in 10 s after the flood: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
