package script

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"google.golang.org/grpc/codes"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// The fields a script, a step and an expectation may have; anything else
// is a mistake worth naming (a typo must not silently check nothing).
var (
	scriptFields = []string{"name", "description", "skip", "tool", "locale", "time_zone", "clock", "steps"}
	stepFields   = []string{"name", "user", "args", "confirm", "reset", "complete", "advance", "turn_id", "expect"}
	expectFields = []string{"action", "ask", "question_contains", "allowed", "slots", "missing", "changes",
		"arguments", "problem", "replayed", "status", "version", "idempotency_key", "error", "output"}
	changeFields     = []string{"slot", "decision", "old", "new", "message_contains"}
	problemFields    = []string{"type", "title", "status", "detail_contains", "retryable", "pointer", "errors"}
	fieldErrorFields = []string{"pointer", "input", "input_contains", "allowed", "format_contains"}
	completeFields   = []string{"result", "failure", "idempotency_key"}
	failureFields    = []string{"kind", "http_status", "retry_after_seconds"}

	// What each kind of step can be checked for: a reset answers with the
	// ended session and the cleared slots, a completion with an action, the
	// session and the output for the model.
	expectByKind = map[stepKind][]string{
		kindTurn: {"action", "ask", "question_contains", "allowed", "slots", "missing", "changes",
			"arguments", "problem", "replayed", "status", "version", "idempotency_key", "error"},
		kindReset:    {"slots", "changes", "status", "version", "error", "problem"},
		kindComplete: {"action", "slots", "status", "version", "problem", "output", "error"},
	}
)

// ProblemTypeBase is prepended to a problem type written without a scheme:
// "invalid-value" means https://slotd.dev/problems/invalid-value.
const ProblemTypeBase = "https://slotd.dev/problems/"

// Parse reads the scripts in one file's content; file names it in errors.
func Parse(file string, data []byte) ([]*Script, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, syntaxError(file, err)
	}
	var docs []*ast.DocumentNode
	for _, doc := range f.Docs {
		if doc.Body == nil {
			continue
		}
		if _, ok := doc.Body.(*ast.CommentGroupNode); ok {
			continue
		}
		docs = append(docs, doc)
	}
	if len(docs) == 0 {
		return nil, &Error{File: file, Msg: "no script in this file"}
	}
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	var out []*Script
	var errs []error
	names := map[string]Pos{}
	for i, doc := range docs {
		d := &decoder{file: file, anchors: map[string]ast.Node{}}
		ast.Walk(d, doc.Body)
		s := d.script(doc.Body)
		if s.Name == "" {
			s.Name = base
			if len(docs) > 1 {
				s.Name = fmt.Sprintf("%s#%d", base, i+1)
			}
		}
		if prev, dup := names[s.Name]; dup {
			d.errorf(doc.Body, "name", "%q is also the name of the script at line %d; names label reports and must differ", s.Name, prev.Line)
		}
		names[s.Name] = Pos{Line: s.Line}
		if len(d.errs) > 0 {
			errs = append(errs, d.errs...)
			continue
		}
		out = append(out, s)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// syntaxError turns the YAML library's error into ours, keeping its
// position and its short message (without its source excerpt).
func syntaxError(file string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		p := ye.GetToken().Position
		return &Error{File: file, Pos: Pos{Line: p.Line, Column: p.Column}, Msg: "YAML: " + ye.GetMessage()}
	}
	return &Error{File: file, Msg: "YAML: " + err.Error()}
}

type decoder struct {
	file    string
	step    int
	errs    []error
	anchors map[string]ast.Node
}

// Visit collects the anchors of a document, so that aliases resolve
// wherever they are used.
func (d *decoder) Visit(n ast.Node) ast.Visitor {
	if a, ok := n.(*ast.AnchorNode); ok && a.Name != nil {
		d.anchors[a.Name.GetToken().Value] = a.Value
	}
	return d
}

func (d *decoder) errorf(n ast.Node, field, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Pos: posOf(n), Step: d.step, Field: field, Msg: fmt.Sprintf(format, args...)})
}

func posOf(n ast.Node) Pos {
	switch m := n.(type) {
	case nil:
		return Pos{}
	case *ast.MappingNode:
		if len(m.Values) > 0 {
			return posOf(m.Values[0])
		}
	case *ast.MappingValueNode:
		return posOf(m.Key)
	case *ast.DocumentNode:
		return posOf(m.Body)
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return Pos{}
	}
	return Pos{Line: tk.Position.Line, Column: tk.Position.Column}
}

// resolve looks through anchors, tags and aliases to the node that holds
// the value.
func (d *decoder) resolve(n ast.Node) ast.Node {
	for range 64 {
		switch m := n.(type) {
		case *ast.AnchorNode:
			n = m.Value
		case *ast.TagNode:
			n = m.Value
		case *ast.AliasNode:
			name := ""
			if m.Value != nil {
				name = m.Value.GetToken().Value
			}
			target, ok := d.anchors[name]
			if !ok {
				return nil
			}
			n = target
		default:
			return n
		}
	}
	return nil
}

type field struct {
	key     string
	keyNode ast.Node
	val     ast.Node
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// mapping lists a mapping's fields in order, with merge keys ("<<: *x")
// applied: explicit keys win over merged ones.
func (d *decoder) mapping(n ast.Node, path string) ([]field, bool) {
	var mvs []*ast.MappingValueNode
	switch m := d.resolve(n).(type) {
	case *ast.MappingNode:
		mvs = m.Values
	case *ast.MappingValueNode:
		mvs = []*ast.MappingValueNode{m}
	default:
		return nil, false
	}
	var out, merged []field
	seen := map[string]bool{}
	for _, mv := range mvs {
		if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
			src := d.resolve(mv.Value)
			list := []ast.Node{src}
			if seq, ok := src.(*ast.SequenceNode); ok {
				list = seq.Values
			}
			for _, m := range list {
				fs, ok := d.mapping(m, path)
				if !ok {
					d.errorf(mv.Value, join(path, "<<"), "a merge key needs a mapping (an alias of one)")
					continue
				}
				merged = append(merged, fs...)
			}
			continue
		}
		key, ok := scalarText(d.resolve(mv.Key))
		if !ok {
			d.errorf(mv.Key, path, "a key must be a plain name")
			continue
		}
		seen[key] = true
		out = append(out, field{key: key, keyNode: mv.Key, val: mv.Value})
	}
	for _, f := range merged {
		if !seen[f.key] {
			seen[f.key] = true
			out = append(out, f)
		}
	}
	return out, true
}

// scalarText is a scalar's text as written: 1200.50 stays "1200.50".
func scalarText(n ast.Node) (string, bool) {
	switch m := n.(type) {
	case *ast.StringNode:
		return m.Value, true
	case *ast.LiteralNode:
		return m.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return m.GetToken().Value, true
	}
	return "", false
}

func isNull(n ast.Node) bool {
	_, ok := n.(*ast.NullNode)
	return n == nil || ok
}

func (d *decoder) unknown(f field, path string, known []string) {
	msg := fmt.Sprintf("unknown field %q", f.key)
	if s := suggest(f.key, known); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	} else {
		msg += "; known fields: " + strings.Join(known, ", ")
	}
	d.errorf(f.keyNode, join(path, f.key), "%s", msg)
}

func (d *decoder) text(n ast.Node, path string) (string, bool) {
	s, ok := scalarText(d.resolve(n))
	if !ok {
		d.errorf(n, path, "expected text, got %s", kindOf(d.resolve(n)))
	}
	return s, ok
}

func (d *decoder) nonEmpty(n ast.Node, path string) string {
	s, ok := d.text(n, path)
	if ok && strings.TrimSpace(s) == "" {
		d.errorf(n, path, "must not be empty")
	}
	return s
}

func (d *decoder) boolean(n ast.Node, path string) (bool, bool) {
	switch m := d.resolve(n).(type) {
	case *ast.BoolNode:
		return m.Value, true
	case *ast.StringNode:
		switch strings.ToLower(m.Value) {
		case "yes", "true":
			return true, true
		case "no", "false":
			return false, true
		}
	}
	d.errorf(n, path, "expected true or false (yes or no)")
	return false, false
}

func (d *decoder) integer(n ast.Node, path string) (int64, bool) {
	if m, ok := d.resolve(n).(*ast.IntegerNode); ok {
		switch v := m.Value.(type) {
		case int64:
			return v, true
		case uint64:
			if v <= math.MaxInt64 {
				return int64(v), true
			}
		}
	}
	d.errorf(n, path, "expected a whole number")
	return 0, false
}

// texts reads a list of text, or a single text as a list of one when one
// is allowed.
func (d *decoder) texts(n ast.Node, path string, single bool) ([]string, bool) {
	r := d.resolve(n)
	if seq, ok := r.(*ast.SequenceNode); ok {
		out := []string{}
		good := true
		for i, v := range seq.Values {
			s, ok := d.text(v, fmt.Sprintf("%s[%d]", path, i))
			good = good && ok
			out = append(out, s)
		}
		return out, good
	}
	if single {
		if s, ok := scalarText(r); ok {
			return []string{s}, true
		}
		d.errorf(n, path, "expected text or a list of text")
		return nil, false
	}
	d.errorf(n, path, "expected a list, e.g. [a, b]; [] for none")
	return nil, false
}

func kindOf(n ast.Node) string {
	switch n.(type) {
	case nil, *ast.NullNode:
		return "null"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	}
	return "a scalar"
}

// value reads any JSON value: what a model may send, or a slot may hold.
func (d *decoder) value(n ast.Node, path string) (any, bool) {
	if t, ok := n.(*ast.TagNode); ok && t.Start != nil && t.Start.Value == "!!str" {
		if s, ok := scalarText(d.resolve(t.Value)); ok {
			return s, true
		}
	}
	switch m := d.resolve(n).(type) {
	case nil:
		if n != nil {
			if _, alias := n.(*ast.AliasNode); alias {
				d.errorf(n, path, "alias %s names no anchor (&name) above it", n.GetToken().Value)
				return nil, false
			}
		}
		return nil, true
	case *ast.NullNode:
		return nil, true
	case *ast.BoolNode:
		return m.Value, true
	case *ast.IntegerNode:
		switch v := m.Value.(type) {
		case int64:
			return float64(v), true
		case uint64:
			return float64(v), true
		}
		return nil, false
	case *ast.FloatNode:
		return m.Value, true
	case *ast.InfinityNode, *ast.NanNode:
		d.errorf(n, path, "%s is not a JSON number", m.GetToken().Value)
		return nil, false
	case *ast.StringNode:
		return m.Value, true
	case *ast.LiteralNode:
		return m.Value.Value, true
	case *ast.SequenceNode:
		out := make([]any, 0, len(m.Values))
		good := true
		for i, v := range m.Values {
			x, ok := d.value(v, fmt.Sprintf("%s[%d]", path, i))
			good = good && ok
			out = append(out, x)
		}
		return out, good
	case *ast.MappingNode, *ast.MappingValueNode:
		fs, _ := d.mapping(m, path)
		out := make(map[string]any, len(fs))
		good := true
		for _, f := range fs {
			x, ok := d.value(f.val, join(path, f.key))
			good = good && ok
			out[f.key] = x
		}
		return out, good
	}
	d.errorf(n, path, "not a JSON value")
	return nil, false
}

func (d *decoder) script(body ast.Node) *Script {
	s := &Script{File: d.file, Line: posOf(body).Line}
	fs, ok := d.mapping(body, "")
	if !ok {
		d.errorf(body, "", "a script is a mapping with at least tool and steps, got %s", kindOf(d.resolve(body)))
		return s
	}
	var clock, steps ast.Node
	for _, f := range fs {
		switch f.key {
		case "name":
			s.Name = d.nonEmpty(f.val, "name")
		case "description":
			d.text(f.val, "description")
		case "skip":
			s.Skip = d.nonEmpty(f.val, "skip")
		case "tool":
			s.Tool = d.nonEmpty(f.val, "tool")
		case "locale":
			s.Locale = d.nonEmpty(f.val, "locale")
		case "time_zone":
			if s.TimeZone = d.nonEmpty(f.val, "time_zone"); s.TimeZone != "" {
				if _, err := time.LoadLocation(s.TimeZone); err != nil {
					d.errorf(f.val, "time_zone", "%q is not an IANA time zone such as Europe/Moscow", s.TimeZone)
				}
			}
		case "clock":
			clock = f.val
		case "steps":
			steps = f.val
		default:
			d.unknown(f, "", scriptFields)
		}
	}
	if s.Tool == "" && !d.has("tool") {
		d.errorf(body, "tool", "required: the contract name every turn is sent with, e.g. bank.open_dispute")
	}
	if clock != nil {
		s.Clock = d.clock(clock, s.TimeZone)
	}
	if steps == nil {
		d.errorf(body, "steps", "required: the list of steps")
		return s
	}
	seq, ok := d.resolve(steps).(*ast.SequenceNode)
	if !ok || len(seq.Values) == 0 {
		d.errorf(steps, "steps", "expected a non-empty list of steps")
		return s
	}
	names := map[string]int{}
	for i, item := range seq.Values {
		d.step = i + 1
		st := d.stepOf(item, names)
		if i < len(seq.Entries) && seq.Entries[i].Start != nil {
			p := seq.Entries[i].Start.Position
			st.layout.dashLine, st.layout.dashCol = p.Line, p.Column
		}
		st.layout.flow = seq.IsFlowStyle || st.layout.flow
		s.steps = append(s.steps, st)
		if st.name != "" {
			names[st.name] = st.n
		}
	}
	d.step = 0
	return s
}

// has says whether an error was already reported for field.
func (d *decoder) has(field string) bool {
	for _, err := range d.errs {
		if e, ok := err.(*Error); ok && e.Field == field && e.Step == d.step {
			return true
		}
	}
	return false
}

var clockLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"}

// clock reads the start clock: RFC 3339, or a local time in the script's
// time zone (UTC without one).
func (d *decoder) clock(n ast.Node, zone string) time.Time {
	s, ok := d.text(n, "clock")
	if !ok {
		return time.Time{}
	}
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t
	}
	loc := time.UTC
	if zone != "" {
		if l, err := time.LoadLocation(zone); err == nil {
			loc = l
		}
	}
	for _, layout := range clockLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t
		}
	}
	d.errorf(n, "clock", "%q is not a time; write 2026-08-23T13:00:00+03:00 (RFC 3339) or 2026-08-23 13:00 (in the script's time_zone)", s)
	return time.Time{}
}

func (d *decoder) stepOf(item ast.Node, names map[string]int) *step {
	st := &step{n: d.step, pos: posOf(item)}
	r := d.resolve(item)
	if s, ok := r.(*ast.StringNode); ok && s.Value == "reset" {
		st.kind = kindReset
		st.layout.scalar = true
		st.layout.keyLine, st.layout.keyCol = st.pos.Line, st.pos.Column
		return st
	}
	fs, ok := d.mapping(item, "")
	if !ok {
		d.errorf(item, "", "a step is a mapping (args, confirm, reset or complete, with expect), or the word reset")
		return st
	}
	if m, ok := r.(*ast.MappingNode); ok && m.IsFlowStyle {
		st.layout.flow = true
	}
	if len(fs) > 0 {
		p := posOf(fs[0].keyNode)
		st.layout.keyLine, st.layout.keyCol = p.Line, p.Column
		st.pos = p
	}
	var expectNode ast.Node
	var reset, complete *field
	sawConfirm := false
	for i := range fs {
		f := fs[i]
		switch f.key {
		case "name":
			st.name = d.nonEmpty(f.val, "name")
			if prev, dup := names[st.name]; dup {
				d.errorf(f.val, "name", "step %d is also called %q", prev, st.name)
			}
			if _, err := strconv.Atoi(st.name); err == nil {
				d.errorf(f.val, "name", "a step name must not be a number: numbers refer to steps by position")
			}
		case "user":
			st.user, _ = d.text(f.val, "user")
		case "args":
			st.hasArgs = true
			if isNull(d.resolve(f.val)) {
				break
			}
			if _, ok := d.mapping(f.val, "args"); !ok {
				d.errorf(f.val, "args", "expected a mapping of argument names to values (the model's tool-call arguments), got %s", kindOf(d.resolve(f.val)))
				break
			}
			v, _ := d.value(f.val, "args")
			st.args, _ = v.(map[string]any)
		case "confirm":
			sawConfirm = true
			st.confirm = d.confirm(f.val)
		case "reset":
			reset = &fs[i]
			if !isNull(d.resolve(f.val)) {
				if b, ok := d.boolean(f.val, "reset"); ok && !b {
					d.errorf(f.val, "reset", "reset: false does nothing; remove it")
				}
			}
		case "complete":
			complete = &fs[i]
			st.complete = d.completion(f.val)
		case "advance":
			st.advance = d.duration(f.val)
		case "turn_id":
			st.turnID = d.nonEmpty(f.val, "turn_id")
		case "expect":
			expectNode = f.val
			st.layout.expectLine = posOf(f.keyNode).Line
		default:
			d.unknown(f, "", stepFields)
		}
	}

	turn := st.hasArgs || sawConfirm
	switch {
	case reset != nil && (turn || complete != nil), complete != nil && turn:
		d.errorf(item, "", "a step does one thing: a turn (args and/or confirm), reset, or complete")
	case reset != nil:
		st.kind = kindReset
	case complete != nil:
		st.kind = kindComplete
	case !turn:
		d.errorf(item, "", "a step needs args, confirm, reset or complete (args: {} sends a turn without arguments)")
	}
	if st.turnID != "" && st.kind != kindTurn {
		d.errorf(item, "turn_id", "only a turn has a turn_id")
	}
	if expectNode != nil {
		st.expect = d.expectOf(expectNode, st.kind, names)
	}
	return st
}

func (d *decoder) confirm(n ast.Node) *bool {
	yes, no := true, false
	switch m := d.resolve(n).(type) {
	case *ast.BoolNode:
		if m.Value {
			return &yes
		}
		return &no
	case *ast.StringNode:
		switch strings.ToLower(strings.TrimSpace(m.Value)) {
		case "yes", "true", "accept", "y":
			return &yes
		case "no", "false", "decline", "n":
			return &no
		}
	}
	d.errorf(n, "confirm", "expected yes or no (accept or decline)")
	return nil
}

// duration reads a Go duration with days allowed: 45m, 1h30m, 2d, 1d12h.
func (d *decoder) duration(n ast.Node) time.Duration {
	s, ok := d.text(n, "advance")
	if !ok {
		return 0
	}
	v, err := parseDuration(s)
	if err != nil {
		d.errorf(n, "advance", "%v", err)
	}
	return v
}

func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err == nil && n >= 0 {
			days = time.Duration(n) * 24 * time.Hour
			s = s[i+1:]
		}
	}
	var rest time.Duration
	if s != "" {
		var err error
		if rest, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q is not a duration; write e.g. 45m, 1h30m, 2d or 1d12h", s)
		}
	}
	if v := days + rest; v > 0 {
		return v, nil
	}
	return 0, errors.New("must move the clock forward, e.g. 45m")
}

func (d *decoder) completion(n ast.Node) *completion {
	c := &completion{}
	fs, ok := d.mapping(n, "complete")
	if !ok {
		d.errorf(n, "complete", "expected a mapping with result (the backend's result) or failure")
		return c
	}
	for _, f := range fs {
		path := join("complete", f.key)
		switch f.key {
		case "result":
			c.hasResult = true
			c.result, _ = d.value(f.val, path)
		case "failure":
			c.failure = d.failure(f.val, path)
		case "idempotency_key":
			c.idempotencyKey = d.nonEmpty(f.val, path)
		default:
			d.unknown(f, "complete", completeFields)
		}
	}
	if c.hasResult == (c.failure != nil) {
		d.errorf(n, "complete", "give exactly one of result or failure")
	}
	return c
}

func (d *decoder) failure(n ast.Node, path string) *slotdv1.BackendFailure {
	out := &slotdv1.BackendFailure{}
	if s, ok := scalarText(d.resolve(n)); ok {
		out.Kind = d.failureKind(n, s, path)
		return out
	}
	fs, ok := d.mapping(n, path)
	if !ok {
		d.errorf(n, path, "expected a failure kind (timeout, unavailable, ...) or a mapping with kind")
		return out
	}
	for _, f := range fs {
		p := join(path, f.key)
		switch f.key {
		case "kind":
			if s, ok := d.text(f.val, p); ok {
				out.Kind = d.failureKind(f.val, s, p)
			}
		case "http_status":
			v, _ := d.integer(f.val, p)
			out.HttpStatus = int32(v)
		case "retry_after_seconds":
			v, _ := d.integer(f.val, p)
			out.RetryAfterSeconds = int32(v)
		default:
			d.unknown(f, path, failureFields)
		}
	}
	return out
}

func (d *decoder) failureKind(n ast.Node, s, path string) slotdv1.FailureKind {
	v, ok := parseEnum(s, "FAILURE_KIND_", slotdv1.FailureKind_value)
	if !ok {
		d.errorf(n, path, "unknown failure kind %q; one of %s", s, enumNames("FAILURE_KIND_", slotdv1.FailureKind_value))
	}
	return slotdv1.FailureKind(v)
}

// parseEnum reads ask, ASK or ACTION_ASK (case-insensitive) as the enum
// value; the UNSPECIFIED value is never a valid expectation.
func parseEnum(s, prefix string, values map[string]int32) (int32, bool) {
	u := strings.ToUpper(strings.TrimSpace(s))
	u = strings.NewReplacer(" ", "_", "-", "_").Replace(u)
	if !strings.HasPrefix(u, prefix) {
		u = prefix + u
	}
	v, ok := values[u]
	return v, ok && v != 0
}

// enumNames lists an enum's values as scripts write them.
func enumNames(prefix string, values map[string]int32) string {
	type kv struct {
		name string
		v    int32
	}
	var all []kv
	for name, v := range values {
		if v != 0 {
			all = append(all, kv{strings.ToLower(strings.TrimPrefix(name, prefix)), v})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	names := make([]string, len(all))
	for i, x := range all {
		names[i] = x.name
	}
	return strings.Join(names, ", ")
}

// codeByName accepts InvalidArgument, INVALID_ARGUMENT, invalid_argument and
// invalid-argument.
var codeByName = func() map[string]codes.Code {
	m := map[string]codes.Code{}
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		m[foldName(c.String())] = c
	}
	return m
}()

func foldName(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(s))
}

func (d *decoder) expectOf(n ast.Node, kind stepKind, names map[string]int) *expect {
	if isNull(d.resolve(n)) {
		return nil
	}
	fs, ok := d.mapping(n, "expect")
	if !ok {
		d.errorf(n, "expect", "expected a mapping of what the response must hold")
		return nil
	}
	e := &expect{pos: posOf(n)}
	allowed := map[string]bool{}
	for _, k := range expectByKind[kind] {
		allowed[k] = true
	}
	for _, f := range fs {
		path := join("expect", f.key)
		pos := posOf(f.keyNode)
		known := false
		for _, k := range expectFields {
			known = known || k == f.key
		}
		if !known {
			d.unknown(f, "expect", expectFields)
			continue
		}
		if !allowed[f.key] {
			d.errorf(f.keyNode, path, "a %s step cannot be checked for %s; it can be checked for %s",
				kind, f.key, strings.Join(expectByKind[kind], ", "))
			continue
		}
		switch f.key {
		case "action":
			if s, ok := d.text(f.val, path); ok {
				v, ok := parseEnum(s, "ACTION_", slotdv1.Action_value)
				if !ok {
					d.errorf(f.val, path, "unknown action %q; one of %s", s, enumNames("ACTION_", slotdv1.Action_value))
				}
				e.action = &want[slotdv1.Action]{slotdv1.Action(v), pos}
			}
		case "ask":
			if s, ok := d.text(f.val, path); ok {
				e.ask = &want[string]{s, pos}
			}
		case "question_contains":
			if v, ok := d.texts(f.val, path, true); ok {
				e.questionContains = &want[[]string]{v, pos}
			}
		case "allowed":
			if v, ok := d.texts(f.val, path, false); ok {
				e.allowed = &want[[]string]{v, pos}
			}
		case "missing":
			if v, ok := d.texts(f.val, path, false); ok {
				e.missing = &want[[]string]{v, pos}
			}
		case "slots":
			if isNull(d.resolve(f.val)) {
				d.errorf(f.val, path, "slots: null checks nothing; write slots: {exact: {}} for a session without slots")
				continue
			}
			e.slots = d.mapWant(f.val, path, pos)
		case "arguments":
			e.arguments = d.mapWant(f.val, path, pos)
		case "output":
			e.output = d.mapWant(f.val, path, pos)
		case "changes":
			e.changes = d.changesWant(f.val, path, pos)
		case "problem":
			e.problem = d.problemWant(f.val, path, pos)
		case "replayed":
			if v, ok := d.boolean(f.val, path); ok {
				e.replayed = &want[bool]{v, pos}
			}
		case "status":
			if s, ok := d.text(f.val, path); ok {
				v, ok := parseEnum(s, "SESSION_STATUS_", slotdv1.SessionStatus_value)
				if !ok {
					d.errorf(f.val, path, "unknown session status %q; one of %s", s, enumNames("SESSION_STATUS_", slotdv1.SessionStatus_value))
				}
				e.status = &want[slotdv1.SessionStatus]{slotdv1.SessionStatus(v), pos}
			}
		case "version":
			if v, ok := d.integer(f.val, path); ok {
				e.version = &want[int64]{v, pos}
			}
		case "idempotency_key":
			e.idempotencyKey = d.keyWant(f.val, path, pos, names)
		case "error":
			if s, ok := d.text(f.val, path); ok {
				c, ok := codeByName[foldName(s)]
				if !ok || c == codes.OK {
					d.errorf(f.val, path, "unknown gRPC code %q; e.g. InvalidArgument, NotFound, FailedPrecondition, Unimplemented", s)
				}
				e.err = &want[codes.Code]{c, pos}
			}
		}
	}
	if e.err != nil {
		for _, f := range fs {
			if f.key != "error" && f.key != "problem" {
				d.errorf(f.keyNode, join("expect", f.key), "a step that expects an error has no response to check; it can be checked for its problem")
			}
		}
	}
	return e
}

// mapWant reads an object expectation: {key: value} (those keys; null means
// absent), {exact: {...}} (exactly those keys), or null (no object at all).
func (d *decoder) mapWant(n ast.Node, path string, pos Pos) *mapWant {
	w := &mapWant{pos: pos}
	if isNull(d.resolve(n)) {
		w.none = true
		return w
	}
	fs, ok := d.mapping(n, path)
	if !ok {
		d.errorf(n, path, "expected a mapping of names to values, or {exact: {...}}")
		return w
	}
	if len(fs) == 1 && fs[0].key == "exact" {
		if _, isMap := d.mapping(fs[0].val, path); isMap || isNull(d.resolve(fs[0].val)) {
			w.exact = true
			path += ".exact"
			fs, _ = d.mapping(fs[0].val, path)
		}
	}
	for _, f := range fs {
		v, _ := d.value(f.val, join(path, f.key))
		w.entries = append(w.entries, entry{key: f.key, value: v, pos: posOf(f.keyNode)})
	}
	return w
}

func (d *decoder) changesWant(n ast.Node, path string, pos Pos) *changesWant {
	w := &changesWant{pos: pos}
	list := n
	if fs, ok := d.mapping(n, path); ok {
		if len(fs) != 1 || fs[0].key != "exact" {
			d.errorf(n, path, "expected a list of changes, or {exact: [...]} for exactly these changes")
			return w
		}
		w.exact = true
		path += ".exact"
		list = fs[0].val
	}
	if isNull(d.resolve(list)) && w.exact {
		return w
	}
	seq, ok := d.resolve(list).(*ast.SequenceNode)
	if !ok {
		d.errorf(list, path, "expected a list of changes, e.g. [{slot: amount, decision: overwritten}]")
		return w
	}
	for i, item := range seq.Values {
		p := fmt.Sprintf("%s[%d]", path, i)
		fs, ok := d.mapping(item, p)
		if !ok {
			d.errorf(item, p, "expected a mapping with slot and decision, old, new or message_contains")
			continue
		}
		c := &changeWant{pos: posOf(item)}
		for _, f := range fs {
			fp := join(p, f.key)
			fpos := posOf(f.keyNode)
			switch f.key {
			case "slot":
				c.slot = d.nonEmpty(f.val, fp)
			case "decision":
				if s, ok := d.text(f.val, fp); ok {
					v, ok := parseEnum(s, "DECISION_", slotdv1.Decision_value)
					if !ok {
						d.errorf(f.val, fp, "unknown decision %q; one of %s", s, enumNames("DECISION_", slotdv1.Decision_value))
					}
					c.decision = &want[slotdv1.Decision]{slotdv1.Decision(v), fpos}
				}
			case "old":
				v, _ := d.value(f.val, fp)
				c.old = &want[any]{v, fpos}
			case "new":
				v, _ := d.value(f.val, fp)
				c.new = &want[any]{v, fpos}
			case "message_contains":
				if s, ok := d.text(f.val, fp); ok {
					c.messageContains = &want[string]{s, fpos}
				}
			default:
				d.unknown(f, p, changeFields)
			}
		}
		if c.slot == "" && !d.has(join(p, "slot")) {
			d.errorf(item, join(p, "slot"), "required: the slot the change is about")
		}
		w.items = append(w.items, c)
	}
	return w
}

func (d *decoder) problemWant(n ast.Node, path string, pos Pos) *problemWant {
	w := &problemWant{pos: pos}
	if isNull(d.resolve(n)) {
		w.none = true
		return w
	}
	fs, ok := d.mapping(n, path)
	if !ok {
		d.errorf(n, path, "expected a mapping (type, pointer, retryable, ...) or null for no problem")
		return w
	}
	for _, f := range fs {
		fp := join(path, f.key)
		fpos := posOf(f.keyNode)
		switch f.key {
		case "type":
			if s, ok := d.text(f.val, fp); ok {
				if !strings.Contains(s, "://") {
					s = ProblemTypeBase + s
				}
				w.typ = &want[string]{s, fpos}
			}
		case "title":
			if s, ok := d.text(f.val, fp); ok {
				w.title = &want[string]{s, fpos}
			}
		case "status":
			if v, ok := d.integer(f.val, fp); ok {
				w.status = &want[int32]{int32(v), fpos}
			}
		case "detail_contains":
			if s, ok := d.text(f.val, fp); ok {
				w.detailContains = &want[string]{s, fpos}
			}
		case "retryable":
			if v, ok := d.boolean(f.val, fp); ok {
				w.retryable = &want[bool]{v, fpos}
			}
		case "pointer":
			if v, ok := d.texts(f.val, fp, true); ok {
				w.pointers = &want[[]string]{v, fpos}
			}
		case "errors":
			seq, ok := d.resolve(f.val).(*ast.SequenceNode)
			if !ok {
				d.errorf(f.val, fp, "expected a list of field errors, e.g. [{pointer: /reason, allowed: [...]}]")
				continue
			}
			for i, item := range seq.Values {
				w.errors = append(w.errors, d.fieldErrorWant(item, fmt.Sprintf("%s[%d]", fp, i)))
			}
		default:
			d.unknown(f, path, problemFields)
		}
	}
	return w
}

func (d *decoder) fieldErrorWant(n ast.Node, path string) *fieldErrorWant {
	w := &fieldErrorWant{pos: posOf(n)}
	fs, ok := d.mapping(n, path)
	if !ok {
		d.errorf(n, path, "expected a mapping with pointer and input, allowed or format_contains")
		return w
	}
	for _, f := range fs {
		fp := join(path, f.key)
		fpos := posOf(f.keyNode)
		switch f.key {
		case "pointer":
			w.pointer = d.nonEmpty(f.val, fp)
		case "input":
			if s, ok := d.text(f.val, fp); ok {
				w.input = &want[string]{s, fpos}
			}
		case "input_contains":
			if s, ok := d.text(f.val, fp); ok {
				w.inputContains = &want[string]{s, fpos}
			}
		case "allowed":
			if v, ok := d.texts(f.val, fp, false); ok {
				w.allowed = &want[[]string]{v, fpos}
			}
		case "format_contains":
			if s, ok := d.text(f.val, fp); ok {
				w.formatContains = &want[string]{s, fpos}
			}
		default:
			d.unknown(f, path, fieldErrorFields)
		}
	}
	if w.pointer == "" && !d.has(join(path, "pointer")) {
		d.errorf(n, join(path, "pointer"), "required: the JSON pointer of the argument, e.g. /reason")
	}
	return w
}

// keyWant reads idempotency_key: true (present), false (absent), or
// {same_as: N} (the same key as step N, by number or name).
func (d *decoder) keyWant(n ast.Node, path string, pos Pos, names map[string]int) *keyWant {
	w := &keyWant{pos: pos}
	switch d.resolve(n).(type) {
	case *ast.BoolNode, *ast.StringNode:
		if b, ok := d.boolean(n, path); ok {
			w.present = &b
		}
		return w
	}
	fs, ok := d.mapping(n, path)
	if !ok || len(fs) != 1 || fs[0].key != "same_as" {
		d.errorf(n, path, "expected true, false, or {same_as: STEP} (an earlier step's number or name)")
		return w
	}
	ref, ok := d.text(fs[0].val, path+".same_as")
	if !ok {
		return w
	}
	if k, err := strconv.Atoi(ref); err == nil {
		w.sameAs = k
	} else {
		w.sameAs = names[ref]
	}
	if w.sameAs < 1 || w.sameAs >= d.step {
		d.errorf(fs[0].val, path+".same_as", "%q is not an earlier step (a number below %d, or the name of an earlier step)", ref, d.step)
		w.sameAs = 0
	}
	return w
}

// suggest returns the known name closest to s when it is close enough to be
// a typo.
func suggest(s string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if dist := levenshtein(strings.ToLower(s), k); dist < bestD {
			best, bestD = k, dist
		}
	}
	if bestD > len(s)/2 {
		return ""
	}
	return best
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
