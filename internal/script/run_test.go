package script

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

const wrongScript = `name: wrong on purpose
tool: bank.open_dispute
locale: ru
time_zone: Europe/Moscow
clock: 2026-08-23T13:00:00+03:00

steps:
  - args: {card_last4: "•• 4417", operation_date: вчера, amount: "1 200,50 ₽"}
    expect:
      action: confirm
      slots: {amount: 1200.5, card_last4: "4417", reason: duplicate}
      missing: []
      changes: [{slot: amount, decision: overwritten}]
      problem: {type: invalid-value}
  - user: Мошенничество
    args: {reason: fraud}
    expect: {action: ready, question_contains: "•• 4417"}
`

// A deliberately wrong script fails, and its report names each wrong field
// with its line, the value expected and the value that came.
func TestWrongScriptFailsWithTheRightDiff(t *testing.T) {
	t.Parallel()
	conn := realServer(t)
	s := parseOne(t, wrongScript)

	res := (&Runner{Conn: conn}).Run(context.Background(), s)
	if !res.Failed() {
		t.Fatal("a wrong script passed")
	}
	if len(res.Steps) != 1 {
		t.Errorf("played %d steps, want 1: a script stops at its first failed step", len(res.Steps))
	}
	want := []string{
		`step 1 (x.yaml:8): args {"amount":"1 200,50 ₽","card_last4":"•• 4417","operation_date":"вчера"}`,
		`    action (line 10): expected CONFIRM, got ASK`,
		`    slots.amount (line 11): expected 1200.5, got "1200.50" (expected a number, got text: quote the value in the script, e.g. "1200.50")`,
		`    slots.reason (line 11): expected "duplicate", got nothing (not set)`,
		`    missing (line 12): expected [], got ["reason"] (has also reason)`,
		`    changes[amount].decision (line 13): expected OVERWRITTEN, got FILLED`,
		`    problem (line 14): expected a problem, got none`,
		`  the response:`,
		`    ASK reason "Что случилось с операцией на 1200.50 ₽: списали дважды, вы её не совершали, не получили оплаченное или сумма не та?" allowed ["duplicate","fraud","not_received","wrong_amount"]`,
		`    session ACTIVE v1 slots {"amount":"1200.50","card_last4":"4417","operation_date":"2026-08-22"} missing ["reason"]`,
		`    changes: card_last4 FILLED "4417"; operation_date FILLED "2026-08-22"; amount FILLED "1200.50"`,
		`step 2 not run (a script stops at its first failed step; --keep-going runs the rest)`,
		`conversation_id: ` + res.ConversationID,
	}
	if got := strings.Split(strings.TrimSuffix(res.Text(), "\n"), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("report:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Keep going: the second step is played, and fails on its own.
	res = (&Runner{Conn: conn, KeepGoing: true}).Run(context.Background(), s)
	if len(res.Steps) != 2 || res.Steps[1].Failed() != true {
		t.Fatalf("keep going: %d steps played, want 2 with the second failed", len(res.Steps))
	}
	text := res.Text()
	for _, line := range []string{
		`step 2 (x.yaml:15): args {"reason":"fraud"}`,
		`    user said: "Мошенничество"`,
		`    action (line 17): expected READY, got CONFIRM`,
	} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("keep-going report lacks %q:\n%s", line, text)
		}
	}
	if strings.Contains(text, "question_contains") || strings.Contains(text, "not run") {
		t.Errorf("keep-going report has a met expectation or steps not run:\n%s", text)
	}
}

// A script that expects nothing still fails when a call fails.
func TestScriptExpectingNothingFailsOnTransportError(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := lis.Addr().String()
	lis.Close()

	s := parseOne(t, "tool: bank.open_dispute\nsteps:\n  - args: {amount: 1}\n  - args: {}\n")
	res := (&Runner{Conn: servertest.Dial(t, dead), Timeout: 5 * time.Second}).Run(context.Background(), s)
	if !res.Failed() || len(res.Steps) != 1 || res.Steps[0].Err == nil {
		t.Fatalf("against a dead address: failed=%v steps=%d, want a failed first step with an error", res.Failed(), len(res.Steps))
	}
	if text := res.Text(); !strings.Contains(text, "the call failed: Unavailable") || !strings.Contains(text, "step 2 not run") {
		t.Errorf("report does not say the call failed and the rest was not run:\n%s", text)
	}

	// Keep going does not go on past a failed call: the state is unknown.
	res = (&Runner{Conn: servertest.Dial(t, dead), KeepGoing: true, Timeout: 5 * time.Second}).Run(context.Background(), s)
	if len(res.Steps) != 1 {
		t.Errorf("keep going played %d steps after a failed call, want 1", len(res.Steps))
	}

	// A server error is a failure too.
	f := &fakeSlots{turn: func(*slotdv1.TurnRequest) (*slotdv1.TurnResponse, error) {
		return nil, status.Error(codes.Internal, "boom")
	}}
	withExpectations := parseOne(t, "tool: t\nsteps:\n  - args: {}\n    expect: {action: ask, slots: {a: 1}, problem: null}\n")
	res = (&Runner{Conn: fakeServer(t, f)}).Run(context.Background(), withExpectations)
	if !res.Failed() || res.Steps[0].Err == nil || !strings.Contains(res.Steps[0].Err.Error(), "Internal: boom") {
		t.Fatalf("an INTERNAL answer: failed=%v err=%v", res.Failed(), res.Steps[0].Err)
	}
	want := "step 1 (x.yaml:3): args {}\n    the call failed: Internal: boom\nconversation_id: " + res.ConversationID + "\n"
	if got := res.Text(); got != want {
		t.Errorf("a failed call is reported once, not per expectation:\n got %q\nwant %q", got, want)
	}
}

// An expected error passes, and its problem can be checked; an expected
// error that does not come fails.
func TestExpectedError(t *testing.T) {
	t.Parallel()
	conn := realServer(t)
	pass := parseOne(t, `
tool: bank.no_such_tool
steps:
  - args: {}
    expect:
      error: not_found
      problem: {type: unknown-tool}
`)
	if res := (&Runner{Conn: conn}).Run(context.Background(), pass); res.Failed() {
		t.Errorf("expected error did not pass:\n%s", res.Text())
	}
	fail := parseOne(t, `
tool: bank.open_dispute
steps:
  - args: {}
    expect: {error: NotFound}
`)
	res := (&Runner{Conn: conn}).Run(context.Background(), fail)
	if !res.Failed() || len(res.Steps[0].Mismatches) != 1 {
		t.Fatalf("an error that did not come: failed=%v mismatches=%v", res.Failed(), res.Steps[0].Mismatches)
	}
	if got, want := res.Steps[0].Mismatches[0].String(), `error (line 5): expected NotFound, got a response (ASK card_last4 "По какой карте прошла операция? Назовите последние четыре цифры.")`; got != want {
		t.Errorf("mismatch:\n got %s\nwant %s", got, want)
	}
}

// A failed call says what to do: the tools slotd knows (and the one meant)
// for a misspelt tool, how to start slotd for a script's own clock.
func TestFailedCallSaysWhatToDo(t *testing.T) {
	t.Parallel()
	typo := parseOne(t, "tool: bank.open_dispuet\nsteps:\n  - args: {}\n")
	res := (&Runner{Conn: realServer(t)}).Run(context.Background(), typo)
	if text := res.Text(); !strings.Contains(text, "known tools: bank.block_card, bank.check_balance, bank.open_dispute") ||
		!strings.Contains(text, `did you mean "bank.open_dispute"?`) {
		t.Errorf("a misspelt tool:\n%s\nwant the known tools and the one meant", text)
	}
	clocked := parseOne(t, "tool: bank.open_dispute\nclock: 2026-08-23T13:00:00+03:00\nsteps:\n  - args: {}\n")
	res = (&Runner{Conn: realServerClock(t, false)}).Run(context.Background(), clocked)
	if text := res.Text(); !res.Failed() || !strings.Contains(text, "--client-clock trust") {
		t.Errorf("a script clock refused by the server:\n%s\nwant how to start slotd for scripts", text)
	}
}

// The verbose report shows what a completion did: the session's status,
// not an action it has none of.
func TestVerboseCompletionShowsTheStatus(t *testing.T) {
	t.Parallel()
	scripts, err := Load("../../integration/scripts/complete_timeout_then_accepted.yaml")
	if err != nil {
		t.Fatal(err)
	}
	results := (&Runner{Conn: realServer(t)}).RunAll(context.Background(), scripts)
	var out bytes.Buffer
	NewReport(results, nil, time.Second).WriteText(&out, true)
	if text := out.String(); !strings.Contains(text, "→ session COMPLETED") || strings.Contains(text, "UNSPECIFIED") {
		t.Errorf("the verbose report of a completed dispute:\n%s\nwant the completion shown as session COMPLETED", text)
	}
}

// Every call carries the script's clock (start plus advances), locale, time
// zone, turn_id and the tenant key; reset and complete go to their RPCs in
// the same conversation, complete with the last READY's key.
func TestRequestsCarryTheScriptsClockAndIDs(t *testing.T) {
	t.Parallel()
	f := &fakeSlots{}
	conn := fakeServer(t, f)
	s := parseOne(t, `
tool: travel.search_flights
locale: uk
time_zone: Europe/Kyiv
clock: 2026-08-23T22:30:00Z
steps:
  - args: {from: mad}
  - advance: 45m
    args: null
    turn_id: custom-7
  - confirm: yes
  - reset
  - advance: 1d
    complete: {result: {status: found, flights: 3}}
  - complete: {failure: timeout, idempotency_key: sd_given}
`)
	res := (&Runner{Conn: conn, TenantKey: "k-123"}).Run(context.Background(), s)
	if res.Failed() {
		t.Fatalf("failed:\n%s", res.Text())
	}
	start := time.Date(2026, 8, 23, 22, 30, 0, 0, time.UTC)
	if len(f.turns) != 3 || len(f.resets) != 1 || len(f.completes) != 2 {
		t.Fatalf("calls: %d turns, %d resets, %d completes; want 3, 1, 2", len(f.turns), len(f.resets), len(f.completes))
	}
	conv := f.turns[0].ConversationId
	if !strings.HasPrefix(conv, "script-x-") {
		t.Errorf("conversation_id = %q, want script-x-…", conv)
	}
	type turn struct {
		id     string
		now    time.Time
		args   map[string]any
		accept *bool
	}
	yes := true
	wantTurns := []turn{
		{"turn-1", start, map[string]any{"from": "mad"}, nil},
		{"custom-7", start.Add(45 * time.Minute), nil, nil},
		{"turn-3", start.Add(45 * time.Minute), nil, &yes},
	}
	for i, w := range wantTurns {
		r := f.turns[i]
		var args map[string]any
		if r.Arguments != nil {
			args = r.Arguments.AsMap()
		}
		var accept *bool
		if r.Confirmation != nil {
			accept = &r.Confirmation.Accept
		}
		got := turn{r.TurnId, r.Now.AsTime(), args, accept}
		if !reflect.DeepEqual(got, w) || r.ConversationId != conv || r.Tool != "travel.search_flights" || r.Locale != "uk" || r.TimeZone != "Europe/Kyiv" {
			t.Errorf("turn %d = %+v (%s %s %s %s), want %+v in %s", i+1, got, r.ConversationId, r.Tool, r.Locale, r.TimeZone, w, conv)
		}
	}
	if f.resets[0].ConversationId != conv {
		t.Errorf("reset conversation = %q, want %q", f.resets[0].ConversationId, conv)
	}
	c := f.completes[0]
	if c.ConversationId != conv || c.IdempotencyKey != "sd_turn-3" || !c.Now.AsTime().Equal(start.Add(45*time.Minute+24*time.Hour)) ||
		!reflect.DeepEqual(c.GetResult().AsInterface(), map[string]any{"status": "found", "flights": 3.0}) {
		t.Errorf("complete = %v, want the last READY's key sd_turn-3, the clock a day later and the result", c)
	}
	if c := f.completes[1]; c.GetFailure().GetKind() != slotdv1.FailureKind_FAILURE_KIND_TIMEOUT || c.IdempotencyKey != "sd_given" {
		t.Errorf("complete with failure = %v", c)
	}
	for i, a := range f.auth {
		if a != "Bearer k-123" {
			t.Errorf("call %d: authorization = %q, want Bearer k-123", i+1, a)
		}
	}
}

func TestScriptWithoutClockUsesTheRunnersClock(t *testing.T) {
	t.Parallel()
	f := &fakeSlots{}
	fixed := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s := parseOne(t, "tool: t\nsteps:\n  - args: {}\n  - {args: {}, advance: 2h}\n")
	res := (&Runner{Conn: fakeServer(t, f), Clock: func() time.Time { return fixed }}).Run(context.Background(), s)
	if res.Failed() {
		t.Fatal(res.Text())
	}
	if got := []time.Time{f.turns[0].Now.AsTime(), f.turns[1].Now.AsTime()}; !got[0].Equal(fixed) || !got[1].Equal(fixed.Add(2*time.Hour)) {
		t.Errorf("now = %v, want %v and two hours later", got, fixed)
	}
}

// A retried turn_id is answered from the store with the header
// slotd-replayed: true; the script can expect it, and the same key.
func TestReplayedAndSameKey(t *testing.T) {
	t.Parallel()
	conn := realServer(t)
	s := parseOne(t, `
tool: travel.search_flights
clock: 2026-08-23T10:00:00Z
steps:
  - args: {from: MAD, to: KBP, date: tomorrow}
    expect: {action: ready, replayed: false, idempotency_key: true}
  - turn_id: turn-1
    args: {from: MAD, to: KBP, date: tomorrow}
    expect: {action: ready, replayed: true, idempotency_key: {same_as: 1}, slots: {from: MAD}}
  - args: {to: " lis "}
    expect: {replayed: true, idempotency_key: {same_as: 1}}
`)
	res := (&Runner{Conn: conn, KeepGoing: true}).Run(context.Background(), s)
	if len(res.Steps) != 3 || res.Steps[0].Failed() || res.Steps[1].Failed() {
		t.Fatalf("steps 1-2 should pass:\n%s", res.Text())
	}
	var got []string
	for _, m := range res.Steps[2].Mismatches {
		got = append(got, m.Field+": expected "+m.Want)
	}
	want := []string{
		"replayed: expected a replayed response (header slotd-replayed: true)",
		`idempotency_key: expected "` + res.Steps[0].got.key + `" (the key of step 1)`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("step 3 mismatches = %q, want %q", got, want)
	}
}

// Unspecified fields are not checked: a script of bare turns passes
// whatever comes back.
func TestUnspecifiedFieldsAreNotChecked(t *testing.T) {
	t.Parallel()
	s := parseOne(t, "tool: bank.open_dispute\nsteps:\n  - args: {amount: двести}\n  - args: {}\n    expect: {}\n  - reset\n")
	if res := (&Runner{Conn: realServer(t)}).Run(context.Background(), s); res.Failed() {
		t.Errorf("a script without expectations failed:\n%s", res.Text())
	}
}

func TestRunAllInParallelKeepsOrder(t *testing.T) {
	t.Parallel()
	conn := realServer(t)
	var scripts []*Script
	for i := range 8 {
		scripts = append(scripts, parseOne(t, fmt.Sprintf(`
name: s%d
tool: bank.open_dispute
clock: 2026-08-23T10:00:00Z
steps:
  - args: {card_last4: "%04d"}
    expect: {ask: operation_date, slots: {exact: {card_last4: "%04d"}}, version: 1}
`, i, i, i)))
	}
	results := (&Runner{Conn: conn, Parallel: 4}).RunAll(context.Background(), scripts)
	seen := map[string]bool{}
	for i, r := range results {
		if r.Script != scripts[i] || r.Failed() || seen[r.ConversationID] {
			t.Errorf("result %d: script %s failed=%v conversation %s (seen before: %v)\n%s", i, r.Script.Name, r.Failed(), r.ConversationID, seen[r.ConversationID], r.Text())
		}
		seen[r.ConversationID] = true
	}
}

const toRecord = `# A conversation to record.
name: to record
tool: bank.open_dispute
locale: ru
time_zone: Europe/Moscow
clock: 2026-08-23T13:00:00+03:00

steps:
  # The first call, dirty.
  - args: {card_last4: "•• 4417", operation_date: вчера, amount: "1 200,50 ₽"}
    expect:
      action: ready   # wrong on purpose: recording replaces it
      slots: {amount: 1}

  - user: Дубль   # what the user said
    args: {reason: Duplicate}
  - args: {reason: "chargeback please", amount: "\u200b"}
  - reset
  - args: {amount: null}
    # a trailing comment of the last step`

// Recording writes what came as expectations, keeps comments, replaces old
// expectations; the recorded script passes, and recording it again changes
// nothing.
func TestRecordWritesExpectationsThatPass(t *testing.T) {
	t.Parallel()
	conn := realServer(t)
	path := writeFile(t, t.TempDir(), "rec.yaml", toRecord)
	record := func() []byte {
		t.Helper()
		scripts, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		results := (&Runner{Conn: conn, Record: true}).RunAll(context.Background(), scripts)
		written, err := Record(results)
		if err != nil || !reflect.DeepEqual(written, []string{path}) {
			t.Fatalf("Record = %v, %v", written, err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := string(record())
	for _, keep := range []string{"# A conversation to record.", "  # The first call, dirty.", "  - user: Дубль   # what the user said",
		"    # a trailing comment of the last step", "  - reset: true\n    expect:\n"} {
		if !strings.Contains(first, keep) {
			t.Errorf("the recorded file lost %q:\n%s", keep, first)
		}
	}
	for _, gone := range []string{"wrong on purpose", "amount: 1}"} {
		if strings.Contains(first, gone) {
			t.Errorf("the old expectation %q is still there:\n%s", gone, first)
		}
	}
	for _, has := range []string{
		"      ask: reason\n",
		"          amount: \"1200.50\"\n",
		"          - {slot: reason, decision: rejected, old: duplicate, new: \"chargeback please\"}\n",
		"          - {slot: amount, decision: ignored_null, old: \"1200.50\"}\n",
		"      status: reset\n",
	} {
		if !strings.Contains(first, has) {
			t.Errorf("the recorded file lacks %q:\n%s", has, first)
		}
	}

	scripts, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if res := (&Runner{Conn: conn}).Run(context.Background(), scripts[0]); res.Failed() {
		t.Errorf("the recorded script fails:\n%s\n%s", res.Text(), first)
	}
	if again := string(record()); again != first {
		t.Errorf("recording twice changed the file:\n%s\n---\n%s", first, again)
	}
}

func TestRecordRefusesFlowStyleSteps(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), "flow.yaml", "tool: t\nsteps: [{args: {}}]\n")
	scripts, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	results := (&Runner{Conn: fakeServer(t, &fakeSlots{}), Record: true}).RunAll(context.Background(), scripts)
	_, err = Record(results)
	if err == nil || !strings.Contains(err.Error(), path+":2: step 1: written in flow style") {
		t.Errorf("Record of a flow-style step = %v", err)
	}
}

// The text report ends with "N passed, N failed"; JUnit XML counts a
// mismatch as a failure, a failed call and a malformed file as errors.
func TestReportTextAndJUnit(t *testing.T) {
	t.Parallel()
	f := &fakeSlots{turn: func(req *slotdv1.TurnRequest) (*slotdv1.TurnResponse, error) {
		if req.Tool == "broken.tool" {
			return nil, status.Error(codes.Unavailable, "down")
		}
		return &slotdv1.TurnResponse{Action: slotdv1.Action_ACTION_ASK, Question: &slotdv1.Question{Slot: "a"}}, nil
	}}
	conn := fakeServer(t, f)
	dir := t.TempDir()
	writeFile(t, dir, "a_pass.yaml", "tool: t\nsteps:\n  - args: {}\n    expect: {ask: a}\n")
	writeFile(t, dir, "b_fail.yaml", "tool: t\nsteps:\n  - args: {}\n    expect: {ask: b}\n")
	writeFile(t, dir, "c_error.yaml", "tool: broken.tool\nsteps:\n  - args: {}\n")
	broken := writeFile(t, dir, "d_broken.yaml", "tool: t\nsteps:\n  - args: {}\n    expect: {ask: [b]}\n")
	writeFile(t, dir, "e_skip.yaml", "tool: t\nskip: known bug 42\nsteps:\n  - args: {}\n    expect: {ask: b}\n")
	scripts, loadErr := Load(dir)
	results := (&Runner{Conn: conn, Parallel: 3}).RunAll(context.Background(), scripts)
	rep := NewReport(results, loadErr, time.Second)

	var text bytes.Buffer
	rep.WriteText(&text, false)
	lines := strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; last != "1 passed, 3 failed, 1 skipped" {
		t.Errorf("last line = %q, want %q\n%s", last, "1 passed, 3 failed, 1 skipped", text.String())
	}
	for _, has := range []string{
		"--- BROKEN: " + broken + " (not run)\n    " + broken + ":4:19: step 1: expect.ask: expected text, got a list\n",
		"--- FAIL: b_fail (" + filepath.Join(dir, "b_fail.yaml") + ":1, t) ",
		`        ask (line 4): expected "b", got "a"` + "\n",
		"--- FAIL: c_error",
		"        the call failed: Unavailable: down\n",
		"--- SKIP: e_skip (" + filepath.Join(dir, "e_skip.yaml") + ":1): known bug 42\n",
	} {
		if !strings.Contains(text.String(), has) {
			t.Errorf("report lacks %q:\n%s", has, text.String())
		}
	}
	if strings.Contains(text.String(), "a_pass") {
		t.Errorf("a passing script is listed without -v:\n%s", text.String())
	}

	var x bytes.Buffer
	if err := rep.WriteJUnit(&x); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(x.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit XML does not parse: %v\n%s", err, x.String())
	}
	if doc.Tests != 5 || doc.Failures != 1 || doc.Errors != 2 || doc.Skipped != 1 || len(doc.Suites) != 5 {
		t.Errorf("JUnit counts tests=%d failures=%d errors=%d skipped=%d suites=%d, want 5, 1, 2, 1, 5\n%s",
			doc.Tests, doc.Failures, doc.Errors, doc.Skipped, len(doc.Suites), x.String())
	}
	byName := map[string]junitCase{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			byName[c.Name] = c
		}
	}
	if c := byName["b_fail"]; c.Failure == nil || c.Failure.Message != `step 1: ask (line 4): expected "b", got "a"` || c.Line != 1 {
		t.Errorf("b_fail testcase = %+v", c)
	}
	if c := byName["c_error"]; c.Error == nil || !strings.Contains(c.Error.Message, "Unavailable") {
		t.Errorf("c_error testcase = %+v", c)
	}
	if c := byName[broken]; c.Error == nil || c.Error.Type != "malformed script" || c.Line != 4 {
		t.Errorf("broken file testcase = %+v", c)
	}
	if c := byName["e_skip"]; c.Skipped == nil || c.Skipped.Message != "known bug 42" || c.Failure != nil {
		t.Errorf("e_skip testcase = %+v", c)
	}
	if len(f.turns) != 3 {
		t.Errorf("the server got %d turns, want 3: a skipped script sends nothing", len(f.turns))
	}
	if c := byName["a_pass"]; c.Failure != nil || c.Error != nil {
		t.Errorf("a_pass testcase = %+v", c)
	}
}

func TestRunnerWithoutConn(t *testing.T) {
	t.Parallel()
	res := (&Runner{}).Run(context.Background(), parseOne(t, "tool: t\nsteps: [reset]\n"))
	if !res.Failed() || res.Steps[0].Err == nil || !errors.Is(res.Steps[0].Err, res.Steps[0].Err) {
		t.Errorf("a runner without a connection must fail the script: %+v", res.Steps)
	}
}
