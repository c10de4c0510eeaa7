package integration

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/app/server"
)

func TestStaleSessionAsksToResume(t *testing.T) {
	t.Parallel()
	inst, url := newPostgresServer(t)

	t.Run("accept applies the held arguments", func(t *testing.T) {
		c := newConvo(t, inst.client, "bank.open_dispute")
		c.send(seedFirstTurn)
		c.now = c.now.Add(31 * time.Minute) // bank.open_dispute: stale_after 30m
		r := c.send(`{"reason": "Fraud"}`)
		wantAction(t, r, slotdv1.Action_ACTION_RESUME)
		if !strings.Contains(r.Question.Text, "4417") || !strings.Contains(r.Question.Text, "1200.50") {
			t.Errorf("resume question does not summarise the slots: %q", r.Question.Text)
		}
		if _, ok := slots(r)["reason"]; ok {
			t.Errorf("a held argument was applied before the answer: %v", slots(r))
		}
		r = c.confirm(true)
		wantAction(t, r, slotdv1.Action_ACTION_CONFIRM)
		wantSlots(t, r, map[string]any{"reason": "fraud", "amount": "1200.50"})
	})

	t.Run("decline starts over with the held arguments", func(t *testing.T) {
		c := newConvo(t, inst.client, "bank.open_dispute")
		first := c.send(seedFirstTurn)
		c.now = c.now.Add(2 * time.Hour)
		wantAction(t, c.send(`{"card_last4": "**** 9921"}`), slotdv1.Action_ACTION_RESUME)
		r := c.confirm(false)
		wantAsk(t, r, "operation_date")
		if got := slots(r); len(got) != 1 || got["card_last4"] != "9921" {
			t.Errorf("fresh session slots = %v, want only the held card", got)
		}
		if r.Session.Id == first.Session.Id || r.PreviousSession.GetId() != first.Session.Id ||
			r.PreviousSession.Status != slotdv1.SessionStatus_SESSION_STATUS_RESET {
			t.Errorf("previous session = %v, want the first one, reset", r.PreviousSession)
		}
		if r.Notice == "" {
			t.Error("starting over is not said")
		}
		cleared := 0
		for _, row := range history(t, url, first.Session.Id) {
			if row.decision == "CLEARED" {
				cleared++
			}
		}
		if cleared != 3 {
			t.Errorf("reset recorded %d CLEARED changes, want 3", cleared)
		}
	})

	t.Run("a fresh turn is not asked", func(t *testing.T) {
		c := newConvo(t, inst.client, "bank.open_dispute")
		c.send(seedFirstTurn)
		c.now = c.now.Add(29 * time.Minute)
		wantAsk(t, c.send(`{}`), "reason")
	})
}

func TestExpiredSessionStartsOver(t *testing.T) {
	t.Parallel()
	inst, url := newPostgresServer(t)
	c := newConvo(t, inst.client, "bank.open_dispute")
	first := c.send(seedFirstTurn)
	c.now = c.now.Add(25 * time.Hour) // ttl 24h
	r := c.send(`{"reason": "duplicate"}`)
	wantAsk(t, r, "card_last4")
	if r.Session.Id == first.Session.Id || len(slots(r)) != 1 {
		t.Errorf("expected a new session holding only the reason, got %v", r.Session)
	}
	if r.PreviousSession.GetStatus() != slotdv1.SessionStatus_SESSION_STATUS_EXPIRED || r.Notice == "" {
		t.Errorf("the expiry is not reported: previous=%v notice=%q", r.PreviousSession, r.Notice)
	}
	got, err := inst.client.GetSession(context.Background(), &slotdv1.GetSessionRequest{SessionId: first.Session.Id})
	if err != nil || got.Session.Status != slotdv1.SessionStatus_SESSION_STATUS_EXPIRED || got.Session.EndedAt == nil {
		t.Errorf("old session = %v, %v", got.GetSession(), err)
	}
	if n := len(history(t, url, first.Session.Id)); n != 3+3 {
		t.Errorf("old session history has %d changes, want 3 fills and 3 clears", n)
	}
}

// Another tool parks the dispute and opens a session of its own, carrying
// over the slots that fit; the dispute stays open.
func TestAnotherToolCarriesFittingSlots(t *testing.T) {
	t.Parallel()
	inst, _ := newPostgresServer(t)
	c := newConvo(t, inst.client, "bank.open_dispute")
	first := c.send(seedFirstTurn)

	c.tool = "test.carry"
	r := c.send(`{"note": "lost card"}`)
	wantAction(t, r, slotdv1.Action_ACTION_READY)
	if r.PreviousSession != nil || len(r.OpenSessions) != 1 || r.OpenSessions[0].SessionId != first.Session.Id ||
		r.OpenSessions[0].LastAction != slotdv1.Action_ACTION_ASK || r.OpenSessions[0].Missing[0] != "reason" {
		t.Errorf("previous %v, open sessions %v; want nothing ended and the dispute parked, missing its reason", r.PreviousSession, r.OpenSessions)
	}
	if decisionOf(r, "card_last4") != slotdv1.Decision_DECISION_CARRIED {
		t.Errorf("card_last4 decision = %v, want CARRIED", decisionOf(r, "card_last4"))
	}
	if _, ok := slots(r)["amount"]; ok {
		t.Errorf("amount 1200.50 does not fit an integer slot but was carried: %v", slots(r))
	}
	if _, ok := slots(r)["operation_date"]; ok {
		t.Errorf("a slot the new contract lacks was carried: %v", slots(r))
	}

	c2 := newConvo(t, inst.client, "bank.open_dispute")
	c2.send(seedFirstTurn)
	c2.tool = "test.no_carry"
	r = c2.send(`{"note": "x"}`)
	wantAsk(t, r, "card_last4")
	if len(slots(r)) != 1 {
		t.Errorf("carry_over false still carried: %v", slots(r))
	}
}

// readyDispute drives a dispute to READY and returns the conversation.
func readyDispute(t *testing.T, client slotdv1.SlotServiceClient) (*convo, *slotdv1.TurnResponse) {
	t.Helper()
	c := newConvo(t, client, "bank.open_dispute")
	c.send(seedFirstTurn)
	c.send(`{"reason": "duplicate", "original_operation_id": "op-20260822-0117"}`)
	r := c.confirm(true)
	wantAction(t, r, slotdv1.Action_ACTION_READY)
	return c, r
}

func TestSeedClosingSceneTimeoutThenAccepted(t *testing.T) {
	t.Parallel()
	inst, url := newPostgresServer(t)
	c, ready := readyDispute(t, inst.client)
	ctx := context.Background()

	// The dispute service times out: a valid object, retryable in 30 s.
	out, err := inst.client.CompleteSession(ctx, &slotdv1.CompleteSessionRequest{
		ConversationId: c.id, IdempotencyKey: ready.IdempotencyKey,
		Outcome: &slotdv1.CompleteSessionRequest_Failure{Failure: &slotdv1.BackendFailure{Kind: slotdv1.FailureKind_FAILURE_KIND_TIMEOUT}},
	})
	if err != nil {
		t.Fatal(err)
	}
	o := out.Output.AsMap()
	e, _ := o["error"].(map[string]any)
	if o["status"] != "error" || e["retryable"] != true || e["retry_after_seconds"] != float64(30) || o["case_id"] != nil {
		t.Fatalf("timeout output = %v", o)
	}
	if out.Action != slotdv1.Action_ACTION_READY || out.Session.Status != slotdv1.SessionStatus_SESSION_STATUS_ACTIVE {
		t.Errorf("after a retryable failure: action %v, status %v", out.Action, out.Session.Status)
	}
	if !strings.Contains(e["detail"].(string), "30") {
		t.Errorf("the user is not told when to retry: %v", e["detail"])
	}

	// The next turn is READY again with the same key: no re-asking.
	r := c.send(`{}`)
	wantAction(t, r, slotdv1.Action_ACTION_READY)
	if r.IdempotencyKey != ready.IdempotencyKey {
		t.Errorf("key changed after a retryable failure: %s → %s", ready.IdempotencyKey, r.IdempotencyKey)
	}

	// Accepted, with a raw answer full of other people's data.
	raw, _ := structpb.NewValue(map[string]any{
		"status": "accepted", "case_id": "DSP-7781", "review_deadline": "2026-09-22",
		"customer":       map[string]any{"name": "Иванов И.", "pan": "4276 1234 5678 4417"},
		"internal_score": 0.93,
	})
	out, err = inst.client.CompleteSession(ctx, &slotdv1.CompleteSessionRequest{
		ConversationId: c.id, IdempotencyKey: ready.IdempotencyKey, Outcome: &slotdv1.CompleteSessionRequest_Result{Result: raw},
	})
	if err != nil {
		t.Fatal(err)
	}
	o = out.Output.AsMap()
	if o["status"] != "accepted" || o["case_id"] != "DSP-7781" || len(o) != 3 {
		t.Errorf("accepted output = %v, want status, case_id, review_deadline only", o)
	}
	if out.Session.Status != slotdv1.SessionStatus_SESSION_STATUS_COMPLETED {
		t.Errorf("status = %v, want completed", out.Session.Status)
	}

	// A retried CompleteSession gets the same answer.
	again, err := inst.client.CompleteSession(ctx, &slotdv1.CompleteSessionRequest{
		ConversationId: c.id, IdempotencyKey: ready.IdempotencyKey, Outcome: &slotdv1.CompleteSessionRequest_Result{Result: raw},
	})
	if err != nil || again.Output.AsMap()["case_id"] != "DSP-7781" {
		t.Errorf("retried completion = %v, %v", again, err)
	}
	// Both completions are in the history.
	h, err := inst.admin.GetSessionHistory(ctx, &slotdv1.GetSessionHistoryRequest{SessionId: ready.Session.Id})
	if err != nil {
		t.Fatal(err)
	}
	completes := 0
	for _, turn := range h.Turns {
		if strings.HasPrefix(turn.TurnId, "complete:") {
			completes++
		}
	}
	if completes != 2 {
		t.Errorf("history has %d completions, want 2", completes)
	}
	_ = url
}

func TestCompleteSessionRefusalAndFailures(t *testing.T) {
	t.Parallel()
	inst, _ := newPostgresServer(t)
	ctx := context.Background()
	complete := func(key string, outcome any) (*slotdv1.CompleteSessionResponse, error) {
		req := &slotdv1.CompleteSessionRequest{IdempotencyKey: key}
		switch o := outcome.(type) {
		case *structpb.Value:
			req.Outcome = &slotdv1.CompleteSessionRequest_Result{Result: o}
		case *slotdv1.BackendFailure:
			req.Outcome = &slotdv1.CompleteSessionRequest_Failure{Failure: o}
		}
		return inst.client.CompleteSession(ctx, req)
	}

	_, ready := readyDispute(t, inst.client)
	refusal, _ := structpb.NewValue(map[string]any{"status": "rejected", "reason": "Операция уже оспорена"})
	out, err := complete(ready.IdempotencyKey, refusal)
	if err != nil {
		t.Fatal(err)
	}
	if out.Problem != nil || out.Output.AsMap()["status"] != "rejected" || out.Session.Status != slotdv1.SessionStatus_SESSION_STATUS_COMPLETED {
		t.Errorf("a business refusal must be a normal result: %v", out)
	}

	_, ready = readyDispute(t, inst.client)
	out, err = complete(ready.IdempotencyKey, &slotdv1.BackendFailure{Kind: slotdv1.FailureKind_FAILURE_KIND_UNAUTHORIZED, HttpStatus: 401})
	if err != nil {
		t.Fatal(err)
	}
	if out.Action != slotdv1.Action_ACTION_HANDOFF || !out.Problem.OwnerActionRequired || out.Problem.Retryable ||
		out.Session.Status != slotdv1.SessionStatus_SESSION_STATUS_FAILED {
		t.Errorf("unauthorized: %v", out)
	}

	_, ready = readyDispute(t, inst.client)
	out, err = complete(ready.IdempotencyKey, &slotdv1.BackendFailure{Kind: slotdv1.FailureKind_FAILURE_KIND_RATE_LIMITED, RetryAfterSeconds: 120})
	if err != nil {
		t.Fatal(err)
	}
	if out.Problem.RetryAfterSeconds != 120 || !out.Problem.Retryable || out.Action != slotdv1.Action_ACTION_READY {
		t.Errorf("rate limited: %v", out.Problem)
	}

	// Completing what is not READY is refused; so is an outcome that names
	// no session, and a key slotd never gave.
	c2 := newConvo(t, inst.client, "bank.open_dispute")
	first := c2.send(seedFirstTurn)
	_, err = inst.client.CompleteSession(ctx, &slotdv1.CompleteSessionRequest{SessionId: first.Session.Id,
		Outcome: &slotdv1.CompleteSessionRequest_Result{Result: refusal}})
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("complete before READY: %v", err)
	}
	_, err = inst.client.CompleteSession(ctx, &slotdv1.CompleteSessionRequest{ConversationId: c2.id,
		Outcome: &slotdv1.CompleteSessionRequest_Result{Result: refusal}})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("complete by conversation alone: %v", err)
	}
	if _, err := complete("sd_forged", refusal); status.Code(err) != codes.InvalidArgument {
		t.Errorf("complete with a forged key: %v", err)
	}
	// A key of one session with the id of another is refused, not guessed.
	_, other := readyDispute(t, inst.client)
	_, err = inst.client.CompleteSession(ctx, &slotdv1.CompleteSessionRequest{SessionId: first.Session.Id,
		IdempotencyKey: other.IdempotencyKey, Outcome: &slotdv1.CompleteSessionRequest_Result{Result: refusal}})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("complete with another session's key: %v", err)
	}
}

// A late or retried outcome lands on the session its key names, never on
// the conversation's newer session.
func TestLateCompletionLandsOnItsOwnSession(t *testing.T) {
	t.Parallel()
	inst, _ := newPostgresServer(t)
	ctx := context.Background()
	c, first := readyDispute(t, inst.client)
	accepted, _ := structpb.NewValue(map[string]any{"status": "accepted", "case_id": "DSP-1"})
	req := &slotdv1.CompleteSessionRequest{IdempotencyKey: first.IdempotencyKey,
		Outcome: &slotdv1.CompleteSessionRequest_Result{Result: accepted}}
	if _, err := inst.client.CompleteSession(ctx, req); err != nil {
		t.Fatal(err)
	}
	// The conversation goes on to a second dispute, to READY.
	c.send(`{"card_last4": "9921", "operation_date": "позавчера", "amount": "500", "reason": "fraud"}`)
	second := c.confirm(true)
	wantAction(t, second, slotdv1.Action_ACTION_READY)
	if second.Session.Id == first.Session.Id {
		t.Fatalf("the second dispute reused the completed session")
	}
	// The first outcome is delivered again, late.
	again, err := inst.client.CompleteSession(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if again.Session.Id != first.Session.Id || again.Output.AsMap()["case_id"] != "DSP-1" {
		t.Errorf("the late retry answered for %s: %v", again.Session.Id, again.Output.AsMap())
	}
	got, err := inst.client.GetSession(ctx, &slotdv1.GetSessionRequest{SessionId: second.Session.Id})
	if err != nil || got.Session.Status != slotdv1.SessionStatus_SESSION_STATUS_ACTIVE {
		t.Errorf("the second session was touched: %v, %v", got.GetSession().GetStatus(), err)
	}
	// A READY session abandoned while its call was in flight still records
	// the outcome.
	c.tool = "travel.search_flights"
	c.send(`{"from": "MAD"}`)
	done, err := inst.client.CompleteSession(ctx, &slotdv1.CompleteSessionRequest{IdempotencyKey: second.IdempotencyKey,
		Outcome: &slotdv1.CompleteSessionRequest_Result{Result: accepted}})
	if err != nil || done.Session.Status != slotdv1.SessionStatus_SESSION_STATUS_COMPLETED {
		t.Errorf("outcome of an abandoned READY session: %v, %v", done.GetSession().GetStatus(), err)
	}
	active, err := inst.client.GetSession(ctx, &slotdv1.GetSessionRequest{ConversationId: c.id})
	if err != nil || active.Session.Tool != "travel.search_flights" {
		t.Errorf("completing the old session disturbed the active one: %v, %v", active.GetSession(), err)
	}
}

func TestAdminListResetHistoryPurge(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: seedNow.Add(10 * time.Hour)}
	url := dbtestURL(t)
	inst := startServer(t, url, contractsDir(t), func(c *server.Config) { c.Session.Clock = clock.Now })
	ctx := context.Background()

	// Six sessions idle since seedNow, two fresh ones.
	var stale []string
	for i := 0; i < 6; i++ {
		c := newConvo(t, inst.client, "bank.open_dispute")
		stale = append(stale, c.send(seedFirstTurn).Session.Id)
	}
	for i := 0; i < 2; i++ {
		c := newConvo(t, inst.client, "travel.search_flights")
		c.now = clock.Now()
		c.send(`{"from": "mad"}`)
	}

	list, err := inst.admin.ListSessions(ctx, &slotdv1.ListSessionsRequest{IdleLongerThan: durationpb.New(time.Hour), PageSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 4 || list.NextPageToken == "" {
		t.Fatalf("page 1: %d sessions, next %q", len(list.Sessions), list.NextPageToken)
	}
	page2, err := inst.admin.ListSessions(ctx, &slotdv1.ListSessionsRequest{IdleLongerThan: durationpb.New(time.Hour), PageSize: 4, PageToken: list.NextPageToken})
	if err != nil || len(page2.Sessions) != 2 || page2.NextPageToken != "" {
		t.Fatalf("page 2: %v, %v", page2, err)
	}
	byTool, _ := inst.admin.ListSessions(ctx, &slotdv1.ListSessionsRequest{Tool: "travel.search_flights"})
	if len(byTool.Sessions) != 2 {
		t.Errorf("tool filter: %d sessions, want 2", len(byTool.Sessions))
	}

	dry, err := inst.admin.ResetStaleSessions(ctx, &slotdv1.ResetStaleSessionsRequest{IdleLongerThan: durationpb.New(time.Hour), DryRun: true, Limit: 100})
	if err != nil || len(dry.SessionIds) != 6 || !dry.DryRun {
		t.Fatalf("dry run: %v, %v", dry, err)
	}
	still, _ := inst.admin.ListSessions(ctx, &slotdv1.ListSessionsRequest{Status: slotdv1.SessionStatus_SESSION_STATUS_ACTIVE})
	if len(still.Sessions) != 8 {
		t.Errorf("a dry run changed something: %d active, want 8", len(still.Sessions))
	}
	batch, err := inst.admin.ResetStaleSessions(ctx, &slotdv1.ResetStaleSessionsRequest{IdleLongerThan: durationpb.New(time.Hour), Limit: 4})
	if err != nil || len(batch.SessionIds) != 4 {
		t.Fatalf("first batch: %v, %v", batch, err)
	}
	rest, _ := inst.admin.ResetStaleSessions(ctx, &slotdv1.ResetStaleSessionsRequest{IdleLongerThan: durationpb.New(time.Hour), Limit: 4})
	if len(rest.SessionIds) != 2 {
		t.Errorf("second batch reset %d, want 2", len(rest.SessionIds))
	}
	h, err := inst.admin.GetSessionHistory(ctx, &slotdv1.GetSessionHistoryRequest{SessionId: stale[0]})
	if err != nil {
		t.Fatal(err)
	}
	if h.Session.Status != slotdv1.SessionStatus_SESSION_STATUS_RESET || len(h.Turns) != 1 || len(h.Changes) != 6 {
		t.Errorf("history: status %v, %d turns, %d changes", h.Session.Status, len(h.Turns), len(h.Changes))
	}
	if last := h.Changes[len(h.Changes)-1]; last.Decision != slotdv1.Decision_DECISION_CLEARED || last.TurnId != "" || last.Old == nil {
		t.Errorf("the reset is not in the history: %v", last)
	}

	clock.Advance(48 * time.Hour)
	p, err := inst.admin.PurgeSessions(ctx, &slotdv1.PurgeSessionsRequest{EndedLongerThan: durationpb.New(24 * time.Hour), DryRun: true})
	if err != nil || len(p.SessionIds) != 6 {
		t.Fatalf("purge dry run: %v, %v", p, err)
	}
	p, err = inst.admin.PurgeSessions(ctx, &slotdv1.PurgeSessionsRequest{EndedLongerThan: durationpb.New(24 * time.Hour)})
	if err != nil || len(p.SessionIds) != 6 {
		t.Fatalf("purge: %v, %v", p, err)
	}
	if _, err := inst.admin.GetSessionHistory(ctx, &slotdv1.GetSessionHistoryRequest{SessionId: stale[0]}); status.Code(err) != codes.NotFound {
		t.Errorf("a purged session is still readable: %v", err)
	}
}

// A reset-stale batch racing eight goroutines that drive turns on the same
// sessions: every turn lands whole, on the old session or a fresh one.
func TestResetStaleRacingTurns(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: seedNow.Add(time.Hour)}
	url := dbtestURL(t)
	inst := startServer(t, url, contractsDir(t), func(c *server.Config) { c.Session.Clock = clock.Now })
	ctx := context.Background()
	const convs, turns = 8, 12
	ids := make([]*convo, convs)
	for i := range ids {
		ids[i] = newConvo(t, inst.client, "test.many_slots")
		ids[i].now = seedNow
		ids[i].send(`{"slot_01": "a"}`)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	resets := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			r, err := inst.admin.ResetStaleSessions(ctx, &slotdv1.ResetStaleSessionsRequest{IdleLongerThan: durationpb.New(time.Minute), Limit: 3})
			if err != nil {
				t.Errorf("reset-stale: %v", err)
				return
			}
			resets += len(r.SessionIds)
		}
	}()
	errs := make(chan error, convs*turns)
	var drivers sync.WaitGroup
	for _, c := range ids {
		drivers.Add(1)
		go func() {
			defer drivers.Done()
			for j := 2; j <= turns; j++ {
				req := c.request(`{"slot_` + pad(j) + `": "v"}`)
				req.Now = timestamppb.New(seedNow.Add(time.Duration(j) * time.Second))
				if _, err := inst.client.Turn(ctx, req); err != nil {
					errs <- err
				}
			}
		}()
	}
	drivers.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("turn failed during reset-stale: %v", err)
	}
	if resets == 0 {
		t.Log("no reset won a race this run; the check below still holds")
	}
	// Whatever the interleaving: the active session of each conversation
	// holds a contiguous run of the last turns, and every turn is applied
	// exactly once across the sessions of the conversation.
	pool := dbtestPool(t, url)
	for _, c := range ids {
		var applied, distinct int
		if err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT turn_id) FROM turns WHERE conversation_id = $1`, c.id).Scan(&applied, &distinct); err != nil {
			t.Fatal(err)
		}
		if applied != turns || distinct != turns {
			t.Errorf("%s: %d turns stored (%d distinct), want %d", c.id, applied, distinct, turns)
		}
		// No half state: at most one active session of the one tool, and it
		// is open; every session's history ends whole.
		var active, stray int
		if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'active'),
				count(*) FILTER (WHERE status = 'active' AND NOT open)
			FROM sessions WHERE conversation_id = $1`, c.id).Scan(&active, &stray); err != nil {
			t.Fatal(err)
		}
		if active > 1 || stray != 0 {
			t.Errorf("%s: %d active sessions, %d not open", c.id, active, stray)
		}
	}
}

func pad(i int) string {
	if i < 10 {
		return "0" + string(rune('0'+i))
	}
	return string(rune('0'+i/10)) + string(rune('0'+i%10))
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestJanitorExpiresAndPurges(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: seedNow}
	url := dbtestURL(t)
	inst := startServer(t, url, contractsDir(t), func(c *server.Config) {
		c.Session.Clock = clock.Now
		c.JanitorInterval = 20 * time.Millisecond
		c.Retention = 7 * 24 * time.Hour
	})
	c := newConvo(t, inst.client, "bank.open_dispute")
	first := c.send(seedFirstTurn)
	ctx := context.Background()
	get := func() *slotdv1.Session {
		r, err := inst.client.GetSession(ctx, &slotdv1.GetSessionRequest{SessionId: first.Session.Id})
		if status.Code(err) == codes.NotFound {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return r.Session
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("the janitor did not %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if s := get(); s.Status != slotdv1.SessionStatus_SESSION_STATUS_ACTIVE {
		t.Fatalf("expired too early: %v", s.Status)
	}
	clock.Advance(24*time.Hour + time.Minute)
	waitFor("expire the session", func() bool { return get().GetStatus() == slotdv1.SessionStatus_SESSION_STATUS_EXPIRED })
	cleared := 0
	for _, row := range history(t, url, first.Session.Id) {
		if row.decision == "CLEARED" {
			cleared++
		}
	}
	if cleared != 3 {
		t.Errorf("expiry recorded %d CLEARED changes, want 3", cleared)
	}
	// The next turn says the conversation expired, once.
	c.now = clock.Now()
	r := c.send(`{"reason": "fraud"}`)
	if r.PreviousSession.GetId() != first.Session.Id || r.PreviousSession.Status != slotdv1.SessionStatus_SESSION_STATUS_EXPIRED || r.Notice == "" {
		t.Errorf("a turn after the janitor's expiry: previous %v, notice %q", r.PreviousSession, r.Notice)
	}
	if r = c.send(`{}`); r.PreviousSession != nil || r.Notice != "" {
		t.Errorf("the expiry is reported twice: %v, %q", r.PreviousSession, r.Notice)
	}
	clock.Advance(8 * 24 * time.Hour)
	waitFor("purge the ended session", func() bool { return get() == nil })
}
