package session

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
)

// The engine's behaviour, tested against the planner: turns are planned
// one after another on a conversation kept in memory, each commit applied
// as a store applies it. No store, no database.

const (
	dispute = "bank.open_dispute"
	flights = "travel.search_flights"
)

// seedNow is the dispute example's clock: the day after the disputed payment.
var seedNow = time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)

// testCatalog is the shipped contracts and two small tools that share slot
// names with the dispute (one refuses carry-over).
func testCatalog(t testing.TB) *contract.Catalog {
	t.Helper()
	shipped, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	return catalogWith(t, shipped.All(), `"type": "object", "properties": {
			"card_last4": {"type": "string", "pattern": "^[0-9]{4}$", "x-slotd": {"normalize": ["last4"]}},
			"amount": {"type": "string"},
			"note": {"type": "string", "x-slotd": {"sensitive": true}}},
			"required": ["card_last4", "note"]`,
		map[string]string{"test.carry": "", "test.no_carry": `, "carry_over": false`})
}

// catalogWith is a catalog of cs and of one tool per name in tools, each
// with the schema's members and x-slotd holding its name, English as its
// default locale, and the name's extra members.
func catalogWith(t testing.TB, cs []*contract.Contract, schema string, tools map[string]string) *contract.Catalog {
	t.Helper()
	for name, extra := range tools {
		c, err := contract.Parse(name+".json", []byte(`{`+schema+`,
			"x-slotd": {"name": "`+name+`", "default_locale": "en"`+extra+`}}`))
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	cat, err := contract.NewCatalog(cs...)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// convo is one conversation planned turn by turn.
type convo struct {
	t   *testing.T
	cat *contract.Catalog
	cfg Config
	id  string
	now time.Time
	n   int
	// current is the session of the last turn; sessions every session by
	// id, as last written; records and turns the history.
	current  *Session
	sessions map[string]*Session
	records  []ChangeRecord
	turns    []TurnRecord
}

func newConvo(t *testing.T) *convo {
	return &convo{t: t, cat: testCatalog(t), cfg: Config{MaxAttempts: DefaultMaxAttempts}, id: "chat-42",
		now: seedNow, sessions: map[string]*Session{}}
}

// request is the next turn's request, validated as the engine does.
func (c *convo) request(tool string, args map[string]any) TurnRequest {
	c.n++
	return TurnRequest{Tenant: "bank", ConversationID: c.id, Tool: tool, TurnID: fmt.Sprintf("%s/%d", c.id, c.n),
		Arguments: args, Locale: "ru", Now: c.now}
}

// plan plans req on the conversation and applies its commit.
func (c *convo) plan(req TurnRequest) (*Result, error) {
	c.t.Helper()
	if err := req.validate(); err != nil {
		return nil, err
	}
	open := c.open()
	before := js(open)
	zones := map[string]*time.Location{}
	for _, s := range append(open, &Session{TimeZone: req.TimeZone}) {
		if loc, err := time.LoadLocation(s.TimeZone); err == nil {
			zones[s.TimeZone] = loc
		}
	}
	res, commit, err := plan(planInput{contract: c.cat.Get(req.Tool), contracts: c.cat, config: c.cfg, req: req,
		open: open, left: c.left(), zones: zones, newID: constID(fmt.Sprintf("0190a1b2-c3d4-7e5f-8a9b-%012d", c.n))})
	if js(open) != before {
		c.t.Fatalf("planning %s changed the sessions it was given", req.TurnID)
	}
	if err != nil {
		return nil, err
	}
	if commit.Result != res {
		c.t.Fatalf("the commit of %s does not carry its result", req.TurnID)
	}
	for _, s := range commit.Ended {
		c.sessions[s.ID] = s
	}
	if s := commit.Session; s != nil {
		c.sessions[s.ID] = s
		c.current = s
	}
	c.records = append(c.records, commit.Changes...)
	c.turns = append(c.turns, *commit.Turn)
	return res, nil
}

// open are copies of the conversation's open sessions, as a store reads
// them.
func (c *convo) open() []*Session {
	var out []*Session
	for _, s := range c.sessions {
		if s.Open {
			out = append(out, s.Clone())
		}
	}
	slices.SortFunc(out, func(a, b *Session) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// left is the last use of the session that left the open set last (by
// updated_at, when it ended; of the greatest id among those that left
// together), as the stores read it.
func (c *convo) left() Use {
	var last *Session
	for _, s := range c.sessions {
		if !s.Open && (last == nil || s.WrittenAfter(last)) {
			last = s
		}
	}
	if last == nil {
		return Use{}
	}
	return last.Use()
}

// send plans a turn of tool with args and fails the test on an error.
func (c *convo) send(tool string, args map[string]any) *Result {
	c.t.Helper()
	res, err := c.plan(c.request(tool, args))
	if err != nil {
		c.t.Fatalf("turn %d (%s %v): %v", c.n, tool, args, err)
	}
	return res
}

// answer plans the user's yes or no.
func (c *convo) answer(tool string, accept bool) *Result {
	c.t.Helper()
	req := c.request(tool, nil)
	req.Confirmation = &accept
	res, err := c.plan(req)
	if err != nil {
		c.t.Fatalf("answer %v: %v", accept, err)
	}
	return res
}

// endOutside ends the current session outside a turn (the janitor's expiry,
// an operator's reset), as a store records it: the conversation keeps
// pointing at it.
func (c *convo) endOutside(status Status) {
	commit := endCommit(c.cat, c.current, status, c.now)
	c.current = commit.Ended[0]
	c.sessions[c.current.ID] = c.current
	c.records = append(c.records, commit.Changes...)
}

func (c *convo) want(res *Result, action clarify.Action) {
	c.t.Helper()
	if res.Action != action {
		c.t.Fatalf("turn %d: %s (question %q, problem %s), want %s", c.n, res.Action, questionText(res), js(res.Problem), action)
	}
}

func questionText(res *Result) string {
	if res.Question == nil {
		return ""
	}
	return res.Question.Text
}

func decisions(changes []Change) []string {
	out := []string{}
	for _, ch := range changes {
		out = append(out, ch.Slot+":"+string(ch.Decision))
	}
	return out
}

// recorded are the history's changes of a session's version.
func (c *convo) recorded(sessionID string, version int64) []string {
	out := []string{}
	for _, r := range c.records {
		if r.SessionID == sessionID && r.Version == version {
			out = append(out, r.Slot+":"+string(r.Decision))
		}
	}
	return out
}

func wantList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	return string(b)
}

// The dispute example, as a model sends it: dirty arguments, a conditional
// slot asked by meaning, approval, READY with a stable key.
func TestPlanTheSeedDispute(t *testing.T) {
	t.Parallel()
	c := newConvo(t)
	res := c.send(dispute, map[string]any{"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽"})
	c.want(res, clarify.Ask)
	if res.Question.Slot != "reason" || !strings.Contains(res.Question.Text, "1200.50 ₽") || len(res.Question.Allowed) != 4 {
		t.Errorf("first question: %s, want the reason by meaning with its four values", js(res.Question))
	}
	wantList(t, "first turn", decisions(res.Changes), []string{"card_last4:FILLED", "operation_date:FILLED", "amount:FILLED"})
	if js(res.Session.Slots) != `{"amount":"1200.50","card_last4":"4417","operation_date":"2026-08-22"}` {
		t.Errorf("slots %s", js(res.Session.Slots))
	}
	res = c.send(dispute, map[string]any{"reason": "Duplicate"})
	c.want(res, clarify.Ask)
	if res.Question.Slot != "original_operation_id" || !strings.Contains(res.Question.Text, "•• 4417") {
		t.Errorf("second question: %s, want the original operation, by meaning", js(res.Question))
	}
	res = c.send(dispute, map[string]any{"original_operation_id": "op-20260822-0117", "reason": nil, "amount": ""})
	c.want(res, clarify.Confirm)
	wantList(t, "third turn", decisions(res.Changes), []string{"amount:IGNORED_NULL", "reason:IGNORED_NULL", "original_operation_id:FILLED"})
	if res.Arguments["original_operation_id"] != clarify.Masked || res.Arguments["amount"] != "1200.50" || res.IdempotencyKey != "" {
		t.Errorf("CONFIRM arguments %s key %q: want the sensitive id masked, the rest as they are, no key", js(res.Arguments), res.IdempotencyKey)
	}
	ready := c.answer(dispute, true)
	c.want(ready, clarify.Ready)
	if ready.Arguments["original_operation_id"] != "op-20260822-0117" || !strings.HasPrefix(ready.IdempotencyKey, "sd_") {
		t.Errorf("READY arguments %s key %q: want the values as they are and a key", js(ready.Arguments), ready.IdempotencyKey)
	}
	again := c.send(dispute, map[string]any{"reason": "duplicate", "card_last4": "4417"})
	c.want(again, clarify.Ready)
	if again.IdempotencyKey != ready.IdempotencyKey {
		t.Errorf("READY again: key %q, want the same %q", again.IdempotencyKey, ready.IdempotencyKey)
	}
	if len(c.sessions) != 1 || c.current.Version != 5 {
		t.Errorf("%d sessions, version %d; want one session at version 5", len(c.sessions), c.current.Version)
	}
}

// A changed irreversible value waits for the user, shown old and new, and
// the answer applies or drops it.
func TestPlanReconfirmsAChangedIrreversibleValue(t *testing.T) {
	t.Parallel()
	for _, accept := range []bool{true, false} {
		c := newConvo(t)
		c.want(c.send(dispute, map[string]any{"card_last4": "карта •• 4417", "operation_date": "вчера", "amount": "1 200 ₽", "reason": "не та сумма"}), clarify.Confirm)
		res := c.send(dispute, map[string]any{"amount": float64(1340)})
		c.want(res, clarify.Reconfirm)
		wantList(t, "changed amount", decisions(res.Changes), []string{"amount:PENDING"})
		if q := res.Question; q.Slot != "amount" || q.Old != "1200.00" || q.New != "1340.00" || res.Session.Slots["amount"] != "1200.00" {
			t.Errorf("reconfirm %s, slots %s: want 1200.00 → 1340.00 with the old one kept", js(q), js(res.Session.Slots))
		}
		if js(res.Session.Pending) != `[{"slot":"amount","old":"1200.00","new":"1340.00","decision":"PENDING"}]` {
			t.Errorf("view pending %s", js(res.Session.Pending))
		}
		ans := c.answer(dispute, accept)
		decision, amount := "amount:DISCARDED", "1200.00"
		if accept {
			decision, amount = "amount:CONFIRMED", "1340.00"
		}
		c.want(ans, clarify.Confirm)
		wantList(t, "the answer", decisions(ans.Changes), []string{decision})
		if ans.Session.Slots["amount"] != amount || len(ans.Session.Pending) != 0 {
			t.Errorf("after %v: slots %s pending %s", accept, js(ans.Session.Slots), js(ans.Session.Pending))
		}
		wantList(t, "history of the answer", c.recorded(c.current.ID, 3), []string{decision})
	}
}

// Nulls, empty strings, blanks and invisible characters never erase a slot.
func TestPlanEmptyNeverErases(t *testing.T) {
	t.Parallel()
	slots := []string{"card_last4", "operation_date", "amount", "reason", "original_operation_id"}
	for _, empty := range []any{nil, "", "   ", "\n\t", "\u00a0", "\u200b"} {
		c := newConvo(t)
		first := c.send(dispute, map[string]any{"card_last4": "карта •• 4417", "operation_date": "вчера", "amount": "1 200 ₽", "reason": "не та сумма"})
		args := map[string]any{}
		var ignored []string
		for _, s := range slots {
			args[s] = empty
			ignored = append(ignored, s+":IGNORED_NULL")
		}
		res := c.send(dispute, args)
		wantList(t, fmt.Sprintf("%q", empty), decisions(res.Changes), ignored)
		if js(res.Session.Slots) != js(first.Session.Slots) {
			t.Errorf("%q: slots %s, want %s", empty, js(res.Session.Slots), js(first.Session.Slots))
		}
	}
}

// A refused value is not stored; the problem points at every one of them.
func TestPlanRefusedValuesAreNotStored(t *testing.T) {
	t.Parallel()
	c := newConvo(t)
	c.send(dispute, map[string]any{"card_last4": "4417", "amount": "1 200 ₽"})
	res := c.send(dispute, map[string]any{"card_last4": "12", "amount": "много", "reason": "потому что", "merchant": "ООО Ромашка"})
	wantList(t, "changes", decisions(res.Changes), []string{"card_last4:REJECTED", "amount:REJECTED", "reason:REJECTED", "merchant:REJECTED"})
	var pointers []string
	for _, fe := range res.Problem.Errors {
		pointers = append(pointers, fe.Pointer)
	}
	slices.Sort(pointers)
	wantList(t, "problem pointers", pointers, []string{"/amount", "/card_last4", "/merchant", "/reason"})
	if js(c.current.State.Slots) != `{"amount":"1200.00","card_last4":"4417"}` {
		t.Errorf("stored slots %s", js(c.current.State.Slots))
	}
	if res.Question.Slot != "card_last4" {
		t.Errorf("asked %s, want the first refused slot in contract order", res.Question.Slot)
	}
	// The problem speaks the turn's language throughout, its glue too.
	if want := "/card_last4: найдено цифр: 2, нужно 4; ожидается: последние четыре цифры карты или счёта, например 4417; 4 цифры"; res.Problem.Title != "Часть аргументов не принята" || res.Problem.Detail != want {
		t.Errorf("a ru turn's problem: %q: %q, want %q", res.Problem.Title, res.Problem.Detail, want)
	}
}

// Another tool parks the session instead of ending it, and opens its own,
// carrying over the slots whose names and values fit (unless it refuses
// carry-over); coming back continues the parked session and says so.
func TestPlanDigression(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tool    string
		carried []string
	}{{"test.carry", []string{"card_last4:CARRIED", "amount:CARRIED"}}, {"test.no_carry", []string{}}, {flights, []string{}}} {
		c := newConvo(t)
		first := c.send(dispute, map[string]any{"card_last4": "4417", "amount": "1 200 ₽"})
		c.now = c.now.Add(2 * time.Minute)
		res := c.send(tc.tool, map[string]any{})
		if res.Session.ID == first.Session.ID || res.Session.Tool != tc.tool || res.Session.Version != 1 || res.Previous != nil {
			t.Fatalf("%s: %s v%d previous %v, want a new session of its own and nothing ended", tc.tool, res.Session.Tool, res.Session.Version, res.Previous)
		}
		wantList(t, tc.tool+" carried", decisions(res.Changes), tc.carried)
		if len(res.OpenSessions) != 1 || res.OpenSessions[0].SessionID != first.Session.ID || res.OpenSessions[0].LastAction != clarify.Ask ||
			len(res.OpenSessions[0].Missing) != 2 {
			t.Errorf("%s: open sessions %s, want the parked dispute missing two slots", tc.tool, js(res.OpenSessions))
		}
		if d := c.sessions[first.Session.ID]; d.Status != Active || !d.Open || d.Version != 1 {
			t.Errorf("%s: the dispute %s, want it parked untouched", tc.tool, js(d))
		}
		c.now = c.now.Add(3 * time.Minute)
		back := c.send(dispute, map[string]any{"reason": "fraud"})
		if back.Session.ID != first.Session.ID || !back.Resumed || back.Session.Version != 2 {
			t.Errorf("%s: back on the dispute: %s v%d resumed %v", tc.tool, back.Session.ID, back.Session.Version, back.Resumed)
		}
		for _, want := range []string{"спор по операции", "карта: 4417", "сумма: 1200.00", "дата операции"} {
			if !strings.Contains(back.Notice, want) {
				t.Errorf("%s: the notice %q lacks %q", tc.tool, back.Notice, want)
			}
		}
		if next := c.send(dispute, map[string]any{"operation_date": "вчера"}); next.Resumed || next.Notice != "" {
			t.Errorf("%s: said twice: %q", tc.tool, next.Notice)
		}
	}
}

// A digression that finished (its backend call completed, so its session
// left the open set) is a digression all the same: coming back says so. A
// session that finished before the dispute's last turn is not.
func TestPlanResumedAfterAFinishedDigression(t *testing.T) {
	t.Parallel()
	c := newConvo(t)
	c.send(flights, map[string]any{"from": "MAD", "to": "KBP"})
	finish := func(tool string) {
		for _, s := range c.sessions {
			if s.Tool == tool && s.Open {
				s.Status, s.Open, s.UpdatedAt, s.EndedAt = Completed, false, c.now, c.now
			}
		}
	}
	c.now = c.now.Add(time.Minute)
	finish(flights)
	c.now = c.now.Add(time.Minute)
	first := c.send(dispute, map[string]any{"card_last4": "4417", "amount": "1 200 ₽"})
	c.now = c.now.Add(time.Minute)
	if next := c.send(dispute, map[string]any{"reason": "fraud"}); next.Resumed {
		t.Errorf("a flight search finished before the dispute began: resumed, want not")
	}
	c.now = c.now.Add(2 * time.Minute)
	c.send(flights, map[string]any{"from": "MAD", "to": "KBP"})
	c.now = c.now.Add(20 * time.Second)
	finish(flights)
	c.now = c.now.Add(time.Minute)
	back := c.send(dispute, map[string]any{"operation_date": "вчера"})
	if back.Session.ID != first.Session.ID || !back.Resumed || !strings.Contains(back.Notice, "карта: 4417") {
		t.Errorf("back on the dispute after a finished flight search: %s resumed %v notice %q, want the dispute, said so",
			back.Session.ID, back.Resumed, back.Notice)
	}
	if len(back.OpenSessions) != 0 {
		t.Errorf("open sessions %s, want none: the flight search finished", js(back.OpenSessions))
	}
}

// Recording a backend call is no use of its tool: calls of one message, one
// of them completed (or failed, and kept open) seconds later, are not a
// digression when the next message goes on with the other.
func TestPlanCompletionIsNoUse(t *testing.T) {
	t.Parallel()
	for _, completed := range []bool{true, false} {
		c := newConvo(t)
		c.send(dispute, map[string]any{"card_last4": "4417"})
		c.now = c.now.Add(40 * time.Millisecond)
		c.send(flights, map[string]any{"from": "MAD", "to": "KBP"})
		c.now = c.now.Add(3 * time.Second)
		for _, s := range c.sessions {
			if s.Tool == flights {
				// What CompleteSession writes: the session moves, its turns do not.
				s.UpdatedAt = c.now
				if completed {
					s.Status, s.Open, s.EndedAt = Completed, false, c.now
				}
			}
		}
		c.now = c.now.Add(time.Minute)
		if next := c.send(dispute, map[string]any{"amount": "1 200 ₽"}); next.Resumed {
			t.Errorf("completed %v: the dispute's next message says resumed: %q", completed, next.Notice)
		}
	}
}

// A model message that goes back to a parked tool and, in a parallel call,
// uses again the tool of the digression: whichever call lands first, the
// one back on the parked session says so, and the other does not.
func TestPlanResumedInAParallelMessage(t *testing.T) {
	t.Parallel()
	for _, digressionFirst := range []bool{true, false} {
		c := newConvo(t)
		first := c.send(dispute, map[string]any{"card_last4": "4417", "amount": "1 200 ₽"})
		c.now = c.now.Add(time.Minute)
		c.send(flights, map[string]any{"from": "MAD"})
		c.now = c.now.Add(time.Minute)
		var back, again *Result
		if digressionFirst {
			again = c.send(flights, map[string]any{"to": "KBP"})
			c.now = c.now.Add(40 * time.Millisecond)
			back = c.send(dispute, map[string]any{"reason": "fraud"})
		} else {
			back = c.send(dispute, map[string]any{"reason": "fraud"})
			c.now = c.now.Add(40 * time.Millisecond)
			again = c.send(flights, map[string]any{"to": "KBP"})
		}
		if back.Session.ID != first.Session.ID || !back.Resumed || back.Notice == "" {
			t.Errorf("flight search first %v: back on the dispute resumed %v notice %q, want it said", digressionFirst, back.Resumed, back.Notice)
		}
		if again.Resumed {
			t.Errorf("flight search first %v: the flight search, used last a minute ago, says resumed", digressionFirst)
		}
	}
}

// Parallel tool calls of one model message each work on their own session;
// they do not count as coming back to each other.
func TestPlanParallelCalls(t *testing.T) {
	t.Parallel()
	c := newConvo(t)
	for i := 0; i < 3; i++ {
		c.now = c.now.Add(time.Minute)
		a := c.send(dispute, map[string]any{"card_last4": "4417"})
		c.now = c.now.Add(40 * time.Millisecond)
		b := c.send(flights, map[string]any{"from": "MAD"})
		if a.Resumed || b.Resumed || a.Session.Tool != dispute || b.Session.Tool != flights {
			t.Errorf("message %d: resumed %v/%v on %s/%s, want neither", i, a.Resumed, b.Resumed, a.Session.Tool, b.Session.Tool)
		}
	}
	if len(c.open()) != 2 {
		t.Errorf("%d open sessions, want 2", len(c.open()))
	}
}

// Past the cap the least recently used open session ends, said so; an
// exclusive tool ends every other.
func TestPlanOpenSessionsAreCapped(t *testing.T) {
	t.Parallel()
	c := newConvo(t)
	c.cfg.MaxOpenSessions = 2
	d := c.send(dispute, map[string]any{"card_last4": "4417"})
	c.now = c.now.Add(time.Minute)
	c.send(flights, map[string]any{"from": "MAD"})
	c.now = c.now.Add(time.Minute)
	res := c.send("test.carry", map[string]any{"note": "x"})
	if res.Previous == nil || res.Previous.ID != d.Session.ID || res.Previous.Status != Abandoned || !strings.Contains(res.Notice, "спор по операции") {
		t.Errorf("past the cap: previous %s notice %q, want the dispute (least recently used) abandoned and said", js(res.Previous), res.Notice)
	}
	if len(c.open()) != 2 || c.sessions[d.Session.ID].Open {
		t.Errorf("%d open sessions, want 2 without the dispute", len(c.open()))
	}
	wantList(t, "the abandoned dispute's history", c.recorded(d.Session.ID, 2), []string{"card_last4:CLEARED"})

	x := newConvo(t)
	if b := x.cat.Get("bank.block_card"); b == nil || !b.Exclusive {
		t.Fatalf("the shipped bank.block_card is not exclusive: %v", b)
	}
	x.send(dispute, map[string]any{"card_last4": "4417"})
	x.send(flights, map[string]any{"from": "MAD"})
	block := x.send("bank.block_card", map[string]any{"card_last4": "4417"})
	if len(block.Ended) != 2 || len(x.open()) != 1 || block.Notice == "" {
		t.Errorf("an exclusive tool: ended %s, open %d, notice %q; want the other two ended and said", js(block.Ended), len(x.open()), block.Notice)
	}
	if again := x.send(dispute, map[string]any{"amount": "1"}); again.Session.Version != 1 || len(again.OpenSessions) != 1 {
		t.Errorf("the dispute after an exclusive tool: %s, want a new session with the block parked", js(again.Session))
	}
}

// A stale session asks whether to go on; its arguments wait for the answer.
func TestPlanStaleSessionAsksToResume(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		answer *bool
		want   clarify.Action
	}{{"yes", ptr(true), clarify.Confirm}, {"no", ptr(false), clarify.Ask}, {"no answer", nil, clarify.Resume}} {
		c := newConvo(t)
		first := c.send(dispute, map[string]any{"card_last4": "•• 4417", "operation_date": "вчера"})
		c.now = c.now.Add(31 * time.Minute)
		res := c.send(dispute, map[string]any{"reason": "fraud", "note": "4111 1111 1111 1111"})
		c.want(res, clarify.Resume)
		if !strings.Contains(res.Question.Text, "4417") || c.current.Held["reason"] != "fraud" || c.current.State.Slots["reason"] != nil {
			t.Errorf("%s: RESUME %q, held %v, slots %v: want the summary and the argument held", tc.name, res.Question.Text, c.current.Held, c.current.State.Slots)
		}
		if _, held := c.current.Held["note"]; held || res.Problem == nil || decisions(res.Changes)[0] != "note:REJECTED" {
			t.Errorf("%s: a card number was held (%v) or not refused (%s)", tc.name, c.current.Held, js(res.Problem))
		}
		req := c.request(dispute, map[string]any{"amount": "1 340 ₽"})
		req.Confirmation = tc.answer
		ans, err := c.plan(req)
		if err != nil {
			t.Fatal(err)
		}
		c.want(ans, tc.want)
		switch {
		case tc.answer == nil:
			if c.current.Held["amount"] != "1 340 ₽" || c.current.Held["reason"] != "fraud" {
				t.Errorf("asked again: held %v, want both turns' arguments", c.current.Held)
			}
		case *tc.answer:
			if ans.Session.ID != first.Session.ID || ans.Session.Slots["reason"] != "fraud" || ans.Session.Slots["amount"] != "1340.00" {
				t.Errorf("yes: %s, want the same session with the held and new arguments", js(ans.Session))
			}
		default:
			if ans.Session.ID == first.Session.ID || ans.Previous.Status != Reset || ans.Notice == "" || ans.Session.Slots["reason"] != "fraud" {
				t.Errorf("no: %s previous %s notice %q: want a fresh session with the held arguments", js(ans.Session), js(ans.Previous), ans.Notice)
			}
		}
	}
}

// Held arguments stay within one request's bounds.
func TestPlanHeldArgumentsAreBounded(t *testing.T) {
	t.Parallel()
	c := newConvo(t)
	c.send(dispute, map[string]any{"card_last4": "4417"})
	var err error
	for i := 0; i < 3 && err == nil; i++ {
		c.now = c.now.Add(time.Hour)
		args := map[string]any{}
		for j := 0; j < 40; j++ {
			args[fmt.Sprintf("extra_%d_%d", i, j)] = "x"
		}
		_, err = c.plan(c.request(dispute, args))
	}
	if err == nil || !strings.Contains(err.Error(), "at most 64 arguments") {
		t.Errorf("held arguments past 64: %v, want refused", err)
	}
}

// Past its ttl a session expires and a new one starts, said so.
func TestPlanExpiry(t *testing.T) {
	t.Parallel()
	c := newConvo(t)
	first := c.send(dispute, map[string]any{"card_last4": "4417", "amount": "1 200 ₽"})
	c.now = c.now.Add(25 * time.Hour)
	res := c.send(dispute, map[string]any{"reason": "fraud"})
	if res.Session.ID == first.Session.ID || res.Previous.Status != Expired || !strings.Contains(res.Notice, "давностью") {
		t.Errorf("after the ttl: %s previous %s notice %q", res.Session.ID, js(res.Previous), res.Notice)
	}
	wantList(t, "the expired session's history", c.recorded(first.Session.ID, 2), []string{"card_last4:CLEARED", "amount:CLEARED"})
}

// A session ended outside a turn is said by the next turn, once; a
// completed one just makes way.
func TestPlanSessionEndedOutsideATurn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status Status
		notice string
	}{{Expired, "давностью"}, {Reset, "был закрыт"}, {Completed, ""}, {Cancelled, ""}} {
		c := newConvo(t)
		first := c.send(dispute, map[string]any{"card_last4": "4417"})
		c.endOutside(tc.status)
		res := c.send(dispute, map[string]any{"amount": "100"})
		if res.Session.ID == first.Session.ID || res.Session.Version != 1 {
			t.Errorf("%s: %s v%d, want a new session", tc.status, res.Session.ID, res.Session.Version)
		}
		if tc.notice == "" && (res.Previous != nil || res.Notice != "") || tc.notice != "" && (res.Previous == nil || !strings.Contains(res.Notice, tc.notice)) {
			t.Errorf("%s: previous %s notice %q, want the notice %q", tc.status, js(res.Previous), res.Notice, tc.notice)
		}
		if next := c.send(dispute, map[string]any{"reason": "fraud"}); next.Notice != "" || next.Previous != nil {
			t.Errorf("%s: said twice: %q", tc.status, next.Notice)
		}
	}
}

// The approval: yes is READY; no with nothing changed cancels; no with a
// change shows the summary again; a new summary needs a new yes.
func TestPlanApproval(t *testing.T) {
	t.Parallel()
	complete := map[string]any{"card_last4": "4417", "operation_date": "вчера", "amount": "1 200 ₽", "reason": "fraud"}
	c := newConvo(t)
	c.want(c.send(dispute, complete), clarify.Confirm)
	no := c.answer(dispute, false)
	c.want(no, clarify.Cancelled)
	if no.Session.Status != Cancelled || !no.Session.EndedAt.Equal(c.now) || len(no.Session.Missing) != 0 {
		t.Errorf("no: %s, want the session cancelled", js(no.Session))
	}

	c = newConvo(t)
	c.send(dispute, complete)
	req := c.request(dispute, map[string]any{"reason": "duplicate", "original_operation_id": "op-1"})
	no2 := false
	req.Confirmation = &no2
	changed, err := c.plan(req)
	if err != nil {
		t.Fatal(err)
	}
	c.want(changed, clarify.Confirm)
	c.want(c.answer(dispute, true), clarify.Ready)
	// A change after the approval needs a new one.
	c.want(c.send(dispute, map[string]any{"operation_date": "2026-08-20"}), clarify.Confirm)
	if c.current.ApprovedKey != "" {
		t.Errorf("a new summary kept the old approval %q", c.current.ApprovedKey)
	}
}

// Refused values and repairs count against their slot; at the cap the
// conversation goes to a person; an accepted value clears the count.
func TestPlanAttemptsAndHandOff(t *testing.T) {
	t.Parallel()
	c := newConvo(t)
	c.send(dispute, map[string]any{"card_last4": "4417", "operation_date": "вчера", "amount": "1 200 ₽"})
	c.send(dispute, map[string]any{"reason": "chargeback"})
	res := c.send(dispute, map[string]any{"reason": "refund"})
	if c.current.Attempts["reason"] != 2 || res.Session.Attempts["reason"] != 2 {
		t.Errorf("attempts %v, want reason: 2", c.current.Attempts)
	}
	res = c.send(dispute, map[string]any{"reason": "nope"})
	c.want(res, clarify.Handoff)
	if res.Session.Status != Failed || res.Problem.Type != "https://slotd.dev/problems/handoff" || !res.Problem.OwnerActionRequired ||
		res.Question.Slot != "reason" || !strings.Contains(res.Question.Text, "4417") {
		t.Errorf("hand-off: %s", js(res))
	}
	if res.Problem.Title != "Разговор передан сотруднику" || res.Problem.Detail != "reason: значение так и не принято (3 попытки)." {
		t.Errorf("a ru hand-off's problem: %q: %q", res.Problem.Title, res.Problem.Detail)
	}

	c = newConvo(t)
	c.send(flights, map[string]any{"from": "Madrid"})
	ok := c.send(flights, map[string]any{"from": "MAD"})
	if len(c.current.Attempts) != 0 || js(ok.Facts.Valid) != `[{"Slot":"from","Attempts":2}]` {
		t.Errorf("after an accepted value: attempts %v, valid %s", c.current.Attempts, js(ok.Facts.Valid))
	}
	c.cfg.MaxAttempts = 1
	c.want(c.send(flights, map[string]any{"to": "Kyiv"}), clarify.Handoff)
}

// A session is bounded in turns, but one that just expired starts over.
func TestPlanTooLong(t *testing.T) {
	t.Parallel()
	c := newConvo(t)
	c.send(flights, map[string]any{"from": "MAD"})
	c.current.Version = MaxTurnsPerSession
	if _, err := c.plan(c.request(flights, map[string]any{"to": "KBP"})); err == nil || !strings.Contains(err.Error(), "too many turns") {
		t.Errorf("a turn past the limit: %v", err)
	}
	c.now = c.now.Add(100 * time.Hour)
	if res := c.send(flights, map[string]any{"to": "KBP"}); res.Previous == nil || res.Session.Version != 1 {
		t.Errorf("after the ttl: %s", js(res))
	}
}

// present is the one place that masks: sensitive values, card numbers, the
// turn id in the problem's instance; READY alone carries values as they are.
func TestPresentMasks(t *testing.T) {
	t.Parallel()
	c := newConvo(t)
	c.id = "chat-mask"
	res := c.send("test.carry", map[string]any{"card_last4": "4417", "note": "the secret", "amount": "4111 1111 1111 1111 ref"})
	if res.Session.Slots["note"] != clarify.Masked || res.Changes[2].New != clarify.Masked {
		t.Errorf("a sensitive slot shows %v / %v, want it masked", res.Session.Slots["note"], res.Changes[2].New)
	}
	if res.Problem == nil || strings.Contains(js(res), "4111 1111") || !strings.Contains(js(res.Changes), "•••• 1111") {
		t.Errorf("a card number in a text slot: %s, want it refused and echoed masked", js(res.Changes))
	}
	for _, r := range c.records {
		if r.Slot == "note" && r.New != clarify.Masked || strings.Contains(js(r), "4111 1111") {
			t.Errorf("history record %s, want sensitive values and card numbers masked", js(r))
		}
	}
	if req := string(c.turns[0].Request); !strings.Contains(req, `"note":"•••"`) || strings.Contains(req, "4111 1111") {
		t.Errorf("the history's request %s, want the note masked and the card number cut", req)
	}
	idReq := c.request("test.carry", map[string]any{"card_last4": "12"})
	idReq.TurnID = "turn 4111-1111-1111-111"
	bad, err := c.plan(idReq)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(bad.Problem.Instance, "/sessions/"+bad.Session.ID+"/turns/") {
		t.Errorf("problem instance %q", bad.Problem.Instance)
	}
	ready := c.send("test.carry", map[string]any{"amount": "12"})
	c.want(ready, clarify.Ready)
	if ready.Arguments["note"] != "the secret" {
		t.Errorf("READY arguments %s, want the sensitive value as it is", js(ready.Arguments))
	}
}

// Planning is deterministic: the same input gives the same result and
// commit, byte for byte.
func TestPlanIsDeterministic(t *testing.T) {
	t.Parallel()
	c := newConvo(t)
	c.send(dispute, map[string]any{"card_last4": "•• 4417", "operation_date": "вчера"})
	in := planInput{contract: c.cat.Get(dispute), contracts: c.cat, config: c.cfg, open: c.open(), newID: constID("x"),
		req: TurnRequest{ConversationID: c.id, Tool: dispute, TurnID: "t", Arguments: map[string]any{"amount": "1 200,50 ₽", "reason": "дубль"}, Now: c.now}}
	a, ca, err := plan(in)
	if err != nil {
		t.Fatal(err)
	}
	b, cb, _ := plan(in)
	if js(a) != js(b) || js(ca.Turn) != js(cb.Turn) || js(ca.Changes) != js(cb.Changes) {
		t.Errorf("two plans of one input differ:\n%s\n%s", js(a), js(b))
	}
}

func ptr[T any](v T) *T { return &v }

// The facts of each turn (for metrics and logs) depend on earlier turns
// through the session's marks: a re-ask, the first READY, a first attempt.
func TestRecordFacts(t *testing.T) {
	t.Parallel()
	first := func(slots ...string) []ValidAfter {
		out := make([]ValidAfter, len(slots))
		for i, s := range slots {
			out[i] = ValidAfter{Slot: s, Attempts: 1}
		}
		return out
	}
	c := newConvo(t)
	for _, step := range []struct {
		args   map[string]any
		accept *bool
		action clarify.Action
		facts  Facts
	}{
		{map[string]any{"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽"}, nil, clarify.Ask,
			Facts{Valid: first("card_last4", "operation_date", "amount")}},
		{map[string]any{"reason": "Duplicate"}, nil, clarify.Ask, Facts{Valid: first("reason")}},
		{map[string]any{"reason": nil}, nil, clarify.Ask, Facts{Reasked: "original_operation_id"}},
		{map[string]any{"amount": "много", "merchant": "ООО Ромашка", "operation_date": "когда-то"}, nil, clarify.Ask,
			Facts{Rejected: []Rejection{{Slot: "operation_date", Normalizer: "date"}, {Slot: "amount", Normalizer: "amount"},
				{Slot: UnknownArgument, Normalizer: UnknownArgument}}}},
		{map[string]any{"original_operation_id": "op-20260822-0117"}, nil, clarify.Confirm, Facts{Valid: first("original_operation_id")}},
		{nil, ptr(true), clarify.Ready, Facts{FirstReady: true}},
		{map[string]any{"reason": "duplicate"}, nil, clarify.Ready, Facts{}},
	} {
		req := c.request(dispute, step.args)
		req.Confirmation = step.accept
		res, err := c.plan(req)
		if err != nil {
			t.Fatal(err)
		}
		c.want(res, step.action)
		if js(res.Facts) != js(step.facts) {
			t.Errorf("turn %d: facts %s, want %s", c.n, js(res.Facts), js(step.facts))
		}
	}
	if c.current.Marks != (Marks{Ready: true, Flawed: true}) {
		t.Errorf("marks %+v, want ready and flawed", c.current.Marks)
	}
	clean := newConvo(t)
	if res := clean.send(flights, map[string]any{"from": "mad", "to": "KBP", "date": "2026-09-01"}); !res.Facts.FirstAttempt || !res.Facts.FirstReady {
		t.Errorf("a clean flight search: facts %s, want the first READY at the first attempt", js(res.Facts))
	}
	// A model in a strict mode sends null for what the user has not said
	// yet: the turn says so in its problem, and it is no flaw.
	nulls := newConvo(t)
	if res := nulls.send(flights, map[string]any{"from": "mad", "to": nil, "date": nil}); res.Problem == nil || len(res.Facts.Rejected) != 0 {
		t.Errorf("nulls for empty required slots: problem %v, facts %s; want the nulls said and nothing rejected", res.Problem, js(res.Facts))
	}
	if res := nulls.send(flights, map[string]any{"to": "KBP", "date": "2026-09-01"}); !res.Facts.FirstAttempt {
		t.Errorf("READY after nulls: facts %s, want it counted at the first attempt", js(res.Facts))
	}
	repair := newConvo(t)
	repair.send(dispute, map[string]any{"card_last4": "4417", "operation_date": "вчера", "amount": "1 200 ₽"})
	for i := 0; i < 3; i++ {
		repair.send(dispute, map[string]any{"reason": "nope"})
	}
	if repair.current.Status != Failed || js(repair.turns[len(repair.turns)-1].Action) != `"HANDOFF"` {
		t.Errorf("three refused reasons: %s", js(repair.current))
	}
}

// The history's copy of a request keeps no card number: a sensitive slot's
// value is masked whole, any other keeps the last four digits.
func TestPresentRedactsTheRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args map[string]any
		last bool // the last four digits are kept
	}{
		{map[string]any{"original_operation_id": "4276 1234 5678 4417", "reason": "списали дважды"}, false},
		{map[string]any{"original_operation_id": "4276-1234-5678-4417"}, false},
		{map[string]any{"comment": "списание по карте 4276 1234 5678 4417 от 22.08"}, true},
		{map[string]any{"card_last4": "4276123456784417"}, true},
		{map[string]any{"card_last4": float64(4276123456784417)}, true},
	} {
		c := newConvo(t)
		res := c.send(dispute, tc.args)
		req := string(c.turns[0].Request)
		if strings.Contains(req, "4276") || strings.Contains(js(res), "4276") || strings.Contains(js(c.records), "4276") || strings.Contains(js(c.current), "4276") {
			t.Errorf("%v: the card number is kept: %s", tc.args, req)
		}
		if strings.Contains(req, "4417") != tc.last {
			t.Errorf("%v: request %s, want the last four digits kept: %v", tc.args, req, tc.last)
		}
	}
}

// constID is a planInput.newID that draws id.
func constID(id string) func() string { return func() string { return id } }
