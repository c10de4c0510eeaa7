package bench

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/session"
)

// TestDialoguesFollowTheShippedContracts plays every dialogue through the
// engine: a contract change that alters a dialogue's answers fails here,
// not in the middle of a measurement.
func TestDialoguesFollowTheShippedContracts(t *testing.T) {
	t.Parallel()
	cat, err := contract.LoadDir("../../contracts")
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
	cat, err := contract.LoadDir("../../contracts")
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
	cat, err := contract.LoadDir("../../contracts")
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
	if len(unpaced) < 1000 {
		t.Errorf("an unpaced run of no-op turns made only %d", len(unpaced))
	}
}
