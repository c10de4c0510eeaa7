package script

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"google.golang.org/grpc/codes"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// The format of a script file: one struct per YAML mapping, whose yaml tags
// are the field names, and the types of their fields, each of which reads
// its own value (Parse walks the mappings). A key no tag names is refused,
// with the nearest tag suggested; TestSchemaHasTheFormatsFields holds
// docs/script.schema.json to the same tags. A required tag says what a
// field is for when it is missing; the step tag of an expectation names the
// kinds of step that can be checked for it ("error": also a step that
// expects an error).

// scriptDoc is one YAML document of a file: a script.
type scriptDoc struct {
	Name        nonEmpty `yaml:"name"`
	Description text     `yaml:"description"`
	Skip        nonEmpty `yaml:"skip"`
	Tool        nonEmpty `yaml:"tool" required:"the contract name every turn is sent with, e.g. bank.open_dispute"`
	Locale      nonEmpty `yaml:"locale"`
	TimeZone    timeZone `yaml:"time_zone"`
	Clock       *clock   `yaml:"clock"`
	Steps       steps    `yaml:"steps" required:"the list of steps"`
}

// steps are a script's steps, in order.
type steps []*step

// stepDoc is a step written as a mapping (the other form is the word reset).
type stepDoc struct {
	Name     stepName       `yaml:"name"`
	User     text           `yaml:"user"`
	Args     *arguments     `yaml:"args"`
	Confirm  *yesNo         `yaml:"confirm"`
	Reset    *resetFlag     `yaml:"reset"`
	Complete *completionDoc `yaml:"complete"`
	Advance  duration       `yaml:"advance"`
	TurnID   nonEmpty       `yaml:"turn_id"`
	Expect   *expect        `yaml:"expect"`
}

// completionDoc is a step's complete: the outcome of the backend call.
type completionDoc struct {
	Result         *jsonValue  `yaml:"result"`
	Failure        *failureDoc `yaml:"failure"`
	IdempotencyKey nonEmpty    `yaml:"idempotency_key"`
}

// failureDoc is complete.failure: a kind, or this mapping.
type failureDoc struct {
	Kind              failureKind `yaml:"kind"`
	HTTPStatus        whole       `yaml:"http_status"`
	RetryAfterSeconds whole       `yaml:"retry_after_seconds"`
}

// expect is what a step's response must hold; nil fields are not checked.
type expect struct {
	Action           *want[slotdv1.Action]        `yaml:"action" step:"turn,complete"`
	Ask              *want[string]                `yaml:"ask" step:"turn"`
	QuestionContains *want[oneOrMore]             `yaml:"question_contains" step:"turn"`
	Allowed          *want[texts]                 `yaml:"allowed" step:"turn"`
	Slots            *slotsWant                   `yaml:"slots" step:"turn,reset,complete"`
	Missing          *want[texts]                 `yaml:"missing" step:"turn"`
	Changes          *changesWant                 `yaml:"changes" step:"turn,reset"`
	Arguments        *mapWant                     `yaml:"arguments" step:"turn"`
	Replayed         *want[bool]                  `yaml:"replayed" step:"turn"`
	Status           *want[slotdv1.SessionStatus] `yaml:"status" step:"turn,reset,complete"`
	Version          *want[int64]                 `yaml:"version" step:"turn,reset,complete"`
	IdempotencyKey   *keyWant                     `yaml:"idempotency_key" step:"turn"`
	Error            *want[codes.Code]            `yaml:"error" step:"turn,reset,complete,error"`
	Problem          *problemWant                 `yaml:"problem" step:"turn,reset,complete,error"`
	Output           *mapWant                     `yaml:"output" step:"complete"`

	keys    []pair // as written, for the checks that depend on the kind of step
	keyLine int    // the line of the step's expect key
}

// changeWant is one change a response must contain.
type changeWant struct {
	Slot            nonEmpty                `yaml:"slot" required:"the slot the change is about"`
	Decision        *want[slotdv1.Decision] `yaml:"decision"`
	Old             *want[any]              `yaml:"old"`
	New             *want[any]              `yaml:"new"`
	MessageContains *want[string]           `yaml:"message_contains"`

	pos Pos
}

// problemWant is the RFC 9457 problem a response must carry; none: no
// problem at all.
type problemWant struct {
	Type           *want[string]    `yaml:"type"`
	Title          *want[string]    `yaml:"title"`
	Status         *want[int32]     `yaml:"status"`
	DetailContains *want[string]    `yaml:"detail_contains"`
	Retryable      *want[bool]      `yaml:"retryable"`
	Pointer        *want[oneOrMore] `yaml:"pointer"`
	Errors         fieldErrors      `yaml:"errors"`

	pos  Pos
	none bool
}

// fieldErrorWant is the error a problem must have at one JSON pointer.
type fieldErrorWant struct {
	Pointer        nonEmpty      `yaml:"pointer" required:"the JSON pointer of the argument, e.g. /reason"`
	Input          *want[string] `yaml:"input"`
	InputContains  *want[string] `yaml:"input_contains"`
	Allowed        *want[texts]  `yaml:"allowed"`
	FormatContains *want[string] `yaml:"format_contains"`

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

func (e *expect) read(r *reader, v val) {
	e.keyLine = v.key.Line
	if isNull(v.node) {
		return
	}
	keys, ok := r.fields(v, e)
	if !ok {
		r.errorf(v.at, v.path, "expected a mapping of what the response must hold")
	}
	e.keys = keys
}

// Text, text that is not blank, a step's name, an IANA time zone.
type (
	text     string
	nonEmpty string
	stepName string
	timeZone string
)

func (t *text) read(r *reader, v val) {
	s, _ := r.text(v)
	*t = text(s)
}

func (t *nonEmpty) read(r *reader, v val) {
	s, ok := r.text(v)
	if ok && strings.TrimSpace(s) == "" {
		r.errorf(v.at, v.path, "must not be empty")
	}
	*t = nonEmpty(s)
}

func (n *stepName) read(r *reader, v val) {
	(*nonEmpty)(n).read(r, v)
	if prev, dup := r.names[string(*n)]; dup {
		r.errorf(v.at, v.path, "step %d is also called %q", prev, *n)
	}
	if _, err := strconv.Atoi(string(*n)); err == nil {
		r.errorf(v.at, v.path, "a step name must not be a number: numbers refer to steps by position")
	}
}

func (z *timeZone) read(r *reader, v val) {
	(*nonEmpty)(z).read(r, v)
	if _, err := time.LoadLocation(string(*z)); *z != "" && err != nil {
		r.errorf(v.at, v.path, "%q is not an IANA time zone such as Europe/Moscow", *z)
	}
}

// clock is the start clock as written: it is read in the script's time
// zone, which may come after it.
type clock struct {
	text string
	at   Pos
	ok   bool
}

func (c *clock) read(r *reader, v val) { c.text, c.ok = r.text(v); c.at = v.at }

// duration is advance (see parseDuration).
type duration time.Duration

func (d *duration) read(r *reader, v val) {
	if s, ok := r.text(v); ok {
		x, err := parseDuration(s)
		if err != nil {
			r.errorf(v.at, v.path, "%v", err)
		}
		*d = duration(x)
	}
}

// yesNo is confirm: the user's answer.
type yesNo bool

func (y *yesNo) read(r *reader, v val) {
	switch n := bare(v.node).(type) {
	case *ast.BoolNode:
		*y = yesNo(n.Value)
		return
	case *ast.StringNode:
		switch strings.ToLower(strings.TrimSpace(n.Value)) {
		case "yes", "true", "accept", "y":
			*y = true
			return
		case "no", "false", "decline", "n":
			*y = false
			return
		}
	}
	r.errorf(v.at, v.path, "expected yes or no (accept or decline)")
}

// resetFlag is reset, given as true or with no value.
type resetFlag struct{}

func (*resetFlag) read(r *reader, v val) {
	if isNull(v.node) {
		return
	}
	if b, ok := r.boolean(v); ok && !b {
		r.errorf(v.at, v.path, "reset: false does nothing; remove it")
	}
}

// arguments are a turn's args, the model's tool-call arguments; null sends
// none.
type arguments struct{ m map[string]any }

func (a *arguments) read(r *reader, v val) {
	if isNull(v.node) {
		return
	}
	if _, ok := bare(v.node).(ast.MapNode); !ok {
		r.errorf(v.at, v.path, "expected a mapping of argument names to values (the model's tool-call arguments), got %s", kindOf(v.node))
		return
	}
	a.m, _ = r.value(v).(map[string]any)
}

// jsonValue is any JSON value, null included.
type jsonValue struct{ v any }

func (j *jsonValue) read(r *reader, v val) { j.v = r.value(v) }

type whole int64

func (w *whole) read(r *reader, v val) {
	n, _ := r.integer(v)
	*w = whole(n)
}

type failureKind slotdv1.FailureKind

func (k *failureKind) read(r *reader, v val) {
	*k = failureKind(r.enum(v, "failure kind", "FAILURE_KIND_", slotdv1.FailureKind_value))
}

func (f *failureDoc) read(r *reader, v val) {
	if _, ok := scalarText(v.node); ok {
		f.Kind.read(r, v)
	} else if _, ok := r.fields(v, f); !ok {
		r.errorf(v.at, v.path, "expected a failure kind (timeout, unavailable, ...) or a mapping with kind")
	}
}

func (c *completionDoc) read(r *reader, v val) {
	if _, ok := r.fields(v, c); !ok {
		r.errorf(v.at, v.path, "expected a mapping with result (the backend's result) or failure")
	} else if (c.Result != nil) == (c.Failure != nil) {
		r.errorf(v.at, v.path, "give exactly one of result or failure")
	}
}

func (c *completionDoc) completion() *completion {
	out := &completion{hasResult: c.Result != nil, idempotencyKey: string(c.IdempotencyKey)}
	if c.Result != nil {
		out.result = c.Result.v
	}
	if f := c.Failure; f != nil {
		out.failure = &slotdv1.BackendFailure{Kind: slotdv1.FailureKind(f.Kind), HttpStatus: int32(f.HTTPStatus), RetryAfterSeconds: int32(f.RetryAfterSeconds)}
	}
	return out
}

// want is one expected value and where the script says it: its key.
type want[T any] struct {
	v   T
	pos Pos
}

// texts is a list of text; oneOrMore also takes one text for a list of one.
type (
	texts     []string
	oneOrMore []string
)

func (w *want[T]) read(r *reader, v val) {
	w.pos = v.key
	switch p := any(&w.v).(type) {
	case *string:
		*p, _ = r.text(v)
	case *texts:
		*p = r.list(v, false)
	case *oneOrMore:
		*p = r.list(v, true)
	case *bool:
		*p, _ = r.boolean(v)
	case *int64:
		*p, _ = r.integer(v)
	case *int32:
		n, _ := r.integer(v)
		*p = int32(n)
	case *any:
		*p = r.value(v)
	case *slotdv1.Action:
		*p = slotdv1.Action(r.enum(v, "action", "ACTION_", slotdv1.Action_value))
	case *slotdv1.Decision:
		*p = slotdv1.Decision(r.enum(v, "decision", "DECISION_", slotdv1.Decision_value))
	case *slotdv1.SessionStatus:
		*p = slotdv1.SessionStatus(r.enum(v, "session status", "SESSION_STATUS_", slotdv1.SessionStatus_value))
	case *codes.Code:
		if s, ok := r.text(v); ok {
			c, ok := codeByName[foldName(s)]
			if !ok || c == codes.OK {
				r.errorf(v.at, v.path, "unknown gRPC code %q; e.g. InvalidArgument, NotFound, FailedPrecondition, Unimplemented", s)
			}
			*p = c
		}
	default:
		panic(fmt.Sprintf("script: want[%T] has no reader", w.v))
	}
}

// mapWant matches an object: every listed key (null: absent), or exactly
// the listed keys.
type mapWant struct {
	pos     Pos
	none    bool // the whole object must be absent
	exact   bool
	entries []entry
}

type entry struct {
	key   string
	value any
	pos   Pos
}

// read reads {key: value} (those keys; null means absent), {exact: {...}}
// (exactly those keys), or null (no object at all).
func (w *mapWant) read(r *reader, v val) {
	w.pos = v.key
	if isNull(v.node) {
		w.none = true
		return
	}
	pairs, ok := r.mapping(v)
	if !ok {
		r.errorf(v.at, v.path, "expected a mapping of names to values, or {exact: {...}}")
		return
	}
	if len(pairs) == 1 && pairs[0].name == exactKey {
		if inner, ok := r.mapping(pairs[0].val); ok || isNull(pairs[0].node) {
			w.exact, pairs = true, inner
		}
	}
	for _, p := range pairs {
		w.entries = append(w.entries, entry{key: p.name, value: r.value(p.val), pos: p.key})
	}
}

// slotsWant is a mapWant that cannot be null: a session always has slots.
type slotsWant struct{ mapWant }

func (w *slotsWant) read(r *reader, v val) {
	if w.mapWant.read(r, v); w.none {
		r.errorf(v.at, v.path, "slots: null checks nothing; write slots: {exact: {}} for a session without slots")
	}
}

type changesWant struct {
	pos   Pos
	exact bool
	items []*changeWant
}

// read reads a list of changes, or {exact: [...]}.
func (w *changesWant) read(r *reader, v val) {
	w.pos = v.key
	list := v
	if pairs, ok := r.mapping(v); ok {
		if len(pairs) != 1 || pairs[0].name != exactKey {
			r.errorf(v.at, v.path, "expected a list of changes, or {exact: [...]} for exactly these changes")
			return
		}
		if w.exact, list = true, pairs[0].val; isNull(list.node) {
			return
		}
	}
	items, ok := r.items(list)
	if !ok {
		r.errorf(list.at, list.path, "expected a list of changes, e.g. [{slot: amount, decision: overwritten}]")
	}
	for _, it := range items {
		c := &changeWant{pos: it.at}
		if _, ok := r.fields(it, c); !ok {
			r.errorf(it.at, it.path, "expected a mapping with slot and decision, old, new or message_contains")
			continue
		}
		w.items = append(w.items, c)
	}
}

func (w *problemWant) read(r *reader, v val) {
	w.pos = v.key
	if isNull(v.node) {
		w.none = true
		return
	}
	if _, ok := r.fields(v, w); !ok {
		r.errorf(v.at, v.path, "expected a mapping (type, pointer, retryable, ...) or null for no problem")
	}
	if w.Type != nil && !strings.Contains(w.Type.v, "://") {
		w.Type.v = ProblemTypeBase + w.Type.v
	}
}

// fieldErrors are a problem's errors, by pointer.
type fieldErrors []*fieldErrorWant

func (e *fieldErrors) read(r *reader, v val) {
	items, ok := r.items(v)
	if !ok {
		r.errorf(v.at, v.path, "expected a list of field errors, e.g. [{pointer: /reason, allowed: [...]}]")
	}
	for _, it := range items {
		w := &fieldErrorWant{pos: it.at}
		if _, ok := r.fields(it, w); !ok {
			r.errorf(it.at, it.path, "expected a mapping with pointer and input, allowed or format_contains")
		}
		*e = append(*e, w)
	}
}

// keyWant is an expectation on the idempotency key: present or not, or the
// same as an earlier step's.
type keyWant struct {
	pos     Pos
	present *bool
	sameAs  int // step number
}

// read reads true (present), false (absent), or {same_as: N} (the same key
// as step N, by number or name).
func (w *keyWant) read(r *reader, v val) {
	w.pos = v.key
	switch bare(v.node).(type) {
	case *ast.BoolNode, *ast.StringNode:
		if b, ok := r.boolean(v); ok {
			w.present = &b
		}
		return
	}
	pairs, ok := r.mapping(v)
	if !ok || len(pairs) != 1 || pairs[0].name != sameAsKey {
		r.errorf(v.at, v.path, "expected true, false, or {same_as: STEP} (an earlier step's number or name)")
		return
	}
	ref, ok := r.text(pairs[0].val)
	if !ok {
		return
	}
	if k, err := strconv.Atoi(ref); err == nil {
		w.sameAs = k
	} else {
		w.sameAs = r.names[ref]
	}
	if w.sameAs < 1 || w.sameAs >= r.step {
		r.errorf(pairs[0].at, pairs[0].path, "%q is not an earlier step (a number below %d, or the name of an earlier step)", ref, r.step)
		w.sameAs = 0
	}
}
