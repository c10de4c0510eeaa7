package script

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"google.golang.org/grpc/codes"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// The format of a script file: one struct per YAML mapping, whose yaml tags
// are the field names, decoded by fields; a field of one value is a val
// (values.go). TestSchemaHasTheFormatsFields holds docs/script.schema.json
// to the same tags. A required tag says what a field is for when it is
// missing; the step tag of an expectation names the kinds of step that can
// be checked for it ("error": also a step that expects an error).

// scriptDoc is one YAML document of a file: a script.
type scriptDoc struct {
	Name        val[nonEmpty] `yaml:"name"`
	Description val[string]   `yaml:"description"`
	Skip        val[nonEmpty] `yaml:"skip"`
	Tool        val[nonEmpty] `yaml:"tool" required:"the contract name every turn is sent with, e.g. bank.open_dispute"`
	Locale      val[nonEmpty] `yaml:"locale"`
	TimeZone    val[timeZone] `yaml:"time_zone"`
	Clock       *val[string]  `yaml:"clock"` // read in TimeZone, which may come after it
	Steps       steps         `yaml:"steps" required:"the list of steps"`

	start time.Time
}

// stepDoc is a step written as a mapping, or the word reset.
type stepDoc struct {
	Name     val[nonEmpty]        `yaml:"name"`
	User     val[string]          `yaml:"user"`
	Args     *val[map[string]any] `yaml:"args"`
	Confirm  *val[yesNo]          `yaml:"confirm"`
	Reset    *val[resetFlag]      `yaml:"reset"`
	Complete *completionDoc       `yaml:"complete"`
	Advance  val[time.Duration]   `yaml:"advance"`
	TurnID   val[nonEmpty]        `yaml:"turn_id"`
	Tool     val[nonEmpty]        `yaml:"tool"`
	Parallel *callList            `yaml:"parallel"`
	Expect   *expect              `yaml:"expect"`

	m    mapping
	word bool  // the word reset
	err  error // the step's first mistake
}

// callDoc is one tool call of a parallel step: a turn of its own, on its
// own tool, with its own turn_id and expectations.
type callDoc struct {
	Tool    val[nonEmpty]        `yaml:"tool"`
	Args    *val[map[string]any] `yaml:"args"`
	Confirm *val[yesNo]          `yaml:"confirm"`
	TurnID  val[nonEmpty]        `yaml:"turn_id"`
	Expect  *expect              `yaml:"expect"`

	m   mapping
	err error
}

// callList is a parallel step's list of calls.
type callList struct {
	pos  Pos
	docs []callDoc
}

// completionDoc is a step's complete: the outcome of the backend call.
type completionDoc struct {
	Result         *val[any]     `yaml:"result"`
	Failure        *failureDoc   `yaml:"failure"`
	IdempotencyKey val[nonEmpty] `yaml:"idempotency_key"`
}

// failureDoc is complete.failure: a kind, or this mapping.
type failureDoc struct {
	Kind              val[slotdv1.FailureKind] `yaml:"kind"`
	HTTPStatus        val[int32]               `yaml:"http_status"`
	RetryAfterSeconds val[int32]               `yaml:"retry_after_seconds"`
}

// expect is what a step's response must hold; nil fields are not checked.
type expect struct {
	Action           *val[slotdv1.Action]        `yaml:"action" step:"turn,complete"`
	Ask              *val[string]                `yaml:"ask" step:"turn"`
	QuestionContains *val[oneOrMore]             `yaml:"question_contains" step:"turn"`
	Allowed          *val[texts]                 `yaml:"allowed" step:"turn"`
	Slots            *slotsWant                  `yaml:"slots" step:"turn,reset,complete"`
	Missing          *val[texts]                 `yaml:"missing" step:"turn"`
	Changes          *changesWant                `yaml:"changes" step:"turn,reset"`
	Arguments        *mapWant                    `yaml:"arguments" step:"turn"`
	Replayed         *val[bool]                  `yaml:"replayed" step:"turn"`
	Status           *val[slotdv1.SessionStatus] `yaml:"status" step:"turn,reset,complete"`
	Version          *val[int64]                 `yaml:"version" step:"turn,reset,complete"`
	IdempotencyKey   *keyWant                    `yaml:"idempotency_key" step:"turn"`
	Error            *val[codes.Code]            `yaml:"error" step:"turn,reset,complete,error"`
	Problem          *problemWant                `yaml:"problem" step:"turn,reset,complete,error"`
	Output           *mapWant                    `yaml:"output" step:"complete"`
	Resumed          *val[bool]                  `yaml:"resumed" step:"turn"`
	NoticeContains   *val[oneOrMore]             `yaml:"notice_contains" step:"turn"`
	OpenSessions     *val[texts]                 `yaml:"open_sessions" step:"turn"`
	EndedSessions    *endedWant                  `yaml:"ended_sessions" step:"turn"`

	m mapping
}

// endedWant is the sessions a turn ended or found ended, by tool, with the
// status each ended with; exactly those.
type endedWant struct {
	pos  Pos
	want map[string]val[slotdv1.SessionStatus]
}

func (w *endedWant) UnmarshalYAML(u func(any) error) error {
	n := nodeOf(u)
	w.pos = posOf(n)
	if isNull(n) {
		return nil
	}
	if kindOf(n) != "a mapping" {
		return mistake(n, "expected a mapping of tools to the status each ended with, e.g. {bank.open_dispute: abandoned}; {} for none")
	}
	return u(&w.want)
}

// changeWant is one change a response must contain.
type changeWant struct {
	Slot            val[nonEmpty]          `yaml:"slot" required:"the slot the change is about"`
	Decision        *val[slotdv1.Decision] `yaml:"decision"`
	Old             *val[any]              `yaml:"old"`
	New             *val[any]              `yaml:"new"`
	MessageContains *val[string]           `yaml:"message_contains"`

	pos Pos
}

// problemWant is the RFC 9457 problem a response must carry; none: no
// problem at all.
type problemWant struct {
	Type           *val[string]      `yaml:"type"`
	Title          *val[string]      `yaml:"title"`
	Status         *val[int32]       `yaml:"status"`
	DetailContains *val[string]      `yaml:"detail_contains"`
	Retryable      *val[bool]        `yaml:"retryable"`
	Pointer        *val[oneOrMore]   `yaml:"pointer"`
	Errors         []*fieldErrorWant `yaml:"errors"`

	pos  Pos
	none bool
}

// fieldErrorWant is the error a problem must have at one JSON pointer.
type fieldErrorWant struct {
	Pointer        val[nonEmpty] `yaml:"pointer" required:"the JSON pointer of the argument, e.g. /reason"`
	Input          *val[string]  `yaml:"input"`
	InputContains  *val[string]  `yaml:"input_contains"`
	Allowed        *val[texts]   `yaml:"allowed"`
	FormatContains *val[string]  `yaml:"format_contains"`

	pos Pos
}

// The keys of the two small mappings that are forms of a value rather than
// structs: {exact: ...} of an object or list expectation, and
// {same_as: STEP} of idempotency_key.
const (
	exactKey  = "exact"
	sameAsKey = "same_as"
)

// ProblemTypeBase is prepended to a problem type written without a scheme:
// "invalid-value" means https://slotd.dev/problems/invalid-value.
const ProblemTypeBase = "https://slotd.dev/problems/"

func (d *scriptDoc) UnmarshalYAML(u func(any) error) error {
	type plain scriptDoc
	_, err := fields(u, (*plain)(d), "a script is a mapping with at least tool and steps")
	errs := append([]error{err}, d.Steps.errs...)
	if c := d.Clock; c != nil {
		var ok bool
		if d.start, ok = parseClock(c.v, string(d.TimeZone.v)); !ok {
			errs = append(errs, fault(c.pos, "$.clock", "%q is not a time; write 2026-08-23T13:00:00+03:00 (RFC 3339) or 2026-08-23 13:00 (in the script's time_zone)", strings.TrimSpace(c.v)))
		}
	}
	return errors.Join(errs...)
}

// steps are a script's steps, read each with its first mistake, so that a
// mistake in one step does not hide those in the others.
type steps struct {
	list []*step
	errs []error
}

func (s *steps) UnmarshalYAML(u func(any) error) error {
	n := nodeOf(u)
	seq, ok := bare(n).(*ast.SequenceNode)
	if !ok || len(seq.Values) == 0 {
		return mistake(n, "expected a non-empty list of steps")
	}
	var docs []stepDoc
	if err := u(&docs); err != nil {
		return err
	}
	earlier := stepIndex{names: map[string]int{}, parallel: map[int]bool{}}
	for i := range docs {
		st, errs := docs[i].step(i+1, earlier)
		st.layout.flow = st.layout.flow || seq.IsFlowStyle
		s.list, s.errs = append(s.list, st), append(s.errs, errs...)
	}
	return nil
}

func (d *stepDoc) UnmarshalYAML(u func(any) error) error {
	if s, ok := bare(nodeOf(u)).(*ast.StringNode); ok && s.Value == "reset" {
		d.m, d.word = mapping{node: s, at: posOf(s)}, true
		return nil
	}
	type plain stepDoc
	d.m, d.err = fields(u, (*plain)(d), "a step is a mapping (args, confirm, reset or complete, with expect), or the word reset")
	return nil // the mistake stays with the step, and the library reads the next
}

// stepIndex is what a step may refer to of the steps before it: their
// numbers by name, and which of them are parallel (and have no one key).
type stepIndex struct {
	names    map[string]int
	parallel map[int]bool
}

// step makes step n of what was read, checking what depends on the kind of
// step and on the steps before it.
func (d *stepDoc) step(n int, earlier stepIndex) (*step, []error) {
	st := &step{n: n, pos: d.m.at, name: string(d.Name.v), user: d.User.v, turnID: string(d.TurnID.v), advance: d.Advance.v,
		tool: string(d.Tool.v), expect: d.Expect}
	st.layout = stepLayout{keyLine: st.pos.Line, keyCol: st.pos.Column, scalar: d.word, expectLine: d.m.keys["expect"].Line}
	if m, ok := bare(d.m.node).(*ast.MappingNode); ok {
		st.layout.flow = m.IsFlowStyle
	}
	if d.err != nil {
		return st, []error{d.err}
	}
	var errs []error
	fail := func(at Pos, field, format string, args ...any) {
		errs = append(errs, fault(at, join(d.m.node.GetPath(), field), format, args...))
	}
	if d.Args != nil {
		st.hasArgs, st.args = true, d.Args.v
	}
	if d.Confirm != nil {
		st.confirm = (*bool)(&d.Confirm.v)
	}
	if c := d.Complete; c != nil {
		st.complete = &completion{hasResult: c.Result != nil, idempotencyKey: string(c.IdempotencyKey.v)}
		if c.Result != nil {
			st.complete.result = c.Result.v
		}
		if f := c.Failure; f != nil {
			st.complete.failure = &slotdv1.BackendFailure{Kind: f.Kind.v, HttpStatus: f.HTTPStatus.v, RetryAfterSeconds: f.RetryAfterSeconds.v}
		}
	}
	turn := d.Args != nil || d.Confirm != nil
	switch kinds := btoi(turn) + btoi(d.Reset != nil) + btoi(d.Complete != nil) + btoi(d.Parallel != nil); {
	case d.word:
		st.kind = kindReset
	case kinds > 1:
		fail(st.pos, "", "a step does one thing: a turn (args and/or confirm), reset, complete, or parallel")
	case d.Reset != nil:
		st.kind = kindReset
	case d.Complete != nil:
		st.kind = kindComplete
	case d.Parallel != nil:
		st.kind = kindParallel
		errs = append(errs, d.parallel(st, earlier)...)
	case !turn:
		fail(st.pos, "", "a step needs args, confirm, reset, complete or parallel (args: {} sends a turn without arguments)")
	}
	if st.turnID != "" && st.kind != kindTurn {
		fail(st.pos, "turn_id", "only a turn has a turn_id")
	}
	if st.kind == kindParallel && st.tool != "" {
		fail(d.Tool.pos, "tool", "a parallel step's calls name a tool each")
	}
	if st.name != "" {
		if prev, dup := earlier.names[st.name]; dup {
			fail(d.Name.pos, "name", "step %d is also called %q", prev, st.name)
		} else if _, err := strconv.Atoi(st.name); err == nil {
			fail(d.Name.pos, "name", "a step name must not be a number: numbers refer to steps by position")
		}
		earlier.names[st.name] = n
	}
	if st.kind == kindParallel {
		earlier.parallel[n] = true
	}
	if d.Expect == nil {
		return st, errs
	}
	if st.kind == kindParallel {
		fail(d.m.keys["expect"], "expect", "a parallel step has no response of its own: give each call its expect")
		return st, errs
	}
	errs = append(errs, d.Expect.fits(st.kind, d.m.node.GetPath(), n, earlier)...)
	return st, errs
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// parallel makes the calls of a parallel step, each a turn.
func (d *stepDoc) parallel(st *step, earlier stepIndex) []error {
	var errs []error
	for i := range d.Parallel.docs {
		c := &d.Parallel.docs[i]
		call := &step{n: st.n, call: i + 1, pos: c.m.at, kind: kindTurn, tool: string(c.Tool.v), turnID: string(c.TurnID.v), expect: c.Expect}
		call.layout = stepLayout{keyLine: call.pos.Line, keyCol: call.pos.Column, expectLine: c.m.keys["expect"].Line}
		if m, ok := bare(c.m.node).(*ast.MappingNode); ok {
			call.layout.flow = m.IsFlowStyle || st.layout.flow
		}
		st.calls = append(st.calls, call)
		if c.err != nil {
			errs = append(errs, c.err)
			continue
		}
		if c.Args != nil {
			call.hasArgs, call.args = true, c.Args.v
		}
		if c.Confirm != nil {
			call.confirm = (*bool)(&c.Confirm.v)
		}
		if c.Args == nil && c.Confirm == nil {
			errs = append(errs, fault(call.pos, c.m.node.GetPath(), "a call needs args or confirm (args: {} sends a call without arguments)"))
		}
		if c.Expect != nil {
			errs = append(errs, c.Expect.fits(kindTurn, c.m.node.GetPath(), st.n, earlier)...)
		}
	}
	return errs
}

// fits checks that a step of this kind, step n at path, can be checked for
// each expectation given (the step tags say what), and that an
// idempotency_key's same_as names an earlier step with one key.
func (e *expect) fits(kind stepKind, path string, n int, earlier stepIndex) []error {
	var errs []error
	fail := func(at Pos, field, format string, args ...any) {
		errs = append(errs, fault(at, join(path, field), format, args...))
	}
	t, v := reflect.TypeFor[expect](), reflect.ValueOf(e).Elem()
	can := func(i int, kind string) bool {
		return slices.Contains(strings.Split(t.Field(i).Tag.Get("step"), ","), kind)
	}
	var allowed []string
	for i, name := range fieldNames(t) {
		if can(i, kind.String()) {
			allowed = append(allowed, name)
		}
	}
	for i, name := range fieldNames(t) {
		at, written := e.m.keys[name]
		if !written {
			at = e.m.at // merged in
		}
		if t.Field(i).Tag.Get("step") == "" || v.Field(i).IsNil() {
			continue
		} else if !can(i, kind.String()) {
			fail(at, "expect."+name, "a %s step cannot be checked for %s; it can be checked for %s", kind, name, strings.Join(allowed, ", "))
		} else if e.Error != nil && !can(i, "error") {
			fail(at, "expect."+name, "a step that expects an error has no response to check; it can be checked for its problem")
		}
	}
	if w := e.IdempotencyKey; w != nil && w.ref != nil {
		if w.sameAs = earlier.names[w.ref.v]; w.sameAs == 0 {
			w.sameAs, _ = strconv.Atoi(w.ref.v)
		}
		switch {
		case w.sameAs < 1 || w.sameAs >= n:
			errs = append(errs, fault(w.ref.pos, w.path, "%q is not an earlier step (a number below %d, or the name of an earlier step)", w.ref.v, n))
		case earlier.parallel[w.sameAs]:
			errs = append(errs, fault(w.ref.pos, w.path, "step %d is parallel: its calls have a key each; refer to a single turn", w.sameAs))
		}
	}
	return errs
}

func (l *callList) UnmarshalYAML(u func(any) error) error {
	n := nodeOf(u)
	l.pos = posOf(n)
	if seq, ok := bare(n).(*ast.SequenceNode); !ok || len(seq.Values) < 2 {
		return mistake(n, "expected a list of two or more calls, each a mapping with tool, args (or confirm), turn_id and expect")
	}
	return u(&l.docs)
}

func (c *callDoc) UnmarshalYAML(u func(any) error) error {
	type plain callDoc
	c.m, c.err = fields(u, (*plain)(c), "a call is a mapping with tool, args (or confirm), turn_id and expect")
	return nil // the mistake stays with the call, and the library reads the next
}

func (e *expect) UnmarshalYAML(u func(any) error) (err error) {
	type plain expect
	if !isNull(nodeOf(u)) {
		e.m, err = fields(u, (*plain)(e), "expected a mapping of what the response must hold")
	}
	return err
}

func (c *completionDoc) UnmarshalYAML(u func(any) error) error {
	type plain completionDoc
	m, err := fields(u, (*plain)(c), "expected a mapping with result (the backend's result) or failure")
	if err == nil && (c.Result != nil) == (c.Failure != nil) {
		return mistake(m.node, "give exactly one of result or failure")
	}
	return err
}

func (f *failureDoc) UnmarshalYAML(u func(any) error) error {
	if _, scalar := scalarText(nodeOf(u)); scalar {
		return read(u, &f.Kind.v)
	}
	type plain failureDoc
	_, err := fields(u, (*plain)(f), "expected a failure kind (timeout, unavailable, ...) or a mapping with kind")
	return err
}

func (c *changeWant) UnmarshalYAML(u func(any) error) error {
	type plain changeWant
	m, err := fields(u, (*plain)(c), "expected a mapping with slot and decision, old, new or message_contains")
	c.pos = m.at
	return err
}

func (w *problemWant) UnmarshalYAML(u func(any) error) error {
	n := nodeOf(u)
	if w.pos, w.none = posOf(n), isNull(n); w.none {
		return nil
	}
	type plain problemWant
	_, err := fields(u, (*plain)(w), "expected a mapping (type, pointer, retryable, ...) or null for no problem")
	if w.Type != nil && !strings.Contains(w.Type.v, "://") {
		w.Type.v = ProblemTypeBase + w.Type.v
	}
	return err
}

func (w *fieldErrorWant) UnmarshalYAML(u func(any) error) error {
	type plain fieldErrorWant
	m, err := fields(u, (*plain)(w), "expected a mapping with pointer and input, allowed or format_contains")
	w.pos = m.at
	return err
}

// mapWant matches an object: every listed key (null: absent), or exactly
// the listed keys.
type mapWant struct {
	pos     Pos
	none    bool // the whole object must be absent
	exact   bool
	entries object
}

// object is an object an expectation lists, by key.
type object []entry

type entry struct {
	key   string
	value any
	pos   Pos
}

func (o *object) UnmarshalYAML(u func(any) error) error {
	var vals map[string]val[any]
	if n := nodeOf(u); isNull(n) {
		return nil // {exact: null}: an empty object
	} else if kindOf(n) != "a mapping" {
		return mistake(n, "expected a mapping of names to values, or {exact: {...}}")
	} else if err := u(&vals); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		*o = append(*o, entry{key: k, value: vals[k].v, pos: vals[k].pos})
	}
	return nil
}

// UnmarshalYAML reads {key: value} (those keys; null means absent),
// {exact: {...}} (exactly those keys), or null (no object at all).
func (w *mapWant) UnmarshalYAML(u func(any) error) error {
	n := nodeOf(u)
	if w.pos, w.none = posOf(n), isNull(n); w.none {
		return nil
	} else if err := u(&w.entries); err != nil || len(w.entries) != 1 || w.entries[0].key != exactKey {
		return err
	}
	var f struct {
		Exact *object `yaml:"exact"`
	}
	err := u(&f)
	w.exact, w.entries = true, nil
	if f.Exact != nil {
		w.entries = *f.Exact
	}
	return err
}

// slotsWant is a mapWant that cannot be null: a session always has slots.
type slotsWant struct{ mapWant }

func (w *slotsWant) UnmarshalYAML(u func(any) error) error {
	if err := w.mapWant.UnmarshalYAML(u); err != nil || !w.none {
		return err
	}
	return mistake(nodeOf(u), "slots: null checks nothing; write slots: {exact: {}} for a session without slots")
}

type changesWant struct {
	pos   Pos
	exact bool
	items changeList
}

// changeList is the list of {exact: [...]}, where null is no changes.
type changeList []*changeWant

func (l *changeList) UnmarshalYAML(u func(any) error) error {
	if isNull(nodeOf(u)) {
		return nil
	}
	return listOf(u, (*[]*changeWant)(l), "expected a list of changes, e.g. [{slot: amount, decision: overwritten}]")
}

// UnmarshalYAML reads a list of changes, or {exact: [...]}.
func (w *changesWant) UnmarshalYAML(u func(any) error) error {
	n := nodeOf(u)
	if w.pos = posOf(n); kindOf(n) != "a mapping" {
		return listOf(u, (*[]*changeWant)(&w.items), "expected a list of changes, e.g. [{slot: amount, decision: overwritten}]")
	}
	var f struct {
		Exact *changeList `yaml:"exact"`
	}
	err := u(&f)
	if errors.As(err, new(*yaml.UnknownFieldError)) || err == nil && f.Exact == nil {
		return mistake(n, "expected a list of changes, or {exact: [...]} for exactly these changes")
	} else if err == nil {
		w.exact, w.items = true, *f.Exact
	}
	return err
}

// keyWant is an expectation on the idempotency key: present or not, or the
// same as an earlier step's.
type keyWant struct {
	pos     Pos
	present *bool
	ref     *val[string] // same_as: an earlier step, by number or name
	path    string       // of same_as
	sameAs  int          // the step's number
}

// UnmarshalYAML reads true (present), false (absent), or {same_as: STEP}
// (the same key as STEP's; see stepDoc.step).
func (w *keyWant) UnmarshalYAML(u func(any) error) error {
	n := nodeOf(u)
	if _, scalar := scalarText(n); scalar {
		w.pos, w.present = posOf(n), new(bool)
		return read(u, w.present)
	}
	var f struct {
		SameAs *val[string] `yaml:"same_as"`
	}
	if err := u(&f); errors.As(err, new(*Error)) {
		return err
	} else if err != nil || f.SameAs == nil {
		return mistake(n, "expected true, false, or {same_as: STEP} (an earlier step's number or name)")
	}
	w.pos, w.ref, w.path = posOf(n), f.SameAs, join(n.GetPath(), sameAsKey)
	return nil
}
