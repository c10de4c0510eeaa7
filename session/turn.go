package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/slotd/slotd/clarify"
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/redact"
	"github.com/slotd/slotd/merge"
	"github.com/slotd/slotd/problem"
)

// Engine runs turns against a Store with a catalog of contracts.
type Engine struct {
	store     Store
	contracts *contract.Catalog
	clock     func() time.Time
	defaults  Defaults
	zones     sync.Map // name → *time.Location
}

// Defaults are the server's lifetimes for contracts that set none.
type Defaults struct {
	StaleAfter time.Duration
	TTL        time.Duration
	// MaxAttempts is how many failed attempts a slot gets before a
	// hand-off, for slots without x-slotd.max_attempts; 0 means 3.
	MaxAttempts int
	// TrustClientClock accepts any `now` a caller sends (replays, scripts,
	// tests). Otherwise `now` must be within ClockWindow of the server's
	// clock, so that no client can date its sessions past their lifetimes.
	TrustClientClock bool
	// ClockWindow is how far a caller's `now` may be from the server's
	// clock; 0 means DefaultClockWindow.
	ClockWindow time.Duration
}

// DefaultClockWindow is how far a caller's clock may be off the server's.
const DefaultClockWindow = 5 * time.Minute

// DefaultMaxAttempts: the first retry fixes most, the second fewer, the
// third almost nothing (seed 000, section 4).
const DefaultMaxAttempts = 3

// SetDefaults sets the lifetimes used by contracts that set none; call it
// before the engine serves.
func (e *Engine) SetDefaults(d Defaults) {
	if d.MaxAttempts <= 0 {
		d.MaxAttempts = DefaultMaxAttempts
	}
	if d.ClockWindow <= 0 {
		d.ClockWindow = DefaultClockWindow
	}
	e.defaults = d
}

// NewEngine builds an engine; clock is the server's clock (time.Now when nil),
// used when a turn brings none.
func NewEngine(store Store, contracts *contract.Catalog, clock func() time.Time) *Engine {
	if clock == nil {
		clock = time.Now
	}
	return &Engine{store: store, contracts: contracts, clock: clock,
		defaults: Defaults{MaxAttempts: DefaultMaxAttempts, ClockWindow: DefaultClockWindow}}
}

// turnClock is the clock a call runs on: the server's, or the caller's
// `now` when it is trusted or within the window of the server's.
func (e *Engine) turnClock(now time.Time) (time.Time, error) {
	server := e.clock().UTC()
	if now.IsZero() {
		return server, nil
	}
	now = now.UTC()
	if e.defaults.TrustClientClock {
		return now, nil
	}
	if d := now.Sub(server); d > e.defaults.ClockWindow || d < -e.defaults.ClockWindow {
		return time.Time{}, problem.InvalidRequest("now", fmt.Sprintf(
			"the client clock is %s off the server's; it may be at most %s off (leave now out to use the server's clock)",
			d.Round(time.Second), e.defaults.ClockWindow))
	}
	return now, nil
}

// Contracts is the engine's catalog.
func (e *Engine) Contracts() *contract.Catalog { return e.contracts }

// TurnRequest is one user turn as the orchestrator sends it.
type TurnRequest struct {
	Tenant         string         `json:"tenant,omitempty"`
	ConversationID string         `json:"conversation_id"`
	Tool           string         `json:"tool"`
	TurnID         string         `json:"turn_id"`
	Arguments      map[string]any `json:"arguments,omitempty"`
	// Confirmation is the user's answer to a RECONFIRM or CONFIRM, or nil.
	Confirmation *bool     `json:"confirmation,omitempty"`
	Locale       string    `json:"locale,omitempty"`
	TimeZone     string    `json:"time_zone,omitempty"`
	Now          time.Time `json:"now,omitempty"`
}

// Result is a turn's response. It is stored as JSON with the turn and
// returned unchanged when the same turn_id comes again.
type Result struct {
	Session        View              `json:"session"`
	Action         clarify.Action    `json:"action"`
	Question       *clarify.Question `json:"question,omitempty"`
	Changes        []Change          `json:"changes,omitempty"`
	Arguments      map[string]any    `json:"arguments,omitempty"`
	IdempotencyKey string            `json:"idempotency_key,omitempty"`
	Problem        *problem.Problem  `json:"problem,omitempty"`
	TurnID         string            `json:"turn_id"`
	// Previous is the session this turn ended (expired, abandoned, reset).
	Previous *View `json:"previous_session,omitempty"`
	// Notice tells the user what happened to the session itself.
	Notice string `json:"notice,omitempty"`
	// Replayed is true when the response was stored by an earlier delivery.
	Replayed bool `json:"-"`
	// Facts are what the turn showed, for metrics and logs (facts.go).
	Facts Facts `json:"-"`
}

// Change is a slot change as reported to the orchestrator.
type Change struct {
	merge.Change
	Message string `json:"message,omitempty"`
}

// View is a session as reported to the orchestrator.
type View struct {
	ID             string         `json:"id"`
	ConversationID string         `json:"conversation_id"`
	Tool           string         `json:"tool"`
	Status         Status         `json:"status"`
	Version        int64          `json:"version"`
	Slots          map[string]any `json:"slots"`
	Missing        []string       `json:"missing,omitempty"`
	Pending        []merge.Change `json:"pending,omitempty"`
	Locale         string         `json:"locale,omitempty"`
	TimeZone       string         `json:"time_zone,omitempty"`
	CreatedAt      time.Time      `json:"created_at"`
	UpdatedAt      time.Time      `json:"updated_at"`
	EndedAt        time.Time      `json:"ended_at,omitzero"`
	// Attempts counts failed attempts per slot since its last accepted value.
	Attempts map[string]int `json:"attempts,omitempty"`
}

// Limits on a turn request; larger requests are refused before any work.
const (
	maxIDLength   = 256
	maxArguments  = 64
	maxTextLength = 4096
	// maxValues bounds the JSON values in all arguments together, nested
	// ones included; maxDepth bounds their nesting.
	maxValues = 512
	maxDepth  = 8
	// MaxTurnsPerSession bounds a session's history: past it the session
	// must be reset, so that no conversation grows without bound.
	MaxTurnsPerSession = 1000
)

// Turn runs one turn, DESIGN §3 steps 2-6: lock the conversation's active
// session (or start one), replay a known turn_id, normalize and check each
// argument, merge, decide, and persist it all in one unit of work.
func (e *Engine) Turn(ctx context.Context, req TurnRequest) (*Result, error) {
	trace := traceFrom(ctx)
	if trace != nil {
		trace.Request = req
	}
	if err := req.validate(); err != nil {
		return nil, err
	}
	c := e.contracts.Get(req.Tool)
	if c == nil {
		return nil, problem.UnknownTool(req.Tool, e.contracts.Names())
	}
	now, err := e.turnClock(req.Now)
	if err != nil {
		return nil, err
	}
	req.Now = now
	if req.TimeZone != "" {
		if _, err := e.location(req.TimeZone); err != nil {
			return nil, problem.InvalidRequest("time_zone", "not an IANA time zone such as Europe/Moscow")
		}
	}

	var result *Result
	key := Key{Tenant: req.Tenant, ConversationID: req.ConversationID}
	var stored []byte
	var replayed bool
	stored, replayed, err = e.store.Turn(ctx, key, req.TurnID, func(active *Session) (*Commit, error) {
		var commit *Commit
		var err error
		result, commit, err = e.apply(c, req, active)
		return commit, err
	})
	if err != nil {
		return nil, err
	}
	if replayed {
		result = &Result{}
		if err := json.Unmarshal(stored, result); err != nil {
			return nil, fmt.Errorf("session: stored response of turn %s: %w", req.TurnID, err)
		}
		result.Replayed = true
	}
	if trace != nil {
		trace.Request, trace.Result = req, result
	}
	return result, nil
}

// apply computes the turn on the locked conversation.
func (e *Engine) apply(c *contract.Contract, req TurnRequest, current *Session) (*Result, *Commit, error) {
	commit := &Commit{}
	var changes []merge.Change
	var previous *Session
	var notice string
	args, confirmation := req.Arguments, req.Confirmation

	// Lifetime, decided with the turn's clock: past its ttl the session has
	// expired and a new one starts (said so); a different tool is an
	// explicit change of topic; past stale_after the user is asked whether
	// to go on, and this turn's arguments are held until they answer.
	s := current
	if s != nil && s.Status != Active {
		// It ended outside a turn: an expiry by the janitor or a reset is
		// said, once; a completed or cancelled session just makes way.
		switch s.Status {
		case Expired:
			previous, notice = s, clarify.Notice(c, locale(req, s, c), "expired")
		case Reset:
			previous, notice = s, clarify.Notice(c, locale(req, s, c), "closed")
		}
		s = nil
	}
	var carried map[string]any
	staleAfter, ttl := time.Duration(0), time.Duration(0)
	if s != nil {
		staleAfter, ttl = e.Lifetimes(s.Tool)
		switch {
		case ttl > 0 && req.Now.Sub(s.UpdatedAt) >= ttl:
			previous = e.endInto(commit, s, Expired, req.Now)
			notice = clarify.Notice(c, locale(req, s, c), "expired")
			s = nil
		case s.Tool != c.Name:
			previous = e.endInto(commit, s, Abandoned, req.Now)
			if c.CarryOver {
				carried = s.State.Slots
			}
			s = nil
		}
	}
	// A session that goes on is bounded; one that just ended is not held
	// to its length.
	if s != nil && s.Version >= MaxTurnsPerSession {
		return nil, nil, tooLong()
	}
	if s != nil {
		switch idle := req.Now.Sub(s.UpdatedAt); {
		case s.LastAction == string(clarify.Resume):
			// The answer to "shall we go on?": the held arguments come back,
			// with this turn's on top, within the bounds of one request.
			args = mergeArgs(s.Held, args)
			if err := checkArgs(args); err != nil {
				return nil, nil, err
			}
			switch {
			case confirmation == nil:
				return e.resume(c, req, s, args, commit)
			case !*confirmation:
				previous = e.endInto(commit, s, Reset, req.Now)
				notice = clarify.Notice(c, locale(req, s, c), "restarted")
				s = nil
			}
			confirmation = nil // consumed by the resume question
		case staleAfter > 0 && idle >= staleAfter:
			return e.resume(c, req, s, args, commit)
		}
	}
	if s == nil {
		s = &Session{
			ID:        newID(),
			Key:       Key{Tenant: req.Tenant, ConversationID: req.ConversationID},
			Tool:      c.Name,
			Status:    Active,
			State:     merge.State{Slots: map[string]any{}},
			Locale:    c.DefaultLocale,
			TimeZone:  c.TimeZone,
			CreatedAt: req.Now,
		}
	} else {
		s = s.Clone()
	}
	s.Held = nil
	if req.Locale != "" {
		s.Locale = req.Locale
	}
	if req.TimeZone != "" {
		s.TimeZone = req.TimeZone
	}
	loc, err := e.location(s.TimeZone)
	if err != nil {
		loc = c.Location()
	}
	env := contract.Env{Now: req.Now, Location: loc, Locale: s.Locale}
	state := s.State

	// Carry-over: slots of the previous tool whose names exist in this
	// contract and whose values pass its property schema.
	if len(carried) > 0 {
		for _, slot := range slotOrder(c, carried) {
			if v, fe := c.Normalize(slot, carried[slot], env); fe == nil {
				state.Slots[slot] = v
				changes = append(changes, merge.Change{Slot: slot, New: v, Decision: merge.Carried})
			}
		}
	}

	// The user's answer to the previous question: a re-confirmation resolves
	// the first pending change; an approval approves the arguments shown.
	declined := false
	if confirmation != nil {
		if pending := slotOrder(c, state.Pending); len(pending) > 0 {
			var ch []merge.Change
			state, ch = merge.Resolve(state, pending[0], *confirmation)
			changes = append(changes, ch...)
		} else if s.LastAction == string(clarify.Confirm) {
			if *confirmation {
				s.ApprovedKey = idempotencyKey(s.ID, state.Slots)
			} else {
				declined = true
			}
		}
	}

	// Normalize every argument (the before phase) and check it against its
	// own property schema; a refused value is never stored.
	normalized, rejected, fieldErrors := normalizeArgs(c, args, env)
	for _, fe := range fieldErrors {
		slot := contract.SlotOf(fe.Pointer)
		changes = append(changes, merge.Change{Slot: slot, Old: state.Slots[slot], New: receivedValue(c, slot, args[slot]), Decision: merge.Rejected})
	}

	// Merge: nulls never overwrite, irreversible changes wait.
	state, merged := merge.Apply(state, normalized, func(slot string) bool {
		p := c.Property(slot)
		return p != nil && p.Irreversible
	})
	changes = append(changes, merged...)
	s.State = state

	// Decide. The key of the arguments as they now stand answers both
	// "were these approved?" and READY.
	key := idempotencyKey(s.ID, state.Slots)
	in := clarify.Input{
		Contract: c,
		State:    state,
		Report:   c.Check(state.Slots),
		Rejected: rejected,
		Approved: s.ApprovedKey != "" && s.ApprovedKey == key,
		Locale:   s.Locale,
	}
	step := clarify.Decide(in)
	if declined && !changedSlots(merged) {
		// "No" to the final approval with nothing changed: do not do it.
		step = clarify.Step{Action: clarify.Cancelled, Question: &clarify.Question{Text: clarify.Notice(c, s.Locale, "cancelled")}}
		s.Status, s.EndedAt = Cancelled, req.Now
	}

	// An approval answers one CONFIRM: a new summary needs a new "yes", and
	// a "no" withdraws any earlier one.
	if declined || step.Action == clarify.Confirm {
		s.ApprovedKey = ""
	}

	// Capped re-asks: every refused value and every REPAIR counts against
	// its slot, an accepted value clears the count, and a slot at its cap
	// hands the conversation to a person instead of asking once more.
	valid := validAfter(s.Attempts, merged)
	s.Attempts = countAttempts(s.Attempts, rejected, merged, step)
	prob := turnProblem(fieldErrors, step)
	if slot := e.exhausted(c, s.Attempts); slot != "" && step.Action != clarify.Cancelled {
		step = clarify.Step{Action: clarify.Handoff, Question: &clarify.Question{Slot: slot, Text: clarify.HandoffText(in, slot)}}
		prob = handoffProblem(c, slot, s.Attempts[slot], prob)
		s.Status, s.EndedAt = Failed, req.Now
	}

	if q := step.Question; q != nil {
		q.Old, q.New = shown(c, q.Slot, q.Old), shown(c, q.Slot, q.New)
	}

	// Respond and persist.
	res := &Result{
		Action:   step.Action,
		Question: step.Question,
		Problem:  prob,
		Notice:   notice,
	}
	for _, ch := range changes {
		res.Changes = append(res.Changes, Change{Change: shownChange(c, ch), Message: clarify.ChangeMessage(c, s.Locale, ch)})
	}
	switch step.Action {
	case clarify.Ready:
		res.Arguments = copySlots(state.Slots)
		res.IdempotencyKey = key
	case clarify.Confirm:
		// What the user approves; a sensitive value is not needed to show it.
		res.Arguments = copySlots(state.Slots)
		for k := range res.Arguments {
			if p := c.Property(k); p != nil && p.Sensitive {
				res.Arguments[k] = clarify.Masked
			}
		}
	}
	if previous != nil {
		v := e.View(previous)
		res.Previous = &v
	}
	res, commit, err = e.finish(c, req, s, res, in.Report.Missing, changes, commit)
	if res != nil {
		res.Facts.Valid = valid
	}
	return res, commit, err
}

// validAfter lists the slots this turn gave a value, with the attempts it
// took: the failed ones counted so far, plus this one.
func validAfter(attempts map[string]int, merged []merge.Change) []ValidAfter {
	var out []ValidAfter
	for _, ch := range merged {
		switch ch.Decision {
		case merge.Filled, merge.Overwritten, merge.Pending:
			out = append(out, ValidAfter{Slot: ch.Slot, Attempts: attempts[ch.Slot] + 1})
		}
	}
	return out
}

// countAttempts is the per-slot count of failed attempts after this turn.
func countAttempts(prev map[string]int, rejected []string, merged []merge.Change, step clarify.Step) map[string]int {
	out := make(map[string]int, len(prev)+len(rejected))
	for k, v := range prev {
		out[k] = v
	}
	for _, ch := range merged {
		switch ch.Decision {
		case merge.Filled, merge.Overwritten, merge.Pending, merge.Confirmed:
			// A new value was accepted. An unchanged one was not: a model
			// that resends the same broken call keeps counting.
			delete(out, ch.Slot)
		}
	}
	for _, slot := range rejected {
		out[slot]++
	}
	if step.Action == clarify.Repair {
		seen := map[string]bool{}
		for _, v := range step.Violations {
			if slot := contract.SlotOf(v.Pointer); slot != "" && !seen[slot] {
				seen[slot] = true
				out[slot]++
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// exhausted is the first slot, in contract order, whose failed attempts
// reached its cap (x-slotd.max_attempts, else the server's default).
func (e *Engine) exhausted(c *contract.Contract, attempts map[string]int) string {
	names := make([]string, 0, len(attempts))
	for k := range attempts {
		names = append(names, k)
	}
	for _, slot := range c.InOrder(names) {
		max := e.defaults.MaxAttempts
		if p := c.Property(slot); p != nil && p.MaxAttempts > 0 {
			max = p.MaxAttempts
		}
		if max > 0 && attempts[slot] >= max {
			return slot
		}
	}
	return ""
}

// handoffProblem says why a person must take over, keeping the field errors
// of the last attempt.
func handoffProblem(c *contract.Contract, slot string, n int, last *problem.Problem) *problem.Problem {
	p := &problem.Problem{
		Type:                problem.TypeHandoff,
		Title:               "Handed off to a person",
		Status:              422,
		Detail:              fmt.Sprintf("%s was not accepted after %d attempts.", slot, n),
		OwnerActionRequired: true,
	}
	if last != nil {
		p.Errors = last.Errors
	}
	return p
}

func tooLong() error {
	return &problem.Error{Code: "FailedPrecondition", Problem: problem.Problem{
		Type: problem.TypeTooLong, Title: "The session has too many turns", Status: 409,
		Detail:              fmt.Sprintf("A session keeps at most %d turns; reset it (ResetSession) to go on.", MaxTurnsPerSession),
		OwnerActionRequired: true,
	}}
}

// resume answers RESUME: the session was idle past stale_after, so instead of
// silently going on it shows what it holds and asks; this turn's arguments
// are held, not applied, until the answer.
func (e *Engine) resume(c *contract.Contract, req TurnRequest, s *Session, args map[string]any, commit *Commit) (*Result, *Commit, error) {
	s = s.Clone()
	if req.Locale != "" {
		s.Locale = req.Locale
	}
	sc := e.contracts.Get(s.Tool)
	if sc == nil {
		sc = c
	}
	in := clarify.Input{Contract: sc, State: s.State, Locale: s.Locale}
	res := &Result{
		Action:   clarify.Resume,
		Question: &clarify.Question{Text: clarify.ResumeText(in)},
	}
	// A full card number is refused now, not held: the session keeps none.
	held, refused := map[string]any{}, map[string]any{}
	for k, v := range args {
		if sc.HoldsCard(k, v) {
			refused[k] = v
		} else {
			held[k] = v
		}
	}
	s.Held = held
	var changes []merge.Change
	if len(refused) > 0 {
		_, _, errs := normalizeArgs(sc, refused, contract.Env{Now: req.Now, Locale: s.Locale})
		for _, fe := range errs {
			slot := contract.SlotOf(fe.Pointer)
			ch := merge.Change{Slot: slot, Old: s.State.Slots[slot], New: receivedValue(sc, slot, refused[slot]), Decision: merge.Rejected}
			changes = append(changes, ch)
			res.Changes = append(res.Changes, Change{Change: shownChange(sc, ch)})
		}
		res.Problem = turnProblem(errs, clarify.Step{})
	}
	return e.finish(sc, req, s, res, sc.Check(s.State.Slots).Missing, changes, commit)
}

// finish stamps the session with the turn, encodes the response and the
// redacted request, and fills the commit: the session, the turn, and every
// change.
func (e *Engine) finish(c *contract.Contract, req TurnRequest, s *Session, res *Result, missing []string, changes []merge.Change, commit *Commit) (*Result, *Commit, error) {
	s.Version++
	s.UpdatedAt = req.Now
	s.LastAction = string(res.Action)
	s.Marks, res.Facts = observe(c, s.Marks, res)
	res.TurnID = req.TurnID
	if res.Problem != nil {
		res.Problem.Instance = "/sessions/" + s.ID + "/turns/" + problem.Redact(req.TurnID)
	}
	if s.Status != Active {
		missing = nil
	}
	res.Session = viewOf(s, c, missing)

	response, err := json.Marshal(res)
	if err != nil {
		return nil, nil, fmt.Errorf("session: encode response: %w", err)
	}
	request, err := json.Marshal(redactRequest(req, c))
	if err != nil {
		return nil, nil, fmt.Errorf("session: encode request: %w", err)
	}
	commit.Session = s
	commit.Turn = &TurnRecord{ID: req.TurnID, SessionID: s.ID, Version: s.Version, Action: string(res.Action), Request: request, Response: response, At: req.Now}
	for _, ch := range changes {
		commit.Changes = append(commit.Changes, ChangeRecord{
			SessionID: s.ID, Version: s.Version, TurnID: req.TurnID,
			Slot: ch.Slot, Old: shown(c, ch.Slot, ch.Old), New: shown(c, ch.Slot, ch.New), Decision: ch.Decision, At: req.Now,
		})
	}
	return res, commit, nil
}

// endInto ends s within the turn's commit, recording every slot as cleared,
// and returns the ended session.
func (e *Engine) endInto(commit *Commit, s *Session, status Status, now time.Time) *Session {
	ended := e.end(s, status, now)
	commit.Ended = append(commit.Ended, ended.Ended...)
	commit.Changes = append(commit.Changes, ended.Changes...)
	return ended.Ended[0]
}

// Lifetimes are the tool's stale_after and ttl, or the server's defaults.
func (e *Engine) Lifetimes(tool string) (staleAfter, ttl time.Duration) {
	staleAfter, ttl = e.defaults.StaleAfter, e.defaults.TTL
	if c := e.contracts.Get(tool); c != nil {
		if c.StaleAfter > 0 {
			staleAfter = c.StaleAfter
		}
		if c.TTL > 0 {
			ttl = c.TTL
		}
	}
	return staleAfter, ttl
}

func locale(req TurnRequest, s *Session, c *contract.Contract) string {
	switch {
	case req.Locale != "":
		return req.Locale
	case s != nil && s.Locale != "":
		return s.Locale
	}
	return c.DefaultLocale
}

// mergeArgs lays b's keys over a's; a null in b does not hide a value in a.
func mergeArgs(a, b map[string]any) map[string]any {
	if len(a) == 0 {
		return b
	}
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if _, ok := out[k]; ok && contract.IsEmpty(v) {
			continue
		}
		out[k] = v
	}
	return out
}

// normalizeArgs normalizes the arguments (contract.NormalizeArgs: known
// ones in contract order, slots they imply such as a currency, then unknown
// keys) and turns them into merge arguments in contract order. It returns the
// slots whose value was refused, and why.
func normalizeArgs(c *contract.Contract, raw map[string]any, env contract.Env) ([]merge.Arg, []string, []problem.FieldError) {
	values, errs := c.NormalizeArgs(raw, env)
	names := make([]string, 0, len(raw)+len(values))
	for k := range raw {
		names = append(names, k)
	}
	for k := range values {
		if _, ok := raw[k]; !ok {
			names = append(names, k) // implied by another argument
		}
	}
	var args []merge.Arg
	for _, slot := range c.InOrder(names) {
		if v, ok := values[slot]; ok {
			args = append(args, merge.Arg{Slot: slot, Value: v})
		} else if contract.IsEmpty(raw[slot]) {
			args = append(args, merge.Arg{Slot: slot, Empty: true})
		}
	}
	var rejected []string
	for _, fe := range errs {
		if slot := contract.SlotOf(fe.Pointer); c.Property(slot) != nil {
			rejected = append(rejected, slot)
		}
	}
	return args, rejected, errs
}

// shown is a slot value as responses, texts and the history show it:
// masked for a slot marked x-slotd.sensitive, card-like numbers cut to their
// last four digits. Only READY and CONFIRM arguments carry the values as
// they are (CONFIRM with sensitive values masked), since the backend call
// needs them.
func shown(c *contract.Contract, slot string, v any) any {
	if v == nil {
		return nil
	}
	if c != nil {
		if p := c.Property(slot); p != nil && p.Sensitive {
			return clarify.Masked
		}
	}
	return problem.RedactValue(v)
}

func shownChange(c *contract.Contract, ch merge.Change) merge.Change {
	ch.Old, ch.New = shown(c, ch.Slot, ch.Old), shown(c, ch.Slot, ch.New)
	return ch
}

// receivedValue is a refused value as the response and the history keep it:
// the JSON value received, masked for a sensitive slot, card-like numbers cut
// to their last four digits, long strings shortened.
func receivedValue(c *contract.Contract, slot string, raw any) any {
	if p := c.Property(slot); p != nil && p.Sensitive {
		return clarify.Masked
	}
	if s, ok := raw.(string); ok && len(s) > 200 {
		raw = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return problem.RedactValue(raw)
}

// turnProblem is the problem a turn reports: refused values first, else the
// rules a REPAIR must satisfy.
func turnProblem(refused []problem.FieldError, step clarify.Step) *problem.Problem {
	switch {
	case len(refused) > 0:
		return &problem.Problem{
			Type:   problem.TypeInvalidValue,
			Title:  "Some arguments were not accepted",
			Status: 422,
			Detail: refused[0].Error(),
			Errors: refused,
		}
	case step.Action == clarify.Repair:
		return &problem.Problem{
			Type:   problem.TypeRuleViolated,
			Title:  "The arguments break a rule of the contract",
			Status: 422,
			Detail: step.Violations[0].Error(),
			Errors: step.Violations,
		}
	}
	return nil
}

// idempotencyKey is the same for the same session and arguments, so a
// backend can de-duplicate a retried call.
//
// The key names its session ("sd_<session id>_<hash of the arguments>"), so
// that CompleteSession finds the very session a backend call was made for,
// even after the conversation has moved on.
func idempotencyKey(sessionID string, slots map[string]any) string {
	b, _ := json.Marshal(slots) // map keys are sorted: canonical
	h := sha256.New()
	h.Write([]byte(sessionID))
	h.Write([]byte{0})
	h.Write(b)
	return "sd_" + strings.ReplaceAll(sessionID, "-", "") + "_" + hex.EncodeToString(h.Sum(nil)[:12])
}

// sessionOfKey is the session id an idempotency key names, or "".
func sessionOfKey(key string) string {
	rest, ok := strings.CutPrefix(key, "sd_")
	if !ok {
		return ""
	}
	id, _, ok := strings.Cut(rest, "_")
	if !ok {
		return ""
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return ""
	}
	return u.String()
}

func changedSlots(changes []merge.Change) bool {
	for _, ch := range changes {
		switch ch.Decision {
		case merge.Filled, merge.Overwritten, merge.Pending:
			return true
		}
	}
	return false
}

func viewOf(s *Session, c *contract.Contract, missing []string) View {
	slots := make(map[string]any, len(s.State.Slots))
	for k, x := range s.State.Slots {
		slots[k] = shown(c, k, x)
	}
	v := View{
		ID: s.ID, ConversationID: s.Key.ConversationID, Tool: s.Tool, Status: s.Status,
		Version: s.Version, Slots: slots, Missing: missing,
		Locale: s.Locale, TimeZone: s.TimeZone, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, EndedAt: s.EndedAt,
		Attempts: s.Attempts,
	}
	for _, slot := range slotOrder(c, s.State.Pending) {
		v.Pending = append(v.Pending, shownChange(c, merge.Change{Slot: slot, Old: s.State.Slots[slot], New: s.State.Pending[slot], Decision: merge.Pending}))
	}
	return v
}

// View reports a session as the orchestrator sees it, with its missing slots.
func (e *Engine) View(s *Session) View {
	c := e.contracts.Get(s.Tool)
	var missing []string
	if c != nil && s.Status == Active {
		missing = c.Check(s.State.Slots).Missing
	}
	return viewOf(s, c, missing)
}

// Get reads a session.
func (e *Engine) Get(ctx context.Context, l Lookup) (*Session, error) {
	if err := l.validate(); err != nil {
		return nil, err
	}
	return e.store.Session(ctx, l)
}

// History reads a session's turns and slot changes.
func (e *Engine) History(ctx context.Context, l Lookup) (*History, error) {
	if err := l.validate(); err != nil {
		return nil, err
	}
	return e.store.History(ctx, l)
}

// Reset ends a session explicitly; every slot it held is recorded as
// cleared. The next turn of the conversation starts a fresh session.
func (e *Engine) Reset(ctx context.Context, l Lookup, now time.Time) (*Session, []merge.Change, error) {
	if err := l.validate(); err != nil {
		return nil, nil, err
	}
	if now.IsZero() {
		now = e.clock()
	}
	var out *Session
	var changes []merge.Change
	err := e.store.Update(ctx, l, func(s *Session) (*Commit, error) {
		if s.Status != Active {
			return nil, ErrNotActive
		}
		commit := e.end(s, Reset, now)
		out = commit.Ended[0]
		for _, ch := range commit.Changes {
			changes = append(changes, merge.Change{Slot: ch.Slot, Old: ch.Old, Decision: ch.Decision})
		}
		return commit, nil
	})
	return out, changes, err
}

func (r *TurnRequest) validate() error {
	switch {
	case r.ConversationID == "":
		return problem.InvalidRequest("conversation_id", "required")
	case r.Tool == "":
		return problem.InvalidRequest("tool", "required")
	case r.TurnID == "":
		return problem.InvalidRequest("turn_id", "required: one per logical turn, reused on retries")
	case !validID(r.ConversationID):
		return problem.InvalidRequest("conversation_id", fmt.Sprintf("at most %d bytes of UTF-8 without control characters", maxIDLength))
	case !validID(r.TurnID):
		return problem.InvalidRequest("turn_id", fmt.Sprintf("at most %d bytes of UTF-8 without control characters", maxIDLength))
	case !validID(r.Tool):
		return problem.InvalidRequest("tool", fmt.Sprintf("at most %d bytes of UTF-8 without control characters", maxIDLength))
	case !validID(r.Locale) || !validID(r.TimeZone):
		return problem.InvalidRequest("locale", "a BCP 47 tag such as ru, and an IANA zone such as Europe/Moscow")
	case !validTag(r.Locale):
		return problem.InvalidRequest("locale", "a BCP 47 tag such as ru or en-GB")
	case redact.HasCard(r.ConversationID):
		return cardInID("conversation_id")
	case redact.HasCard(r.TurnID):
		return cardInID("turn_id")
	}
	return checkArgs(r.Arguments)
}

// cardInID refuses an id that holds a card number: ids are stored and
// logged as they are, so they must never carry one.
func cardInID(field string) error {
	return problem.InvalidRequest(field, "holds what looks like a full card number; ids must never carry one")
}

// validTag accepts what a BCP 47 tag can be spelt with: ASCII letters and
// digits in subtags of at most eight, split by - (or _), and no card number.
func validTag(s string) bool {
	if len(s) > 35 || redact.HasCard(s) {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '-' || c == '_':
			n = 0
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			if n++; n > 8 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// checkArgs bounds a turn's arguments: names, values, nesting, and how many
// values they hold together.
func checkArgs(args map[string]any) error {
	if len(args) > maxArguments {
		return problem.InvalidRequest("arguments", fmt.Sprintf("at most %d arguments", maxArguments))
	}
	b := bounds{depth: maxDepth, values: maxValues, text: maxTextLength, field: "arguments"}
	for k, v := range args {
		if len(k) > maxIDLength || !utf8.ValidString(k) || strings.IndexByte(k, 0) >= 0 {
			return problem.InvalidRequest("arguments", fmt.Sprintf("argument names are at most %d bytes of UTF-8", maxIDLength))
		}
		if redact.HasCard(k) {
			return problem.InvalidRequest("arguments", "an argument name holds what looks like a full card number; never send one")
		}
		if err := b.check("arguments/"+k, v, 1); err != nil {
			return err
		}
	}
	return nil
}

// bounds limit a JSON value a caller sends: its nesting depth, and the
// number of values the field holds in all.
type bounds struct {
	depth  int
	values int
	text   int // bytes of one string
	field  string
	seen   int
}

// check bounds one value: string length, NUL characters, non-finite
// numbers, nesting depth, and the number of values.
func (b *bounds) check(path string, v any, depth int) error {
	if b.seen++; b.seen > b.values {
		return problem.InvalidRequest(b.field, fmt.Sprintf("at most %d values in all %s together", b.values, b.field))
	}
	if depth > b.depth {
		return problem.InvalidRequest(path, fmt.Sprintf("nested deeper than %d levels", b.depth))
	}
	switch t := v.(type) {
	case string:
		if len(t) > b.text {
			return problem.InvalidRequest(path, fmt.Sprintf("at most %d bytes", b.text))
		}
		if strings.IndexByte(t, 0) >= 0 {
			return problem.InvalidRequest(path, "contains a NUL character")
		}
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return problem.InvalidRequest(path, "not a finite number")
		}
	case map[string]any:
		for k, x := range t {
			if len(k) > b.text || strings.IndexByte(k, 0) >= 0 || !utf8.ValidString(k) {
				return problem.InvalidRequest(path, fmt.Sprintf("keys are at most %d bytes of UTF-8 without NUL", b.text))
			}
			if err := b.check(path+"/"+k, x, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for i, x := range t {
			if err := b.check(path+"/"+strconv.Itoa(i), x, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// validID accepts an identifier that Postgres text and logs can hold as is.
func validID(s string) bool {
	return len(s) <= maxIDLength && utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}

func (l Lookup) validate() error {
	if l.ConversationID == "" && l.SessionID == "" {
		return problem.InvalidRequest("conversation_id", "conversation_id or session_id is required")
	}
	if !validID(l.ConversationID) || !validID(l.Tenant) {
		return problem.InvalidRequest("conversation_id", fmt.Sprintf("at most %d bytes of UTF-8 without control characters", maxIDLength))
	}
	if redact.HasCard(l.ConversationID) {
		return cardInID("conversation_id")
	}
	if l.SessionID != "" && !CanonicalID(l.SessionID) {
		return problem.InvalidRequest("session_id", "a session id as slotd gives it: a UUID such as 019ad0c4-5b1e-7c3a-9f00-1e2d3c4b5a69")
	}
	return nil
}

// CanonicalID reports whether s is a UUID in its canonical form (36
// characters, lower- or upper-case hex), the only form session ids take.
func CanonicalID(s string) bool {
	if len(s) != 36 {
		return false
	}
	u, err := uuid.Parse(s)
	return err == nil && strings.EqualFold(u.String(), s)
}

func (e *Engine) location(name string) (*time.Location, error) {
	if v, ok := e.zones.Load(name); ok {
		return v.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	e.zones.Store(name, loc)
	return loc, nil
}

// redactRequest is the request as the history keeps it: sensitive slots
// masked, card-like numbers cut to their last four digits.
func redactRequest(req TurnRequest, c *contract.Contract) TurnRequest {
	out := req
	out.Arguments = make(map[string]any, len(req.Arguments))
	for k, v := range req.Arguments {
		if p := c.Property(k); p != nil && p.Sensitive {
			out.Arguments[k] = "•••"
			continue
		}
		out.Arguments[k] = problem.RedactValue(v)
	}
	return out
}

func newID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

// slotOrder lists a map's slots in the contract's order, or by name when the
// contract is gone from the catalog.
func slotOrder(c *contract.Contract, m map[string]any) []string {
	names := slices.Collect(maps.Keys(m))
	if c != nil {
		return c.InOrder(names)
	}
	sort.Strings(names)
	return names
}

func copySlots(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
