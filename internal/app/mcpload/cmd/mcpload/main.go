// Command mcpload plays one tenant's attack on a running slotd's /mcp and
// prints what the attacker got and what another tenant got meanwhile:
//
//	go run ./internal/app/mcpload/cmd/mcpload -attack sessions -n 12000 \
//	  -http 127.0.0.1:8080 -metrics 127.0.0.1:9464 -key BANK_KEY -other-key SHOP_KEY
//
// Attacks: sessions (open -n sessions, end none), batch (-n batches of
// -batch initializes, after -fill sessions), forms (-n tool calls left waiting on forms), hangup
// (-n such calls, then hang up on all).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slotd/slotd/internal/app/mcpload"
)

func main() {
	attack := flag.String("attack", "sessions", "sessions, batch, forms or hangup")
	n := flag.Int("n", 1000, "sessions, batches or tool calls")
	batch := flag.Int("batch", 5, "initializes per batch")
	fill := flag.Int("fill", 0, "batch: sessions opened one by one first (to reach a cap)")
	conc := flag.Int("c", 16, "connections of the attacker")
	httpAddr := flag.String("http", "127.0.0.1:8080", "slotd's HTTP listener")
	metricsAddr := flag.String("metrics", "127.0.0.1:9464", "slotd's metrics listener")
	key := flag.String("key", "", "the attacking tenant's key")
	otherKey := flag.String("other-key", "", "the other tenant's key")
	flag.Parse()

	client := func(key string) *mcpload.Client {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = *conc
		return &mcpload.Client{URL: "http://" + *httpAddr + "/mcp", Key: key, HTTP: &http.Client{Transport: tr, Timeout: 60 * time.Second}}
	}
	a, b := client(*key), client(*otherKey)
	ctx := context.Background()
	gauge := func(name string) string { return metric(*metricsAddr, name) }

	switch *attack {
	case "sessions":
		f := a.FloodSessions(ctx, *n, *conc)
		fmt.Printf("attacker: %s; sessions held %s\n", f, gauge("slotd_mcp_sessions"))
	case "batch":
		if *fill > 0 {
			fmt.Printf("attacker: first %s\n", a.FloodSessions(ctx, *fill, *conc))
		}
		statuses := map[int]int{}
		for range *n {
			r, err := a.Batch(ctx, *batch, mcpload.BatchVersion)
			if err != nil {
				statuses[0]++
				continue
			}
			statuses[r.Status]++
		}
		fmt.Printf("attacker: %d batches of %d initializes: statuses %v; sessions held %s\n", *n, *batch, statuses, gauge("slotd_mcp_sessions"))
	case "forms", "hangup":
		forms, atOnce, failed := leaveForms(ctx, a, *n, *conc)
		fmt.Printf("attacker: %d calls: %d wait on a form, %d answered at once, %d failed; goroutines %s\n",
			*n, len(forms), atOnce, failed, gauge("go_goroutines"))
		if *attack == "hangup" {
			for _, f := range forms {
				f.Hangup()
			}
			for _, after := range []time.Duration{time.Second, 5 * time.Second} {
				time.Sleep(after)
				fmt.Printf("%s after the hang-ups: goroutines %s, forms waiting %s\n", after, gauge("go_goroutines"), gauge("slotd_mcp_forms_waiting"))
			}
		}
		defer func() {
			for _, f := range forms {
				f.Hangup()
			}
		}()
	default:
		fmt.Fprintln(os.Stderr, "mcpload: -attack is sessions, batch, forms or hangup")
		os.Exit(2)
	}

	start := time.Now()
	_, err := b.Open(ctx, false)
	fmt.Printf("other tenant: initialize %s in %s\n", outcome(err), time.Since(start).Round(time.Millisecond))
	d, status, err := b.Turn(ctx, "http://"+*httpAddr, fmt.Sprintf("mcpload-%d", time.Now().UnixNano()))
	if err != nil {
		fmt.Printf("other tenant: HTTP turn failed after %s: %v\n", d.Round(time.Millisecond), err)
	} else {
		fmt.Printf("other tenant: HTTP turn %d in %s\n", status, d.Round(time.Millisecond))
	}
}

// leaveForms makes n tool calls waiting on forms nobody answers, four per
// session (the calls slotd answers at once are counted, not kept).
func leaveForms(ctx context.Context, c *mcpload.Client, n, conc int) (forms []*mcpload.Form, atOnce, failed int) {
	var mu sync.Mutex
	work := make(chan int, n)
	for i := range n {
		work <- i
	}
	close(work)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			sid := ""
			for i := range work {
				if i%4 == 0 || sid == "" {
					s, err := c.Open(ctx, true)
					if err != nil {
						mu.Lock()
						failed++
						mu.Unlock()
						continue
					}
					sid = s
				}
				f, err := c.LeaveForm(context.Background(), sid, i+1)
				mu.Lock()
				switch {
				case err != nil:
					failed++
				case f.Waiting():
					forms = append(forms, f)
				default:
					atOnce++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return forms, atOnce, failed
}

func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	if s := mcpload.StatusOf(err); s != 0 {
		return "refused " + strconv.Itoa(s)
	}
	return "failed (" + err.Error() + ")"
}

// metric is the first sample of name on slotd's /metrics, "-" when there
// is none.
func metric(addr, name string) string {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return "-"
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return v
		}
	}
	return "-"
}
