package contract

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testSchemas are schemas of the keywords contracts write, in the
// combinations they write them, beside the shipped contracts.
var testSchemas = map[string]string{
	"test.keywords": `{
		"type": "object",
		"properties": {
			"code":   {"type": "string", "pattern": "^[A-Z]{3}$", "description": "an IATA code"},
			"name":   {"type": "string", "minLength": 2, "maxLength": 5},
			"kind":   {"type": "string", "enum": ["a", "b", "ç"]},
			"fixed":  {"type": "string", "const": "yes"},
			"count":  {"type": "integer", "minimum": 1, "maximum": 9},
			"step":   {"type": "number", "multipleOf": 0.5, "exclusiveMaximum": 10},
			"rate":   {"type": "number", "exclusiveMinimum": 0, "maximum": 100},
			"when":   {"type": "string", "format": "date"},
			"at":     {"type": "string", "format": "date-time"},
			"mail":   {"type": "string", "format": "email"},
			"flag":   {"type": "boolean"},
			"free":   {"description": "anything"},
			"empty":  {}
		},
		"required": ["code", "count", "flag"],
		"allOf": [
			{"if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]}, "then": {"required": ["name", "when"]}},
			{"if": {"properties": {"code": {"const": "MAD"}}, "required": ["code"]}, "then": {"required": ["rate"]}}
		],
		"additionalProperties": false
	}`,
	"test.open": `{
		"type": "object",
		"properties": {"a": {"type": "string", "maxLength": 3}, "n": {"type": "integer"}},
		"required": ["a"]
	}`,
}

// parseNamed parses a test schema, naming it in x-slotd as contracts must.
func parseNamed(t *testing.T, name, src string) *Contract {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	doc["x-slotd"] = map[string]any{"name": name}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(name, b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return c
}

// loadTestContracts is the test schemas and every contract shipped or in
// testdata.
func loadTestContracts(t *testing.T) []*Contract {
	t.Helper()
	var out []*Contract
	for name, src := range testSchemas {
		out = append(out, parseNamed(t, name, src))
	}
	files, err := filepath.Glob("../contracts/*.json")
	more, _ := filepath.Glob("testdata/contracts/*.json")
	files = append(files, more...)
	if err != nil || len(files) < 4 {
		t.Fatalf("no shipped contracts: %v", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Parse(strings.TrimSuffix(filepath.Base(f), ".json"), src)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, c)
	}
	return out
}

// TestPropertyNamesAreEscapedInTheirPointer: a property's own schema is
// found by a pointer in a URL's fragment, which is percent-decoded; "p%41"
// must get its own schema, not "pA"'s, and "%" alone must load.
func TestPropertyNamesAreEscapedInTheirPointer(t *testing.T) {
	c := parseNamed(t, "test.percent", `{"type": "object", "properties": {
		"p%41": {"type": "string", "maxLength": 2}, "pA": {"type": "integer"}, "%": {"type": "string"},
		"a b#c?d": {"type": "string", "enum": ["x"]}}}`)
	if _, fe := c.Normalize("p%41", "ab", Env{}); fe != nil {
		t.Errorf(`"p%%41" = "ab" refused: %s (it got "pA"'s schema)`, fe.Message)
	}
	if _, fe := c.Normalize("p%41", "abc", Env{}); fe == nil {
		t.Error(`"p%41" = "abc" passed maxLength 2`)
	}
	if _, fe := c.Normalize("a b#c?d", "y", Env{}); fe == nil {
		t.Error(`"a b#c?d" = "y" passed its enum`)
	}
}

// TestNonFiniteNumbersAreRefused: NaN and infinities are no JSON values;
// the check refuses them, with bounds or without, and never panics.
func TestNonFiniteNumbersAreRefused(t *testing.T) {
	c := parseNamed(t, "test.finite", `{"type": "object", "properties": {
		"bounded": {"type": "number", "maximum": 5}, "free": {"type": "number"}}}`)
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, slot := range []string{"bounded", "free"} {
			if r := c.Check(map[string]any{slot: v}); r.Valid() {
				t.Errorf("%s = %v passed the check", slot, v)
			}
		}
	}
}

// TestViolationsComeInContractOrder: the same slots give the same report,
// its violations in the contract's order, however the library's maps fall.
func TestViolationsComeInContractOrder(t *testing.T) {
	c := parseNamed(t, "test.order", testSchemas["test.keywords"])
	slots := map[string]any{"code": "madrid", "name": "x", "kind": "z", "count": float64(0), "flag": "yes", "zzz": 1.0}
	var first []string
	for i := range 50 {
		var got []string
		for _, v := range c.CheckIn(slots, "en").Violations {
			got = append(got, v.Pointer)
		}
		if i == 0 {
			first = got
			// parseNamed writes the properties in name order; the unknown
			// slot is the object's own violation (additionalProperties).
			if !slices.Equal(got, []string{"", "/code", "/count", "/flag", "/kind", "/name"}) {
				t.Fatalf("violations at %v, want the object's first, then the contract's order", got)
			}
		} else if !slices.Equal(got, first) {
			t.Fatalf("call %d: violations at %v, first call %v", i+1, got, first)
		}
	}
}
