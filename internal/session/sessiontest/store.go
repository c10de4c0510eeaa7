package sessiontest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/slotd/slotd/internal/merge"
	"github.com/slotd/slotd/internal/session"
)

// storeTool is the tool of sessions the suite writes without the engine.
const storeTool = "test.store"

// storeCommit is what a simple turn writes: it starts a session when there
// is none, sets slots, and records one change per slot.
func storeCommit(active *session.Session, key session.Key, turnID string, at time.Time, slots map[string]any) *session.Commit {
	var s *session.Session
	if active == nil {
		s = &session.Session{
			ID: uuid.NewString(), Key: key, Tool: storeTool, Status: session.Active,
			State: merge.State{Slots: map[string]any{}}, CreatedAt: at, Open: true,
		}
	} else {
		s = active.Clone()
	}
	s.Version++
	s.UpdatedAt = at
	s.LastAction = "READY"
	c := &session.Commit{Session: s}
	names := make([]string, 0, len(slots))
	for k := range slots {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, slot := range names {
		old, had := s.State.Slots[slot]
		d := merge.Filled
		if had {
			d = merge.Overwritten
		}
		s.State.Slots[slot] = slots[slot]
		c.Changes = append(c.Changes, session.ChangeRecord{
			SessionID: s.ID, Version: s.Version, TurnID: turnID, Slot: slot, Old: old, New: slots[slot], Decision: d, At: at,
		})
	}
	if turnID != "" {
		c.Turn = &session.TurnRecord{
			ID: turnID, SessionID: s.ID, Version: s.Version, Action: "READY",
			Request:  fmt.Appendf(nil, `{"turn_id": %q, "arguments": %s}`, turnID, js(slots)),
			Response: fmt.Appendf(nil, `{"turn_id": %q, "session": {"id": %q, "version": %d}, "action": "READY"}`, turnID, s.ID, s.Version),
			At:       at,
		}
	}
	return c
}

// counter reads the "n" slot storeCommit's counting turns keep.
func counter(s *session.Session) int {
	if s == nil {
		return 0
	}
	v, _ := s.State.Slots["n"].(string)
	n, _ := strconv.Atoi(v)
	return n
}

func testStoreReplay(t *testing.T, h *harness) {
	key := h.key()
	first, replayed, err := h.storeTurn(key, "turn-1", func(cv session.Conversation) (*session.Commit, error) {
		active := only(cv.Open)
		if active != nil {
			t.Errorf("first turn of a new conversation got active session %s", js(active))
		}
		return storeCommit(active, key, "turn-1", Now, map[string]any{"n": "1"}), nil
	})
	if err != nil || replayed {
		t.Fatalf("first Turn: replayed %v, error %v; want false, nil", replayed, err)
	}
	called := false
	second, replayed, err := h.storeTurn(key, "turn-1", func(cv session.Conversation) (*session.Commit, error) {
		active := only(cv.Open)
		called = true
		return storeCommit(active, key, "turn-1", Now, map[string]any{"n": "2"}), nil
	})
	if err != nil {
		t.Fatalf("second Turn: unexpected error: %v", err)
	}
	if !replayed {
		t.Errorf("second Turn with the same turn_id: replayed = false, want true")
	}
	if called {
		t.Errorf("second Turn with the same turn_id called its function, want the stored response")
	}
	if !sameJSON(first, second) {
		t.Errorf("second Turn returned %s, want the stored %s", second, first)
	}
	s := h.load(h.active())
	if s.Version != 1 || counter(s) != 1 {
		t.Errorf("after a replay: version %d, n %d; want 1, 1", s.Version, counter(s))
	}
}

func testStoreTurnsSerialize(t *testing.T, h *harness) {
	const n = 20
	key := h.key()
	var inside, overlaps atomic.Int32
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			id := fmt.Sprintf("turn-%02d", i)
			_, _, errs[i] = h.storeTurn(key, id, func(cv session.Conversation) (*session.Commit, error) {
				active := only(cv.Open)
				if inside.Add(1) > 1 {
					overlaps.Add(1)
				}
				defer inside.Add(-1)
				// Read, think, write: a store without one writer per
				// conversation loses updates here.
				next := counter(active) + 1
				time.Sleep(time.Millisecond)
				return storeCommit(active, key, id, Now, map[string]any{"n": strconv.Itoa(next)}), nil
			})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("turn %d: unexpected error: %v", i, err)
		}
	}
	if o := overlaps.Load(); o > 0 {
		t.Errorf("%d turns of one conversation ran while another was running, want one writer at a time", o)
	}
	s := h.load(h.active())
	if s.Version != n || counter(s) != n {
		t.Errorf("after %d concurrent turns: version %d, n %d; want %d, %d", n, s.Version, counter(s), n, n)
	}
	hist := h.history(h.active())
	if len(hist.Turns) != n || len(hist.Changes) != n {
		t.Errorf("history holds %d turns and %d changes, want %d of each", len(hist.Turns), len(hist.Changes), n)
	}
}

func testStoreUpdatesSerialize(t *testing.T, h *harness) {
	const n = 10 // turns, and as many updates
	key := h.key()
	if _, _, err := h.storeTurn(key, "turn-start", func(cv session.Conversation) (*session.Commit, error) {
		active := only(cv.Open)
		return storeCommit(active, key, "turn-start", Now, map[string]any{"n": "1"}), nil
	}); err != nil {
		t.Fatalf("first Turn: %v", err)
	}
	errs := make([]error, 2*n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			id := fmt.Sprintf("turn-%02d", i)
			_, _, errs[i] = h.storeTurn(key, id, func(cv session.Conversation) (*session.Commit, error) {
				active := only(cv.Open)
				next := counter(active) + 1
				time.Sleep(time.Millisecond)
				return storeCommit(active, key, id, Now, map[string]any{"n": strconv.Itoa(next)}), nil
			})
		})
		wg.Go(func() {
			<-start
			errs[n+i] = h.storeUpdate(h.active(), func(s *session.Session) (*session.Commit, error) {
				next := counter(s) + 1
				time.Sleep(time.Millisecond)
				return storeCommit(s, key, "", Now, map[string]any{"n": strconv.Itoa(next)}), nil
			})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: unexpected error: %v", i, err)
		}
	}
	s := h.load(h.active())
	if want := 2*n + 1; s.Version != int64(want) || counter(s) != want {
		t.Errorf("after %d turns and %d updates: version %d, n %d; want %d, %d", n, n, s.Version, counter(s), want, want)
	}
	hist := h.history(h.active())
	if len(hist.Turns) != n+1 || len(hist.Changes) != 2*n+1 {
		t.Errorf("history holds %d turns and %d changes, want %d and %d", len(hist.Turns), len(hist.Changes), n+1, 2*n+1)
	}
}

var errBoom = errors.New("sessiontest: the turn function failed")

func testTurnFuncError(t *testing.T, h *harness) {
	key := h.key()

	// On a new conversation: no session, and the turn_id is not spent.
	_, _, err := h.storeTurn(key, "turn-1", func(cv session.Conversation) (*session.Commit, error) {
		active := only(cv.Open)
		return storeCommit(active, key, "turn-1", Now, map[string]any{"n": "1"}), errBoom
	})
	wantErr(t, "Turn whose function fails", err, errBoom)
	_, err = h.store.Session(h.ctx, h.active())
	wantErr(t, "session after a failed first turn", err, session.ErrNotFound)

	called := false
	_, replayed, err := h.storeTurn(key, "turn-1", func(cv session.Conversation) (*session.Commit, error) {
		active := only(cv.Open)
		called = true
		if active != nil {
			t.Errorf("retry of a failed first turn got active session %s, want none", js(active))
		}
		return storeCommit(active, key, "turn-1", Now, map[string]any{"n": "1"}), nil
	})
	if err != nil || replayed || !called {
		t.Fatalf("retry of a failed turn: error %v, replayed %v, function called %v; want nil, false, true", err, replayed, called)
	}
	before := h.load(h.active())

	// On a session: a function that scribbles on what it was given and
	// then fails changes nothing.
	_, _, err = h.storeTurn(key, "turn-2", func(cv session.Conversation) (*session.Commit, error) {
		active := only(cv.Open)
		c := storeCommit(active, key, "turn-2", Now.Add(time.Minute), map[string]any{"n": "2", "extra": "x"})
		active.State.Slots["n"] = "scribbled"
		active.Version = 99
		return c, errBoom
	})
	wantErr(t, "second Turn whose function fails", err, errBoom)
	after := h.load(h.active())
	if !reflect.DeepEqual(before, after) {
		t.Errorf("a failed turn changed the session:\n got %s\nwant %s", js(after), js(before))
	}
	hist := h.history(h.active())
	if len(hist.Turns) != 1 || len(hist.Changes) != 1 {
		t.Errorf("after a failed turn the history holds %d turns and %d changes, want 1 and 1", len(hist.Turns), len(hist.Changes))
	}
	// Nor was its turn_id spent.
	_, replayed, err = h.storeTurn(key, "turn-2", func(cv session.Conversation) (*session.Commit, error) {
		active := only(cv.Open)
		if counter(active) != 1 {
			t.Errorf("retry of a failed turn sees n = %d, want 1", counter(active))
		}
		return storeCommit(active, key, "turn-2", Now.Add(time.Minute), map[string]any{"n": "2"}), nil
	})
	if err != nil || replayed {
		t.Errorf("retry of a failed turn: error %v, replayed %v; want nil, false", err, replayed)
	}
}

func testUpdateFuncError(t *testing.T, h *harness) {
	key := h.key()
	if _, _, err := h.storeTurn(key, "turn-1", func(cv session.Conversation) (*session.Commit, error) {
		active := only(cv.Open)
		return storeCommit(active, key, "turn-1", Now, map[string]any{"n": "1"}), nil
	}); err != nil {
		t.Fatalf("Turn: %v", err)
	}
	before := h.load(h.active())
	err := h.storeUpdate(h.active(), func(s *session.Session) (*session.Commit, error) {
		c := storeCommit(s, key, "", Now.Add(time.Minute), map[string]any{"n": "2"})
		ended := c.Session.Clone()
		ended.Status, ended.EndedAt = session.Reset, Now.Add(time.Minute)
		c.Session, c.Ended = nil, []*session.Session{ended}
		s.State.Slots["n"] = "scribbled"
		return c, errBoom
	})
	wantErr(t, "Update whose function fails", err, errBoom)
	after := h.load(h.active())
	if !reflect.DeepEqual(before, after) {
		t.Errorf("a failed update changed the session:\n got %s\nwant %s", js(after), js(before))
	}
	if n := len(h.history(h.active()).Changes); n != 1 {
		t.Errorf("after a failed update the history holds %d changes, want 1", n)
	}
}

func testStoreRoundTrip(t *testing.T, h *harness) {
	key := h.key()
	at := Now.Add(90*time.Second + 123456*time.Microsecond)
	s := &session.Session{
		ID: uuid.NewString(), Key: key, Tool: Dispute, Status: session.Active, Version: 1,
		State: merge.State{
			Slots:   map[string]any{"card_last4": "4417", "amount": "1200.00"},
			Pending: map[string]any{"amount": "1340.00"},
		},
		LastAction: "RECONFIRM", ApprovedKey: "sd_0123456789abcdef", Locale: "ru-RU", TimeZone: "Europe/Moscow",
		Held:      map[string]any{"amount": "1 340 ₽", "card_last4": nil},
		CreatedAt: Now, UpdatedAt: at, LastUse: at.Add(-time.Second), PreviousUse: Now.Add(30*time.Second + 987*time.Microsecond),
		Marks: session.Marks{Ready: true, Flawed: true, Asked: "amount"},
		Open:  true,
	}
	turn := &session.TurnRecord{
		ID: "turn-1", SessionID: s.ID, Version: 1, Action: "RECONFIRM",
		Request:  []byte(`{"turn_id": "turn-1", "arguments": {"amount": 1340, "note": "<b>&</b>"}}`),
		Response: []byte(`{"action": "RECONFIRM", "turn_id": "turn-1", "session": {"slots": {"amount": "1200.00"}}}`),
		At:       at,
	}
	changes := []session.ChangeRecord{
		{SessionID: s.ID, Version: 1, TurnID: "turn-1", Slot: "card_last4", New: "4417", Decision: merge.Filled, At: at},
		{SessionID: s.ID, Version: 1, TurnID: "turn-1", Slot: "amount", New: "1200.00", Decision: merge.Filled, At: at},
		{SessionID: s.ID, Version: 1, TurnID: "turn-1", Slot: "amount", Old: "1200.00", New: "1340.00", Decision: merge.Pending, At: at},
	}
	resp, replayed, err := h.storeTurn(key, "turn-1", func(session.Conversation) (*session.Commit, error) {
		return &session.Commit{Session: s.Clone(), Turn: turn, Changes: changes}, nil
	})
	if err != nil || replayed {
		t.Fatalf("Turn: replayed %v, error %v; want false, nil", replayed, err)
	}
	if !sameJSON(resp, turn.Response) {
		t.Errorf("Turn returned %s, want the commit's response %s", resp, turn.Response)
	}

	for what, l := range map[string]session.Lookup{
		"by conversation":        h.active(),
		"by tool":                {Tenant: key.Tenant, ConversationID: key.ConversationID, Tool: Dispute},
		"by id":                  h.byID(s.ID),
		"by id and conversation": {Tenant: key.Tenant, ConversationID: key.ConversationID, SessionID: s.ID},
		"latest":                 {Tenant: key.Tenant, ConversationID: key.ConversationID, Latest: true},
	} {
		got := h.load(l)
		wantSession(t, what, got, s)
	}

	hist := h.history(h.byID(s.ID))
	if len(hist.Turns) != 1 {
		t.Fatalf("history holds %d turns, want 1", len(hist.Turns))
	}
	tr := hist.Turns[0]
	if tr.ID != turn.ID || tr.SessionID != turn.SessionID || tr.Version != turn.Version || tr.Action != turn.Action || !tr.At.Equal(turn.At) {
		t.Errorf("stored turn %s %s v%d %s at %v, want %s %s v%d %s at %v",
			tr.ID, tr.SessionID, tr.Version, tr.Action, tr.At, turn.ID, turn.SessionID, turn.Version, turn.Action, turn.At)
	}
	if !sameJSON(tr.Request, turn.Request) || !sameJSON(tr.Response, turn.Response) {
		t.Errorf("stored turn request %s response %s, want %s and %s", tr.Request, tr.Response, turn.Request, turn.Response)
	}
	if len(hist.Changes) != len(changes) {
		t.Fatalf("history holds %d changes, want %d", len(hist.Changes), len(changes))
	}
	for i, ch := range hist.Changes {
		w := changes[i]
		if ch.SessionID != w.SessionID || ch.Version != w.Version || ch.TurnID != w.TurnID || ch.Slot != w.Slot ||
			!reflect.DeepEqual(ch.Old, w.Old) || !reflect.DeepEqual(ch.New, w.New) || ch.Decision != w.Decision || !ch.At.Equal(w.At) {
			t.Errorf("change %d = %s, want %s (in the order written)", i, js(ch), js(w))
		}
	}

	// Ending the session leaves the conversation with no active one.
	ended := s.Clone()
	ended.Version, ended.Status = 2, session.Completed
	ended.EndedAt, ended.UpdatedAt = at.Add(time.Minute), at.Add(time.Minute)
	if err := h.storeUpdate(h.active(), func(cur *session.Session) (*session.Commit, error) {
		wantSession(t, "Update's view", cur, s)
		return &session.Commit{Session: ended.Clone()}, nil
	}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	_, err = h.store.Session(h.ctx, h.active())
	wantErr(t, "active session after it completed", err, session.ErrNotFound)
	wantSession(t, "completed session", h.load(h.byID(s.ID)), ended)
}

// wantSession compares every field of a stored session with what was
// written, times by instant: a field a store forgets to keep shows here
// even if it was added to Session after this test was written.
func wantSession(t *testing.T, what string, got, want *session.Session) {
	t.Helper()
	g, w := *got, *want
	for _, tm := range []*time.Time{&g.CreatedAt, &g.UpdatedAt, &g.EndedAt, &w.CreatedAt, &w.UpdatedAt, &w.EndedAt} {
		*tm = tm.UTC()
	}
	if js(g) != js(w) {
		t.Errorf("%s: session\n got %s\nwant %s", what, js(g), js(w))
	}
}

// testStoreLeft: a turn reads, beside the open sessions, the last use of a
// session that has left the open set, and of no other conversation's.
func testStoreLeft(t *testing.T, h *harness) {
	key := h.key()
	mk := func(tool string, open bool, at time.Time) *session.Session {
		return &session.Session{ID: uuid.NewString(), Key: key, Tool: tool, Status: session.Active, Version: 1,
			State: merge.State{Slots: map[string]any{}}, Locale: "ru", TimeZone: "Europe/Moscow",
			CreatedAt: at, UpdatedAt: at, Open: open}
	}
	var seen []session.Conversation
	turn := func(k session.Key, id string, s *session.Session) {
		t.Helper()
		if _, _, err := h.storeTurn(k, id, func(cv session.Conversation) (*session.Commit, error) {
			seen = append(seen, cv)
			return &session.Commit{Session: s}, nil
		}); err != nil {
			t.Fatalf("Turn %s: %v", id, err)
		}
	}
	done := func(s *session.Session, at time.Time) *session.Session {
		s = s.Clone()
		s.Status, s.Version, s.Open, s.UpdatedAt, s.EndedAt = session.Completed, s.Version+1, false, at, at
		// Its turns were before the completion: the last one a while ago.
		s.LastUse, s.PreviousUse = at.Add(-30*time.Second), at.Add(-50*time.Second)
		return s
	}
	dispute := mk(Dispute, true, Now)
	turn(key, "t1", dispute)
	flights := mk(Flights, true, Now.Add(time.Minute))
	turn(key, "t2", flights)
	turn(key, "t3", done(flights, Now.Add(2*time.Minute)))
	older := mk("bank.check_balance", true, Now.Add(3*time.Minute))
	turn(key, "t4", older)
	turn(key, "t5", done(older, Now.Add(4*time.Minute)))
	// Another conversation's finished session is not this one's.
	other := session.Key{Tenant: key.Tenant, ConversationID: key.ConversationID + "-other"}
	late := mk(Flights, false, Now.Add(time.Hour))
	late.Key, late.Status = other, session.Completed
	turn(other, "t1", late)
	turn(key, "t6", nil)

	if len(seen) != 7 {
		t.Fatalf("%d turns seen, want 7", len(seen))
	}
	if l := seen[0].Left; l.Tool != "" || !l.At.IsZero() {
		t.Errorf("the first turn read %+v as left, want nothing", l)
	}
	// A session's last turns are its use, not the recording of its backend
	// call that ended it.
	if l, at := seen[3].Left, Now.Add(2*time.Minute); l.Tool != Flights || !l.At.Equal(at.Add(-30*time.Second)) || !l.Previous.Equal(at.Add(-50*time.Second)) {
		t.Errorf("after the flight search finished, left = %+v, want %s used at %s and before at %s", l, Flights, at.Add(-30*time.Second), at.Add(-50*time.Second))
	}
	if l, at := seen[6].Left, Now.Add(4*time.Minute); l.Tool != "bank.check_balance" || !l.At.Equal(at.Add(-30*time.Second)) {
		t.Errorf("left = %+v, want the balance check used at %s (the latest, of this conversation)", l, at.Add(-30*time.Second))
	}
	if open := seen[6].Open; len(open) != 1 || open[0].ID != dispute.ID {
		t.Errorf("open = %d sessions, want only the dispute", len(open))
	}
	// Sessions one turn ends together leave at the same instant: the last
	// to leave is the one of the greatest id, in every store.
	var together []*session.Session
	for i := range 8 {
		s := mk(fmt.Sprintf("tool.%d", i), true, Now.Add(5*time.Minute))
		turn(key, fmt.Sprintf("t%d", 7+i), s)
		together = append(together, done(s, Now.Add(6*time.Minute)))
	}
	if _, _, err := h.storeTurn(key, "t15", func(session.Conversation) (*session.Commit, error) {
		return &session.Commit{Session: together[0], Ended: together[1:]}, nil
	}); err != nil {
		t.Fatalf("Turn t15: %v", err)
	}
	turn(key, "t16", nil)
	last := slices.MaxFunc(together, func(a, b *session.Session) int { return strings.Compare(a.ID, b.ID) })
	if l := seen[len(seen)-1].Left; l.Tool != last.Tool {
		t.Errorf("after %d sessions left at once, left = %s, want %s (the greatest id)", len(together), l.Tool, last.Tool)
	}
}
