package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/app/server"
)

// The Python orchestrator example (examples/python) run as a user runs it:
// python3 dispute.py against a real slotd's HTTP gateway. It needs nothing
// but python3: the example uses the standard library only.

// pythonExample returns the example's directory; python3 must be on PATH.
func pythonExample(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("python3 is needed to run examples/python and is not on PATH (apt-get install python3): %v", err)
	}
	dir, err := filepath.Abs("../examples/python")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// runPython runs python3 with args in the example's directory against the
// gateway at addr, bounded in time, and returns its combined output.
func runPython(t *testing.T, dir, addr, key string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", args...)
	cmd.Dir = dir
	// WaitDelay bounds the wait for output after the timeout kills python.
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(), "SLOTD_HTTP_ADDR="+addr, "SLOTD_API_KEY="+key,
		"PYTHONUNBUFFERED=1", "PYTHONDONTWRITEBYTECODE=1", "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("python3 %s did not end within 60s; output:\n%s", strings.Join(args, " "), out)
	}
	return string(out), err
}

// The lines every good run of dispute.py prints.
var pythonDialogue = []string{
	"tool for the model: bank_open_dispute (slotd's bank.open_dispute), properties ",
	"ACTION_ASK: Что случилось с операцией на 1200.50 ₽",
	"allowed: duplicate, fraud, not_received, wrong_amount",
	"ACTION_ASK: Какая из двух операций по карте •• 4417 была первой?",
	"ACTION_CONFIRM: Открываю спор по карте •• 4417",
	"ACTION_READY: call the backend with ",
	`"original_operation_id": "op-20260822-0117"`,
	"completed: SESSION_STATUS_COMPLETED",
	`output for the model {"case_id": "DSP-7781", "status": "accepted"}`,
}

func TestPythonExampleRunsTheSeedDialogue(t *testing.T) {
	t.Parallel()
	dir := pythonExample(t)
	inst := startServer(t, dbtestURL(t), contractsDir(t), withHTTP)
	out, err := runPython(t, dir, inst.srv.HTTPAddr(), "", "dispute.py")
	if err != nil {
		t.Fatalf("python3 dispute.py: %v, want exit 0; output:\n%s", err, out)
	}
	for _, want := range pythonDialogue {
		if !strings.Contains(out, want) {
			t.Errorf("the example's output lacks %q; output:\n%s", want, out)
		}
	}
	// Nothing failed, so nothing was sent twice.
	for _, unwanted := range []string{"delivery 1 failed", "attempts)", "replayed:", "risk_score"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("the example's output has %q on a run where nothing failed; output:\n%s", unwanted, out)
		}
	}
}

// delivery is one POST /v1/turn the proxy passed to slotd.
type delivery struct {
	conversationID, turnID string
	status                 int  // slotd's answer
	replayed               bool // slotd said Slotd-Replayed: true
	lost                   bool // the client got the proxy's problem instead
	sent, answered         time.Time
}

// turnProxy stands between a client and slotd's HTTP gateway. Every
// request reaches slotd; for the POST /v1/turn deliveries that lose names
// (counted from 1), slotd's answer is thrown away and the client gets the
// proxy's problem instead: the turn is applied, the answer lost on the way.
type turnProxy struct {
	url  string
	lose func(n int) *lostAnswer

	mu         sync.Mutex
	deliveries []delivery
}

type lostAnswer struct {
	status     int
	retryAfter string // the Retry-After header; "" for none
	problem    string
}

// unavailable is what slotd's gateway answers while Postgres is away.
var unavailable = &lostAnswer{status: http.StatusServiceUnavailable, retryAfter: "1",
	problem: `{"type":"https://slotd.dev/problems/unavailable","title":"The session store is unavailable","status":503,"retryable":true,"retry_after_seconds":1}`}

func newTurnProxy(t *testing.T, gateway string, lose func(n int) *lostAnswer) *turnProxy {
	t.Helper()
	target, err := url.Parse("http://" + gateway)
	if err != nil {
		t.Fatal(err)
	}
	p := &turnProxy{lose: lose}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	rp := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) { return p.roundTrip(transport, r) }),
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(func() {
		srv.Close()
		transport.CloseIdleConnections()
	})
	p.url = strings.TrimPrefix(srv.URL, "http://")
	return p
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (p *turnProxy) roundTrip(next http.RoundTripper, r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/turn" {
		return next.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		ConversationID string `json:"conversation_id"`
		TurnID         string `json:"turn_id"`
	}
	_ = json.Unmarshal(body, &req) // a body that is not JSON is recorded without ids
	d := delivery{conversationID: req.ConversationID, turnID: req.TurnID, sent: time.Now()}
	resp, err := next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	d.status, d.replayed = resp.StatusCode, resp.Header.Get("Slotd-Replayed") == "true"

	p.mu.Lock()
	lost := p.lose(len(p.deliveries) + 1)
	d.lost = lost != nil
	d.answered = time.Now()
	p.deliveries = append(p.deliveries, d)
	p.mu.Unlock()
	if lost == nil {
		return resp, nil
	}
	// slotd has answered (the turn is applied); the client never sees it.
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	h := http.Header{}
	h.Set("Content-Type", server.ProblemContentType)
	h.Set("Content-Length", strconv.Itoa(len(lost.problem)))
	if lost.retryAfter != "" {
		h.Set("Retry-After", lost.retryAfter)
	}
	return &http.Response{
		Status: strconv.Itoa(lost.status) + " " + http.StatusText(lost.status), StatusCode: lost.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, Request: r,
		Body: io.NopCloser(strings.NewReader(lost.problem)), ContentLength: int64(len(lost.problem)),
	}, nil
}

func (p *turnProxy) seen() []delivery {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]delivery(nil), p.deliveries...)
}

// TestPythonExampleRetriesALostAnswerWithTheSameTurnID loses slotd's answer
// to the second turn: the script must wait as the problem says, send the
// same turn_id again, get the stored answer (Slotd-Replayed: true) and say
// so; slotd must have applied every turn exactly once.
func TestPythonExampleRetriesALostAnswerWithTheSameTurnID(t *testing.T) {
	t.Parallel()
	dir := pythonExample(t)
	dbURL := dbtestURL(t)
	inst := startServer(t, dbURL, contractsDir(t), withHTTP, withKeys)
	proxy := newTurnProxy(t, inst.srv.HTTPAddr(), func(n int) *lostAnswer {
		if n == 2 {
			return unavailable
		}
		return nil
	})

	out, err := runPython(t, dir, proxy.url, bankKey, "dispute.py")
	if err != nil {
		t.Fatalf("python3 dispute.py through a proxy that loses one answer: %v, want exit 0; output:\n%s", err, out)
	}
	for _, want := range slices.Concat(pythonDialogue, []string{
		"delivery 1 failed: POST /v1/turn: 503 The session store is unavailable (the problem says retryable); sending it again in 1.",
		"(took 2 attempts)",
		"replayed: slotd answered turn ",
	}) {
		if !strings.Contains(out, want) {
			t.Errorf("the example's output lacks %q; output:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "replayed:"); n != 1 {
		t.Errorf("the output says replayed %d times, want once (only the retried turn); output:\n%s", n, out)
	}

	// What went over the wire: four turns, the second sent twice.
	ds := proxy.seen()
	if len(ds) != 5 {
		t.Fatalf("POST /v1/turn deliveries = %d, want 5 (four turns, one sent again): %+v", len(ds), ds)
	}
	lost, retry := ds[1], ds[2]
	if !lost.lost || lost.status != http.StatusOK || lost.replayed {
		t.Errorf("the second delivery = %+v, want a fresh 200 from slotd that the proxy lost", lost)
	}
	if retry.turnID == "" || retry.turnID != lost.turnID {
		t.Errorf("the retry's turn_id = %q, the lost delivery's %q: a retry must reuse it", retry.turnID, lost.turnID)
	}
	if !retry.replayed || retry.status != http.StatusOK || retry.lost {
		t.Errorf("the retry = %+v, want slotd's stored answer (200, Slotd-Replayed: true) passed on", retry)
	}
	if waited := retry.sent.Sub(lost.answered); waited < time.Second {
		t.Errorf("the retry came %v after the 503, want at least its Retry-After of 1s", waited)
	}
	var turnIDs []string
	for i, d := range ds {
		if i != 2 {
			turnIDs = append(turnIDs, d.turnID)
		}
		if i != 2 && d.replayed {
			t.Errorf("delivery %d (%s) was a replay; only the retry should be", i+1, d.turnID)
		}
		if d.conversationID != ds[0].conversationID {
			t.Errorf("delivery %d is in conversation %q, want %q", i+1, d.conversationID, ds[0].conversationID)
		}
	}

	// In Postgres: each turn stored once, in order, each one version; then
	// the completion. The session's version is the distinct turns plus it.
	pool := dbtestPool(t, dbURL)
	rows, err := pool.Query(context.Background(),
		`SELECT turn_id, version FROM turns WHERE tenant = 'bank' AND conversation_id = $1 ORDER BY version`, ds[0].conversationID)
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for rows.Next() {
		var id string
		var version int64
		if err := rows.Scan(&id, &version); err != nil {
			t.Fatal(err)
		}
		if version != int64(len(stored)+1) {
			t.Errorf("turn %s stored at version %d, want %d", id, version, len(stored)+1)
		}
		stored = append(stored, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(stored) != len(turnIDs)+1 || strings.Join(stored[:len(stored)-1], " ") != strings.Join(turnIDs, " ") ||
		!strings.HasPrefix(stored[len(stored)-1], "complete:") {
		t.Errorf("stored turns = %q, want each of %q once, in order, then the completion", stored, turnIDs)
	}
	var version int64
	var status string
	if err := pool.QueryRow(context.Background(),
		`SELECT version, status FROM sessions WHERE tenant = 'bank' AND conversation_id = $1`, ds[0].conversationID).Scan(&version, &status); err != nil {
		t.Fatal(err)
	}
	if version != int64(len(turnIDs)+1) || status != "completed" {
		t.Errorf("session at version %d, %s; want %d (%d distinct turns and the completion), completed",
			version, status, len(turnIDs)+1, len(turnIDs))
	}
}

// pythonTurnOnce sends one turn with the example's client (with the turn_id
// given, else none: the client makes one) and prints how it ended as JSON:
// the SlotdError's status, problem type and attempts.
const pythonTurnOnce = `
import json, sys
import slotd
conversation_id, tool, turn_id = sys.argv[1:4]
req = {"conversation_id": conversation_id, "tool": tool, "arguments": {"reason": "Duplicate"}}
if turn_id:
    req["turn_id"] = turn_id
try:
    reply = slotd.Client(max_attempts=3).turn(req)
except slotd.SlotdError as e:
    print(json.dumps({"status": e.status, "type": (e.problem or {}).get("type"), "attempts": e.attempts}))
    sys.exit(0)
print("no error: " + json.dumps(reply.body))
sys.exit(1)
`

// TestPythonClientRetriesOnlyWhatTheProblemSaysIsRetryable: a refusal
// whose problem is not retryable is raised after one delivery, whatever
// its status; a retryable one is sent again, a bounded number of times.
func TestPythonClientRetriesOnlyWhatTheProblemSaysIsRetryable(t *testing.T) {
	t.Parallel()
	dir := pythonExample(t)
	inst := startServer(t, dbtestURL(t), contractsDir(t), withHTTP)
	notRetryable := &lostAnswer{status: http.StatusServiceUnavailable, retryAfter: "1",
		problem: `{"type":"https://slotd.dev/problems/unavailable","title":"Down for good","status":503,"retryable":false,"retry_after_seconds":1}`}
	tests := []struct {
		name, tool   string
		turnID       string // "": the client makes one
		lose         *lostAnswer
		wantStatus   int
		wantType     string
		wantAttempts int
	}{
		{"slotd refuses an unknown tool", "bank.no_such_tool", "t-404", nil, 404, "https://slotd.dev/problems/unknown-tool", 1},
		{"a 503 whose problem is not retryable", "bank.open_dispute", "t-503", notRetryable, 503, "https://slotd.dev/problems/unavailable", 1},
		{"a retryable 503 every time", "bank.open_dispute", "t-retry", unavailable, 503, "https://slotd.dev/problems/unavailable", 3},
		{"a retryable 503 every time, turn_id made by the client", "bank.open_dispute", "", unavailable, 503, "https://slotd.dev/problems/unavailable", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			proxy := newTurnProxy(t, inst.srv.HTTPAddr(), func(int) *lostAnswer { return tt.lose })
			conv := "python-once-" + strings.ReplaceAll(tt.name, " ", "-")
			out, err := runPython(t, dir, proxy.url, "", "-c", pythonTurnOnce, conv, tt.tool, tt.turnID)
			if err != nil {
				t.Fatalf("python3 -c (one turn): %v, want a SlotdError; output:\n%s", err, out)
			}
			var got struct {
				Status   int    `json:"status"`
				Type     string `json:"type"`
				Attempts int    `json:"attempts"`
			}
			if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &got); err != nil {
				t.Fatalf("output is not the error as JSON: %v\n%s", err, out)
			}
			if got.Status != tt.wantStatus || got.Type != tt.wantType || got.Attempts != tt.wantAttempts {
				t.Errorf("SlotdError = %+v, want status %d, type %s, %d attempt(s)", got, tt.wantStatus, tt.wantType, tt.wantAttempts)
			}
			ds := proxy.seen()
			if len(ds) != tt.wantAttempts {
				t.Fatalf("POST /v1/turn deliveries = %d, want %d: %+v", len(ds), tt.wantAttempts, ds)
			}
			want := tt.turnID
			if want == "" {
				want = ds[0].turnID // the client's own, which it must make once per turn
			}
			for i, d := range ds {
				if d.turnID == "" || d.turnID != want {
					t.Errorf("delivery %d has turn_id %q, want the same non-empty one (%q) on every delivery", i+1, d.turnID, want)
				}
				if i > 0 && !d.replayed {
					t.Errorf("delivery %d was not answered from the stored turn: %+v", i+1, d)
				}
			}
		})
	}
}

// TestPythonExampleFailsOnAnUnexpectedAction runs the example against a
// slotd whose dispute contract needs no approval: the third step answers
// READY where the example expects CONFIRM, and the example must say so and
// exit 1.
func TestPythonExampleFailsOnAnUnexpectedAction(t *testing.T) {
	t.Parallel()
	dir := pythonExample(t)
	contracts := contractsDir(t)
	path := filepath.Join(contracts, "bank.open_dispute.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	ext, ok := doc["x-slotd"].(map[string]any)
	if !ok || ext["confirm"] != true {
		t.Fatalf("bank.open_dispute no longer asks for approval (x-slotd.confirm = %v); this test needs a contract that does", ext["confirm"])
	}
	ext["confirm"] = false
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	inst := startServer(t, dbtestURL(t), contracts, withHTTP)
	out, err := runPython(t, dir, inst.srv.HTTPAddr(), "", "dispute.py")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("python3 dispute.py on a dialogue without approval: %v, want exit status 1; output:\n%s", err, out)
	}
	if want := "step 3: expected ACTION_CONFIRM, got ACTION_READY"; !strings.Contains(out, want) {
		t.Errorf("the example's output lacks %q; output:\n%s", want, out)
	}
	if strings.Contains(out, "completed:") {
		t.Errorf("the example completed a session after an unexpected action; output:\n%s", out)
	}
}
