package script

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Parse reads the scripts in one file's content; file names it in errors.
//
// The YAML library parses the file and, per document, resolves anchors,
// aliases and merge keys: each mapping comes from it as its keys and their
// value nodes, each list as its item nodes. Parse reads those into the
// structs of format.go by their yaml tags, each field reading its own value,
// so that all the mistakes in a file are reported at once, each at its line
// and column, not just the first.
func Parse(file string, data []byte) ([]*Script, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, syntaxError(file, err)
	}
	var bodies []ast.Node
	for _, doc := range f.Docs {
		if _, comment := doc.Body.(*ast.CommentGroupNode); doc.Body != nil && !comment {
			bodies = append(bodies, doc.Body)
		}
	}
	if len(bodies) == 0 {
		return nil, &Error{File: file, Msg: "no script in this file"}
	}
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	var out []*Script
	var errs []error
	lines := map[string]int{} // the line of each script, by name
	for i, body := range bodies {
		// A decoder per document, as anchors do not reach across documents;
		// decoding the whole document first refuses an alias without its
		// anchor or a merge key on something other than a mapping.
		r := &reader{file: file, dec: yaml.NewDecoder(bytes.NewReader(nil), yaml.AllowDuplicateMapKey())}
		var all any
		if err := r.dec.DecodeFromNode(body, &all); err != nil {
			errs = append(errs, syntaxError(file, err))
			continue
		}
		s := r.script(body)
		if s.Name == "" {
			s.Name = base
			if len(bodies) > 1 {
				s.Name = fmt.Sprintf("%s#%d", base, i+1)
			}
		}
		if line, dup := lines[s.Name]; dup {
			r.errorf(posOf(body), "name", "%q is also the name of the script at line %d; names label reports and must differ", s.Name, line)
		}
		lines[s.Name] = s.Line
		for _, e := range r.errs {
			errs = append(errs, e)
		}
		if len(r.errs) == 0 {
			out = append(out, s)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// syntaxError turns the YAML library's error into ours, keeping its
// position and its short message (without its source excerpt).
func syntaxError(file string, err error) *Error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		p := ye.GetToken().Position
		return &Error{File: file, Pos: Pos{Line: p.Line, Column: p.Column}, Msg: "YAML: " + ye.GetMessage()}
	}
	return &Error{File: file, Msg: "YAML: " + err.Error()}
}

// reader reads one document into a Script and collects what is wrong in it.
type reader struct {
	file  string
	dec   *yaml.Decoder // resolves the document's anchors, aliases and merge keys
	step  int           // the step being read, from 1; 0 outside the steps
	names map[string]int
	errs  []*Error
}

// val is one value of a script: its node as the library resolved it (nil
// for null), where its key and the value itself are written, and its path
// in the script or step, e.g. expect.changes[0].decision.
type val struct {
	node    ast.Node
	key, at Pos
	path    string
}

// pair is a key of a mapping and its value.
type pair struct {
	name string
	val
}

// A field reads its own value; every field of the structs in format.go is
// one.
type field interface{ read(r *reader, v val) }

func (r *reader) errorf(at Pos, field, format string, args ...any) {
	r.errs = append(r.errs, &Error{File: r.file, Pos: at, Step: r.step, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// mapping lists a mapping's keys as the library resolves them (merge keys
// applied, aliases followed): in the order written, then the ones merged in,
// by name. It is false when v is not a mapping.
func (r *reader) mapping(v val) ([]pair, bool) {
	n, ok := bare(v.node).(ast.MapNode)
	if !ok {
		return nil, false
	}
	m, ok := r.keys(v, bare(v.node))
	if !ok {
		return nil, true
	}
	var out []pair
	seen := map[string]bool{}
	for it := n.MapRange(); it.Next(); {
		name, ok := scalarText(it.Key())
		if _, in := m[name]; !ok || !in || seen[name] || it.Key().IsMergeKey() {
			continue
		}
		// A key written here wins over a merged one, wherever the merge key
		// is (the library lets whichever comes last win).
		if one, ok := r.keys(v, it.KeyValue()); ok {
			m[name] = one[name]
		}
		seen[name] = true
		out = append(out, pair{name, val{m[name], posOf(it.Key()), posOf(it.Value()), join(v.path, name)}})
	}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if !seen[name] {
			out = append(out, pair{name, val{m[name], v.at, cmp.Or(posOf(m[name]), v.at), join(v.path, name)}})
		}
	}
	return out, true
}

// keys decodes a mapping into its keys and their value nodes.
func (r *reader) keys(v val, n ast.Node) (map[string]ast.Node, bool) {
	var m map[string]ast.Node
	if err := r.dec.DecodeFromNode(n, &m); err != nil {
		r.errorf(v.at, v.path, "%s", syntaxError(r.file, err).Msg)
		return nil, false
	}
	return m, true
}

// items lists a list's items, aliases followed; false when v is not a list.
func (r *reader) items(v val) ([]val, bool) {
	seq, ok := bare(v.node).(*ast.SequenceNode)
	if !ok {
		return nil, false
	}
	var nodes []ast.Node
	if err := r.dec.DecodeFromNode(seq, &nodes); err != nil {
		r.errorf(v.at, v.path, "%s", syntaxError(r.file, err).Msg)
		return nil, true
	}
	out := make([]val, len(nodes))
	for i, n := range nodes {
		at := posOf(n)
		if i < len(seq.Values) {
			at = posOf(seq.Values[i])
		}
		out[i] = val{n, at, at, fmt.Sprintf("%s[%d]", v.path, i)}
	}
	return out, true
}

// fields reads a mapping into the struct dst points to, each key into the
// field its yaml tag names. It reports keys no tag names and required fields
// that are missing, and returns the keys; false when v is not a mapping.
func (r *reader) fields(v val, dst any) ([]pair, bool) {
	pairs, ok := r.mapping(v)
	if !ok {
		return nil, false
	}
	rv := reflect.ValueOf(dst).Elem()
	names := fieldNames(rv.Type())
	for _, p := range pairs {
		i := slices.Index(names, p.name)
		if i < 0 || p.name == "" {
			r.unknown(p, names)
			continue
		}
		f := rv.Field(i)
		if f.Kind() == reflect.Pointer {
			f.Set(reflect.New(f.Type().Elem()))
		} else {
			f = f.Addr()
		}
		f.Interface().(field).read(r, p.val)
	}
	for i, name := range names {
		if why := rv.Type().Field(i).Tag.Get("required"); why != "" && !has(pairs, name) {
			r.errorf(v.at, join(v.path, name), "required: %s", why)
		}
	}
	return pairs, true
}

// fieldNames are the yaml tags of t's fields, "" for a field without one.
func fieldNames(t reflect.Type) []string {
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
	}
	return names
}

func (r *reader) unknown(p pair, names []string) {
	known := slices.DeleteFunc(slices.Clone(names), func(s string) bool { return s == "" })
	msg := fmt.Sprintf("unknown field %q", p.name)
	if s := suggest(p.name, known); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	} else {
		msg += "; known fields: " + strings.Join(known, ", ")
	}
	r.errorf(p.key, p.path, "%s", msg)
}

func has(pairs []pair, name string) bool {
	return slices.ContainsFunc(pairs, func(p pair) bool { return p.name == name })
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// bare looks through an anchor or a tag to the node that holds the value.
func bare(n ast.Node) ast.Node {
	for {
		switch m := n.(type) {
		case *ast.AnchorNode:
			n = m.Value
		case *ast.TagNode:
			n = m.Value
		default:
			return n
		}
	}
}

func isNull(n ast.Node) bool {
	_, null := bare(n).(*ast.NullNode)
	return n == nil || null
}

// posOf is where a node is written; a mapping's is its first key's.
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
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return Pos{}
	}
	return Pos{Line: tk.Position.Line, Column: tk.Position.Column}
}

// scalarText is a scalar's text as written: 1200.50 stays "1200.50".
func scalarText(n ast.Node) (string, bool) {
	switch m := bare(n).(type) {
	case *ast.StringNode:
		return m.Value, true
	case *ast.LiteralNode:
		return m.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return m.GetToken().Value, true
	}
	return "", false
}

func kindOf(n ast.Node) string {
	switch bare(n).(type) {
	case nil, *ast.NullNode:
		return "null"
	case ast.MapNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	}
	return "a scalar"
}

func (r *reader) text(v val) (string, bool) {
	s, ok := scalarText(v.node)
	if !ok {
		r.errorf(v.at, v.path, "expected text, got %s", kindOf(v.node))
	}
	return s, ok
}

func (r *reader) boolean(v val) (bool, bool) {
	switch n := bare(v.node).(type) {
	case *ast.BoolNode:
		return n.Value, true
	case *ast.StringNode:
		switch strings.ToLower(n.Value) {
		case "yes", "true":
			return true, true
		case "no", "false":
			return false, true
		}
	}
	r.errorf(v.at, v.path, "expected true or false (yes or no)")
	return false, false
}

func (r *reader) integer(v val) (int64, bool) {
	if n, ok := bare(v.node).(*ast.IntegerNode); ok {
		switch x := n.Value.(type) {
		case int64:
			return x, true
		case uint64:
			if x <= math.MaxInt64 {
				return int64(x), true
			}
		}
	}
	r.errorf(v.at, v.path, "expected a whole number")
	return 0, false
}

// list reads a list of text; with single, a text is a list of one.
func (r *reader) list(v val, single bool) []string {
	if items, ok := r.items(v); ok {
		out := []string{}
		for _, it := range items {
			s, _ := r.text(it)
			out = append(out, s)
		}
		return out
	}
	if s, ok := scalarText(v.node); ok && single {
		return []string{s}
	}
	if single {
		r.errorf(v.at, v.path, "expected text or a list of text")
	} else {
		r.errorf(v.at, v.path, "expected a list, e.g. [a, b]; [] for none")
	}
	return nil
}

// value reads any JSON value: what a model may send, or a slot may hold.
// Numbers are float64, as in JSON; !!str keeps a scalar's text as written
// (the library would read !!str 0417 as the octal 271).
func (r *reader) value(v val) any {
	switch n := v.node.(type) {
	case nil, *ast.NullNode:
		return nil
	case *ast.TagNode:
		if s, ok := scalarText(n.Value); ok && n.Start != nil && n.Start.Value == "!!str" {
			return s
		}
		v.node = n.Value
		return r.value(v)
	case *ast.BoolNode:
		return n.Value
	case *ast.IntegerNode:
		switch x := n.Value.(type) {
		case int64:
			return float64(x)
		case uint64:
			return float64(x)
		}
	case *ast.FloatNode:
		return n.Value
	case *ast.InfinityNode, *ast.NanNode:
		r.errorf(v.at, v.path, "%s is not a JSON number", n.GetToken().Value)
		return nil
	case *ast.StringNode:
		return n.Value
	case *ast.LiteralNode:
		return n.Value.Value
	}
	if items, ok := r.items(v); ok {
		out := make([]any, 0, len(items))
		for _, it := range items {
			out = append(out, r.value(it))
		}
		return out
	}
	if pairs, ok := r.mapping(v); ok {
		out := make(map[string]any, len(pairs))
		for _, p := range pairs {
			out[p.name] = r.value(p.val)
		}
		return out
	}
	r.errorf(v.at, v.path, "not a JSON value")
	return nil
}

// enum reads an enum value by its name (see parseEnum).
func (r *reader) enum(v val, what, prefix string, values map[string]int32) int32 {
	s, ok := r.text(v)
	if !ok {
		return 0
	}
	n, ok := parseEnum(s, prefix, values)
	if !ok {
		r.errorf(v.at, v.path, "unknown %s %q; one of %s", what, s, enumNames(prefix, values))
	}
	return n
}

func (r *reader) script(body ast.Node) *Script {
	at := posOf(body)
	s := &Script{File: r.file, Line: at.Line}
	var d scriptDoc
	if _, ok := r.fields(val{body, at, at, ""}, &d); !ok {
		r.errorf(at, "", "a script is a mapping with at least tool and steps, got %s", kindOf(body))
		return s
	}
	s.Name, s.Skip, s.Tool, s.Locale, s.TimeZone = string(d.Name), string(d.Skip), string(d.Tool), string(d.Locale), string(d.TimeZone)
	if c := d.Clock; c != nil && c.ok {
		var ok bool
		if s.Clock, ok = parseClock(c.text, s.TimeZone); !ok {
			r.errorf(c.at, "clock", "%q is not a time; write 2026-08-23T13:00:00+03:00 (RFC 3339) or 2026-08-23 13:00 (in the script's time_zone)", strings.TrimSpace(c.text))
		}
	}
	s.steps = d.Steps
	return s
}

// read reads the steps in order, as a step may refer to the ones before it.
func (s *steps) read(r *reader, v val) {
	items, ok := r.items(v)
	if !ok || len(items) == 0 {
		r.errorf(v.at, v.path, "expected a non-empty list of steps")
		return
	}
	seq := bare(v.node).(*ast.SequenceNode)
	r.names = map[string]int{}
	for i, item := range items {
		r.step = i + 1
		st := r.stepOf(item)
		if i < len(seq.Entries) && seq.Entries[i].Start != nil {
			p := seq.Entries[i].Start.Position
			st.layout.dashLine, st.layout.dashCol = p.Line, p.Column
		}
		st.layout.flow = st.layout.flow || seq.IsFlowStyle
		*s = append(*s, st)
		if st.name != "" {
			r.names[st.name] = st.n
		}
	}
	r.step = 0
}

func (r *reader) stepOf(v val) *step {
	st := &step{n: r.step, pos: v.at}
	if s, ok := bare(v.node).(*ast.StringNode); ok && s.Value == "reset" {
		st.kind = kindReset
		st.layout.scalar = true
		st.layout.keyLine, st.layout.keyCol = v.at.Line, v.at.Column
		return st
	}
	var d stepDoc
	pairs, ok := r.fields(val{v.node, v.at, v.at, ""}, &d)
	if !ok {
		r.errorf(v.at, "", "a step is a mapping (args, confirm, reset or complete, with expect), or the word reset")
		return st
	}
	if m, ok := bare(v.node).(*ast.MappingNode); ok && m.IsFlowStyle {
		st.layout.flow = true
	}
	if len(pairs) > 0 {
		st.pos = pairs[0].key
		st.layout.keyLine, st.layout.keyCol = st.pos.Line, st.pos.Column
	}
	st.name, st.user, st.turnID, st.advance = string(d.Name), string(d.User), string(d.TurnID), time.Duration(d.Advance)
	st.confirm = (*bool)(d.Confirm)
	if d.Args != nil {
		st.hasArgs, st.args = true, d.Args.m
	}
	if d.Complete != nil {
		st.complete = d.Complete.completion()
	}
	turn := d.Args != nil || d.Confirm != nil
	switch {
	case d.Reset != nil && (turn || d.Complete != nil), d.Complete != nil && turn:
		r.errorf(v.at, "", "a step does one thing: a turn (args and/or confirm), reset, or complete")
	case d.Reset != nil:
		st.kind = kindReset
	case d.Complete != nil:
		st.kind = kindComplete
	case !turn:
		r.errorf(v.at, "", "a step needs args, confirm, reset or complete (args: {} sends a turn without arguments)")
	}
	if st.turnID != "" && st.kind != kindTurn {
		r.errorf(v.at, "turn_id", "only a turn has a turn_id")
	}
	if d.Expect != nil {
		r.checkKind(d.Expect, st.kind)
		st.expect, st.layout.expectLine = d.Expect, d.Expect.keyLine
	}
	return st
}

// checkKind refuses what a step of this kind cannot be checked for, as the
// step tags of expect say.
func (r *reader) checkKind(e *expect, kind stepKind) {
	t := reflect.TypeFor[expect]()
	names := fieldNames(t)
	can := func(i int, kind string) bool {
		return slices.Contains(strings.Split(t.Field(i).Tag.Get("step"), ","), kind)
	}
	var allowed []string
	for i, name := range names {
		if can(i, kind.String()) {
			allowed = append(allowed, name)
		}
	}
	for _, p := range e.keys {
		switch i := slices.Index(names, p.name); {
		case i < 0 || p.name == "": // unknown, and reported as such
		case !can(i, kind.String()):
			r.errorf(p.key, p.path, "a %s step cannot be checked for %s; it can be checked for %s", kind, p.name, strings.Join(allowed, ", "))
		case e.Error != nil && !can(i, "error"):
			r.errorf(p.key, p.path, "a step that expects an error has no response to check; it can be checked for its problem")
		}
	}
}
