package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/testkit/dbtest"
)

// Parallel tool calls: a model message calls several tools at once, and
// the orchestrator sends one Turn per call with the provider's tool-call id
// as turn_id. Each is applied exactly once, on its own tool's session,
// serialized by the conversation's lock, whichever replica takes it, and a
// retry of any of them gets its own stored answer.
func TestParallelToolCallsAcrossReplicas(t *testing.T) {
	t.Parallel()
	url := dbtest.NewDatabase(t)
	dir := contractsDir(t)
	replicas := []*instance{startServer(t, url, dir), startServer(t, url, dir)}
	calls := []struct {
		tool string
		args func(round int) string
	}{
		{"bank.open_dispute", func(r int) string { return fmt.Sprintf(`{"amount": "%d,50 ₽"}`, 100+r) }},
		{"travel.search_flights", func(r int) string { return fmt.Sprintf(`{"passengers": %d}`, 1+r%5) }},
		{"test.many_slots", func(r int) string { return fmt.Sprintf(`{"slot_%02d": "v%d"}`, r%20+1, r) }},
		{"test.carry", func(r int) string { return fmt.Sprintf(`{"note": "n%d"}`, r) }},
	}
	const rounds = 8
	conv := "parallel-" + fmt.Sprint(time.Now().UnixNano())
	answers := map[string]*slotdv1.TurnResponse{}
	sent := map[string]*slotdv1.TurnRequest{}
	var mu sync.Mutex
	applied := map[string]int{} // tool → turns that reached it
	for round := 0; round < rounds; round++ {
		n := 2 + round%3 // 2 to 4 calls in one message
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			call := calls[i]
			id := fmt.Sprintf("call_%d_%s", round, call.tool)
			req := &slotdv1.TurnRequest{ConversationId: conv, Tool: call.tool, TurnId: id, Arguments: structOf(t, call.args(round)), Now: nowPB()}
			sent[id] = req
			// Each call is sent twice at once to different replicas (a
			// retry racing the first delivery), then once more later.
			for d := 0; d < 2; d++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					inst := replicas[(d+rand.IntN(2))%2]
					resp, err := sendRetrying(inst, req)
					if err != nil {
						t.Errorf("%s: %v", id, err)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					if prev, ok := answers[id]; ok {
						if !proto.Equal(prev, resp) {
							t.Errorf("%s: two deliveries answered differently:\n%v\n%v", id, prev, resp)
						}
						return
					}
					answers[id] = resp
					applied[call.tool]++
					if resp.Session.Tool != call.tool {
						t.Errorf("%s: answered on a session of %s", id, resp.Session.Tool)
					}
				}()
			}
		}
		wg.Wait()
	}
	// Late retries (the same request, a later clock) get the stored answers.
	for id, want := range answers {
		again := proto.Clone(sent[id]).(*slotdv1.TurnRequest)
		again.Now = nowPB()
		resp, err := replicas[1].client.Turn(context.Background(), again)
		if err != nil || !proto.Equal(resp, want) {
			t.Errorf("late retry of %s: %v, want the stored answer", id, err)
		}
	}
	// A turn_id of one tool's call is never the answer to another's.
	_, err := replicas[0].client.Turn(context.Background(), &slotdv1.TurnRequest{ConversationId: conv, Tool: "travel.search_flights",
		TurnId: "call_0_bank.open_dispute", Arguments: structOf(t, `{"from": "MAD"}`)})
	if st := status.Convert(err); st.Code() != codes.FailedPrecondition || problemOf(t, st).Type == "" {
		t.Errorf("a dispute's turn_id sent for a flight search: %v, want FAILED_PRECONDITION with a problem", err)
	}

	pool := dbtest.Connect(t, url)
	for tool, n := range applied {
		var sessions, version, stored int
		err := pool.QueryRow(context.Background(), `SELECT count(*), max(s.version),
				(SELECT count(*) FROM turns t WHERE t.conversation_id = $1 AND t.tool = $2)
			FROM sessions s WHERE s.conversation_id = $1 AND s.tool = $2`, conv, tool).Scan(&sessions, &version, &stored)
		if err != nil {
			t.Fatal(err)
		}
		if sessions != 1 || version != n || stored != n {
			t.Errorf("%s: %d sessions, version %d, %d turns stored; want one session, %d turns applied once each", tool, sessions, version, stored, n)
		}
	}
	if len(applied) != len(calls) {
		t.Errorf("tools reached: %v, want all %d", applied, len(calls))
	}
}

// sendRetrying sends a turn, retrying it with the same turn_id while the
// failure is retryable.
func sendRetrying(inst *instance, req *slotdv1.TurnRequest) (*slotdv1.TurnResponse, error) {
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var resp *slotdv1.TurnResponse
		resp, err = inst.client.Turn(ctx, req)
		cancel()
		if err == nil {
			return resp, nil
		}
		st := status.Convert(err)
		if st.Code() != codes.Aborted && st.Code() != codes.Unavailable && st.Code() != codes.DeadlineExceeded {
			return nil, err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, err
}

// A digression leaves the first tool's session open, parked: the admin
// list and the history show it beside the one in use, Get finds either,
// the first turn back says it resumed, and a Reset without a tool resets
// both.
func TestParkedSessionIsVisible(t *testing.T) {
	t.Parallel()
	inst := startServer(t, dbtest.NewDatabase(t), contractsDir(t))
	ctx := context.Background()
	conv := "parked-" + fmt.Sprint(time.Now().UnixNano())
	// A user's turns, a minute apart: parallel calls of one model message
	// land within seconds of each other and are not a coming back.
	minute := 0
	turn := func(tool, id, args string) *slotdv1.TurnResponse {
		t.Helper()
		minute++
		now := timestamppb.New(seedNow.Add(time.Duration(minute) * time.Minute))
		resp, err := inst.client.Turn(ctx, &slotdv1.TurnRequest{ConversationId: conv, Tool: tool, TurnId: id, Arguments: structOf(t, args), Now: now, Locale: "ru"})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		return resp
	}
	dispute := turn("bank.open_dispute", "t1", seedFirstTurn)
	flights := turn("travel.search_flights", "t2", `{"from": "MAD", "passengers": "2"}`)
	if len(flights.OpenSessions) != 1 || flights.OpenSessions[0].Tool != "bank.open_dispute" || flights.OpenSessions[0].SessionId != dispute.Session.Id {
		t.Fatalf("the flight search's answer lists the parked dispute: %v", flights.OpenSessions)
	}

	list, err := inst.admin.ListSessions(ctx, &slotdv1.ListSessionsRequest{Status: slotdv1.SessionStatus_SESSION_STATUS_ACTIVE})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, s := range list.Sessions {
		if s.Session.ConversationId == conv {
			listed[s.Session.Tool] = s.Session.Id
		}
	}
	if listed["bank.open_dispute"] != dispute.Session.Id || listed["travel.search_flights"] != flights.Session.Id {
		t.Errorf("ListSessions of active sessions lists both, the parked dispute too: %v", listed)
	}
	hist, err := inst.admin.GetSessionHistory(ctx, &slotdv1.GetSessionHistoryRequest{ConversationId: conv, Tool: "bank.open_dispute"})
	if err != nil || hist.Session.Id != dispute.Session.Id || len(hist.Turns) != 1 || hist.Turns[0].TurnId != "t1" {
		t.Errorf("history of the parked dispute: %v %v", hist, err)
	}

	got, err := inst.client.GetSession(ctx, &slotdv1.GetSessionRequest{ConversationId: conv})
	if err != nil || got.Session.Id != flights.Session.Id {
		t.Errorf("Get without a tool gives the most recently used session: %v %v", got, err)
	}
	got, err = inst.client.GetSession(ctx, &slotdv1.GetSessionRequest{ConversationId: conv, Tool: "bank.open_dispute"})
	if err != nil || got.Session.Id != dispute.Session.Id || got.Session.Slots.Fields["card_last4"].GetStringValue() != "4417" {
		t.Errorf("Get with the dispute's tool gives the parked dispute with its slots: %v %v", got, err)
	}

	back := turn("bank.open_dispute", "t3", `{"reason": "Duplicate"}`)
	if !back.Resumed || back.Session.Id != dispute.Session.Id || back.Notice == "" {
		t.Errorf("the first turn back resumes the dispute and says so: resumed=%v notice=%q", back.Resumed, back.Notice)
	}
	if !strings.Contains(back.Notice, "4417") || !strings.Contains(back.Notice, "исходная операция") {
		t.Errorf("the notice says what is kept (the card) and what is still needed (the original operation): %q", back.Notice)
	}
	if again := turn("bank.open_dispute", "t4", `{}`); again.Resumed {
		t.Error("only the first turn back is resumed")
	}

	reset, err := inst.client.ResetSession(ctx, &slotdv1.ResetSessionRequest{ConversationId: conv})
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]bool{}
	for _, s := range reset.Sessions {
		tools[s.Tool] = true
	}
	if !tools["bank.open_dispute"] || !tools["travel.search_flights"] || len(reset.Sessions) != 2 {
		t.Errorf("Reset without a tool resets every open session: %v", tools)
	}
}
