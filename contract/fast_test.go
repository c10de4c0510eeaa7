package contract

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fastSchemas are schemas that stretch the fast path: every keyword it
// knows, in the combinations contracts write, beside the shipped contracts.
var fastSchemas = map[string]string{
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

// fastValues are the values a slot may hold in a test: right and wrong for
// every keyword above, in the forms Check receives them.
var fastValues = []any{
	"MAD", "KBP", "mad", "MADR", "", "ab", "abcde", "abcdef", "ÿÿ", "a", "b", "ç", "c", "yes", "no",
	"2026-08-22", "2026-02-30", "2026-8-22", "22.08.2026", "2026-08-22T10:00:00Z", "2026-08-22 10:00",
	"a@b.example", "not an email", "4417", "12", "duplicate", "fraud", "op-20260822-0117",
	float64(0), float64(1), float64(9), float64(10), float64(1.5), float64(9.5), float64(-3), float64(100), float64(100.01),
	float64(1200.5), float64(1e7), float64(1e7 + 1), json.Number("5"), json.Number("5.0"), json.Number("-1"),
	json.Number("1e2"), true, false, nil, []any{"x"}, map[string]any{"k": "v"},
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

func loadFastContracts(t *testing.T) []*Contract {
	t.Helper()
	var out []*Contract
	for name, src := range fastSchemas {
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

// TestFastPathIsUsed: the shipped contracts and the test schemas compile
// to the fast path, property by property; a regression to the library
// alone shows here before it shows in the bench.
func TestFastPathIsUsed(t *testing.T) {
	for _, c := range loadFastContracts(t) {
		if c.Name == "dining.book_table" {
			continue // dependentRequired and not: the library's alone
		}
		if c.fast == nil {
			t.Errorf("%s: the whole schema has no fast path", c.Name)
		}
		for _, p := range c.Properties {
			if p.fast == nil {
				t.Errorf("%s: property %s has no fast path", c.Name, p.Name)
			}
		}
	}
}

// TestFastPathAgreesWithTheLibrary holds the fast path to the library's
// verdicts on random objects of right, wrong and missing values: whenever
// it answers, the report is the one the library gives; and it answers
// often enough to matter.
func TestFastPathAgreesWithTheLibrary(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 2026))
	for _, c := range loadFastContracts(t) {
		names := c.propertyNames()
		names = append(names, "unknown_slot")
		sure, valid, missing := 0, 0, 0
		const n = 2500
		for range n {
			slots := map[string]any{}
			for _, name := range names {
				switch rng.IntN(10) {
				case 0, 1: // absent
				case 2: // any value, most of them wrong here
					slots[name] = fastValues[rng.IntN(len(fastValues))]
				default: // a value normalizing would have let through
					if p := c.byName[name]; p != nil && p.fast != nil {
						if v := validValue(p, rng); v != nil {
							slots[name] = v
						}
					}
				}
			}
			// Where the fast path is not sure, CheckIn is the library's
			// check: only where it is sure is there anything to compare.
			if d := c.FastDisagreement(slots, "ru"); d != "" {
				t.Fatalf("%s %s", c.Name, d)
			}
			if c.fast != nil {
				if _, ok := c.fast.check(c, slots); ok {
					sure++
					if c.CheckIn(slots, "ru").Valid() {
						valid++
					} else {
						missing++
					}
				}
			}
		}
		if c.fast != nil && (sure < n/20 || valid == 0 || missing == 0 && len(c.Required) > 0) {
			t.Errorf("%s: the fast path answered %d of %d objects (%d valid, %d missing slots): too few to hold it to anything", c.Name, sure, n, valid, missing)
		}
	}
}

// validValue picks a value likely to pass property p, so that random
// objects are often wholly valid.
func validValue(p *Property, rng *rand.Rand) any {
	var fits []any
	for _, v := range fastValues {
		if p.fast.valid(validationForm(p, v)) {
			fits = append(fits, v)
		}
	}
	if len(p.Enum) > 0 {
		fits = append(fits, p.Enum[rng.IntN(len(p.Enum))])
	}
	if len(fits) == 0 {
		return nil
	}
	return fits[rng.IntN(len(fits))]
}

// TestFastPathDeclinesWhatItDoesNotKnow: a schema with any keyword outside
// the fast path's set is checked by the library alone, and still right.
func TestFastPathDeclinesWhatItDoesNotKnow(t *testing.T) {
	for name, src := range map[string]string{
		"anyOf":             `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"anyOf":[{"required":["a"]},{"required":["b"]}]}`,
		"dependentRequired": `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"dependentRequired":{"a":["b"]}}`,
		"numberEnum":        `{"type":"object","properties":{"a":{"type":"integer","enum":[1,2]}},"required":["a"]}`,
		"ifElse":            `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"allOf":[{"if":{"properties":{"a":{"const":"x"}},"required":["a"]},"then":{"required":["b"]},"else":{"required":["a"]}}]}`,
		"nestedObject":      `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}}}}}`,
		"additionalSchema":  `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}`,
		"minProperties":     `{"type":"object","properties":{"a":{"type":"string"}},"minProperties":1}`,
	} {
		c := parseNamed(t, "test."+strings.ToLower(name), src)
		if c.fast != nil {
			t.Errorf("%s: the fast path took a schema it does not know", name)
		}
		r := c.Check(map[string]any{})
		switch name {
		case "anyOf":
			if !slices.Equal(r.Missing, []string{"a"}) {
				t.Errorf("%s: missing %v, want [a]", name, r.Missing)
			}
		case "minProperties":
			if r.Valid() {
				t.Errorf("%s: an empty object passed minProperties 1", name)
			}
		}
	}
	c := parseNamed(t, "test.numberenum2", `{"type":"object","properties":{"a":{"type":"integer","enum":[1,2]}}}`)
	if c.byName["a"].fast != nil {
		t.Error("a property with an enum of numbers has a fast path")
	}
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
	c := parseNamed(t, "test.order", fastSchemas["test.keywords"])
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

// FastDisagreement is "" when the fast path, wherever it answers for the
// slots (the whole object and each value), answers as the library does;
// else what differs. For the fuzz targets of package contract_test.
func (c *Contract) FastDisagreement(slots map[string]any, locale string) string {
	inst := c.validationSlots(slots)
	if c.fast != nil {
		if _, sure := c.fast.check(c, slots); sure {
			if got, lib := c.CheckIn(slots, locale), c.checkLibrary(inst, slots, locale); !reflect.DeepEqual(got, lib) {
				return fmt.Sprintf("%v: fast path %+v, library %+v", slots, got, lib)
			}
		}
	}
	for k, v := range inst {
		if p := c.byName[k]; p != nil && p.fast != nil && p.fast.valid(v) {
			if err := p.schema.Validate(v); err != nil {
				return fmt.Sprintf("%s = %#v: the fast path accepts, the library says %v", k, v, err)
			}
		}
	}
	return ""
}

// TestNumberBoundsAtTheEdge: bounds are compared in float64 where that is
// exact, and by big.Rat where a number's nearest float64 is the bound
// itself; numbers a hair either side of a bound, or spelled past float64's
// precision or range, get the library's verdict.
func TestNumberBoundsAtTheEdge(t *testing.T) {
	t.Parallel()
	c := parseNamed(t, "test.edges", `{"type": "object", "properties": {
		"amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 10000000},
		"rate":   {"type": "number", "minimum": 0.5, "exclusiveMaximum": 2.25},
		"tenth":  {"type": "number", "maximum": 0.1},
		"count":  {"type": "integer", "minimum": -3, "maximum": 9}}}`)
	if !c.byName["amount"].fast.floats || !c.byName["rate"].fast.floats || c.byName["tenth"].fast.floats {
		t.Fatal("float bounds: want amount and rate compared in float64, tenth (0.1 is no float64) by big.Rat")
	}
	numbers := []string{
		"0", "-0", "0.0", "-0.0", "1e-400", "-1e-400", "5e-324", "0.0000000000000000000000000000001",
		"10000000", "10000000.0", "1e7", "10000000.0000000000000000001", "9999999.9999999999999999999",
		"10000000.000000001", "10000001", "1e400", "-1e400", "1200.50", "1E+3", "1e-2",
		"0.5", "0.49999999999999999999", "0.50000000000000000001", "2.25", "2.2499999999999999999", "2.2500000000000000001",
		"0.1", "0.1000000000000000000001", "0.0999999999999999999999", "0.10000000000000000555", "0.10000000000000000556",
		"-3", "-4", "9", "10", "-3.0000000000000000001",
	}
	for _, name := range []string{"amount", "rate", "tenth", "count"} {
		p := c.byName[name]
		for _, n := range numbers {
			v := json.Number(n)
			fast := p.fast.valid(v)
			lib := p.schema.Validate(v) == nil
			if fast && !lib {
				t.Errorf("%s = %s: the fast path accepts what the library refuses", name, n)
			}
			if got := c.CheckIn(map[string]any{name: v}, "en"); got.Valid() != lib {
				t.Errorf("%s = %s: Check says valid %v, the library %v", name, n, got.Valid(), lib)
			}
		}
	}
	// The float comparison decides, without big.Rat, what is clear of a bound.
	for _, tc := range []struct {
		name, n  string
		ok, sure bool
	}{
		{"amount", "1200.50", true, true}, {"amount", "10000001", false, true}, {"amount", "-1", false, true},
		{"amount", "10000000", true, false}, {"amount", "0", true, false}, {"rate", "2.25", true, false},
		{"rate", "2.3", false, true}, {"rate", "0.4", false, true}, {"rate", "1", true, true},
	} {
		f, err := strconv.ParseFloat(tc.n, 64)
		if err != nil {
			t.Fatal(err)
		}
		if ok, sure := c.byName[tc.name].fast.inFloatBounds(f); sure != tc.sure || sure && ok != tc.ok {
			t.Errorf("%s = %s: inFloatBounds %v, %v; want %v, %v", tc.name, tc.n, ok, sure, tc.ok, tc.sure)
		}
	}
}
