package provider_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/contract/provider"
)

var update = flag.Bool("update", false, "rewrite contracts/snapshots from the current exports (make snapshots)")

const snapshotDir = "../../contracts/snapshots"

// TestExportSnapshots fails when an export of a shipped contract drifts
// from its snapshot: a change of a field, an enum or a description shows up
// in review before it reaches a model. `make snapshots` rewrites them.
func TestExportSnapshots(t *testing.T) {
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, c := range cat.All() {
		for _, prov := range provider.Names() {
			name := c.Name + "." + prov + ".json"
			want[name] = true
			e, err := provider.Export(c, prov)
			if err != nil {
				t.Fatalf("Export(%s, %s): %v", c.Name, prov, err)
			}
			got, err := e.Definition()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(snapshotDir, name)
			if *update {
				if err := os.MkdirAll(snapshotDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			old, err := os.ReadFile(path)
			if errors.Is(err, os.ErrNotExist) {
				t.Errorf("no snapshot %s: run make snapshots and review the new file", path)
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(old, got) {
				t.Errorf("the %s export of %s drifted from %s (review, then make snapshots):\n%s", prov, c.Name, path, lineDiff(string(old), string(got)))
			}
		}
	}
	entries, err := os.ReadDir(snapshotDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !want[e.Name()] {
			if *update {
				_ = os.Remove(filepath.Join(snapshotDir, e.Name()))
				continue
			}
			t.Errorf("snapshot %s has no contract and provider behind it (make snapshots removes it)", e.Name())
		}
	}
}

// lineDiff shows the first differing lines of two texts.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + itoa(i+1) + ":\n- " + x + "\n+ " + y
		}
	}
	return ""
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// rich has what strict modes refuse: bounds, lengths, a custom format,
// conditionals, a nested object, $defs and a $ref, an optional enum.
const rich = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"title": "book",
	"description": "Book a table.",
	"type": "object",
	"properties": {
		"guests":   {"type": "integer", "minimum": 1, "maximum": 20, "description": "How many people"},
		"name":     {"type": "string", "minLength": 2, "maxLength": 80, "x-slotd": {"normalize": ["text"], "ask": {"en": "Name?"}}},
		"site":     {"type": "string", "format": "uri-reference", "description": "Where they found us."},
		"seating":  {"type": "string", "enum": ["indoor", "terrace"], "default": "indoor"},
		"deposit":  {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.01},
		"contact":  {"type": "object", "properties": {
			"phone": {"type": "string", "pattern": "^[0-9+]{6,15}$"},
			"email": {"type": "string", "format": "email"}
		}, "required": ["phone"], "x-slotd": {"sensitive": true}},
		"kid":      {"$ref": "#/$defs/kid"},
		"tags":     {"type": "array", "items": {"type": "string", "maxLength": 10}, "minItems": 2, "uniqueItems": true}
	},
	"$defs": {"kid": {"type": "object", "properties": {"age": {"type": "integer", "maximum": 17}}, "required": ["age"]}},
	"required": ["guests", "name"],
	"dependentRequired": {"deposit": ["contact"]},
	"allOf": [{"if": {"properties": {"guests": {"minimum": 9}}, "required": ["guests"]}, "then": {"required": ["deposit"]}}],
	"not": {"properties": {"seating": {"const": "terrace"}, "guests": {"minimum": 13}}, "required": ["seating", "guests"]},
	"x-slotd": {"name": "dining.book_table", "confirm": true}
}`

func TestExportStrictModes(t *testing.T) {
	t.Parallel()
	c := mustParse(t, rich)
	for _, prov := range []string{provider.OpenAI, provider.Anthropic} {
		t.Run(prov, func(t *testing.T) {
			t.Parallel()
			e, err := provider.Export(c, prov)
			if err != nil {
				t.Fatal(err)
			}
			if e.Name != "dining_book_table" || !e.Strict || e.Version != c.Version {
				t.Errorf("name %q, strict %v, version %q", e.Name, e.Strict, e.Version)
			}
			for _, want := range []string{
				"Book a table.", "Rules:", "when deposit is given: contact is required",
				"when guests is at least 9: deposit is required; when deposit is given: contact is required; ",
				`must not be: seating is "terrace" and guests is at least 13.`,
			} {
				if !strings.Contains(e.Description, want) {
					t.Errorf("description %q does not carry %q", e.Description, want)
				}
			}
			raw, err := e.ParametersJSON()
			if err != nil {
				t.Fatal(err)
			}
			params := decode(t, raw)
			for _, k := range []string{"$schema", "title", "description", "allOf", "not", "if", "then", "dependentRequired"} {
				if _, ok := params[k]; ok {
					t.Errorf("the root keeps %q", k)
				}
			}
			walkSchemas(params, "", func(ptr string, s map[string]any) {
				if _, ok := s["x-slotd"]; ok {
					t.Errorf("%s: x-slotd leaks into the export", ptr)
				}
				for _, k := range []string{"if", "then", "else", "allOf", "not", "dependentRequired", "dependentSchemas", "minLength", "maxLength", "uniqueItems", "default"} {
					if _, ok := s[k]; ok {
						t.Errorf("%s: keeps %q, which %s's strict mode refuses", ptr, k, prov)
					}
				}
				if prov == provider.Anthropic {
					for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "multipleOf"} {
						if _, ok := s[k]; ok {
							t.Errorf("%s: keeps %q for anthropic", ptr, k)
						}
					}
				}
				if _, ok := s["properties"]; ok && s["additionalProperties"] != false {
					t.Errorf("%s: additionalProperties = %v, want false", ptr, s["additionalProperties"])
				}
				if f, ok := s["format"]; ok && f == "uri-reference" {
					t.Errorf("%s: keeps a format neither strict mode enforces", ptr)
				}
			})
			props := params["properties"].(map[string]any)
			desc := func(name string) string { d, _ := props[name].(map[string]any)["description"].(string); return d }
			if !strings.Contains(desc("name"), "2 to 80 characters") {
				t.Errorf("name's length is not in its description: %q", desc("name"))
			}
			if !strings.Contains(desc("site"), "Format: uri-reference.") {
				t.Errorf("site's format is not in its description: %q", desc("site"))
			}
			if !strings.Contains(desc("seating"), "Default: \"indoor\".") {
				t.Errorf("seating's default is not in its description: %q", desc("seating"))
			}
			if prov == provider.Anthropic && !strings.Contains(desc("guests"), "At least 1, at most 20.") {
				t.Errorf("anthropic: guests' bounds are not in its description: %q", desc("guests"))
			}
			if prov == provider.OpenAI {
				if g := props["guests"].(map[string]any); g["minimum"] == nil || g["maximum"] == nil {
					t.Errorf("openai: guests' bounds were dropped although strict mode takes them: %v", g)
				}
				// Every object lists every property as required; the
				// optional ones take null.
				walkSchemas(params, "", func(ptr string, s map[string]any) {
					ps, ok := s["properties"].(map[string]any)
					if !ok {
						return
					}
					req := map[string]bool{}
					for _, r := range s["required"].([]any) {
						req[r.(string)] = true
					}
					for name := range ps {
						if !req[name] {
							t.Errorf("%s: %s is not in required", ptr, name)
						}
					}
				})
				seating := props["seating"].(map[string]any)
				if !slices.Contains(seating["type"].([]any), any("null")) || !slices.Contains(seating["enum"].([]any), nil) {
					t.Errorf("openai: an optional enum is not a union with null: %v", seating)
				}
				kid := props["kid"].(map[string]any)
				if any, ok := kid["anyOf"].([]any); !ok || len(any) != 2 {
					t.Errorf("openai: an optional $ref is not wrapped in anyOf with null: %v", kid)
				}
				if g := props["guests"].(map[string]any); g["type"] != "integer" {
					t.Errorf("openai: a required property became nullable: %v", g)
				}
			}
			if prov == provider.Anthropic {
				req := params["required"].([]any)
				if len(req) != 2 {
					t.Errorf("anthropic: required = %v, want the contract's [guests name]", req)
				}
			}
			// The export is itself a valid schema, and a call that passes the
			// contract passes it.
			s := compile(t, raw)
			call := map[string]any{"guests": 4.0, "name": "Анна"}
			if prov == provider.OpenAI {
				for _, k := range []string{"site", "seating", "deposit", "contact", "kid", "tags"} {
					call[k] = nil
				}
			}
			if err := s.Validate(call); err != nil {
				t.Errorf("a valid call fails the %s export: %v", prov, err)
			}
		})
	}
}

func TestExportPlainKeepsTheSchema(t *testing.T) {
	t.Parallel()
	c := mustParse(t, rich)
	e, err := provider.Export(c, provider.Plain)
	if err != nil {
		t.Fatal(err)
	}
	if e.Name != "dining.book_table" || e.Strict {
		t.Errorf("name %q, strict %v; want the contract's name, not strict", e.Name, e.Strict)
	}
	raw, _ := e.ParametersJSON()
	if strings.Contains(string(raw), "x-slotd") {
		t.Errorf("x-slotd leaks into the plain export:\n%s", raw)
	}
	params := decode(t, raw)
	for _, k := range []string{"allOf", "not", "dependentRequired", "$defs", "$schema"} {
		if _, ok := params[k]; !ok {
			t.Errorf("the plain export lost %q", k)
		}
	}
	// Key order is the contract's: properties in file order.
	if i, j := bytes.Index(raw, []byte(`"guests"`)), bytes.Index(raw, []byte(`"tags"`)); i < 0 || j < i {
		t.Errorf("properties are not in contract order:\n%s", raw)
	}
	if _, err := provider.Export(c, "gemini"); !errors.Is(err, provider.ErrUnknown) {
		t.Errorf("Export(gemini) error = %v, want ErrUnknown", err)
	}
}

func TestExportPartialContract(t *testing.T) {
	t.Parallel()
	c := shipped(t, "bank.open_dispute")
	for _, prov := range []string{provider.OpenAI, provider.Anthropic} {
		e, err := provider.Export(c, prov)
		if err != nil {
			t.Fatal(err)
		}
		params := e.Parameters()
		props := params["properties"].(map[string]any)
		req, _ := params["required"].([]any)
		switch prov {
		case provider.OpenAI:
			if len(req) != len(props) {
				t.Errorf("openai: required %v, want every property", req)
			}
			for name, p := range props {
				if ts, ok := p.(map[string]any)["type"].([]any); !ok || !slices.Contains(ts, any("null")) {
					t.Errorf("openai: %s of a partial contract is not nullable: %v", name, p)
				}
			}
		case provider.Anthropic:
			if len(req) != 0 {
				t.Errorf("anthropic: a partial contract requires %v: the model would invent what the user did not say", req)
			}
		}
	}
}

// shipped loads one of the contracts in the repository's contracts/.
func shipped(t testing.TB, name string) *contract.Contract {
	t.Helper()
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatalf("LoadDir(../../contracts): %v", err)
	}
	c := cat.Get(name)
	if c == nil {
		t.Fatalf("contract %s is not shipped; have %v", name, cat.Names())
	}
	return c
}

// mustParse compiles an inline contract or stops the test.
func mustParse(t testing.TB, src string) *contract.Contract {
	t.Helper()
	c, err := contract.Parse("inline.json", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func decode(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%v:\n%s", err, raw)
	}
	return m
}

func compile(t *testing.T, raw []byte) *jsonschema.Schema {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	comp := jsonschema.NewCompiler()
	if err := comp.AddResource("x:///e.json", inst); err != nil {
		t.Fatal(err)
	}
	s, err := comp.Compile("x:///e.json")
	if err != nil {
		t.Fatalf("the export is not a valid schema: %v", err)
	}
	return s
}

// walkSchemas calls fn on every subschema of a decoded schema.
func walkSchemas(s map[string]any, ptr string, fn func(string, map[string]any)) {
	fn(ptr, s)
	for _, k := range []string{"properties", "$defs"} {
		if m, ok := s[k].(map[string]any); ok {
			for name, sub := range m {
				if sm, ok := sub.(map[string]any); ok {
					walkSchemas(sm, ptr+"/"+k+"/"+name, fn)
				}
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		walkSchemas(items, ptr+"/items", fn)
	}
	for _, k := range []string{"anyOf", "allOf", "oneOf"} {
		if list, ok := s[k].([]any); ok {
			for i, sub := range list {
				if sm, ok := sub.(map[string]any); ok {
					walkSchemas(sm, ptr+"/"+k+"/"+itoa(i), fn)
				}
			}
		}
	}
}
