package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/logline"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/testkit/dbtest"
	"github.com/slotd/slotd/internal/testkit/servertest"
	"github.com/slotd/slotd/problem"
)

// seedNow is the dispute example's clock: the day after 2026-08-22.
var seedNow = time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)

// testContracts is the shipped contracts plus test.refund, whose
// cross-field rule can fail on complete arguments (a REPAIR), and
// test.card_payment, whose card number is sensitive.
func testContracts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	shipped, err := filepath.Glob("../../../contracts/*.json")
	if err != nil || len(shipped) == 0 {
		t.Fatalf("no shipped contracts: %v", err)
	}
	for _, f := range shipped {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	extra := map[string]string{
		"test.refund": `{"type": "object",
			"properties": {"kind": {"type": "string", "enum": ["partial", "full"]}, "amount": {"type": "number"}},
			"required": ["kind", "amount"],
			"allOf": [{"if": {"properties": {"kind": {"const": "partial"}}, "required": ["kind"]},
			           "then": {"properties": {"amount": {"maximum": 100}}}}],
			"x-slotd": {"name": "test.refund", "default_locale": "en"}}`,
		"test.block_card": `{"type": "object",
			"properties": {"card_last4": {"type": "string", "x-slotd": {"normalize": ["last4"]}}},
			"required": ["card_last4"],
			"x-slotd": {"name": "test.block_card", "exclusive": true, "default_locale": "en"}}`,
		"test.card_payment": `{"type": "object",
			"properties": {
				"card_number": {"type": "string", "pattern": "^[0-9]{16}$", "x-slotd": {"sensitive": true}},
				"amount": {"type": "number", "exclusiveMinimum": 0}},
			"required": ["card_number", "amount"],
			"x-slotd": {"name": "test.card_payment", "default_locale": "en"}}`,
	}
	for name, doc := range extra {
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type instance struct {
	srv    *server.Server
	client slotdv1.SlotServiceClient
}

// start runs slotd in-process on :0 with its metrics listener on :0, on a
// fresh Postgres database (or the memory store when databaseURL is "").
func start(t *testing.T, databaseURL string, log *slog.Logger, opts ...func(*server.Config)) *instance {
	t.Helper()
	cfg := server.Config{Listen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0", Contracts: testContracts(t),
		Store: "postgres", DatabaseURL: databaseURL, HealthInterval: 100 * time.Millisecond, Session: session.Config{TrustClientClock: true}}
	if databaseURL == "" {
		cfg.Store = "memory"
	}
	for _, o := range opts {
		o(&cfg)
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := server.New(cfg, log)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	servertest.Run(t, srv.Run)
	conn := servertest.Dial(t, srv.Addr())
	servertest.WaitServing(t, conn)
	return &instance{srv: srv, client: slotdv1.NewSlotServiceClient(conn)}
}

// convo is one conversation's turns, numbered.
type convo struct {
	t    *testing.T
	inst *instance
	ctx  context.Context
	id   string
	tool string
	now  time.Time
	n    int
}

func (in *instance) convo(t *testing.T, id, tool string) *convo {
	return &convo{t: t, inst: in, ctx: context.Background(), id: id, tool: tool, now: seedNow}
}

func (c *convo) request(args string) *slotdv1.TurnRequest {
	c.t.Helper()
	c.n++
	req := &slotdv1.TurnRequest{ConversationId: c.id, Tool: c.tool, TurnId: fmt.Sprintf("%s/%d", c.id, c.n),
		Locale: "ru", Now: timestamppb.New(c.now)}
	if args != "" {
		var m map[string]any
		if err := json.Unmarshal([]byte(args), &m); err != nil {
			c.t.Fatalf("bad test JSON %s: %v", args, err)
		}
		s, err := structpb.NewStruct(m)
		if err != nil {
			c.t.Fatal(err)
		}
		req.Arguments = s
	}
	return req
}

// send plays a turn and fails the test unless it answers want.
func (c *convo) send(args string, want slotdv1.Action) *slotdv1.TurnRequest {
	c.t.Helper()
	req := c.request(args)
	c.do(req, want)
	return req
}

func (c *convo) do(req *slotdv1.TurnRequest, want slotdv1.Action) {
	c.t.Helper()
	resp, err := c.inst.client.Turn(c.ctx, req)
	if err != nil {
		c.t.Fatalf("Turn %s: %v", req.TurnId, err)
	}
	if resp.Action != want {
		c.t.Fatalf("Turn %s: action %s, want %s (question %q, problem %v)", req.TurnId, resp.Action, want,
			resp.GetQuestion().GetText(), resp.GetProblem())
	}
}

// scrape reads the metrics listener's /metrics.
func scrape(t *testing.T, inst *instance) map[string]*dto.MetricFamily {
	t.Helper()
	return servertest.Metrics(t, inst.srv.MetricsAddr())
}

// value is the sample of the family whose labels include want (a counter's
// or gauge's value, a histogram's count); -1 when there is none.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

func TestMetricsAfterScriptedDialogues(t *testing.T) {
	t.Parallel()
	inst := start(t, dbtest.NewDatabase(t), nil)

	const dispute, flights, refund = "bank.open_dispute", "travel.search_flights", "test.refund"

	// The dispute example with a model that needs a re-ask and sends a value
	// that is refused before READY; then a retry of the approval.
	d := inst.convo(t, "m-dispute", dispute)
	d.send(`{"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽"}`, slotdv1.Action_ACTION_ASK)
	d.send(`{"reason": "Duplicate"}`, slotdv1.Action_ACTION_ASK)
	d.send(`{"reason": null}`, slotdv1.Action_ACTION_ASK) // original_operation_id asked again
	d.send(`{"amount": "много"}`, slotdv1.Action_ACTION_ASK)
	d.send(`{"original_operation_id": "op-20260822-0117"}`, slotdv1.Action_ACTION_CONFIRM)
	approval := d.request("")
	approval.Confirmation = &slotdv1.Confirmation{Accept: true}
	d.do(approval, slotdv1.Action_ACTION_READY)
	d.do(approval, slotdv1.Action_ACTION_READY) // a retry: replayed

	// A flight search right the first time.
	f := inst.convo(t, "m-flights", flights)
	f.send(`{"from": "mad", "to": "KBP", "date": "2026-09-01"}`, slotdv1.Action_ACTION_READY)

	// A refund whose arguments break the cross-field rule, then fixed.
	r := inst.convo(t, "m-refund", refund)
	r.send(`{"kind": "partial", "amount": 500}`, slotdv1.Action_ACTION_REPAIR)
	r.send(`{"amount": 80}`, slotdv1.Action_ACTION_READY)

	// Sessions that end without READY: a reset, an exclusive tool, an
	// expiry; and a stale session asked whether to go on.
	x := inst.convo(t, "m-reset", flights)
	x.send(`{"from": "mad"}`, slotdv1.Action_ACTION_ASK)
	if _, err := inst.client.ResetSession(context.Background(), &slotdv1.ResetSessionRequest{ConversationId: x.id}); err != nil {
		t.Fatalf("ResetSession: %v", err)
	}
	y := inst.convo(t, "m-exclusive", dispute)
	y.send(`{"card_last4": "4417"}`, slotdv1.Action_ACTION_ASK)
	y.tool = "test.block_card" // exclusive: ends the dispute
	y.send(`{"card_last4": "4417"}`, slotdv1.Action_ACTION_READY)
	z := inst.convo(t, "m-stale", dispute)
	z.send(`{"card_last4": "4417"}`, slotdv1.Action_ACTION_ASK)
	z.now = seedNow.Add(time.Hour) // past stale_after (30m)
	z.send(`{"amount": "100"}`, slotdv1.Action_ACTION_RESUME)
	z.now = seedNow.Add(26 * time.Hour) // past ttl (24h): a new session
	z.send(`{"card_last4": "4417"}`, slotdv1.Action_ACTION_ASK)

	// A turn of a tool the catalog lacks fails, and is counted as "other".
	if _, err := inst.client.Turn(context.Background(), inst.convo(t, "m-unknown", "no.such_tool").request(`{}`)); err == nil {
		t.Fatal("a turn of an unknown tool succeeded")
	}

	fams := scrape(t, inst)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"slotd_turn_actions_total", map[string]string{"tool": dispute, "action": "ASK"}, 4 + 1 + 1 + 1},
		{"slotd_turn_actions_total", map[string]string{"tool": dispute, "action": "CONFIRM"}, 1},
		{"slotd_turn_actions_total", map[string]string{"tool": dispute, "action": "READY"}, 1},
		{"slotd_turn_actions_total", map[string]string{"tool": dispute, "action": "RESUME"}, 1},
		{"slotd_turn_actions_total", map[string]string{"tool": refund, "action": "REPAIR"}, 1},
		{"slotd_turn_replays_total", map[string]string{"tool": dispute}, 1},
		{"slotd_turn_duration_seconds", map[string]string{"tool": dispute, "action": "READY"}, 2},
		{"slotd_turn_duration_seconds", map[string]string{"tool": "other", "action": "ERROR"}, 1},
		{"slotd_turn_failures_total", map[string]string{"tool": "other"}, 1},
		{"slotd_sessions_ready_total", map[string]string{"tool": dispute, "first_attempt": "false"}, 1},
		{"slotd_sessions_ready_total", map[string]string{"tool": dispute, "first_attempt": "true"}, 0},
		{"slotd_sessions_ready_total", map[string]string{"tool": flights, "first_attempt": "true"}, 1},
		{"slotd_sessions_ready_total", map[string]string{"tool": refund, "first_attempt": "false"}, 1},
		{"slotd_reasks_total", map[string]string{"tool": dispute, "slot": "original_operation_id"}, 1},
		{"slotd_rejected_values_total", map[string]string{"tool": dispute, "normalizer": "amount"}, 1},
		{"slotd_repairs_total", map[string]string{"tool": refund, "field": "amount"}, 1},
		{"slotd_stale_resumes_total", map[string]string{"tool": dispute}, 1},
		{"slotd_sessions_ended_total", map[string]string{"tool": flights, "status": "reset"}, 1},
		{"slotd_sessions_ended_total", map[string]string{"tool": dispute, "status": "abandoned"}, 1},
		{"slotd_sessions_ended_total", map[string]string{"tool": dispute, "status": "expired"}, 1},
		{"slotd_fallbacks_total", map[string]string{"tool": flights, "status": "reset"}, 1},
		{"slotd_fallbacks_total", map[string]string{"tool": dispute, "status": "abandoned"}, 1},
		{"slotd_fallbacks_total", map[string]string{"tool": dispute, "status": "expired"}, 1},
		{"slotd_turns_in_flight", nil, 0},
		{"grpc_server_handled_total", map[string]string{"grpc_method": "Turn", "grpc_code": "OK"}, 16},
		{"grpc_server_handled_total", map[string]string{"grpc_method": "ResetSession", "grpc_code": "OK"}, 1},
	} {
		if got := value(fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := value(fams, "slotd_pg_pool_max_conns", nil); got < 1 {
		t.Errorf("slotd_pg_pool_max_conns = %v, want the pool's size", got)
	}
	if got := value(fams, "slotd_pg_pool_acquires_total", nil); got < 16 {
		t.Errorf("slotd_pg_pool_acquires_total = %v, want at least one per turn (16)", got)
	}
	if got := value(fams, "process_resident_memory_bytes", nil); got <= 0 {
		t.Errorf("process_resident_memory_bytes = %v, want the process's memory", got)
	}
	// Label values come from the contracts, never from a request.
	for _, f := range fams {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if strings.Contains(l.GetValue(), "no.such_tool") || strings.Contains(l.GetValue(), "4417") {
					t.Errorf("%s has label %s=%q: a value from a request", f.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
}

func TestHealthAndReadinessEndpoints(t *testing.T) {
	t.Parallel()
	inst := start(t, "", nil)
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/debug/pprof/": 404} {
		resp, err := http.Get("http://" + inst.srv.MetricsAddr() + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}

	withPprof := start(t, "", nil, func(c *server.Config) { c.Pprof = true })
	resp, err := http.Get("http://" + withPprof.srv.MetricsAddr() + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("with Pprof: GET /debug/pprof/: %d, want 200", resp.StatusCode)
	}
	resp, err = http.Get("http://" + withPprof.srv.MetricsAddr() + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == 200 {
		t.Errorf("GET /debug/pprof/cmdline: 200; the command line may hold secrets and must not be served")
	}
}

func TestReadinessFollowsPostgres(t *testing.T) {
	t.Parallel()
	// A Postgres nobody listens on: slotd starts, but is not ready.
	inst := &instance{}
	var log servertest.LogBuffer
	srv, err := server.New(server.Config{Listen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0", Contracts: testContracts(t),
		DatabaseURL: "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=1", HealthInterval: 50 * time.Millisecond},
		slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	inst.srv = srv
	servertest.Run(t, srv.Run)
	var code int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + srv.MetricsAddr() + "/readyz")
		if err != nil {
			continue
		}
		resp.Body.Close()
		if code = resp.StatusCode; code == http.StatusServiceUnavailable {
			break
		}
	}
	if code != http.StatusServiceUnavailable {
		t.Errorf("GET /readyz without Postgres: %d, want 503", code)
	}
	resp, err := http.Get("http://" + srv.MetricsAddr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /healthz without Postgres: %d, want 200: the process is alive", resp.StatusCode)
	}
	// The log says why, in the words of what failed, without the
	// connection's user and database.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !strings.Contains(log.String(), "postgres not ready"); {
		time.Sleep(50 * time.Millisecond)
	}
	if text := log.String(); !strings.Contains(text, "postgres not ready") || !strings.Contains(text, "connection refused") ||
		strings.Contains(text, "user=postgres") || strings.Contains(text, "none") {
		t.Errorf("the not-ready log does not say why, or names the connection:\n%s", text)
	}
}

// turnLines are the log's "turn" lines, decoded.
func turnLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if m["msg"] == "turn" {
			out = append(out, m)
		}
	}
	return out
}

func TestTurnLogLines(t *testing.T) {
	t.Parallel()
	var buf servertest.LogBuffer
	log := slog.New(logline.NewJSON(&buf, nil))
	inst := start(t, "", log, func(c *server.Config) { c.APIKeys = "acme:key-of-acme-0123456789" })
	c := inst.convo(t, "log-dispute", "bank.open_dispute")
	c.ctx = metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer key-of-acme-0123456789",
		"x-request-id", "req-log-1")
	c.send(`{"card_last4": "4417", "amount": "много", "reason": null}`, slotdv1.Action_ACTION_ASK)

	lines := turnLines(t, buf.String())
	if len(lines) != 1 {
		t.Fatalf("%d turn lines for one turn, want 1:\n%s", len(lines), buf.String())
	}
	l := lines[0]
	for k, want := range map[string]any{
		"request_id": "req-log-1", "tenant": "acme", "tool": "bank.open_dispute", "action": "ASK", "code": "OK",
		"conversation_id": "log-dispute", "turn_id": "log-dispute/1", "slot": "amount", "level": "INFO",
	} {
		if l[k] != want {
			t.Errorf("log %s = %v, want %v", k, l[k], want)
		}
	}
	if ms, ok := l["latency_ms"].(float64); !ok || ms <= 0 {
		t.Errorf("log latency_ms = %v, want a positive number", l["latency_ms"])
	}
	decisions, _ := l["decisions"].(map[string]any)
	if decisions["FILLED"] != 1.0 || decisions["REJECTED"] != 1.0 || decisions["IGNORED_NULL"] != 1.0 {
		t.Errorf("log decisions = %v, want FILLED 1, REJECTED 1, IGNORED_NULL 1", l["decisions"])
	}

	// A card number a caller put in an id: the turn is refused, and the
	// id masked in its log line like any echoed input.
	cid := inst.convo(t, "chat 4111 1111 1111 1111", "travel.search_flights")
	if _, err := inst.client.Turn(c.ctx, cid.request(`{"from": "MAD"}`)); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a card number in conversation_id: %v, want INVALID_ARGUMENT", err)
	}
	if out := buf.String(); strings.Contains(out, "4111 1111 1111 1111") || !strings.Contains(out, `"conversation_id":"chat •••• 1111"`) {
		t.Errorf("a card number in conversation_id is not masked in the log:\n%s", out)
	}

	// An id the engine takes, with a run of digits masking cuts (not a
	// card number by issuer and checksum), is masked in the log as well.
	digits := inst.convo(t, "conv-1234567890123", "travel.search_flights")
	digits.ctx = c.ctx
	digits.send(`{"from": "MAD"}`, slotdv1.Action_ACTION_ASK)
	if out := buf.String(); strings.Contains(out, "1234567890123") || !strings.Contains(out, `"conversation_id":"conv-•••• 0123"`) {
		t.Errorf("a taken conversation_id with 13 digits in a row is not masked in the log:\n%s", out)
	}

	// A failed turn is logged too, with its code.
	bad := inst.convo(t, "log-bad", "no.such_tool")
	bad.ctx = c.ctx
	if _, err := inst.client.Turn(bad.ctx, bad.request(`{}`)); err == nil {
		t.Fatal("a turn of an unknown tool succeeded")
	}
	lines = turnLines(t, buf.String())
	if len(lines) != 4 || lines[3]["code"] == "OK" || lines[3]["action"] != "" || lines[3]["tool"] != "other" {
		t.Errorf("failed turn's log line = %v, want a code other than OK, no action and tool other", lines[len(lines)-1])
	}
}

// TestLogsNeverHoldCardNumbers sends a card number in every way a model
// does, to a slot marked x-slotd.sensitive, accepted and refused, and
// checks that no digit group of it reaches the log.
func TestLogsNeverHoldCardNumbers(t *testing.T) {
	t.Parallel()
	var buf servertest.LogBuffer
	log := slog.New(logline.NewJSON(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	inst := start(t, dbtest.NewDatabase(t), log)

	const card = "4276160012345678"
	groups := []string{"4276", "1600", "1234", "5678"}
	c := inst.convo(t, "pay", "test.card_payment")
	c.send(`{"card_number": "4276 1600 1234 5678"}`, slotdv1.Action_ACTION_ASK) // refused: not 16 digits in a row
	c.send(`{"card_number": "`+card+`", "amount": -5}`, slotdv1.Action_ACTION_ASK)
	c.send(`{"card_number": "`+card+`", "amount": 12.5}`, slotdv1.Action_ACTION_READY)
	// The dispute's card slot gets a whole card number too.
	d := inst.convo(t, "dispute", "bank.open_dispute")
	d.send(`{"card_last4": "4276 1600 1234 5678", "amount": "4276160012345678"}`, slotdv1.Action_ACTION_ASK)

	out := buf.String()
	if n := len(turnLines(t, out)); n != 4 {
		t.Fatalf("%d turn lines, want 4", n)
	}
	if strings.Contains(out, card) || strings.Contains(out, "4276 1600") {
		t.Fatalf("the log holds the card number:\n%s", out)
	}
	// Ids made of random hex may hold any four digits by chance: they are
	// left out of the search, after checking that they are ids.
	hexID := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		for _, k := range []string{"request_id", "session_id"} {
			if v, ok := m[k]; ok {
				if s, _ := v.(string); !hexID.MatchString(s) {
					t.Errorf("log %s = %v, want a generated id", k, v)
				}
				delete(m, k)
			}
		}
		delete(m, "time")
		delete(m, "latency_ms") // digits by chance, like the ids
		rest, _ := json.Marshal(m)
		for _, g := range groups {
			if bytes.Contains(rest, []byte(g)) {
				t.Errorf("log line holds %q of the card number: %s", g, rest)
			}
		}
	}
}

func TestMaskIDAgreesWithRedact(t *testing.T) {
	t.Parallel()
	for _, id := range []string{
		"chat-42", "bench-18ec9b9caa6a247c-slotd-12-34", "4111111111111111", "chat 4111 1111 1111 1111",
		"a-4111-1111-1111-1111-b", "4111\u00a01111\u00a01111\u00a01111", "12345678901", "123456789012",
		"1-2-3-4-5-6-7-8-9-0-1-2", "1 2 3 4 5 6 7 8 9 0 1", "order 2026-08-22 10:00", "",
	} {
		if got, want := server.MaskID(id), problem.Redact(id); got != want {
			t.Errorf("MaskID(%q) = %q, want %q as problem.Redact masks it", id, got, want)
		}
	}
}

// The way-out metrics: hand-offs by slot, attempts until a value is
// accepted, backend failure kinds, output contract violations.
func TestHandoffAndBackendMetrics(t *testing.T) {
	t.Parallel()
	inst := start(t, "", nil)
	const dispute = "bank.open_dispute"
	ctx := context.Background()

	// reason takes three attempts here: two refused, then accepted.
	a := inst.convo(t, "w-attempts", dispute)
	a.send(`{"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽"}`, slotdv1.Action_ACTION_ASK)
	a.send(`{"reason": "chargeback"}`, slotdv1.Action_ACTION_ASK)
	a.send(`{"reason": "refund"}`, slotdv1.Action_ACTION_ASK)
	a.send(`{"reason": "Fraud"}`, slotdv1.Action_ACTION_CONFIRM)

	// Three bad reasons: a hand-off on reason.
	h := inst.convo(t, "w-handoff", dispute)
	h.send(`{"card_last4": "4417", "operation_date": "вчера", "amount": "100"}`, slotdv1.Action_ACTION_ASK)
	h.send(`{"reason": "a"}`, slotdv1.Action_ACTION_ASK)
	h.send(`{"reason": "b"}`, slotdv1.Action_ACTION_ASK)
	h.send(`{"reason": "c"}`, slotdv1.Action_ACTION_HANDOFF)

	// A timeout, then a result that breaks the output contract.
	r := inst.convo(t, "w-backend", dispute)
	r.send(`{"card_last4": "4417", "operation_date": "вчера", "amount": "100", "reason": "fraud"}`, slotdv1.Action_ACTION_CONFIRM)
	req := r.request("")
	req.Confirmation = &slotdv1.Confirmation{Accept: true}
	ready, err := inst.client.Turn(ctx, req)
	if err != nil || ready.Action != slotdv1.Action_ACTION_READY {
		t.Fatalf("READY: %v, %v", ready.GetAction(), err)
	}
	if _, err := inst.client.CompleteSession(ctx, &slotdv1.CompleteSessionRequest{IdempotencyKey: ready.IdempotencyKey,
		Outcome: &slotdv1.CompleteSessionRequest_Failure{Failure: &slotdv1.BackendFailure{Kind: slotdv1.FailureKind_FAILURE_KIND_TIMEOUT}}}); err != nil {
		t.Fatal(err)
	}
	garbage, _ := structpb.NewValue(map[string]any{"status": "maybe"})
	out, err := inst.client.CompleteSession(ctx, &slotdv1.CompleteSessionRequest{IdempotencyKey: ready.IdempotencyKey,
		Outcome: &slotdv1.CompleteSessionRequest_Result{Result: garbage}})
	if err != nil || out.Action != slotdv1.Action_ACTION_HANDOFF {
		t.Fatalf("a result that breaks the output contract: %v, %v", out.GetAction(), err)
	}

	fams := scrape(t, inst)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"slotd_handoffs_total", map[string]string{"tool": dispute, "slot": "reason"}, 1},
		{"slotd_handoffs_total", map[string]string{"tool": dispute, "slot": "_backend"}, 1},
		{"slotd_backend_failures_total", map[string]string{"tool": dispute, "kind": "timeout"}, 1},
		{"slotd_output_contract_violations_total", map[string]string{"tool": dispute}, 1},
		// reason accepted twice (once after 3 attempts, once at once),
		// amount three times at the first attempt.
		{"slotd_attempts_until_valid", map[string]string{"tool": dispute, "slot": "reason"}, 2},
		{"slotd_attempts_until_valid", map[string]string{"tool": dispute, "slot": "amount"}, 3},
	} {
		if got := value(fams, tc.name, tc.labels); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	// The histogram keeps how many attempts each took: 3 and 1.
	for _, m := range fams["slotd_attempts_until_valid"].Metric {
		var slot string
		for _, l := range m.Label {
			if l.GetName() == "slot" {
				slot = l.GetValue()
			}
		}
		if slot == "reason" && m.Histogram.GetSampleSum() != 4 {
			t.Errorf("reason attempts sum = %v, want 4 (3 and 1)", m.Histogram.GetSampleSum())
		}
	}
}

// A turn Limit refuses never reaches the service: it is counted and logged
// all the same, with the code it was refused with.
func TestRefusedTurnsAreCountedAndLogged(t *testing.T) {
	t.Parallel()
	var buf servertest.LogBuffer
	log := slog.New(logline.NewJSON(&buf, nil))
	inst := start(t, "", log, func(c *server.Config) { c.Limits.MaxRequestBytes = 1024 })
	big := inst.convo(t, "too-big", "travel.search_flights")
	if _, err := inst.client.Turn(context.Background(), big.request(`{"from": "`+strings.Repeat("x", 2000)+`"}`)); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a turn over MaxRequestBytes: %v, want INVALID_ARGUMENT", err)
	}
	fams := scrape(t, inst)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"slotd_turn_failures_total", map[string]string{"tool": "travel.search_flights", "code": "InvalidArgument"}, 1},
		{"slotd_turn_duration_seconds", map[string]string{"tool": "travel.search_flights", "action": "ERROR"}, 1},
		{"slotd_turns_in_flight", nil, 0},
		{"grpc_server_handled_total", map[string]string{"grpc_method": "Turn", "grpc_code": "InvalidArgument"}, 1},
	} {
		if got := value(fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	lines := turnLines(t, buf.String())
	if len(lines) != 1 || lines[0]["code"] != "InvalidArgument" || lines[0]["conversation_id"] != "too-big" || lines[0]["tool"] != "travel.search_flights" {
		t.Errorf("turn lines = %v, want one for the refused turn, with its code", lines)
	}
}
