package metrics

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
	"github.com/slotd/slotd/internal/session/sessiontest"
)

func want(t *testing.T, what string, got, want float64) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestTurnDone(t *testing.T) {
	t.Parallel()
	m := New([]string{"bank.open_dispute"})
	for range 3 {
		m.TurnStarted()
	}
	m.TurnDone(Turn{Tool: "bank.open_dispute", Action: "ASK", Duration: 3 * time.Millisecond, Facts: session.Facts{
		Rejected: []session.Rejection{{Slot: "amount", Normalizer: "amount"}, {Slot: "card_last4", Normalizer: "last4"}},
		Reasked:  "reason",
	}})
	m.TurnDone(Turn{Tool: "bank.open_dispute", Action: "READY", Replayed: true, Facts: session.Facts{FirstReady: true}})
	m.TurnDone(Turn{Tool: "made.up", Code: "NotFound"})

	want(t, "in flight", testutil.ToFloat64(m.inFlight), 0)
	want(t, "ASK", testutil.ToFloat64(m.actions.WithLabelValues("bank.open_dispute", "ASK")), 1)
	want(t, "READY (a replay)", testutil.ToFloat64(m.actions.WithLabelValues("bank.open_dispute", "READY")), 0)
	want(t, "replays", testutil.ToFloat64(m.replays.WithLabelValues("bank.open_dispute")), 1)
	want(t, "first READY of a replay", testutil.ToFloat64(m.ready.WithLabelValues("bank.open_dispute", "false")), 0)
	want(t, "rejected by amount", testutil.ToFloat64(m.rejected.WithLabelValues("bank.open_dispute", "amount")), 1)
	want(t, "rejected by last4", testutil.ToFloat64(m.rejected.WithLabelValues("bank.open_dispute", "last4")), 1)
	want(t, "re-asks of reason", testutil.ToFloat64(m.reasks.WithLabelValues("bank.open_dispute", "reason")), 1)
	want(t, "failures of an unknown tool", testutil.ToFloat64(m.failures.WithLabelValues(OtherTool, "NotFound")), 1)
	if n := testutil.CollectAndCount(m.turnSeconds); n != 3 {
		t.Errorf("latency series = %d, want 3 (ASK, READY, ERROR)", n)
	}
	if n := testutil.CollectAndCount(m.failures); n != 1 {
		t.Errorf("failure series = %d, want 1: a made-up tool must not add its own", n)
	}
}

func TestTurnNotReplicated(t *testing.T) {
	t.Parallel()
	m := New([]string{"t"})
	for _, turn := range []Turn{
		{Tool: "t", Code: "Unavailable", NotReplicated: true},
		{Tool: "t", Code: "Unavailable"},
		{Tool: "t", Action: "ASK"},
	} {
		m.TurnStarted()
		m.TurnDone(turn)
	}
	want(t, "turns not replicated", testutil.ToFloat64(m.unreplicated), 1)
	want(t, "unavailable turns", testutil.ToFloat64(m.failures.WithLabelValues("t", "Unavailable")), 2)
}

func TestRepairsCountFieldsOncePerTurn(t *testing.T) {
	t.Parallel()
	m := New([]string{"t"})
	m.TurnStarted()
	m.TurnDone(Turn{Tool: "t", Action: "REPAIR", Facts: session.Facts{Repaired: []string{"amount", "_root", "amount"}}})
	want(t, "repairs of amount", testutil.ToFloat64(m.repairs.WithLabelValues("t", "amount")), 1)
	want(t, "repairs of the object", testutil.ToFloat64(m.repairs.WithLabelValues("t", "_root")), 1)
}

// TestStoreCountsWrittenEnds drives the engine on a wrapped memory store:
// only sessions a written commit ended are counted, a dry run is not.
func TestStoreCountsWrittenEnds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := sessiontest.Catalog(t)
	m := New(cat.Names())
	now := sessiontest.Now
	st := m.Store(memstore.New())
	engine := session.NewEngine(st, cat, session.Config{Clock: func() time.Time { return now }})
	turns := 0
	turn := func(conv, tool string, args map[string]any) *session.Result {
		t.Helper()
		// A counter, not the time: a time's digits, read across its
		// separators, may spell a card number, which no id may hold.
		turns++
		res, err := engine.Turn(ctx, session.TurnRequest{ConversationID: conv, Tool: tool, TurnID: fmt.Sprintf("%s/%s/%d", conv, tool, turns), Arguments: args})
		if err != nil {
			t.Fatalf("Turn: %v", err)
		}
		return res
	}
	turn("a", sessiontest.Flights, map[string]any{"from": "MAD", "to": "KBP", "date": "2026-09-01"}) // READY
	turn("b", sessiontest.Flights, map[string]any{"from": "MAD"})

	// A dry run ends nothing.
	idle := session.Filter{AnyTenant: true, IdleBefore: now.Add(time.Minute)}
	if ids, err := engine.ResetStale(ctx, idle, true, now); err != nil || len(ids) != 2 {
		t.Fatalf("dry ResetStale = %v, %v; want two ids", ids, err)
	}
	want(t, "ended after a dry run", testutil.ToFloat64(m.ended.WithLabelValues(sessiontest.Flights, "reset")), 0)

	if ids, err := engine.ResetStale(ctx, idle, false, now); err != nil || len(ids) != 2 {
		t.Fatalf("ResetStale = %v, %v; want two ids", ids, err)
	}
	want(t, "ended", testutil.ToFloat64(m.ended.WithLabelValues(sessiontest.Flights, "reset")), 2)
	want(t, "fallbacks (the one never READY)", testutil.ToFloat64(m.fallbacks.WithLabelValues(sessiontest.Flights, "reset")), 1)

	// A unit of work that fails writes nothing and counts nothing.
	boom := errors.New("boom")
	turn("c", sessiontest.Flights, map[string]any{"from": "MAD"})
	_, err := st.Update(ctx, session.Lookup{ConversationID: "c"}, func(s *session.Session) (*session.Commit, error) {
		ended := s.Clone()
		ended.Status, ended.Version = session.Reset, s.Version+1
		return &session.Commit{Ended: []*session.Session{ended}}, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want %v", err, boom)
	}
	want(t, "ended after a failed update", testutil.ToFloat64(m.ended.WithLabelValues(sessiontest.Flights, "reset")), 2)

	// Past the open-session cap a turn ends the least recently used session:
	// an engine on the same store with a cap of one.
	engine = session.NewEngine(st, cat, session.Config{Clock: func() time.Time { return now }, MaxOpenSessions: 1})
	turn("c", sessiontest.Dispute, map[string]any{"card_last4": "4417"})
	want(t, "abandoned", testutil.ToFloat64(m.fallbacks.WithLabelValues(sessiontest.Flights, "abandoned")), 1)
}

// TestTurnSeriesAreTheVectorsOwn: every tool and action a turn is
// labelled with is counted in the vectors' own series, an unknown tool's
// under "other"; and observing a turn with no repairs takes no allocation
// (sorting its empty list of repairs took one). That the series are found
// without their labels' lookup is for BenchmarkTurnDone to show: the
// lookup took time, not memory.
func TestTurnSeriesAreTheVectorsOwn(t *testing.T) {
	tools := []string{"bank.open_dispute", "travel.search_flights"}
	m := New(tools)
	for _, tool := range append(tools, "made.up") {
		for i, action := range turnActions {
			for range i + 1 {
				m.TurnStarted()
				turn := Turn{Tool: tool, Action: action, Duration: time.Millisecond}
				if action == ErrorAction {
					turn = Turn{Tool: tool, Code: "Unavailable", Duration: time.Millisecond}
				}
				m.TurnDone(turn)
			}
		}
	}
	for _, tool := range append(tools, OtherTool) {
		for i, action := range turnActions {
			if action != ErrorAction {
				want(t, tool+" "+action, testutil.ToFloat64(m.actions.WithLabelValues(tool, action)), float64(i+1))
			}
		}
	}
	if n := testutil.CollectAndCount(m.turnSeconds); n != 3*len(turnActions) {
		t.Errorf("latency series = %d, want %d", n, 3*len(turnActions))
	}
	turn := Turn{Tool: "bank.open_dispute", Action: "ASK", Duration: 3 * time.Millisecond}
	if n := testing.AllocsPerRun(200, func() { m.TurnStarted(); m.TurnDone(turn) }); n != 0 {
		t.Errorf("a turn's metrics take %v allocations, want 0", n)
	}
}

// BenchmarkTurnDone is what each turn's metrics cost the turn.
func BenchmarkTurnDone(b *testing.B) {
	m := New([]string{"bank.open_dispute"})
	turn := Turn{Tool: "bank.open_dispute", Action: "ASK", Duration: 3 * time.Millisecond}
	b.ReportAllocs()
	for b.Loop() {
		m.TurnStarted()
		m.TurnDone(turn)
	}
}
