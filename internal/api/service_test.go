package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/problem"
)

// seedNow is the dispute example's clock: the day after 2026-08-22.
var seedNow = time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu          sync.Mutex
	started     int
	turns       []api.TurnReport
	completions []api.CompletionReport
}

func (r *recorder) TurnStarted(context.Context) { r.mu.Lock(); r.started++; r.mu.Unlock() }

func (r *recorder) TurnDone(_ context.Context, t api.TurnReport) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.turns = append(r.turns, t)
}

func (r *recorder) CompletionDone(_ context.Context, c api.CompletionReport) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.completions = append(r.completions, c)
}

// last is the last turn reported, after checking that every turn started
// was reported once.
func (r *recorder) last(t *testing.T) api.TurnReport {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.turns) == 0 || r.started != len(r.turns) {
		t.Fatalf("%d turns started, %d reported; want one report per turn", r.started, len(r.turns))
	}
	return r.turns[len(r.turns)-1]
}

func turnRequest(t *testing.T, conversation, tool, turnID, args string, now time.Time) *slotdv1.TurnRequest {
	t.Helper()
	req := &slotdv1.TurnRequest{ConversationId: conversation, Tool: tool, TurnId: turnID, Locale: "ru"}
	if !now.IsZero() {
		req.Now = timestamppb.New(now)
	}
	if args != "" {
		var m map[string]any
		if err := json.Unmarshal([]byte(args), &m); err != nil {
			t.Fatalf("bad test JSON %s: %v", args, err)
		}
		s, err := structpb.NewStruct(m)
		if err != nil {
			t.Fatal(err)
		}
		req.Arguments = s
	}
	return req
}

// TestEveryTurnIsReported: the service tells its observer of each turn it
// answers, with the request as the engine ran it, and Limit of each turn it
// refuses before the service sees it.
func TestEveryTurnIsReported(t *testing.T) {
	t.Parallel()
	obs := &recorder{}
	client, _ := serve(t, api.Limits{MaxRequestBytes: 512}, obs)
	ctx := context.Background()

	// No `now`: the engine's clock runs the turn, and the report says which.
	before := time.Now()
	resp, err := client.Turn(ctx, turnRequest(t, "r-1", "travel.search_flights", "r-1/1", `{"from": "MAD"}`, time.Time{}))
	if err != nil {
		t.Fatal(err)
	}
	r := obs.last(t)
	if r.Code != codes.OK || r.Err != nil || r.Result == nil || string(r.Result.Action) != strings.TrimPrefix(resp.Action.String(), "ACTION_") {
		t.Errorf("report of an answered turn = %+v, want OK with the result answered (%v)", r, resp.Action)
	}
	if r.Request.Now.Before(before) || r.Request.Tool != "travel.search_flights" || r.Request.TurnID != "r-1/1" {
		t.Errorf("reported request = %+v, want the turn with the engine's clock (after %v)", r.Request, before)
	}
	if r.Elapsed <= 0 {
		t.Errorf("elapsed = %v, want the time the turn took", r.Elapsed)
	}

	// A failed turn: the domain error, and the code it answered with.
	_, err = client.Turn(ctx, turnRequest(t, "r-2", "no.such_tool", "r-2/1", `{}`, seedNow))
	r = obs.last(t)
	var pe *problem.Error
	if status.Code(err) != codes.NotFound || r.Code != codes.NotFound || !errors.As(r.Err, &pe) || pe.Kind != problem.KindUnknownTool || r.Result != nil {
		t.Errorf("report of a failed turn = %+v (the call: %v), want NOT_FOUND, an unknown-tool problem and no result", r, err)
	}
	if !r.Request.Now.Equal(seedNow) {
		t.Errorf("reported request's now = %v, want the caller's %v", r.Request.Now, seedNow)
	}

	// Too large for Limit: refused before the service, reported all the same.
	_, err = client.Turn(ctx, turnRequest(t, "r-3", "travel.search_flights", "r-3/1", `{"from": "`+strings.Repeat("x", 600)+`"}`, seedNow))
	r = obs.last(t)
	if status.Code(err) != codes.InvalidArgument || r.Code != codes.InvalidArgument || r.Request.Tool != "travel.search_flights" || r.Request.ConversationID != "r-3" {
		t.Errorf("report of a turn Limit refused = %+v (the call: %v), want INVALID_ARGUMENT for travel.search_flights", r, err)
	}
}

// TestResponseProblemsKeepTheirStatus: the problems a successful response
// carries leave with the HTTP status of their kind, as they always have.
func TestResponseProblemsKeepTheirStatus(t *testing.T) {
	t.Parallel()
	obs := &recorder{}
	client, _ := serve(t, api.Limits{}, obs)
	ctx := context.Background()
	turn := func(conversation, tool string, n int, args string) *slotdv1.TurnResponse {
		t.Helper()
		resp, err := client.Turn(ctx, turnRequest(t, conversation, tool, fmt.Sprintf("%s/%d", conversation, n), args, seedNow))
		if err != nil {
			t.Fatalf("turn %d of %s: %v", n, conversation, err)
		}
		return resp
	}
	check := func(what string, p *slotdv1.Problem, typ string, want int32) {
		t.Helper()
		if p.GetType() != typ || p.GetStatus() != want {
			t.Errorf("%s: problem %v, want type %s with status %d", what, p, typ, want)
		}
	}

	resp := turn("p-value", "travel.search_flights", 1, `{"from": "MAD", "date": "someday"}`)
	check("a refused value", resp.Problem, problem.TypeInvalidValue, 422)

	turn("p-handoff", "bank.open_dispute", 1, `{"card_last4": "4417", "operation_date": "вчера", "amount": "100"}`)
	turn("p-handoff", "bank.open_dispute", 2, `{"reason": "a"}`)
	turn("p-handoff", "bank.open_dispute", 3, `{"reason": "b"}`)
	resp = turn("p-handoff", "bank.open_dispute", 4, `{"reason": "c"}`)
	check("a hand-off", resp.Problem, problem.TypeHandoff, 422)

	ready := turn("p-backend", "travel.search_flights", 1, `{"from": "mad", "to": "KBP", "date": "2026-09-01"}`)
	if ready.Action != slotdv1.Action_ACTION_READY {
		t.Fatalf("action %v, want READY", ready.Action)
	}
	complete := func(kind slotdv1.FailureKind) *slotdv1.CompleteSessionResponse {
		t.Helper()
		out, err := client.CompleteSession(ctx, &slotdv1.CompleteSessionRequest{IdempotencyKey: ready.IdempotencyKey, Now: timestamppb.New(seedNow),
			Outcome: &slotdv1.CompleteSessionRequest_Failure{Failure: &slotdv1.BackendFailure{Kind: kind}}})
		if err != nil {
			t.Fatalf("CompleteSession %v: %v", kind, err)
		}
		return out
	}
	out := complete(slotdv1.FailureKind_FAILURE_KIND_TIMEOUT)
	check("a backend timeout", out.Problem, problem.TypeBackendTimeout, 504)
	out = complete(slotdv1.FailureKind_FAILURE_KIND_UNAUTHORIZED)
	check("a backend refusal", out.Problem, problem.Base+"backend-unauthorized", 502)
	if e := out.Output.AsMap()["error"].(map[string]any); e["status"] != 502.0 {
		t.Errorf("output error = %v, want the problem's status 502 in it too", e)
	}

	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.completions) != 2 || obs.completions[1].Completion == nil || obs.completions[1].Request.Failure == nil ||
		obs.completions[1].Completion.Session.Tool != "travel.search_flights" {
		t.Errorf("completions reported = %+v, want both, with the request and the completion", obs.completions)
	}
}
