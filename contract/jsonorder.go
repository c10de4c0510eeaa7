package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// object is a JSON object that keeps its members in the order of the file:
// an exported schema lists the properties in contract order, which is the
// order a model fills them in (a reasoning field before the verdict).
type object struct {
	keys []string
	vals map[string]any
}

func newObject() *object { return &object{vals: map[string]any{}} }

func (o *object) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *object) has(k string) bool {
	_, ok := o.vals[k]
	return ok
}

// set replaces a member in place or appends a new one.
func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) del(k string) {
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

func (o *object) str(k string) string {
	s, _ := o.vals[k].(string)
	return s
}

func (o *object) obj(k string) *object {
	v, _ := o.vals[k].(*object)
	return v
}

func (o *object) list(k string) []any {
	v, _ := o.vals[k].([]any)
	return v
}

// MarshalJSON writes the members in order, without HTML escaping: a schema's
// description may say "<" and ">" as they are.
func (o *object) MarshalJSON() ([]byte, error) {
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

// decodeOrdered reads a JSON document into *object, []any, string,
// json.Number, bool and nil.
func decodeOrdered(src []byte) (any, error) {
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
			o := newObject()
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
				o.set(k, v)
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

// clone copies a decoded tree deeply, so that an export never changes the
// contract's own.
func clone(v any) any {
	switch t := v.(type) {
	case *object:
		o := &object{keys: append([]string(nil), t.keys...), vals: make(map[string]any, len(t.vals))}
		for k, x := range t.vals {
			o.vals[k] = clone(x)
		}
		return o
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = clone(x)
		}
		return out
	}
	return v
}

// plain turns a decoded tree into map[string]any and float64 numbers, the
// form google.protobuf.Struct takes.
func plain(v any) any {
	switch t := v.(type) {
	case *object:
		m := make(map[string]any, len(t.vals))
		for k, x := range t.vals {
			m[k] = plain(x)
		}
		return m
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = plain(x)
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

// pointerGet resolves a JSON pointer fragment ("/allOf/0/if") in a tree.
func pointerGet(root any, ptr string) (any, bool) {
	if ptr == "" {
		return root, true
	}
	if ptr[0] != '/' {
		return nil, false
	}
	cur := root
	for _, tok := range splitPointer(ptr) {
		switch t := cur.(type) {
		case *object:
			v, ok := t.get(tok)
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

func splitPointer(ptr string) []string {
	if ptr == "" {
		return nil
	}
	parts := bytes.Split([]byte(ptr[1:]), []byte("/"))
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = unescapePointer(string(p))
	}
	return out
}

func unescapePointer(s string) string {
	return string(bytes.ReplaceAll(bytes.ReplaceAll([]byte(s), []byte("~1"), []byte("/")), []byte("~0"), []byte("~")))
}
