package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schema compiles docs/script.schema.json, the schema editors use.
func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("../../docs/script.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("docs/script.schema.json is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("script.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("script.schema.json")
	if err != nil {
		t.Fatalf("docs/script.schema.json does not compile: %v", err)
	}
	return sch
}

// asJSON reads each YAML document as the JSON value an editor validates.
func asJSON(t *testing.T, src []byte) []any {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var out []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("YAML: %v", err)
		}
		if v == nil {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		j, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, j)
	}
}

// The schema and the parser agree: every shipped script and every example
// in docs/scripts.md passes both, and malformed scripts fail both.
func TestSchemaAgreesWithParser(t *testing.T) {
	t.Parallel()
	sch := schema(t)
	good := map[string][]byte{}
	files, _ := filepath.Glob("../../integration/scripts/*.yaml")
	if len(files) == 0 {
		t.Fatal("no scripts in integration/scripts")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		good[f] = b
	}
	docs, err := os.ReadFile("../../docs/scripts.md")
	if err != nil {
		t.Fatal(err)
	}
	// Examples marked as whole scripts: a ```yaml block that starts with
	// "name:" or "tool:".
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(docs, -1)
	n := 0
	for _, b := range blocks {
		if bytes.HasPrefix(b[1], []byte("name:")) || bytes.HasPrefix(b[1], []byte("tool:")) || bytes.HasPrefix(b[1], []byte("# yaml-language-server")) {
			n++
			good["docs/scripts.md example "+string(rune('0'+n))] = b[1]
		}
	}
	if n < 2 {
		t.Errorf("docs/scripts.md has %d whole-script examples, want at least 2", n)
	}
	for name, src := range good {
		if _, err := Parse(name, src); err != nil {
			t.Errorf("%s: the parser refuses it: %v", name, err)
		}
		for i, v := range asJSON(t, src) {
			if err := sch.Validate(v); err != nil {
				t.Errorf("%s (document %d): the schema refuses it: %v", name, i+1, err)
			}
		}
	}

	bad := []string{
		"steps: [reset]\n",
		"tool: t\nsteps: []\n",
		"tool: t\nsteps:\n  - expect: {action: ask}\n",
		"tool: t\nsteps:\n  - {args: {}, reset: true}\n",
		"tool: t\nsteps:\n  - {args: {}, expect: {acton: ask}}\n",
		"tool: t\nsteps:\n  - {args: {}, expect: {action: asks}}\n",
		"tool: t\nsteps:\n  - {args: {}, expect: {changes: [{slot: a, decision: ignored}]}}\n",
		"tool: t\nsteps:\n  - {args: [1]}\n",
		"tool: t\nsteps:\n  - {args: {}, advance: 45 minutes}\n",
		"tool: t\nsteps:\n  - {complete: {}}\n",
		"tool: t\nsteps:\n  - {confirm: maybe}\n",
		"tool: t\nclock: yesterday\nsteps: [reset]\n",
	}
	for _, src := range bad {
		if _, err := Parse("bad.yaml", []byte(src)); err == nil {
			t.Errorf("the parser accepts a malformed script:\n%s", src)
		}
		for _, v := range asJSON(t, []byte(src)) {
			if err := sch.Validate(v); err == nil {
				t.Errorf("the schema accepts a malformed script:\n%s", strings.TrimSpace(src))
			}
		}
	}
}

// The schema names the fields the parser reads: each struct of format.go
// has exactly its yaml tags as properties of one object of
// docs/script.schema.json, its required fields are required there, and
// every object of the schema with properties is one of them.
func TestSchemaHasTheFormatsFields(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/script.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("docs/script.schema.json is not JSON: %v", err)
	}
	objects := map[string]map[string]any{} // JSON pointer → an object schema with properties
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if _, ok := x["properties"].(map[string]any); ok {
				objects[ptr] = x
			}
			for k, c := range x {
				walk(ptr+"/"+k, c)
			}
		case []any:
			for i, c := range x {
				walk(ptr+"/"+strconv.Itoa(i), c)
			}
		}
	}
	walk("", doc)

	// Where each struct of the format is in the schema; the two small
	// mappings that are forms of a value have their one key.
	structs := map[string]reflect.Type{
		"":                  reflect.TypeFor[scriptDoc](),
		"/$defs/stepObject": reflect.TypeFor[stepDoc](),
		"/$defs/complete":   reflect.TypeFor[completionDoc](),
		"/$defs/complete/properties/failure/oneOf/1": reflect.TypeFor[failureDoc](),
		"/$defs/expect":                          reflect.TypeFor[expect](),
		"/$defs/call":                            reflect.TypeFor[callDoc](),
		"/$defs/change":                          reflect.TypeFor[changeWant](),
		"/$defs/problem":                         reflect.TypeFor[problemWant](),
		"/$defs/problem/properties/errors/items": reflect.TypeFor[fieldErrorWant](),
	}
	forms := map[string]string{
		"/$defs/expect/properties/changes/oneOf/1":         exactKey,
		"/$defs/expect/properties/idempotency_key/oneOf/1": sameAsKey,
	}
	for ptr, obj := range objects {
		props := slices.Sorted(maps.Keys(obj["properties"].(map[string]any)))
		var required []string
		list, _ := obj["required"].([]any)
		for _, r := range list {
			required = append(required, r.(string))
		}
		if key, ok := forms[ptr]; ok {
			if !slices.Equal(props, []string{key}) {
				t.Errorf("schema %q: properties %v, want just %q", ptr, props, key)
			}
			continue
		}
		typ, ok := structs[ptr]
		if !ok {
			t.Errorf("schema %q has properties %v, but no struct of format.go is mapped to it", ptr, props)
			continue
		}
		var fields []string
		for i, name := range fieldNames(typ) {
			if name == "" {
				continue
			}
			fields = append(fields, name)
			if typ.Field(i).Tag.Get("required") != "" && !slices.Contains(required, name) {
				t.Errorf("%v.%s is required, but schema %q does not require %q", typ, typ.Field(i).Name, ptr, name)
			}
			if !slices.Contains(props, name) {
				t.Errorf("%v.%s (%q) has no property in schema %q", typ, typ.Field(i).Name, name, ptr)
			}
		}
		for _, p := range props {
			if !slices.Contains(fields, p) {
				t.Errorf("schema %q has property %q, which %v has no field for", ptr, p, typ)
			}
		}
	}
	for ptr := range structs {
		if objects[ptr] == nil {
			t.Errorf("schema %q (%v) is not an object with properties", ptr, structs[ptr])
		}
	}
	for ptr := range forms {
		if objects[ptr] == nil {
			t.Errorf("schema %q (the {%s} form) is not an object with properties", ptr, forms[ptr])
		}
	}
}

// An expectation's step tag names only kinds of step, or error.
func TestExpectStepTags(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[expect]()
	for i, name := range fieldNames(typ) {
		if name == "" {
			continue
		}
		tag := typ.Field(i).Tag.Get("step")
		if tag == "" {
			t.Errorf("expect.%s has no step tag: no step could be checked for %s", typ.Field(i).Name, name)
		}
		for _, k := range strings.Split(tag, ",") {
			if !slices.Contains([]string{kindTurn.String(), kindReset.String(), kindComplete.String(), "error"}, k) {
				t.Errorf("expect.%s: step tag names %q, not turn, reset, complete or error", typ.Field(i).Name, k)
			}
		}
	}
}
