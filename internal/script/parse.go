package script

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Parse reads the scripts in one file's content; file names it in errors.
//
// The YAML library parses the file and decodes each document into the
// structs of format.go by their yaml tags, resolving anchors, aliases and
// merge keys and refusing a key no tag names. It stops at the first mistake
// in what it decodes, so Parse reports the first mistake in a script's own
// fields and the first in each of its steps, each at its line and column.
func Parse(file string, data []byte) ([]*Script, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, errorsOf(file, err)[0]
	}
	docs := slices.DeleteFunc(f.Docs, func(d *ast.DocumentNode) bool {
		_, comment := d.Body.(*ast.CommentGroupNode)
		return d.Body == nil || comment
	})
	if len(docs) == 0 {
		return nil, &Error{File: file, Msg: "no script in this file"}
	}
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	var out []*Script
	var errs []error
	lines := map[string]int{} // the line of each script, by name
	for i, doc := range docs {
		ast.Walk(normalizer{}, doc.Body)
		// A decoder per document, as anchors do not reach across documents.
		var d scriptDoc
		err := yaml.NewDecoder(bytes.NewReader(nil), yaml.DisallowUnknownField(), yaml.AllowDuplicateMapKey()).DecodeFromNode(doc.Body, &d)
		s := &Script{File: file, Line: posOf(doc.Body).Line, Name: cmp.Or(string(d.Name.v), base), Skip: string(d.Skip.v), Tool: string(d.Tool.v),
			Locale: string(d.Locale.v), TimeZone: string(d.TimeZone.v), Clock: d.start, steps: d.Steps.list}
		if d.Name.v == "" && len(docs) > 1 {
			s.Name = fmt.Sprintf("%s#%d", base, i+1)
		}
		found := errorsOf(file, err)
		nameShapes(found, doc.Body)
		if line, dup := lines[s.Name]; dup {
			found = append(found, fault(posOf(doc.Body), "name", "%q is also the name of the script at line %d; names label reports and must differ", s.Name, line))
		}
		lines[s.Name] = s.Line
		slices.SortStableFunc(found, func(a, b *Error) int {
			return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Column, b.Pos.Column))
		})
		for _, e := range found {
			e.File = file
			errs = append(errs, e)
		}
		if len(found) == 0 {
			out = append(out, s)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// shapes are the library's words for a value of the wrong shape, and what
// a script's reader is told instead.
var shapes = []struct{ says, want string }{
	{"where sequence is expected", "want a list"},
	{"where mapping is expected", "want a mapping of names to values"},
	{"where scalar is expected", "want a single value"},
}

// nameShapes words the library's shape errors ("mapping was used where
// sequence is expected") with the field they are about, found by the
// position the library gives: "problem.errors: want a list".
func nameShapes(found []*Error, body ast.Node) {
	for _, e := range found {
		i := slices.IndexFunc(shapes, func(s struct{ says, want string }) bool { return strings.HasSuffix(e.Msg, s.says) })
		if i < 0 || e.Field != "" {
			continue
		}
		var at ast.Node
		ast.Walk(visitFunc(func(n ast.Node) bool {
			if tk := n.GetToken(); at == nil && tk != nil && tk.Position.Line == e.Pos.Line && tk.Position.Column == e.Pos.Column {
				if _, kv := n.(*ast.MappingValueNode); !kv {
					at = n
				}
			}
			return at == nil
		}), body)
		if at == nil {
			continue
		}
		named := fault(e.Pos, at.GetPath(), "%s", shapes[i].want)
		e.Step, e.Field, e.Msg = named.Step, named.Field, named.Msg
	}
}

// visitFunc is an ast.Visitor that goes on while the function says so.
type visitFunc func(ast.Node) bool

func (f visitFunc) Visit(n ast.Node) ast.Visitor {
	if f(n) {
		return f
	}
	return nil
}

// errorsOf lists the mistakes err joins as *Error values of file: the
// library's at the position it gives, with its short message (without its
// source excerpt).
func errorsOf(file string, err error) []*Error {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var out []*Error
	for _, err := range slices.DeleteFunc(errs, func(err error) bool { return err == nil }) {
		var e *Error
		var ye yaml.Error
		switch {
		case errors.As(err, &e):
		case errors.As(err, &ye) && ye.GetToken() != nil:
			p := ye.GetToken().Position
			e = &Error{Pos: Pos{Line: p.Line, Column: p.Column}, Msg: "YAML: " + ye.GetMessage()}
		default:
			e = &Error{Msg: "YAML: " + err.Error()}
		}
		e.File = file
		out = append(out, e)
	}
	return out
}

// fault is a mistake at a place, in the field at a YAML path such as
// $.steps[0].expect.action (step 1, field expect.action); mistake is one in
// a node.
func fault(at Pos, path, format string, args ...any) *Error {
	e := &Error{Pos: at, Field: strings.TrimPrefix(strings.TrimPrefix(path, "$"), "."), Msg: fmt.Sprintf(format, args...)}
	if rest, ok := strings.CutPrefix(e.Field, "steps["); ok {
		n, field, _ := strings.Cut(rest, "]")
		step, _ := strconv.Atoi(n)
		e.Step, e.Field = step+1, strings.TrimPrefix(field, ".")
	}
	return e
}

func mistake(n ast.Node, format string, args ...any) *Error {
	return fault(posOf(n), n.GetPath(), format, args...)
}

// normalizer readies a document for the library. It moves the merge keys of
// each mapping first, as the library lets the last of two keys win and a
// key written in a mapping must win over one merged in. It tags null values
// !!null, as the library does not decode a null into a field, and null means
// something (args: null, problem: null, reset:). And it keeps the scalar of
// a !!str as written, where the library reads !!str 0417 as the octal 271.
type normalizer struct{}

func (normalizer) Visit(n ast.Node) ast.Visitor {
	switch m := n.(type) {
	case *ast.MappingNode:
		merges := slices.DeleteFunc(slices.Clone(m.Values), func(v *ast.MappingValueNode) bool { return !v.Key.IsMergeKey() })
		m.Values = append(merges, slices.DeleteFunc(m.Values, func(v *ast.MappingValueNode) bool { return v.Key.IsMergeKey() })...)
	case *ast.MappingValueNode:
		m.Value = tagNull(m.Value)
	case *ast.SequenceNode:
		for i, v := range m.Values {
			m.Values[i] = tagNull(v)
		}
	case *ast.TagNode:
		switch m.Value.(type) {
		case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
			if m.Start.Value == "!!str" {
				s := ast.String(m.Value.GetToken())
				s.SetPath(m.Value.GetPath())
				m.Value = s
			}
		}
	}
	return normalizer{}
}

func tagNull(n ast.Node) ast.Node {
	if null, ok := n.(*ast.NullNode); !ok || null.Token == nil {
		return n
	}
	t := ast.Tag(token.Tag("!!null", "!!null", n.GetToken().Position))
	t.Value = n
	t.SetPath(n.GetPath())
	return t
}

// nodeOf is the node an unmarshaler decodes: the library decodes a node
// into an ast.Node as the node itself.
func nodeOf(unmarshal func(any) error) ast.Node {
	var n ast.Node
	_ = unmarshal(&n)
	return n
}

// mapping is a mapping an unmarshaler decodes: its node, where its first
// key is, and where each key written in it is (not those merged in).
type mapping struct {
	node ast.Node
	at   Pos
	keys map[string]Pos
}

// keysOf lists the keys written in a mapping, in order, and where each is.
func keysOf(n ast.Node) (order []string, at map[string]Pos) {
	at = map[string]Pos{}
	if m, ok := bare(n).(ast.MapNode); ok {
		for it := m.MapRange(); it.Next(); {
			if name, _ := scalarText(it.Key()); !it.Key().IsMergeKey() {
				order, at[name] = append(order, name), posOf(it.Key())
			}
		}
	}
	return order, at
}

// fields decodes a mapping into the struct dst points to, whose type has no
// unmarshaler of its own: each key into the field its yaml tag names. It
// refuses a key no tag names, suggesting the nearest, and a required field
// left out; what says what the value must be when it is not a mapping.
func fields(unmarshal func(any) error, dst any, what string) (mapping, error) {
	m := mapping{node: nodeOf(unmarshal)}
	if _, ok := bare(m.node).(ast.MapNode); !ok {
		return m, mistake(m.node, "%s, got %s", what, kindOf(m.node))
	}
	order, keys := keysOf(m.node)
	m.at, m.keys = posOf(m.node), keys
	err := unmarshal(dst)
	if !errors.As(err, new(*yaml.UnknownFieldError)) && err != nil {
		return m, err
	}
	rv := reflect.ValueOf(dst).Elem()
	names := fieldNames(rv.Type())
	if uf := new(yaml.UnknownFieldError); errors.As(err, &uf) {
		// The first unknown key written here, or else the one merged in
		// that the library found, where the mapping is.
		name, at := uf.Token.Value, m.at
		if i := slices.IndexFunc(order, func(k string) bool { return !slices.Contains(names, k) }); i >= 0 {
			name, at = order[i], keys[order[i]]
		}
		known := slices.DeleteFunc(names, func(s string) bool { return s == "" })
		hint := "; known fields: " + strings.Join(known, ", ")
		if s := suggest(name, known); s != "" {
			hint = fmt.Sprintf("; did you mean %q?", s)
		}
		return m, fault(at, join(m.node.GetPath(), name), "unknown field %q%s", name, hint)
	}
	for i, name := range names {
		if why := rv.Type().Field(i).Tag.Get("required"); why != "" && rv.Field(i).IsZero() {
			return m, fault(m.at, join(m.node.GetPath(), name), "required: %s", why)
		}
	}
	return m, nil
}

// fieldNames are the yaml tags of t's fields, "" for a field without one.
func fieldNames(t reflect.Type) []string {
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
	}
	return names
}

// listOf decodes a list into dst; what says what it must be when it is not
// a list.
func listOf(unmarshal func(any) error, dst any, what string) error {
	if n := nodeOf(unmarshal); !isList(n) {
		return mistake(n, "%s", what)
	}
	return unmarshal(dst)
}

func join(path, key string) string {
	if key == "" {
		return path
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

func isNull(n ast.Node) bool { return kindOf(n) == "null" }
func isList(n ast.Node) bool { return kindOf(n) == "a list" }

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

// posOf is where a node is written; a mapping's is its first key's.
func posOf(n ast.Node) Pos {
	switch m := n.(type) {
	case nil:
		return Pos{}
	case *ast.MappingNode:
		if len(m.Values) > 0 { // the first written: the normalizer moves merge keys first
			return posOf(slices.MinFunc(m.Values, func(a, b *ast.MappingValueNode) int {
				return a.Key.GetToken().Position.Offset - b.Key.GetToken().Position.Offset
			}))
		}
	case *ast.MappingValueNode:
		return posOf(m.Key)
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return Pos{Line: tk.Position.Line, Column: tk.Position.Column}
	}
	return Pos{}
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
