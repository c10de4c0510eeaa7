// Command edgeload attacks a running slotd's HTTP listener (package
// edgeload) and reports what a legitimate client saw meanwhile, and the
// server's peak RSS when given its pid:
//
//	go run ./internal/app/edgeload/cmd/edgeload -attack slow-headers -addr 127.0.0.1:8080 \
//		-conns 3000 -duration 20s -probe-key KEY -probe-from 127.0.0.2
//	go run ./internal/app/edgeload/cmd/edgeload -attack slow-body -addr 127.0.0.1:8080
//	go run ./internal/app/edgeload/cmd/edgeload -attack rapid-reset -addr 127.0.0.1:8443 -tls \
//		-conns 8 -duration 30s -key KEY -pid 1234
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/slotd/slotd/internal/app/edgeload"
)

const turnBody = `{"conversation_id": "edgeload-%d", "tool": "bank.open_dispute", "turn_id": "edgeload-%d/1",
	"locale": "ru", "arguments": {"card_last4": "•• 4417"}}`

func main() {
	attack := flag.String("attack", "slow-headers", "slow-headers, slow-body or rapid-reset")
	addr := flag.String("addr", "127.0.0.1:8080", "slotd's HTTP listener")
	useTLS := flag.Bool("tls", false, "speak TLS (the certificate is not verified)")
	from := flag.String("from", "", "local IP the attack comes from")
	conns := flag.Int("conns", 3000, "attacking connections")
	duration := flag.Duration("duration", 20*time.Second, "how long the attack lasts")
	every := flag.Duration("every", time.Second, "slow attacks: time between two header lines or body bytes")
	key := flag.String("key", "", "rapid-reset: the key its streams carry (none when empty)")
	probeKey := flag.String("probe-key", "", "a tenant key: time POST /v1/turn from a legitimate client during the attack")
	probeFrom := flag.String("probe-from", "127.0.0.2", "local IP of the legitimate client")
	probeEvery := flag.Duration("probe-every", 100*time.Millisecond, "time between two legitimate turns")
	pid := flag.Int("pid", 0, "slotd's pid: report its peak RSS during the attack")
	flag.Parse()

	var cfg *tls.Config
	if *useTLS {
		cfg = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // a load tool against a test certificate
	}
	target := edgeload.Target{Addr: *addr, TLS: cfg, From: *from}
	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()

	var wg sync.WaitGroup
	var lat edgeload.Latencies
	if *probeKey != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(min(2*time.Second, *duration/4)) // let the attack take hold
			lat = edgeload.Probe(ctx, edgeload.Target{Addr: *addr, TLS: cfg, From: *probeFrom}, "/v1/turn", *probeKey,
				func(i int) string { return fmt.Sprintf(turnBody, i, i) }, *probeEvery)
		}()
	}
	var peak int64
	if *pid != 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			peak = edgeload.PeakRSS(ctx, *pid, 200*time.Millisecond)
		}()
	}
	start := time.Now()
	switch *attack {
	case "slow-headers":
		st := edgeload.SlowHeaders(ctx, target, *conns, *every, time.Second)
		fmt.Printf("slow-headers: %d connections for %s: opened %d, cut by the server %d, held at most %d\n",
			*conns, *duration, st.Opened, st.Cut, st.Held)
	case "slow-body":
		res, err := edgeload.SlowBody(ctx, target, "/v1/turn", *every, *duration)
		if err != nil {
			fmt.Fprintln(os.Stderr, "slow-body:", err)
			os.Exit(1)
		}
		fmt.Printf("slow-body without a key: status %d after %s, connection closed after %s (0: not closed)\n",
			res.Status, res.Answered.Round(time.Millisecond), res.Closed.Round(time.Millisecond))
		cancel()
	case "rapid-reset":
		n := edgeload.RapidReset(ctx, target, *conns, "/v1/turn", *key)
		fmt.Printf("rapid-reset: %d connections for %s: %d streams started and reset\n", *conns, time.Since(start).Round(time.Second), n)
	default:
		fmt.Fprintln(os.Stderr, "unknown -attack", *attack)
		os.Exit(2)
	}
	wg.Wait()
	if *probeKey != "" {
		fmt.Printf("legitimate turns from %s: %d answered, %d failed (%v); p50 %s, p99 %s, max %s\n", *probeFrom,
			len(lat.Times), lat.Failed, lat.FirstError, lat.Quantile(0.5).Round(time.Millisecond),
			lat.Quantile(0.99).Round(time.Millisecond), lat.Quantile(1).Round(time.Millisecond))
	}
	if *pid != 0 {
		fmt.Printf("slotd's peak RSS: %.1f MiB\n", float64(peak)/(1<<20))
	}
}
