package integration

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/client"
	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/testkit/dbtest"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

// The Go client (client/) against the real slotd on Postgres.

func newClient(t *testing.T, addr string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(addr, append([]client.Option{client.WithLocale("ru")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func wantClientAction(t *testing.T, step string, res *client.TurnResult, want client.Action, slot string) {
	t.Helper()
	if res.Action != want {
		t.Fatalf("%s: action = %s, want %s (question %+v, problem %+v)", step, res.Action, want, res.Question, res.Problem)
	}
	if slot != "" && (res.Question == nil || res.Question.Slot != slot) {
		t.Fatalf("%s: question = %+v, want one about %s", step, res.Question, slot)
	}
}

func TestClientSeedDialogue(t *testing.T) {
	t.Parallel()
	inst, url := newPostgresServer(t)
	c := newClient(t, inst.srv.Addr())
	ctx := context.Background()
	conv := "client-seed-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	const tool = "bank.open_dispute"
	at := client.Now(seedNow)

	schema, err := c.ToolSchema(ctx, tool, "openai")
	if err != nil {
		t.Fatal(err)
	}
	props, _ := schema.Parameters["properties"].(map[string]any)
	if schema.Tool != tool || schema.Name == "" || props["reason"] == nil || props["card_last4"] == nil {
		t.Errorf("ToolSchema = %+v, want %s's parameters with reason and card_last4", schema, tool)
	}

	r, err := c.Turn(ctx, conv, tool, map[string]any{"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽"}, at)
	if err != nil {
		t.Fatal(err)
	}
	wantClientAction(t, "first turn", r, client.ActionAsk, "reason")
	if got := strings.Join(r.Question.AllowedValues, ","); got != "duplicate,fraud,not_received,wrong_amount" {
		t.Errorf("allowed values = %s, want duplicate,fraud,not_received,wrong_amount", got)
	}
	if r.Session.Slots["amount"] != "1200.50" || r.Session.Slots["operation_date"] != "2026-08-22" || r.Session.Version != 1 {
		t.Errorf("session = %+v, want amount 1200.50, operation_date 2026-08-22, version 1", r.Session)
	}
	if len(r.Changes) != 3 || r.Changes[0].Decision != "FILLED" {
		t.Errorf("changes = %+v, want three FILLED", r.Changes)
	}
	first := r

	// A refused value is a business outcome: a result with a problem, one
	// call, never retried.
	r, err = c.Turn(ctx, conv, tool, map[string]any{"reason": "chargeback please"}, at)
	if err != nil {
		t.Fatalf("a refused value came back as an error: %v", err)
	}
	wantClientAction(t, "refused reason", r, client.ActionAsk, "reason")
	if r.Problem == nil || len(r.Problem.Errors) != 1 || r.Problem.Errors[0].Pointer != "/reason" || len(r.Problem.Errors[0].AllowedValues) != 4 {
		t.Fatalf("problem = %+v, want one error at /reason with the four allowed values", r.Problem)
	}
	if r.Attempts != 1 || r.Problem.Retryable {
		t.Errorf("attempts %d, retryable %v; want 1 and false", r.Attempts, r.Problem.Retryable)
	}

	r, err = c.Turn(ctx, conv, tool, map[string]any{"reason": "Duplicate"}, at)
	if err != nil {
		t.Fatal(err)
	}
	wantClientAction(t, "reason", r, client.ActionAsk, "original_operation_id")

	r, err = c.Turn(ctx, conv, tool, map[string]any{"original_operation_id": "op-20260822-0117", "reason": nil, "amount": ""}, at)
	if err != nil {
		t.Fatal(err)
	}
	wantClientAction(t, "last slot", r, client.ActionConfirm, "")
	if r.IdempotencyKey != "" || r.Arguments["reason"] != "duplicate" {
		t.Errorf("CONFIRM: key %q arguments %v; want no key yet and the normalized arguments", r.IdempotencyKey, r.Arguments)
	}

	r, err = c.Turn(ctx, conv, tool, nil, at, client.Confirmation(true))
	if err != nil {
		t.Fatal(err)
	}
	wantClientAction(t, "approval", r, client.ActionReady, "")
	if !strings.HasPrefix(r.IdempotencyKey, "sd_") || r.Arguments["original_operation_id"] != "op-20260822-0117" {
		t.Fatalf("READY: key %q arguments %v", r.IdempotencyKey, r.Arguments)
	}

	// The orchestrator lost the first answer and retries with its turn_id:
	// the stored response, marked replayed, applied once.
	again, err := c.Turn(ctx, conv, tool, map[string]any{"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽"},
		at, client.TurnID(first.TurnID))
	if err != nil {
		t.Fatal(err)
	}
	if !again.Replayed || again.Session.Version != 1 || again.Action != client.ActionAsk {
		t.Errorf("replay: replayed %v, version %d, action %s; want true, 1, ASK", again.Replayed, again.Session.Version, again.Action)
	}
	if first.Replayed {
		t.Errorf("the first answer says replayed")
	}
	assertTurnsInDB(t, url, conv, 5)

	done, err := c.Complete(ctx, conv, r.IdempotencyKey, map[string]any{"status": "accepted", "case_id": "DSP-7781", "review_deadline": "2026-09-22"})
	if err != nil {
		t.Fatal(err)
	}
	if done.Session.Status != "COMPLETED" || done.Output["case_id"] != "DSP-7781" {
		t.Errorf("Complete: status %s output %v; want COMPLETED and the case id", done.Session.Status, done.Output)
	}
}

func TestClientDoesNotRetryWhatIsNotRetryable(t *testing.T) {
	t.Parallel()
	url := dbtestURL(t)
	inst := startServer(t, url, contractsDir(t), func(c *server.Config) { c.APIKeys = "bank:" + bankKey })
	var retries int
	count := client.OnRetry(func(client.Retry) { retries++ })
	ctx := context.Background()

	tests := []struct {
		name      string
		key, tool string
		wantCode  codes.Code
	}{
		{"unknown tool", bankKey, "bank.no_such_tool", codes.NotFound},
		{"no key", "", "bank.open_dispute", codes.Unauthenticated},
		{"wrong key", "not-a-key-0123456789abcdef", "bank.open_dispute", codes.Unauthenticated},
	}
	for _, tt := range tests {
		c := newClient(t, inst.srv.Addr(), client.WithAPIKey(tt.key), count)
		retries = 0
		_, err := c.Turn(ctx, "chat-1", tt.tool, map[string]any{"reason": "fraud"})
		var e *client.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: error = %v, want *client.Error", tt.name, err)
		}
		if e.Code != tt.wantCode || e.Problem == nil || e.Problem.Retryable || !e.Problem.OwnerActionRequired {
			t.Errorf("%s: code %v problem %+v; want %v with a problem that is not retryable and needs its owner", tt.name, e.Code, e.Problem, tt.wantCode)
		}
		if e.Attempts != 1 || retries != 0 {
			t.Errorf("%s: attempts %d retries %d; want 1 and 0", tt.name, e.Attempts, retries)
		}
	}
}

func TestClientStopsAtTheDeadlineWhilePostgresIsAway(t *testing.T) {
	t.Parallel()
	// A server whose Postgres never answers: every turn is refused as
	// retryable until the context's deadline.
	srv, err := server.New(server.Config{Listen: "127.0.0.1:0", Contracts: contractsDir(t), DatabaseURL: "postgres://postgres@" + servertest.FreeAddr(t) + "/postgres?sslmode=disable&connect_timeout=1"}, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	servertest.Run(t, srv.Run) // without waiting for it to be SERVING
	var (
		waits    []time.Duration
		problems []*client.Problem
	)
	c := newClient(t, srv.Addr(), client.WithRetry(client.RetryPolicy{MaxAttempts: 100, MaxDelay: 100 * time.Millisecond}),
		client.OnRetry(func(r client.Retry) {
			waits = append(waits, r.Wait)
			problems = append(problems, client.ProblemOf(r.Err))
		}))
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Turn(ctx, "chat-1", "bank.open_dispute", map[string]any{"reason": "fraud"})
	elapsed := time.Since(start)
	var e *client.Error
	if !errors.As(err, &e) || !e.Retryable() || e.GaveUp == "" {
		t.Fatalf("error = %v, want a retryable failure the client gave up on at the deadline", err)
	}
	if e.Attempts < 2 || len(waits) != e.Attempts-1 {
		t.Errorf("attempts %d, waits %v; want several attempts, a wait before each retry", e.Attempts, waits)
	}
	for i, p := range problems {
		if p == nil || !p.Retryable || p.Status != 503 {
			t.Errorf("failure before retry %d: problem %+v, want slotd's retryable 503", i+1, p)
		}
	}
	for _, w := range waits {
		if w > 100*time.Millisecond {
			t.Errorf("waited %s, want at most the policy's 100ms", w)
		}
	}
	if elapsed > 2*time.Second {
		t.Errorf("Turn returned after %s, want by the 1.5s deadline", elapsed)
	}
}

// TestClientRetriesAcrossPostgresRestart stops slotd's Postgres (a cluster
// of this test's own) under a turn and starts it again: the client retries
// the same turn_id until it lands, and the turn is applied exactly once.
func TestClientRetriesAcrossPostgresRestart(t *testing.T) {
	t.Parallel()
	pg := startCluster(t)
	inst := startServer(t, pg.url(), contractsDir(t))
	retried := make(chan client.Retry, 100)
	var (
		mu  sync.Mutex
		ids []string // the turn_id of every call the client made
	)
	record := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if r, ok := req.(*slotdv1.TurnRequest); ok {
			mu.Lock()
			ids = append(ids, r.TurnId)
			mu.Unlock()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	c := newClient(t, inst.srv.Addr(),
		client.WithRetry(client.RetryPolicy{MaxAttempts: 30, MinDelay: 100 * time.Millisecond, MaxDelay: time.Second}),
		client.OnRetry(func(r client.Retry) { retried <- r }),
		client.WithDialOptions(grpc.WithChainUnaryInterceptor(record)))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conv := "client-restart"
	const tool = "bank.open_dispute"
	r, err := c.Turn(ctx, conv, tool, map[string]any{"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽"}, client.Now(seedNow))
	if err != nil {
		t.Fatal(err)
	}
	wantClientAction(t, "first turn", r, client.ActionAsk, "reason")

	pg.stop(t)
	type outcome struct {
		res *client.TurnResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := c.Turn(ctx, conv, tool, map[string]any{"reason": "Duplicate"}, client.Now(seedNow))
		done <- outcome{res, err}
	}()
	select {
	case rt := <-retried:
		p := client.ProblemOf(rt.Err)
		if p == nil || !p.Retryable {
			t.Fatalf("the failure while Postgres was down = %v, want slotd's retryable problem", rt.Err)
		}
	case o := <-done:
		t.Fatalf("the turn ended while Postgres was down: %+v, %v", o.res, o.err)
	case <-time.After(30 * time.Second):
		t.Fatal("no retry within 30s of stopping Postgres")
	}
	pg.start(t)

	var o outcome
	select {
	case o = <-done:
	case <-time.After(45 * time.Second):
		t.Fatal("the turn did not land within 45s of restarting Postgres")
	}
	if o.err != nil {
		t.Fatalf("Turn across the restart: %v", o.err)
	}
	wantClientAction(t, "after the restart", o.res, client.ActionAsk, "original_operation_id")
	if o.res.Attempts < 2 || o.res.Session.Version != 2 {
		t.Errorf("attempts %d, version %d; want at least 2 attempts and version 2", o.res.Attempts, o.res.Session.Version)
	}
	t.Logf("the turn landed after %d attempts", o.res.Attempts)
	mu.Lock()
	sent := ids[1:] // after the first turn
	mu.Unlock()
	if len(sent) != o.res.Attempts {
		t.Errorf("calls of the retried turn = %d, attempts = %d; want them equal", len(sent), o.res.Attempts)
	}
	for _, id := range sent {
		if id != o.res.TurnID {
			t.Fatalf("turn ids sent across the restart = %q, want %q every time", sent, o.res.TurnID)
		}
	}

	pool := dbtest.Connect(t, pg.url())
	var turns, applied, reasons int
	if err := pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE turn_id = $2) FROM turns WHERE conversation_id = $1`,
		conv, o.res.TurnID).Scan(&turns, &applied); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM slot_changes WHERE slot = 'reason' AND turn_id = $1`, o.res.TurnID).Scan(&reasons); err != nil {
		t.Fatal(err)
	}
	if turns != 2 || applied != 1 || reasons != 1 {
		t.Errorf("stored turns %d (of the retried turn_id %d), reason changes %d; want 2, 1, 1", turns, applied, reasons)
	}

	// The same turn_id once more: the stored answer, not a third turn.
	again, err := c.Turn(ctx, conv, tool, map[string]any{"reason": "Duplicate"}, client.TurnID(o.res.TurnID), client.Now(seedNow))
	if err != nil {
		t.Fatal(err)
	}
	if !again.Replayed || again.Session.Version != 2 {
		t.Errorf("replay: replayed %v version %d; want true and 2", again.Replayed, again.Session.Version)
	}
}

func quietLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}
