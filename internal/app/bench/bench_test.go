package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/session"
)

// TestDialoguesFollowTheShippedContracts plays every dialogue through the
// engine: a contract change that alters a dialogue's answers fails here,
// not in the middle of a measurement.
func TestDialoguesFollowTheShippedContracts(t *testing.T) {
	t.Parallel()
	cat, err := contract.LoadDir("../../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	ds := append(Mix(), Long(25))
	if err := prepare(ds); err != nil {
		t.Fatal(err)
	}
	tpls, err := captureTemplates(context.Background(), cat, ds)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range ds {
		if len(tpls[i]) != len(d.Steps) {
			t.Errorf("dialogue %s: %d templates for %d steps", d.Name, len(tpls[i]), len(d.Steps))
		}
	}
	confirms, reconfirms := 0, 0
	for _, d := range Mix() {
		for _, st := range d.Steps {
			switch st.Want.String() {
			case "ACTION_CONFIRM":
				confirms++
			case "ACTION_RECONFIRM":
				reconfirms++
			}
		}
	}
	if confirms == 0 || reconfirms == 0 {
		t.Errorf("the mix has %d confirmations and %d re-confirmations, want both", confirms, reconfirms)
	}
}

func TestRebase(t *testing.T) {
	t.Parallel()
	cat, err := contract.LoadDir("../../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	ds := Mix()[:1]
	if err := prepare(ds); err != nil {
		t.Fatal(err)
	}
	tpls, err := captureTemplates(context.Background(), cat, ds)
	if err != nil {
		t.Fatal(err)
	}
	key := session.Key{Tenant: "acme", ConversationID: "live-1"}
	now := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)

	first, err := rebase(tpls[0][0], nil, key, "live-1/1", now)
	if err != nil {
		t.Fatal(err)
	}
	s := first.Session
	if s.Key != key || s.Version != 1 || s.ID == tpls[0][0].commit.Session.ID {
		t.Errorf("first turn: session %s %+v v%d, want a new id, key %+v, version 1", s.ID, s.Key, s.Version, key)
	}
	if first.Turn.ID != "live-1/1" || first.Turn.SessionID != s.ID || first.Turn.Version != 1 {
		t.Errorf("first turn: turn %s of %s v%d, want live-1/1 of %s v1", first.Turn.ID, first.Turn.SessionID, first.Turn.Version, s.ID)
	}

	// The second step on a live session already at version 7.
	active := s.Clone()
	active.Version = 7
	second, err := rebase(tpls[0][1], []*session.Session{active}, key, "live-1/2", now)
	if err != nil {
		t.Fatal(err)
	}
	if second.Session.ID != active.ID || second.Session.Version != 8 {
		t.Errorf("second turn: session %s v%d, want %s v8", second.Session.ID, second.Session.Version, active.ID)
	}
	if len(second.Changes) == 0 {
		t.Fatal("second turn: no changes")
	}
	for _, ch := range second.Changes {
		if ch.SessionID != active.ID || ch.Version != 8 || ch.TurnID != "live-1/2" {
			t.Errorf("change %s: session %s v%d turn %s, want %s v8 turn live-1/2", ch.Slot, ch.SessionID, ch.Version, ch.TurnID, active.ID)
		}
	}
	if _, err := rebase(tpls[0][1], nil, key, "live-1/2", now); err == nil {
		t.Error("rebase of a second step on a conversation without a session: no error")
	}
}

// The digression's turns are rebased onto the live session of their own
// tool, the other open one left as it is; the balance check's new session
// takes the dispute's card, as the engine did.
func TestRebaseDigression(t *testing.T) {
	t.Parallel()
	cat, err := contract.LoadDir("../../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	ds := Mix()
	i := slices.IndexFunc(ds, func(d Dialogue) bool { return d.Name == "dispute-digression" })
	if i < 0 {
		t.Fatal("the mix has no dispute-digression")
	}
	ds = ds[i : i+1]
	if err := prepare(ds); err != nil {
		t.Fatal(err)
	}
	tpls, err := captureTemplates(context.Background(), cat, ds)
	if err != nil {
		t.Fatal(err)
	}
	key := session.Key{Tenant: "acme", ConversationID: "live-2"}
	now := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	dispute := &session.Session{ID: "live-dispute", Key: key, Tool: "bank.open_dispute", Version: 4, Open: true}

	balance, err := rebase(tpls[0][1], []*session.Session{dispute}, key, "live-2/2", now)
	if err != nil {
		t.Fatal(err)
	}
	b := balance.Session
	if b.Tool != "bank.check_balance" || b.ID == dispute.ID || b.Version != 1 || b.State.Slots["card_last4"] != "4417" {
		t.Errorf("the balance check: %s %s v%d slots %v, want a new bank.check_balance v1 with the card carried", b.Tool, b.ID, b.Version, b.State.Slots)
	}
	if len(balance.Ended) != 0 {
		t.Errorf("the balance check ended %d sessions, want none: the dispute is parked", len(balance.Ended))
	}

	parked := b.Clone()
	parked.Version = 2
	back, err := rebase(tpls[0][2], []*session.Session{parked, dispute}, key, "live-2/3", now)
	if err != nil {
		t.Fatal(err)
	}
	if back.Session.ID != dispute.ID || back.Session.Version != 5 || back.Turn.SessionID != dispute.ID {
		t.Errorf("back to the dispute: session %s v%d, turn on %s; want %s v5", back.Session.ID, back.Session.Version, back.Turn.SessionID, dispute.ID)
	}
	if _, err := rebase(tpls[0][2], []*session.Session{dispute}, key, "live-2/3", now); err == nil {
		t.Error("rebase of the way back on a conversation without the balance check open: no error")
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	var hundred []time.Duration
	for i := 1; i <= 100; i++ {
		hundred = append(hundred, ms(i))
	}
	for _, c := range []struct {
		sorted []time.Duration
		p      int
		want   time.Duration
	}{
		{nil, 99, 0},
		{[]time.Duration{ms(5)}, 50, ms(5)},
		{hundred, 50, ms(50)},
		{hundred, 95, ms(95)},
		{hundred, 99, ms(99)},
		{hundred, 100, ms(100)},
		{hundred[:10], 99, ms(10)},
	} {
		if got := percentile(c.sorted, c.p); got != c.want {
			t.Errorf("p%d of %d values = %v, want %v", c.p, len(c.sorted), got, c.want)
		}
	}
}

// A paced run sends no more than its rate, however many conversations.
func TestRunIsPaced(t *testing.T) {
	t.Parallel()
	ds := Mix()
	var sent atomic.Int64
	turn := func(ctx context.Context, d *Dialogue, step int, conv, turnID string) error {
		sent.Add(1)
		return nil
	}
	start := time.Now()
	samples, errs, _ := run(context.Background(), 8, 0, 100, start.Add(500*time.Millisecond), ds, "paced", turn)
	if errs != 0 {
		t.Fatalf("%d errors", errs)
	}
	// 100 turns/s for half a second: about 50, never the thousands an
	// unpaced run of no-op turns would make.
	if n := len(samples); n < 20 || n > 60 {
		t.Errorf("%d turns in 0.5 s at 100/s", n)
	}
	unpaced, _, _ := run(context.Background(), 8, 0, 0, time.Now().Add(100*time.Millisecond), ds, "free", turn)
	if len(unpaced) < 200 { // 100/s would make 10; a loaded machine still makes hundreds
		t.Errorf("an unpaced run of no-op turns made only %d", len(unpaced))
	}
}

// The rounds alternate which side goes first, each side warms up once,
// before its first round, a checkpoint comes before every measured round,
// and a side's turns, split over its rounds, add up to what was asked.
func TestRoundsAlternate(t *testing.T) {
	t.Parallel()
	ds := Mix()
	// A stretch is a run of turns of one side (or its warmup), or a
	// checkpoint, in the order they happened.
	type stretch struct {
		what  string
		turns int
	}
	var (
		mu       sync.Mutex
		log      []stretch
		convs    = map[string]int{} // conversation → its stretch
		reused   []string
		happened = func(what string, conv string) {
			mu.Lock()
			defer mu.Unlock()
			if len(log) == 0 || log[len(log)-1].what != what {
				log = append(log, stretch{what: what})
			}
			log[len(log)-1].turns++
			if i, ok := convs[conv]; ok && i != len(log)-1 {
				reused = append(reused, conv)
			}
			convs[conv] = len(log) - 1
		}
	)
	side := func(name string) *sideRun {
		return &sideRun{name: name, prefix: "rounds-" + name, turn: func(ctx context.Context, d *Dialogue, step int, conv, turnID string) error {
			what := name
			if strings.Contains(conv, "-warm") {
				what += " warmup"
			}
			happened(what, conv)
			time.Sleep(100 * time.Microsecond)
			return nil
		}}
	}
	checkpoint := func(context.Context) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, stretch{what: "checkpoint"})
	}
	// A warmup long enough that its workers start within it on a busy machine.
	cfg := Config{Conversations: 4, Turns: 100, Rounds: 3, Warmup: 250 * time.Millisecond}
	slotd, direct := side("slotd"), side("direct")
	rounds := measure(context.Background(), cfg, ds, slotd, direct, checkpoint, io.Discard)

	var got []string
	for _, x := range log {
		if strings.HasSuffix(x.what, "warmup") || x.what == "checkpoint" {
			got = append(got, x.what)
		} else {
			got = append(got, fmt.Sprintf("%s %d", x.what, x.turns))
		}
	}
	want := []string{
		"slotd warmup", "checkpoint", "slotd 34", "direct warmup", "checkpoint", "direct 34",
		"checkpoint", "direct 33", "checkpoint", "slotd 33",
		"checkpoint", "slotd 33", "checkpoint", "direct 33",
	}
	if !slices.Equal(got, want) {
		t.Errorf("the rounds ran\n  %v\nwant\n  %v", got, want)
	}
	if len(reused) > 0 {
		t.Errorf("conversations played in more than one round: %v", reused)
	}
	if len(rounds) != 3 {
		t.Fatalf("%d round results, want 3", len(rounds))
	}
	for i, r := range rounds {
		if r.SlotdTurnsPerSec <= 0 || r.DirectTurnsPerSec <= 0 || r.Ratio() <= 0 {
			t.Errorf("round %d: slotd %v turns/s, direct %v, ratio %v; want all positive", i, r.SlotdTurnsPerSec, r.DirectTurnsPerSec, r.Ratio())
		}
	}
	for _, s := range []*sideRun{slotd, direct} {
		res := s.result(longest(ds))
		if res.Turns != 100 || res.Errors != 0 {
			t.Errorf("%s side: %d turns, %d errors; want the 100 of its three rounds, no errors", s.name, res.Turns, res.Errors)
		}
		if want := float64(res.Turns) / res.Elapsed.Seconds(); res.TurnsPerSec != want {
			t.Errorf("%s side: %v turns/s, want its turns over its rounds' time, %v", s.name, res.TurnsPerSec, want)
		}
		if res.P50 <= 0 || res.Max < res.P99 {
			t.Errorf("%s side: p50 %v, p99 %v, max %v; want the latencies of all its rounds", s.name, res.P50, res.P99, res.Max)
		}
	}
}

// A long conversation's first and last tenth need whole conversations: it
// runs in one round unless told otherwise; the mix runs in three.
func TestRoundsDefault(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg  Config
		want int
	}{
		{Config{Conversations: 1, Duration: time.Second, DatabaseURL: "postgres://x"}, 3},
		{Config{Conversations: 1, Duration: time.Second, DatabaseURL: "postgres://x", ConversationTurns: 200}, 1},
		{Config{Conversations: 1, Duration: time.Second, DatabaseURL: "postgres://x", ConversationTurns: 200, Rounds: 4}, 4},
	} {
		if err := c.cfg.check(); err != nil {
			t.Fatal(err)
		}
		if c.cfg.Rounds != c.want {
			t.Errorf("conversation turns %d: %d rounds, want %d", c.cfg.ConversationTurns, c.cfg.Rounds, c.want)
		}
	}
	few := Config{Conversations: 1, Turns: 2, Rounds: 3, DatabaseURL: "postgres://x"}
	if err := few.check(); err == nil {
		t.Error("2 turns in 3 rounds: no error (a round of 0 turns would run without end)")
	}
}

// A side's CPU per turn is the sum of its rounds' spans over its turns.
func TestCPUSpanSums(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	at := func(self, pg, busy, total time.Duration) cpuSample {
		return cpuSample{self: self, postgres: map[int]time.Duration{1: pg}, busy: busy, total: total}
	}
	var s cpuSpan
	s.add(at(10*ms, 5*ms, 100*ms, 1000*ms), at(20*ms, 9*ms, 130*ms, 1100*ms))   // 10 self, 4 pg, 30 of 100 busy
	s.add(at(50*ms, 20*ms, 500*ms, 2000*ms), at(80*ms, 26*ms, 560*ms, 2100*ms)) // 30 self, 6 pg, 60 of 100 busy
	got := s.perTurn(10)
	if got.Bench != 4*ms || got.Postgres != 1*ms || got.Slotd != 0 {
		t.Errorf("per turn: bench %v, postgres %v, slotd %v; want 4ms, 1ms and 0 (unread)", got.Bench, got.Postgres, got.Slotd)
	}
	// Ours: 40 + 10 of 90 busy, of 200.
	if want := 0.2; got.Others < want-1e-9 || got.Others > want+1e-9 {
		t.Errorf("others %v, want %v", got.Others, want)
	}
}
