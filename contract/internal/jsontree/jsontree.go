// Package jsontree owns contracts as JSON trees that keep the order of the
// file: an exported schema lists the properties in contract order, which is
// the order a model fills them in (a reasoning field before the verdict),
// and a rule is worded in the order it was written. It also resolves JSON
// Pointers into such trees.
package jsontree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Object is a JSON object that keeps its members in the order of the file.
// A nil *Object reads as an empty one, so that lookups chain:
// props.Obj("card").Obj("x-slotd").Str("currency").
type Object struct {
	keys []string
	vals map[string]any
}

// NewObject is an empty Object.
func NewObject() *Object { return &Object{vals: map[string]any{}} }

// Keys are the member names in order. The slice is shared: copy it before
// deleting members while walking it.
func (o *Object) Keys() []string {
	if o == nil {
		return nil
	}
	return o.keys
}

// Len is the number of members.
func (o *Object) Len() int { return len(o.Keys()) }

// Get is a member's value.
func (o *Object) Get(k string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.vals[k]
	return v, ok
}

// Has reports a member.
func (o *Object) Has(k string) bool {
	_, ok := o.Get(k)
	return ok
}

// Set replaces a member in place or appends a new one.
func (o *Object) Set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// Del removes a member.
func (o *Object) Del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, key := range o.keys {
		if key == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			return
		}
	}
}

// Str is a member's string value, or "".
func (o *Object) Str(k string) string {
	v, _ := o.Get(k)
	s, _ := v.(string)
	return s
}

// Obj is a member's object value, or nil.
func (o *Object) Obj(k string) *Object {
	v, _ := o.Get(k)
	obj, _ := v.(*Object)
	return obj
}

// List is a member's array value, or nil.
func (o *Object) List(k string) []any {
	v, _ := o.Get(k)
	list, _ := v.([]any)
	return list
}

// MarshalJSON writes the members in order, without HTML escaping: a schema's
// description may say "<" and ">" as they are.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := encodeJSON(&b, k); err != nil {
			return nil, err
		}
		b.WriteByte(':')
		if err := encodeJSON(&b, o.vals[k]); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func encodeJSON(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

// Decode reads a JSON document into *Object, []any, string, json.Number,
// bool and nil.
func Decode(src []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("trailing data after the JSON document")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := NewObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.Set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return list, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return t, nil
}

// Plain turns a decoded tree into map[string]any and float64 numbers, the
// form google.protobuf.Struct takes.
func Plain(v any) any {
	switch t := v.(type) {
	case *Object:
		m := make(map[string]any, len(t.vals))
		for k, x := range t.vals {
			m[k] = Plain(x)
		}
		return m
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = Plain(x)
		}
		return out
	case json.Number:
		f, err := t.Float64()
		if err != nil {
			return t.String()
		}
		return f
	}
	return v
}

// Lookup resolves a JSON pointer ("/allOf/0/if") in a tree.
func Lookup(root any, ptr string) (any, bool) {
	if ptr == "" {
		return root, true
	}
	if ptr[0] != '/' {
		return nil, false
	}
	cur := root
	for _, tok := range SplitPointer(ptr) {
		switch t := cur.(type) {
		case *Object:
			v, ok := t.Get(tok)
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			var i int
			if _, err := fmt.Sscanf(tok, "%d", &i); err != nil || i < 0 || i >= len(t) {
				return nil, false
			}
			cur = t[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// SplitPointer is the unescaped reference tokens of a JSON pointer:
// "/a~1b/0" is ["a/b", "0"].
func SplitPointer(ptr string) []string {
	if ptr == "" {
		return nil
	}
	parts := strings.Split(ptr[1:], "/")
	for i, p := range parts {
		parts[i] = Unescape(p)
	}
	return parts
}

var (
	escaper   = strings.NewReplacer("~", "~0", "/", "~1")
	unescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

// Escape writes a name as a JSON pointer's reference token: "a/b" is
// "a~1b".
func Escape(name string) string { return escaper.Replace(name) }

// Unescape reads a reference token back into a name.
func Unescape(token string) string { return unescaper.Replace(token) }

// Pointer is the JSON pointer of reference tokens that are names: ["a/b",
// "0"] is "/a~1b/0", none is "".
func Pointer(names []string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteByte('/')
		b.WriteString(Escape(n))
	}
	return b.String()
}
