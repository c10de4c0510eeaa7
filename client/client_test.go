package client_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/client"
)

// These tests drive the client against a scripted in-process server, to pin
// the retry rule exactly; integration/client_test.go drives it against the
// real slotd on Postgres, across a Postgres restart.

type reply struct {
	err      error
	resp     *slotdv1.TurnResponse
	replayed bool
}

type fake struct {
	slotdv1.UnimplementedSlotServiceServer
	mu        sync.Mutex
	replies   []reply // one per call; the last one repeats
	calls     []*slotdv1.TurnRequest
	auth      []string
	completes []*slotdv1.CompleteSessionRequest
	gets      []*slotdv1.GetSessionRequest
	resets    []*slotdv1.ResetSessionRequest
}

func (f *fake) Turn(ctx context.Context, req *slotdv1.TurnRequest) (*slotdv1.TurnResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, req)
	md, _ := metadata.FromIncomingContext(ctx)
	f.auth = append(f.auth, strings.Join(md.Get("authorization"), ","))
	r := f.replies[min(len(f.calls), len(f.replies))-1]
	if r.replayed {
		_ = grpc.SetHeader(ctx, metadata.Pairs(client.ReplayedHeader, "true"))
	}
	if r.err != nil {
		return nil, r.err
	}
	resp := r.resp
	if resp == nil {
		resp = &slotdv1.TurnResponse{Action: slotdv1.Action_ACTION_ASK, TurnId: req.TurnId,
			Question: &slotdv1.Question{Slot: "reason", Text: "Что случилось?", AllowedValues: []string{"duplicate", "fraud"}}}
	}
	return resp, nil
}

func (f *fake) GetToolSchema(_ context.Context, req *slotdv1.GetToolSchemaRequest) (*slotdv1.GetToolSchemaResponse, error) {
	params, _ := structpb.NewStruct(map[string]any{"type": "object", "additionalProperties": false})
	return &slotdv1.GetToolSchemaResponse{Name: req.Tool, Provider: req.Provider, Parameters: params, Version: "v1"}, nil
}

func (f *fake) CompleteSession(_ context.Context, req *slotdv1.CompleteSessionRequest) (*slotdv1.CompleteSessionResponse, error) {
	f.mu.Lock()
	f.completes = append(f.completes, req)
	f.mu.Unlock()
	out, _ := structpb.NewStruct(map[string]any{"status": "accepted"})
	return &slotdv1.CompleteSessionResponse{Output: out, Action: slotdv1.Action_ACTION_READY,
		Session: &slotdv1.Session{Status: slotdv1.SessionStatus_SESSION_STATUS_COMPLETED}}, nil
}

func (f *fake) GetSession(_ context.Context, req *slotdv1.GetSessionRequest) (*slotdv1.GetSessionResponse, error) {
	f.mu.Lock()
	f.gets = append(f.gets, req)
	f.mu.Unlock()
	if req.ConversationId == "chat-unknown" {
		return nil, failure(codes.NotFound, &slotdv1.Problem{Type: "https://slotd.dev/problems/session-not-found", Title: "No open session", Status: 404})
	}
	slots, _ := structpb.NewStruct(map[string]any{"amount": "1250.50", "reason": "duplicate"})
	return &slotdv1.GetSessionResponse{Session: &slotdv1.Session{Id: "s-1", ConversationId: req.ConversationId, Tool: "bank.open_dispute",
		Status: slotdv1.SessionStatus_SESSION_STATUS_ACTIVE, Version: 3, Slots: slots, Missing: []string{"transaction_date"},
		Pending: []*slotdv1.PendingChange{{Slot: "amount", Old: structpb.NewStringValue("125.50"), New: structpb.NewStringValue("1250.50")}},
		Locale:  "ru-RU", TimeZone: "Europe/Moscow", Attempts: map[string]int32{"amount": 2}}}, nil
}

func (f *fake) ResetSession(_ context.Context, req *slotdv1.ResetSessionRequest) (*slotdv1.ResetSessionResponse, error) {
	f.mu.Lock()
	f.resets = append(f.resets, req)
	f.mu.Unlock()
	resp := &slotdv1.ResetSessionResponse{Sessions: []*slotdv1.Session{{Id: "s-1", ConversationId: req.ConversationId, Tool: "bank.open_dispute",
		Status: slotdv1.SessionStatus_SESSION_STATUS_RESET}}}
	if req.Tool == "" {
		resp.Sessions = append(resp.Sessions, &slotdv1.Session{Id: "s-2", ConversationId: req.ConversationId, Tool: "bank.block_card",
			Status: slotdv1.SessionStatus_SESSION_STATUS_RESET})
	}
	return resp, nil
}

func (f *fake) turnIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for _, c := range f.calls {
		ids = append(ids, c.TurnId)
	}
	return ids
}

func startFake(t *testing.T, f *fake, opts ...client.Option) *client.Client {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	slotdv1.RegisterSlotServiceServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///fake",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); srv.Stop() })
	return client.NewFromConn(conn, opts...)
}

// failure is a status error carrying a slotd problem, as slotd sends them.
func failure(code codes.Code, p *slotdv1.Problem) error {
	st, err := status.New(code, p.Title).WithDetails(p)
	if err != nil {
		panic(err)
	}
	return st.Err()
}

var (
	storeDown = &slotdv1.Problem{Type: "https://slotd.dev/problems/unavailable", Title: "The session store is unavailable",
		Status: 503, Retryable: true, RetryAfterSeconds: 1}
	unknownTool = &slotdv1.Problem{Type: "https://slotd.dev/problems/unknown-tool", Title: "Unknown tool", Status: 404,
		OwnerActionRequired: true}
	// An UNAVAILABLE that slotd says a retry will not fix: the problem
	// decides, not the code.
	migrationNeeded = &slotdv1.Problem{Type: "https://slotd.dev/problems/unavailable", Title: "The schema is newer than this slotd",
		Status: 503, OwnerActionRequired: true}
)

// fast waits milliseconds instead of slotd's second, so the tests stay quick.
var fast = client.WithRetry(client.RetryPolicy{MaxAttempts: 5, MinDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond, Jitter: -1})

func TestTurnRetriesOnlyWhatTheProblemSaysIsRetryable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		replies      []reply
		wantAttempts int
		wantCode     codes.Code // OK: the turn succeeds
		wantProblem  string
	}{
		{"retryable problem, then success", []reply{{err: failure(codes.Unavailable, storeDown)}, {err: failure(codes.Aborted, storeDown)}, {}}, 3, codes.OK, ""},
		{"not retryable: one call", []reply{{err: failure(codes.NotFound, unknownTool)}, {}}, 1, codes.NotFound, "Unknown tool"},
		{"UNAVAILABLE whose problem says not retryable: one call", []reply{{err: failure(codes.Unavailable, migrationNeeded)}, {}}, 1, codes.Unavailable, "The schema is newer than this slotd"},
		{"the transport's UNAVAILABLE (slotd not reached) is retried", []reply{{err: status.Error(codes.Unavailable, "connection refused")}, {}}, 2, codes.OK, ""},
		{"an error without a problem is not retried", []reply{{err: status.Error(codes.Internal, "boom")}, {}}, 1, codes.Internal, ""},
		{"retryable every time: stops at MaxAttempts", []reply{{err: failure(codes.Unavailable, storeDown)}}, 5, codes.Unavailable, "The session store is unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &fake{replies: tt.replies}
			c := startFake(t, f, fast)
			res, err := c.Turn(context.Background(), "chat-1", "bank.open_dispute", map[string]any{"amount": "1 200,50 ₽"})
			ids := f.turnIDs()
			if len(ids) != tt.wantAttempts {
				t.Fatalf("calls = %d, want %d", len(ids), tt.wantAttempts)
			}
			for _, id := range ids {
				if id == "" || id != ids[0] {
					t.Fatalf("turn ids across attempts = %q, want one non-empty id reused", ids)
				}
			}
			if tt.wantCode == codes.OK {
				if err != nil {
					t.Fatalf("Turn: %v, want success", err)
				}
				if res.Attempts != tt.wantAttempts || res.TurnID != ids[0] {
					t.Errorf("result attempts %d turn id %q, want %d and %q", res.Attempts, res.TurnID, tt.wantAttempts, ids[0])
				}
				return
			}
			var e *client.Error
			if !errors.As(err, &e) {
				t.Fatalf("Turn error = %v (%T), want *client.Error", err, err)
			}
			if e.Code != tt.wantCode || e.Attempts != tt.wantAttempts {
				t.Errorf("error code %v attempts %d, want %v and %d", e.Code, e.Attempts, tt.wantCode, tt.wantAttempts)
			}
			if got := ""; e.Problem != nil {
				got = e.Problem.Title
				if got != tt.wantProblem {
					t.Errorf("problem title = %q, want %q", got, tt.wantProblem)
				}
			} else if tt.wantProblem != "" {
				t.Errorf("problem = nil, want %q", tt.wantProblem)
			}
			if st, ok := status.FromError(err); !ok || st.Code() != tt.wantCode {
				t.Errorf("status.FromError = %v, %v; want code %v", st, ok, tt.wantCode)
			}
		})
	}
}

func TestTurnGivesEachLogicalTurnItsOwnID(t *testing.T) {
	t.Parallel()
	f := &fake{replies: []reply{{}}}
	c := startFake(t, f)
	ctx := context.Background()
	for range 3 {
		if _, err := c.Turn(ctx, "chat-1", "bank.open_dispute", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Turn(ctx, "chat-1", "bank.open_dispute", nil, client.TurnID("chat-1/msg-7")); err != nil {
		t.Fatal(err)
	}
	ids := f.turnIDs()
	seen := map[string]bool{}
	for _, id := range ids[:3] {
		if id == "" || seen[id] {
			t.Fatalf("turn ids = %q, want three distinct non-empty ids", ids)
		}
		seen[id] = true
	}
	if ids[3] != "chat-1/msg-7" {
		t.Errorf("turn id with TurnID option = %q, want chat-1/msg-7", ids[3])
	}
}

func TestTurnRetryWaitIsBoundedAndHonoursTheDeadline(t *testing.T) {
	t.Parallel()
	slow := &slotdv1.Problem{Title: "busy", Retryable: true, RetryAfterSeconds: 30}

	// slotd asks for 30s; the policy caps the wait at 50ms.
	f := &fake{replies: []reply{{err: failure(codes.Unavailable, slow)}, {}}}
	var waits []time.Duration
	c := startFake(t, f, client.WithRetry(client.RetryPolicy{MaxDelay: 50 * time.Millisecond, Jitter: -1}),
		client.OnRetry(func(r client.Retry) { waits = append(waits, r.Wait) }))
	start := time.Now()
	if _, err := c.Turn(context.Background(), "chat-1", "bank.open_dispute", nil); err != nil {
		t.Fatal(err)
	}
	if len(waits) != 1 || waits[0] != 50*time.Millisecond {
		t.Errorf("waits = %v, want [50ms]", waits)
	}
	if el := time.Since(start); el < 50*time.Millisecond || el > 5*time.Second {
		t.Errorf("Turn took %s, want about 50ms", el)
	}

	// The context has 3s left; slotd asks for 30s: no sleeping into a
	// deadline that comes first. (A first turn makes the connection.)
	f = &fake{replies: []reply{{}, {err: failure(codes.Unavailable, slow)}, {}}}
	c = startFake(t, f, client.WithRetry(client.RetryPolicy{MaxDelay: time.Minute}))
	if _, err := c.Turn(context.Background(), "chat-1", "bank.open_dispute", nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start = time.Now()
	_, err := c.Turn(ctx, "chat-1", "bank.open_dispute", nil)
	var e *client.Error
	if !errors.As(err, &e) || !e.Retryable() || !strings.Contains(e.GaveUp, "deadline") {
		t.Fatalf("Turn error = %v, want a retryable *client.Error given up for the deadline", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("Turn took %s, want an immediate return (the retry would pass the deadline)", el)
	}
	if n := len(f.turnIDs()); n != 2 {
		t.Errorf("calls = %d, want 2 (the first turn, one attempt of the second)", n)
	}
}

func TestTurnReturnsTypedValues(t *testing.T) {
	t.Parallel()
	args, _ := structpb.NewStruct(map[string]any{"amount": "1200.50", "reason": "duplicate"})
	slots, _ := structpb.NewStruct(map[string]any{"amount": "1200.50"})
	resp := &slotdv1.TurnResponse{
		TurnId: "t-1", Action: slotdv1.Action_ACTION_READY, Arguments: args, IdempotencyKey: "sd_abc",
		Session: &slotdv1.Session{Id: "s-1", Status: slotdv1.SessionStatus_SESSION_STATUS_ACTIVE, Version: 4, Slots: slots,
			Attempts: map[string]int32{"reason": 1}},
		Changes: []*slotdv1.Change{{Slot: "amount", Old: structpb.NewStringValue("1200.50"), New: structpb.NewStringValue("1340.00"),
			Decision: slotdv1.Decision_DECISION_OVERWRITTEN, Message: "Понял, меняю сумму на 1340.00"}},
		Problem: &slotdv1.Problem{Title: "refused", RetryAfterSeconds: 2, Errors: []*slotdv1.FieldError{{Pointer: "/reason", AllowedValues: []string{"fraud"}}}},
	}
	f := &fake{replies: []reply{{resp: resp, replayed: true}}}
	c := startFake(t, f, client.WithAPIKey("bank-key-0123456789abcdef"))
	res, err := c.Turn(context.Background(), "chat-1", "bank.open_dispute", nil)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		field     string
		got, want any
	}{
		{"Action", res.Action, client.ActionReady},
		{"TurnID", res.TurnID, "t-1"},
		{"IdempotencyKey", res.IdempotencyKey, "sd_abc"},
		{"Arguments[reason]", res.Arguments["reason"], "duplicate"},
		{"Session.Status", res.Session.Status, client.Status("ACTIVE")},
		{"Session.Version", res.Session.Version, int64(4)},
		{"Session.Slots[amount]", res.Session.Slots["amount"], "1200.50"},
		{"Session.Attempts[reason]", res.Session.Attempts["reason"], 1},
		{"Changes[0].Decision", res.Changes[0].Decision, client.Decision("OVERWRITTEN")},
		{"Changes[0].Old", res.Changes[0].Old, "1200.50"},
		{"Changes[0].Message", res.Changes[0].Message, "Понял, меняю сумму на 1340.00"},
		{"Problem.RetryAfter", res.Problem.RetryAfter, 2 * time.Second},
		{"Problem.Errors[0].AllowedValues", strings.Join(res.Problem.Errors[0].AllowedValues, ","), "fraud"},
		{"Replayed", res.Replayed, true},
		{"Attempts", res.Attempts, 1},
		{"Question", res.Question, (*client.Question)(nil)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %#v, want %#v", c.field, c.got, c.want)
		}
	}
	if got := f.auth[0]; got != "Bearer bank-key-0123456789abcdef" {
		t.Errorf("authorization sent = %q, want the bearer key", got)
	}
}

func TestToolSchemaAndComplete(t *testing.T) {
	t.Parallel()
	f := &fake{replies: []reply{{}}}
	c := startFake(t, f)
	ctx := context.Background()
	schema, err := c.ToolSchema(ctx, "bank.open_dispute", "openai")
	if err != nil {
		t.Fatal(err)
	}
	if schema.Tool != "bank.open_dispute" || schema.Name != "bank.open_dispute" || schema.Provider != "openai" || schema.Parameters["additionalProperties"] != false {
		t.Errorf("schema = %+v, want bank.open_dispute for openai with its parameters as a map", schema)
	}

	done, err := c.Complete(ctx, "chat-1", "sd_1", map[string]any{"status": "accepted", "case_id": "DSP-1"})
	if err != nil {
		t.Fatal(err)
	}
	if done.Session.Status != "COMPLETED" || done.Output["status"] != "accepted" || done.Action != client.ActionReady {
		t.Errorf("completion = %+v, want COMPLETED, output status accepted, action READY", done)
	}
	if _, err := c.CompleteFailed(ctx, "chat-1", "sd_1", client.Failure{Kind: client.FailureRateLimited, HTTPStatus: 429, RetryAfter: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompleteFailed(ctx, "chat-1", "sd_1", client.Failure{Kind: "EXPLODED"}); err == nil {
		t.Error("CompleteFailed with an unknown kind: no error")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.completes) != 2 {
		t.Fatalf("CompleteSession calls = %d, want 2 (the unknown kind is refused before sending)", len(f.completes))
	}
	if got := f.completes[0].GetResult().GetStructValue().AsMap()["case_id"]; got != "DSP-1" || f.completes[0].IdempotencyKey != "sd_1" {
		t.Errorf("sent result case_id %v key %q, want DSP-1 and sd_1", got, f.completes[0].IdempotencyKey)
	}
	fl := f.completes[1].GetFailure()
	if fl.GetKind() != slotdv1.FailureKind_FAILURE_KIND_RATE_LIMITED || fl.GetHttpStatus() != 429 || fl.GetRetryAfterSeconds() != 30 {
		t.Errorf("sent failure = %v, want RATE_LIMITED, 429, 30s", fl)
	}
}

func TestTurnStopsWaitingWhenTheContextIsCancelled(t *testing.T) {
	t.Parallel()
	slow := &slotdv1.Problem{Title: "busy", Retryable: true, RetryAfterSeconds: 30}
	f := &fake{replies: []reply{{err: failure(codes.Unavailable, slow)}, {}}}
	retrying := make(chan struct{}, 1)
	c := startFake(t, f, client.WithRetry(client.RetryPolicy{MaxDelay: time.Minute}),
		client.OnRetry(func(client.Retry) { retrying <- struct{}{} }))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-retrying; cancel() }()
	start := time.Now()
	_, err := c.Turn(ctx, "chat-1", "bank.open_dispute", nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Turn error = %v, want one that is context.Canceled", err)
	}
	if p := client.ProblemOf(err); p == nil || !p.Retryable {
		t.Errorf("ProblemOf = %+v, want slotd's retryable problem", p)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("Turn took %s, want it to stop waiting (30s) when cancelled", el)
	}
	if n := len(f.turnIDs()); n != 1 {
		t.Errorf("calls = %d, want 1", n)
	}
}

func TestSessionResetAndTurnOptions(t *testing.T) {
	t.Parallel()
	f := &fake{replies: []reply{{}}}
	c := startFake(t, f, client.WithAPIKey("bank-key-0123456789abcdef"))
	ctx := context.Background()

	s, err := c.Session(ctx, "  chat-7\t", "bank.open_dispute")
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "s-1" || s.Status != "ACTIVE" || s.Version != 3 || s.Slots["amount"] != "1250.50" ||
		len(s.Missing) != 1 || len(s.Pending) != 1 || s.Pending[0].Old != "125.50" || s.Attempts["amount"] != 2 || s.TimeZone != "Europe/Moscow" {
		t.Errorf("session = %+v, want s-1 ACTIVE v3 with its slots, missing, pending amount 125.50 → 1250.50 and attempts", s)
	}
	if _, err := c.Session(ctx, "chat-unknown"); err == nil {
		t.Error("Session of an unknown conversation: no error")
	} else if e := (*client.Error)(nil); !errors.As(err, &e) || e.Code != codes.NotFound || e.Problem == nil || e.Problem.Status != 404 {
		t.Errorf("Session of an unknown conversation: %v, want the 404 problem", err)
	}

	one, err := c.Reset(ctx, "chat-7", "bank.open_dispute")
	if err != nil {
		t.Fatal(err)
	}
	all, err := c.Reset(ctx, "chat-7")
	if err != nil {
		t.Fatal(err)
	}
	if len(one) != 1 || len(all) != 2 || all[1].Tool != "bank.block_card" || all[0].Status != "RESET" {
		t.Errorf("reset one tool = %+v, every tool = %+v; want 1 and 2 RESET sessions", one, all)
	}

	if _, err := c.Turn(ctx, "chat-7", "bank.open_dispute", map[string]any{"amount": "1 250,50"},
		client.Locale("uk-UA"), client.TimeZone("Europe/Kyiv")); err != nil {
		t.Fatal(err)
	}
	// Raw sends no key of its own: the caller adds it.
	if _, err := c.Raw().GetSession(ctx, &slotdv1.GetSessionRequest{ConversationId: "chat-raw"}); err != nil {
		t.Fatal(err)
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.gets) != 3 || f.gets[0].Tool != "bank.open_dispute" || f.gets[1].Tool != "" || f.gets[2].ConversationId != "chat-raw" {
		t.Errorf("GetSession requests = %v, want the tool given once, then none, then the raw call", f.gets)
	}
	if len(f.resets) != 2 || f.resets[0].Tool != "bank.open_dispute" || f.resets[1].Tool != "" {
		t.Errorf("ResetSession requests = %v, want one tool, then every tool", f.resets)
	}
	if got := f.calls[len(f.calls)-1]; got.Locale != "uk-UA" || got.TimeZone != "Europe/Kyiv" {
		t.Errorf("turn sent locale %q time zone %q, want uk-UA and Europe/Kyiv", got.Locale, got.TimeZone)
	}
}
