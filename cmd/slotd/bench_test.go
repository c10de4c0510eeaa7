package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/slotd/slotd/internal/testkit/dbtest"
)

// benchLine is the part of slotd bench --json the tests read.
type benchLine struct {
	Transport string `json:"transport"`
	Sessions  int64  `json:"sessions_at_start"`
	Slotd     struct {
		Turns       int64   `json:"turns"`
		Errors      int64   `json:"errors"`
		TurnsPerSec float64 `json:"turns_per_s"`
		P99         float64 `json:"p99_ms"`
		CPU         struct {
			Bench int64 `json:"bench_us"`
		} `json:"cpu_per_turn"`
	} `json:"slotd_side"`
	Direct struct {
		Turns       int64   `json:"turns"`
		Errors      int64   `json:"errors"`
		TurnsPerSec float64 `json:"turns_per_s"`
	} `json:"direct_side"`
	Ratio  float64 `json:"ratio"`
	Rounds []struct {
		Slotd  float64 `json:"slotd_turns_per_s"`
		Direct float64 `json:"direct_turns_per_s"`
		Ratio  float64 `json:"ratio"`
	} `json:"rounds"`
	Updates  int64   `json:"session_updates"`
	HOT      int64   `json:"session_hot_updates"`
	HOTShare float64 `json:"session_hot_share"`
}

// runBench runs slotd bench and returns its output, its progress and its
// JSON line.
func runBench(t *testing.T, args ...string) (string, string, benchLine) {
	t.Helper()
	full := append([]string{"bench", "--database-url", dbtest.AdminURL(), "--contracts", "../../contracts", "--json"}, args...)
	r := runCLI(t, nil, full...)
	if r.code != 0 {
		t.Fatalf("slotd bench %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var got benchLine
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("the last line of slotd bench --json is not JSON: %v\n%s", err, r.stdout)
	}
	return r.stdout, r.stderr, got
}

func TestBenchInProcess(t *testing.T) {
	t.Parallel()
	out, _, got := runBench(t, "--duration", "400ms", "--warmup", "0", "--conversations", "3", "--preload", "40")
	for _, want := range []string{"in 3 rounds, alternating", "slotd (gRPC)", "direct (pgx)", "p99", "ratio slotd/direct", "rounds: ",
		"CPU per turn", "HOT updates of sessions", "both sides"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if got.Slotd.Turns == 0 || got.Direct.Turns == 0 || got.Slotd.Errors != 0 || got.Direct.Errors != 0 {
		t.Errorf("turns slotd %d direct %d, errors %d and %d; want turns on both sides and no errors\n%s",
			got.Slotd.Turns, got.Direct.Turns, got.Slotd.Errors, got.Direct.Errors, out)
	}
	if got.Sessions < 40 {
		t.Errorf("sessions at the start = %d, want the 40 preloaded", got.Sessions)
	}
	if got.Ratio <= 0 || got.Slotd.P99 <= 0 {
		t.Errorf("ratio %v, p99 %v ms; want both positive", got.Ratio, got.Slotd.P99)
	}
	if len(got.Rounds) != 3 {
		t.Errorf("%d rounds in the JSON, want the default 3", len(got.Rounds))
	}
	for i, r := range got.Rounds {
		if r.Slotd <= 0 || r.Direct <= 0 || r.Ratio != r.Slotd/r.Direct {
			t.Errorf("round %d: slotd %v turns/s, direct %v, ratio %v; want both rates and their ratio", i, r.Slotd, r.Direct, r.Ratio)
		}
	}
	// Every turn after a conversation's first updates its session. The
	// share is not held to a bound here (the pgstore tests do that): a
	// short run on a busy machine is too small a sample.
	turns := got.Slotd.Turns + got.Direct.Turns
	if got.Updates < turns/3 || got.HOT > got.Updates || got.HOTShare != float64(got.HOT)/float64(got.Updates) {
		t.Errorf("%d turns, %d session updates, %d HOT, share %v; want the updates counted, the HOT ones among them",
			turns, got.Updates, got.HOT, got.HOTShare)
	}
}

// TestBenchLongConversations counts turns instead of time, on conversations
// of 25 turns, and leaves no database behind.
func TestBenchLongConversations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	out, progress, got := runBench(t, "--turns", "60", "--warmup", "0", "--conversations", "2", "--conversation-turns", "25")
	if got.Slotd.Turns != 60 || got.Direct.Turns != 60 {
		t.Errorf("turns slotd %d direct %d, want 60 each\n%s", got.Slotd.Turns, got.Direct.Turns, out)
	}
	if len(got.Rounds) != 1 || !strings.Contains(out, "in 1 round") {
		t.Errorf("%d rounds; want long conversations whole, in one round\n%s", len(got.Rounds), out)
	}
	if !strings.Contains(out, "first vs last tenth") {
		t.Errorf("a long conversation's table lacks the first/last tenth line:\n%s", out)
	}
	m := regexp.MustCompile(`throwaway database (slotd_bench_[0-9a-f]+)`).FindStringSubmatch(progress)
	if m == nil {
		t.Fatalf("the progress does not name the throwaway database:\n%s", progress)
	}
	conn, err := pgx.Connect(ctx, dbtest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var left bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", m[1]).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left {
		t.Errorf("the bench left its database %s behind", m[1])
	}
}

func TestBenchRefusesWithoutDatabase(t *testing.T) {
	t.Parallel()
	r := runCLI(t, nil, "bench", "--database-url", "", "--contracts", "../../contracts", "-q")
	if r.code != exitUsage || !strings.Contains(r.stderr, "Postgres URL") {
		t.Errorf("slotd bench without a database: exit %d, %q; want an error that asks for a Postgres URL", r.code, r.stderr)
	}
}

// --via puts the in-process slotd behind a pooler (PgBouncer in
// transaction mode here), the direct side still straight to Postgres: the
// run is clean, and the pooler saw the throwaway database.
func TestBenchThroughPgBouncer(t *testing.T) {
	t.Parallel()
	bouncer := dbtest.StartPgBouncer(t)
	via := bouncer.URL(t, dbtest.AdminURL()) + "&default_query_exec_mode=cache_describe"
	out, progress, got := runBench(t, "--via", via, "--turns", "60", "--warmup", "0", "--conversations", "3")
	if got.Slotd.Turns != 60 || got.Slotd.Errors != 0 || got.Direct.Errors != 0 {
		t.Errorf("slotd %d turns, %d errors, direct %d errors; want 60 clean turns\n%s", got.Slotd.Turns, got.Slotd.Errors, got.Direct.Errors, out)
	}
	if !strings.Contains(out, "through the pooler at "+bouncer.Addr) {
		t.Errorf("the table does not say slotd went through the pooler:\n%s", out)
	}
	m := regexp.MustCompile(`throwaway database (slotd_bench_[0-9a-f]+)`).FindStringSubmatch(progress)
	if m == nil {
		t.Fatalf("the progress does not name the throwaway database:\n%s", progress)
	}
	if !strings.Contains(bouncer.Log(), "db="+m[1]+" ") {
		t.Errorf("nobody logged in to the bench's database %s through the pooler", m[1])
	}
}

// Each transport plays the whole mix, every conversation on script (an
// answer off script is an error), and the report names the transport and
// the CPU its turns cost.
func TestBenchTransports(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ transport, row string }{
		{"grpc", "slotd (gRPC)"}, {"http", "slotd (HTTP)"}, {"mcp", "slotd (MCP)"},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			t.Parallel()
			out, progress, got := runBench(t, "--transport", tc.transport, "--turns", "240", "--warmup", "0", "--conversations", "4")
			if got.Transport != tc.transport {
				t.Errorf("the JSON's transport is %q, want %q", got.Transport, tc.transport)
			}
			if got.Slotd.Turns != 240 || got.Slotd.Errors != 0 || got.Direct.Errors != 0 {
				t.Errorf("slotd %d turns, %d errors, direct %d errors; want 240 clean turns\n%s\n%s",
					got.Slotd.Turns, got.Slotd.Errors, got.Direct.Errors, out, progress)
			}
			if got.Slotd.CPU.Bench <= 0 || !strings.Contains(out, "CPU per turn, slotd side") {
				t.Errorf("CPU per turn %d µs; want it measured and shown\n%s", got.Slotd.CPU.Bench, out)
			}
			if !strings.Contains(out, tc.row) {
				t.Errorf("the table does not name the transport (%q):\n%s", tc.row, out)
			}
		})
	}
}

func TestBenchRefusesTransports(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--transport", "websocket"}, `unknown transport "websocket"`},
		{[]string{"--transport", "http", "--addr", "127.0.0.1:1"}, "needs its HTTP address (--http-addr)"},
		{[]string{"--http-addr", "127.0.0.1:1"}, "give both"},
	} {
		r := runCLI(t, nil, append([]string{"bench", "--database-url", "postgres://x/y", "--contracts", "../../contracts", "-q"}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("slotd bench %v: exit %d, %q; want a usage error with %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
