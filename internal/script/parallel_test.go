package script

import (
	"context"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// A parallel step's calls are sent at once: the fake answers none until
// both have arrived, so calls sent one after another would time out. Each
// goes with its own tool and turn_id and the step's clock; a step's tool
// replaces the script's for a turn, a reset and a completion.
func TestParallelCallsAreSentAtOnce(t *testing.T) {
	t.Parallel()
	both := make(chan struct{})
	arrived := make(chan string, 2)
	f := &fakeSlots{}
	f.turn = func(req *slotdv1.TurnRequest) (*slotdv1.TurnResponse, error) {
		if strings.HasPrefix(req.TurnId, "call_") || strings.HasPrefix(req.TurnId, "turn-2.") {
			arrived <- req.TurnId
			select {
			case <-both:
			case <-time.After(5 * time.Second):
				return nil, status.Error(codes.DeadlineExceeded, "the other call of the message never came")
			}
		}
		return &slotdv1.TurnResponse{Action: slotdv1.Action_ACTION_ASK, Session: &slotdv1.Session{Tool: req.Tool}}, nil
	}
	go func() {
		<-arrived
		<-arrived
		close(both)
	}()
	conn := fakeServer(t, f)
	s := parseOne(t, `
tool: bank.open_dispute
clock: 2026-08-23T10:00:00Z
steps:
  - args: {amount: "1 200,50 ₽"}
  - advance: 30s
    parallel:
      - {tool: bank.check_balance, args: {card_last4: "•• 4417"}}
      - args: {reason: "Duplicate "}
  - tool: travel.search_flights
    args: {from: mad}
  - {reset: true, tool: bank.check_balance}
  - complete: {result: {available: "10.00"}, idempotency_key: sd_x}
    tool: bank.check_balance
`)
	res := (&Runner{Conn: conn}).Run(context.Background(), s)
	if res.Failed() {
		t.Fatalf("failed:\n%s", res.Text())
	}
	start := time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)
	type sent struct {
		tool, id string
		now      time.Time
	}
	var got []sent
	for _, r := range f.turns {
		got = append(got, sent{r.Tool, r.TurnId, r.Now.AsTime()})
	}
	// The calls of step 2 arrive in either order.
	slices.SortFunc(got[1:3], func(a, b sent) int { return strings.Compare(a.id, b.id) })
	want := []sent{
		{"bank.open_dispute", "turn-1", start},
		{"bank.check_balance", "turn-2.1", start.Add(30 * time.Second)},
		{"bank.open_dispute", "turn-2.2", start.Add(30 * time.Second)},
		{"travel.search_flights", "turn-3", start.Add(30 * time.Second)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("turns sent:\n got %v\nwant %v", got, want)
	}
	if len(f.resets) != 1 || f.resets[0].Tool != "bank.check_balance" {
		t.Errorf("resets = %v, want one of bank.check_balance", f.resets)
	}
	if len(f.completes) != 1 || f.completes[0].Tool != "bank.check_balance" {
		t.Errorf("completes = %v, want one of bank.check_balance", f.completes)
	}
}

// What a turn says of the conversation's sessions is checked: resumed, the
// notice, the other open sessions in any order, and exactly the sessions it
// ended; a mismatch in a parallel call names the call.
func TestSessionExpectations(t *testing.T) {
	t.Parallel()
	f := &fakeSlots{}
	f.turn = func(req *slotdv1.TurnRequest) (*slotdv1.TurnResponse, error) {
		return &slotdv1.TurnResponse{Action: slotdv1.Action_ACTION_ASK, Session: &slotdv1.Session{Tool: req.Tool},
			Resumed: true, Notice: "Возвращаемся: спор по операции. Уже известно: карта: 4417; осталось уточнить: причина.",
			OpenSessions:  []*slotdv1.OpenSession{{Tool: "travel.search_flights"}, {Tool: "bank.check_balance"}},
			EndedSessions: []*slotdv1.Session{{Tool: "test.carry", Status: slotdv1.SessionStatus_SESSION_STATUS_ABANDONED}}}, nil
	}
	conn := fakeServer(t, f)
	pass := parseOne(t, `
tool: bank.open_dispute
steps:
  - args: {}
    expect:
      resumed: true
      notice_contains: ["карта: 4417", "осталось уточнить: причина"]
      open_sessions: [bank.check_balance, travel.search_flights]
      ended_sessions: {test.carry: abandoned}
`)
	if res := (&Runner{Conn: conn}).Run(context.Background(), pass); res.Failed() {
		t.Errorf("a response that meets every expectation failed:\n%s", res.Text())
	}
	fail := parseOne(t, `
tool: bank.open_dispute
steps:
  - parallel:
      - args: {}
      - tool: bank.check_balance
        turn_id: call_Ka93
        args: {}
        expect:
          resumed: false
          notice_contains: "сумма"
          open_sessions: [travel.search_flights]
          ended_sessions: {bank.open_dispute: abandoned, test.carry: expired}
`)
	res := (&Runner{Conn: conn}).Run(context.Background(), fail)
	if len(res.Steps) != 1 {
		t.Fatalf("steps played: %d, want 1", len(res.Steps))
	}
	var fields []string
	for _, m := range res.Steps[0].Mismatches {
		fields = append(fields, m.Field)
	}
	wantFields := []string{
		"parallel[2] (call_Ka93).resumed",
		"parallel[2] (call_Ka93).notice_contains",
		"parallel[2] (call_Ka93).open_sessions",
		"parallel[2] (call_Ka93).ended_sessions.bank.open_dispute",
		"parallel[2] (call_Ka93).ended_sessions.test.carry",
	}
	if !reflect.DeepEqual(fields, wantFields) {
		t.Errorf("mismatches %v, want %v\n%s", fields, wantFields, res.Text())
	}
	if text := res.Text(); !strings.Contains(text, `has also bank.check_balance`) || !strings.Contains(text, "expected ended EXPIRED, got ended ABANDONED") {
		t.Errorf("the report does not say what differs:\n%s", text)
	}
}

// Record writes each call's expectations under the call, and the recorded
// script passes.
func TestRecordWritesParallelCalls(t *testing.T) {
	t.Parallel()
	conn := realServer(t)
	path := writeFile(t, t.TempDir(), "par.yaml", `tool: bank.open_dispute
locale: ru
time_zone: Europe/Moscow
clock: 2026-08-23T13:00:00+03:00
steps:
  - args: {card_last4: "4417", amount: "1 200,50 ₽"}
  - advance: 1m
    parallel:
      - tool: bank.check_balance
        turn_id: call_1
        args: {}
      - tool: travel.search_flights
        turn_id: call_2
        args: {from: "Madrid (MAD)"}
        expect:
          action: ready
  - advance: 1m
    args: {operation_date: вчера}
`)
	scripts, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Record((&Runner{Conn: conn, Record: true}).RunAll(context.Background(), scripts)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, has := range []string{
		"        args: {}\n        expect:\n          action: ready\n",
		"        args: {from: \"Madrid (MAD)\"}\n        expect:\n          action: ask\n          ask: to\n",
		"      resumed: true\n",
		"      open_sessions: [bank.check_balance, travel.search_flights]\n",
	} {
		if !strings.Contains(text, has) {
			t.Errorf("the recorded file lacks %q:\n%s", has, text)
		}
	}
	scripts, err = Load(path)
	if err != nil {
		t.Fatalf("the recorded file does not load: %v\n%s", err, text)
	}
	if res := (&Runner{Conn: conn}).Run(context.Background(), scripts[0]); res.Failed() {
		t.Errorf("the recorded script fails:\n%s\n%s", res.Text(), text)
	}
}
