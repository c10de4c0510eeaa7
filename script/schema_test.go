package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schema compiles docs/script.schema.json, the schema editors use.
func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("../docs/script.schema.json")
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
	files, _ := filepath.Glob("../integration/scripts/*.yaml")
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
	docs, err := os.ReadFile("../docs/scripts.md")
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
