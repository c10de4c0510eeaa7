package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// seedNow is the dispute example's clock: the day after 2026-08-22, Moscow time.
var seedNow = time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)

type convo struct {
	t      *testing.T
	client slotdv1.SlotServiceClient
	id     string
	tool   string
	locale string
	now    time.Time
	n      int
}

func newConvo(t *testing.T, client slotdv1.SlotServiceClient, tool string) *convo {
	return &convo{t: t, client: client, id: fmt.Sprintf("conv-%s-%d", t.Name(), time.Now().UnixNano()), tool: tool, locale: "ru", now: seedNow}
}

func structOf(t *testing.T, js string) *structpb.Struct {
	t.Helper()
	if js == "" {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatalf("bad test JSON %s: %v", js, err)
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (c *convo) request(args string) *slotdv1.TurnRequest {
	c.n++
	return &slotdv1.TurnRequest{
		ConversationId: c.id, Tool: c.tool, TurnId: fmt.Sprintf("%s-turn-%d", c.id, c.n),
		Arguments: structOf(c.t, args), Locale: c.locale, Now: timestamppb.New(c.now),
	}
}

func (c *convo) send(args string) *slotdv1.TurnResponse {
	c.t.Helper()
	return c.do(c.request(args))
}

func (c *convo) confirm(accept bool) *slotdv1.TurnResponse {
	c.t.Helper()
	req := c.request("")
	req.Confirmation = &slotdv1.Confirmation{Accept: accept}
	return c.do(req)
}

func (c *convo) do(req *slotdv1.TurnRequest) *slotdv1.TurnResponse {
	c.t.Helper()
	resp, err := c.client.Turn(context.Background(), req)
	if err != nil {
		c.t.Fatalf("Turn %s: %v", req.TurnId, err)
	}
	return resp
}

func wantAction(t *testing.T, resp *slotdv1.TurnResponse, want slotdv1.Action) {
	t.Helper()
	if resp.Action != want {
		t.Fatalf("action = %v, want %v; question=%q problem=%v", resp.Action, want, resp.GetQuestion().GetText(), resp.GetProblem())
	}
}

func wantAsk(t *testing.T, resp *slotdv1.TurnResponse, slot string) {
	t.Helper()
	wantAction(t, resp, slotdv1.Action_ACTION_ASK)
	if got := resp.GetQuestion().GetSlot(); got != slot {
		t.Fatalf("asked about %q, want %q (question %q)", got, slot, resp.GetQuestion().GetText())
	}
}

func slots(resp *slotdv1.TurnResponse) map[string]any { return resp.GetSession().GetSlots().AsMap() }

func wantSlots(t *testing.T, resp *slotdv1.TurnResponse, want map[string]any) {
	t.Helper()
	got := slots(resp)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("slot %s = %#v, want %#v (all slots %v)", k, got[k], v, got)
		}
	}
}

func decisionOf(resp *slotdv1.TurnResponse, slot string) slotdv1.Decision {
	for _, ch := range resp.Changes {
		if ch.Slot == slot {
			return ch.Decision
		}
	}
	return slotdv1.Decision_DECISION_UNSPECIFIED
}

// seedFirstTurn is the model's first call in the card dispute: dirty, as sent.
const seedFirstTurn = `{"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽"}`

func TestSeedDisputeDialogue(t *testing.T) {
	t.Parallel()
	inst, _ := newPostgresServer(t)
	c := newConvo(t, inst.client, "bank.open_dispute")

	r := c.send(seedFirstTurn)
	wantAsk(t, r, "reason")
	wantSlots(t, r, map[string]any{"card_last4": "4417", "operation_date": "2026-08-22", "amount": "1200.50"})
	if got := strings.Join(r.Question.AllowedValues, ","); got != "duplicate,fraud,not_received,wrong_amount" {
		t.Errorf("allowed values = %s", got)
	}
	if strings.Contains(r.Question.Text, "reason") {
		t.Errorf("question names the field instead of its meaning: %q", r.Question.Text)
	}
	if r.Session.Version != 1 || r.Session.Status != slotdv1.SessionStatus_SESSION_STATUS_ACTIVE {
		t.Errorf("session = %v", r.Session)
	}
	if got := strings.Join(r.Session.Missing, ","); got != "reason" {
		t.Errorf("missing = %s, want reason", got)
	}

	r = c.send(`{"reason": "Duplicate"}`)
	wantAsk(t, r, "original_operation_id")
	if !strings.Contains(r.Question.Text, "•• 4417") || !strings.Contains(r.Question.Text, "первой") {
		t.Errorf("original_operation_id is not asked by meaning: %q", r.Question.Text)
	}
	if r.Problem != nil {
		t.Errorf("a missing conditional slot is not a rejection; got problem %v", r.Problem)
	}

	r = c.send(`{"original_operation_id": "op-20260822-0117", "reason": null, "amount": ""}`)
	wantAction(t, r, slotdv1.Action_ACTION_CONFIRM)
	if !strings.Contains(r.Question.Text, "4417") || !strings.Contains(r.Question.Text, "1200.50") {
		t.Errorf("confirmation summary lacks the values: %q", r.Question.Text)
	}
	if r.IdempotencyKey != "" {
		t.Errorf("idempotency key before approval: %q", r.IdempotencyKey)
	}

	r = c.confirm(true)
	wantAction(t, r, slotdv1.Action_ACTION_READY)
	want := map[string]any{
		"card_last4": "4417", "operation_date": "2026-08-22", "amount": "1200.50",
		"reason": "duplicate", "original_operation_id": "op-20260822-0117",
	}
	got := r.Arguments.AsMap()
	if len(got) != len(want) {
		t.Errorf("arguments = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("argument %s = %#v, want %#v", k, got[k], v)
		}
	}
	if !strings.HasPrefix(r.IdempotencyKey, "sd_") {
		t.Fatalf("idempotency key = %q", r.IdempotencyKey)
	}
	key := r.IdempotencyKey

	// The orchestrator calls again with the same arguments: same key.
	r = c.send(`{"reason": "duplicate", "card_last4": "4417"}`)
	wantAction(t, r, slotdv1.Action_ACTION_READY)
	if r.IdempotencyKey != key {
		t.Errorf("idempotency key changed for the same arguments: %s then %s", key, r.IdempotencyKey)
	}
}

func TestNullAndEmptyNeverErase(t *testing.T) {
	t.Parallel()
	inst, _ := newPostgresServer(t)
	c := newConvo(t, inst.client, "bank.open_dispute")
	c.send(seedFirstTurn)
	for _, args := range []string{
		`{"amount": null}`,
		`{"amount": ""}`,
		`{"amount": "   "}`,
		`{"amount": "\u200b"}`,
		`{}`,
		`{"card_last4": null, "operation_date": "", "amount": null, "reason": null}`,
	} {
		r := c.send(args)
		wantAsk(t, r, "reason")
		wantSlots(t, r, map[string]any{"card_last4": "4417", "operation_date": "2026-08-22", "amount": "1200.50"})
		if strings.Contains(args, "amount") && decisionOf(r, "amount") != slotdv1.Decision_DECISION_IGNORED_NULL {
			t.Errorf("%s: amount decision = %v, want IGNORED_NULL", args, decisionOf(r, "amount"))
		}
	}
}

func TestReversibleOverwriteIsReported(t *testing.T) {
	t.Parallel()
	inst, _ := newPostgresServer(t)
	c := newConvo(t, inst.client, "bank.open_dispute")
	c.send(seedFirstTurn)
	r := c.send(`{"operation_date": "позавчера"}`)
	wantAsk(t, r, "reason")
	wantSlots(t, r, map[string]any{"operation_date": "2026-08-21"})
	var ch *slotdv1.Change
	for _, x := range r.Changes {
		if x.Slot == "operation_date" {
			ch = x
		}
	}
	if ch == nil || ch.Decision != slotdv1.Decision_DECISION_OVERWRITTEN {
		t.Fatalf("operation_date change = %v, want OVERWRITTEN", ch)
	}
	if ch.Old.GetStringValue() != "2026-08-22" || ch.New.GetStringValue() != "2026-08-21" {
		t.Errorf("change old/new = %v/%v", ch.Old, ch.New)
	}
	if !strings.Contains(ch.Message, "21 августа 2026") {
		t.Errorf("the overwrite is not told to the user: %q", ch.Message)
	}
}

func TestIrreversibleChangeIsReconfirmed(t *testing.T) {
	t.Parallel()
	inst, _ := newPostgresServer(t)
	c := newConvo(t, inst.client, "bank.open_dispute")
	c.send(seedFirstTurn)

	r := c.send(`{"amount": "1 340"}`)
	wantAction(t, r, slotdv1.Action_ACTION_RECONFIRM)
	if r.Question.Slot != "amount" || r.Question.Old.GetStringValue() != "1200.50" || r.Question.New.GetStringValue() != "1340.00" {
		t.Fatalf("reconfirm question = %v", r.Question)
	}
	if !strings.Contains(r.Question.Text, "1200.50") || !strings.Contains(r.Question.Text, "1340.00") {
		t.Errorf("reconfirm text does not show old and new: %q", r.Question.Text)
	}
	wantSlots(t, r, map[string]any{"amount": "1200.50"})
	if len(r.Session.Pending) != 1 || r.Session.Pending[0].New.GetStringValue() != "1340.00" {
		t.Errorf("pending = %v", r.Session.Pending)
	}

	// Decline: the old value stays.
	r = c.confirm(false)
	wantAsk(t, r, "reason")
	wantSlots(t, r, map[string]any{"amount": "1200.50"})
	if decisionOf(r, "amount") != slotdv1.Decision_DECISION_DISCARDED || len(r.Session.Pending) != 0 {
		t.Errorf("decline: decision %v, pending %v", decisionOf(r, "amount"), r.Session.Pending)
	}

	// Again, and accept: the new value is applied.
	r = c.send(`{"amount": "1340 руб."}`)
	wantAction(t, r, slotdv1.Action_ACTION_RECONFIRM)
	r = c.confirm(true)
	wantAsk(t, r, "reason")
	wantSlots(t, r, map[string]any{"amount": "1340.00"})
	if decisionOf(r, "amount") != slotdv1.Decision_DECISION_CONFIRMED {
		t.Errorf("accept: decision %v", decisionOf(r, "amount"))
	}
}

func TestRejectedValueIsNotStoredAndAskedAgain(t *testing.T) {
	t.Parallel()
	inst, _ := newPostgresServer(t)
	c := newConvo(t, inst.client, "bank.open_dispute")
	c.send(seedFirstTurn)
	r := c.send(`{"reason": "chargeback please", "amount": "двести"}`)
	wantAsk(t, r, "amount")
	wantSlots(t, r, map[string]any{"amount": "1200.50"})
	if _, ok := slots(r)["reason"]; ok {
		t.Errorf("a refused reason was stored: %v", slots(r))
	}
	if r.Problem == nil || len(r.Problem.Errors) != 2 {
		t.Fatalf("problem = %v, want two field errors", r.Problem)
	}
	byPointer := map[string]*slotdv1.FieldError{}
	for _, e := range r.Problem.Errors {
		byPointer[e.Pointer] = e
	}
	reason := byPointer["/reason"]
	if reason == nil || !strings.Contains(reason.Input, "chargeback please") ||
		strings.Join(reason.AllowedValues, ",") != "duplicate,fraud,not_received,wrong_amount" {
		t.Errorf("reason error = %v", reason)
	}
	if amount := byPointer["/amount"]; amount == nil || amount.Format == "" || !strings.Contains(amount.Input, "двести") {
		t.Errorf("amount error = %v", amount)
	}
	if decisionOf(r, "reason") != slotdv1.Decision_DECISION_REJECTED {
		t.Errorf("reason decision = %v", decisionOf(r, "reason"))
	}
}

func TestRepeatedTurnIDIsAppliedOnce(t *testing.T) {
	t.Parallel()
	inst, url := newPostgresServer(t)
	c := newConvo(t, inst.client, "bank.open_dispute")
	first := c.request(seedFirstTurn)
	r1 := c.do(first)

	var header metadata.MD
	r2, err := inst.client.Turn(context.Background(), first, grpc.Header(&header))
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(r1, r2) {
		t.Errorf("replayed response differs:\n%v\n%v", r1, r2)
	}
	if got := header.Get("slotd-replayed"); len(got) != 1 || got[0] != "true" {
		t.Errorf("replayed header = %v", got)
	}

	// Sent concurrently, from several clients at once.
	second := c.request(`{"reason": "fraud"}`)
	var wg sync.WaitGroup
	resps := make([]*slotdv1.TurnResponse, 8)
	errs := make([]error, 8)
	for i := range resps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resps[i], errs[i] = inst.client.Turn(context.Background(), second)
		}()
	}
	wg.Wait()
	for i := range resps {
		if errs[i] != nil {
			t.Fatalf("concurrent turn %d: %v", i, errs[i])
		}
		if !proto.Equal(resps[0], resps[i]) {
			t.Errorf("concurrent response %d differs", i)
		}
	}
	if resps[0].Session.Version != 2 {
		t.Errorf("version = %d after two distinct turns", resps[0].Session.Version)
	}
	assertTurnsInDB(t, url, c.id, 2)
}

func TestConcurrentTurnsOnTwoInstancesLoseNothing(t *testing.T) {
	t.Parallel()
	url := dbtestURL(t)
	dir := contractsDir(t)
	a := startServer(t, url, dir)
	b := startServer(t, url, dir)
	conv := "conv-two-instances"
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 1; i <= 20; i++ {
		client := a.client
		if i%2 == 0 {
			client = b.client
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := client.Turn(context.Background(), &slotdv1.TurnRequest{
				ConversationId: conv, Tool: "test.many_slots", TurnId: fmt.Sprintf("t%02d", i),
				Arguments: structOf(t, fmt.Sprintf(`{"slot_%02d": "  value %d "}`, i, i)),
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("turn: %v", err)
		}
	}
	got, err := a.client.GetSession(context.Background(), &slotdv1.GetSessionRequest{ConversationId: conv})
	if err != nil {
		t.Fatal(err)
	}
	s := got.Session.Slots.AsMap()
	for i := 1; i <= 20; i++ {
		if v := s[fmt.Sprintf("slot_%02d", i)]; v != fmt.Sprintf("value %d", i) {
			t.Errorf("slot_%02d = %#v: a turn was lost", i, v)
		}
	}
	if got.Session.Version != 20 {
		t.Errorf("version = %d, want 20", got.Session.Version)
	}
	h := history(t, url, got.Session.Id)
	if len(h) != 20 {
		t.Errorf("history has %d changes, want 20: %v", len(h), h)
	}
	seen := map[string]bool{}
	for _, row := range h {
		if row.decision != "FILLED" || seen[row.turnID] {
			t.Errorf("history row %+v", row)
		}
		seen[row.turnID] = true
	}
}

func nowPB() *timestamppb.Timestamp { return timestamppb.New(seedNow) }

// A currency inside an amount fills the contract's currency slot on a live
// turn, and one that contradicts the named currency is refused.
func TestAmountFillsTheCurrencySlot(t *testing.T) {
	t.Parallel()
	dir := contractsDir(t)
	src, err := os.ReadFile("../contract/testdata/contracts/dining.book_table.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dining.book_table.json"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	inst := startServer(t, dbtestURL(t), dir)
	c := newConvo(t, inst.client, "dining.book_table")
	c.locale = "en"
	r := c.send(`{"deposit": "$1,200"}`)
	wantSlots(t, r, map[string]any{"deposit": "1200.00", "currency": "USD"})
	if decisionOf(r, "currency") != slotdv1.Decision_DECISION_FILLED {
		t.Errorf("currency decision = %v, want FILLED", decisionOf(r, "currency"))
	}
	c2 := newConvo(t, inst.client, "dining.book_table")
	r = c2.send(`{"deposit": "€300", "currency": "USD"}`)
	if _, ok := slots(r)["deposit"]; ok || r.Problem == nil || r.Problem.Errors[0].Pointer != "/deposit" {
		t.Errorf("a euro deposit with currency USD: slots %v, problem %v", slots(r), r.Problem)
	}
}

// The tool name a provider's export uses (bank_open_dispute) is the same
// tool: no change of topic.
func TestExportNameIsTheSameTool(t *testing.T) {
	t.Parallel()
	inst := startServer(t, "", contractsDir(t))
	c := newConvo(t, inst.client, "bank.open_dispute")
	first := c.send(seedFirstTurn)
	c.tool = "bank_open_dispute"
	r := c.send(`{"reason": "fraud"}`)
	if r.Session.Id != first.Session.Id || r.Session.Tool != "bank.open_dispute" || r.PreviousSession != nil {
		t.Errorf("the export name started another session: %v (previous %v)", r.Session, r.PreviousSession)
	}
}
