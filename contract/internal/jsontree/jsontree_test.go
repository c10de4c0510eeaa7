package jsontree_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/slotd/slotd/contract/internal/jsontree"
)

func TestDecodeKeepsTheFileOrder(t *testing.T) {
	t.Parallel()
	src := `{"z": 1, "a": {"y": [true, null, "<b>"], "b": 2.50}, "m": "x"}`
	tree, err := jsontree.Decode([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	root := tree.(*jsontree.Object)
	if got := root.Keys(); !reflect.DeepEqual(got, []string{"z", "a", "m"}) {
		t.Errorf("keys = %v, want the file's order", got)
	}
	out, err := root.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	// Numbers as written, members in order, "<" and ">" not escaped.
	if want := strings.ReplaceAll(src, " ", ""); string(out) != want {
		t.Errorf("MarshalJSON = %s, want %s", out, want)
	}
	if got := jsontree.Plain(root).(map[string]any)["a"].(map[string]any)["b"]; got != 2.5 {
		t.Errorf("Plain number = %#v, want 2.5", got)
	}
}

func TestDecodeRefusesTrailingData(t *testing.T) {
	t.Parallel()
	for _, src := range []string{`{"a": 1} {"b": 2}`, `{"a": `, `[1, 2`} {
		if _, err := jsontree.Decode([]byte(src)); err == nil {
			t.Errorf("Decode(%s) succeeded", src)
		}
	}
}

func TestSetAndDel(t *testing.T) {
	t.Parallel()
	o := jsontree.NewObject()
	o.Set("a", 1)
	o.Set("b", 2)
	o.Set("c", 3)
	o.Set("a", 10) // replaced in place
	o.Del("b")
	o.Del("nope")
	if got := o.Keys(); !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Errorf("keys = %v, want [a c]", got)
	}
	if v, _ := o.Get("a"); v != 10 || o.Has("b") || o.Len() != 2 {
		t.Errorf("a = %v, has b %v, len %d", v, o.Has("b"), o.Len())
	}
}

func TestNilObjectReadsEmpty(t *testing.T) {
	t.Parallel()
	var o *jsontree.Object
	if o.Obj("a").Obj("b").Str("c") != "" || o.List("x") != nil || o.Has("x") || o.Len() != 0 || o.Keys() != nil {
		t.Error("a nil Object does not read as empty")
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	tree, err := jsontree.Decode([]byte(`{"allOf": [{"if": {"a/b": {"~x": 1}}}], "s": "t"}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ptr  string
		want any
		ok   bool
	}{
		{"/allOf/0/if/a~1b/~0x", json.Number("1"), true},
		{"/s", "t", true},
		{"/allOf/1", nil, false},
		{"/allOf/-1", nil, false},
		{"/allOf/x", nil, false},
		{"/s/0", nil, false},
		{"/nope", nil, false},
		{"s", nil, false},
	}
	for _, tt := range tests {
		got, ok := jsontree.Lookup(tree, tt.ptr)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("Lookup(%q) = %v, %v; want %v, %v", tt.ptr, got, ok, tt.want, tt.ok)
		}
	}
	if got, ok := jsontree.Lookup(tree, ""); !ok || got != tree {
		t.Errorf(`Lookup("") is not the root`)
	}
}

func TestPointers(t *testing.T) {
	t.Parallel()
	names := []string{"a/b", "~c", "0"}
	ptr := jsontree.Pointer(names)
	if ptr != "/a~1b/~0c/0" {
		t.Errorf("Pointer(%q) = %q", names, ptr)
	}
	if got := jsontree.SplitPointer(ptr); !reflect.DeepEqual(got, names) {
		t.Errorf("SplitPointer(%q) = %q, want %q", ptr, got, names)
	}
	if jsontree.Pointer(nil) != "" || jsontree.SplitPointer("") != nil {
		t.Error("the empty pointer is not the root")
	}
	if got := jsontree.Unescape("~01"); got != "~1" {
		t.Errorf(`Unescape("~01") = %q, want "~1" (~0 is read last)`, got)
	}
}
