package wording_test

import (
	"testing"

	"github.com/slotd/slotd/contract/internal/jsontree"
	"github.com/slotd/slotd/contract/internal/wording"
	"github.com/slotd/slotd/internal/phrase"
)

func tree(t *testing.T, src string) any {
	t.Helper()
	v, err := jsontree.Decode([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPattern(t *testing.T) {
	t.Parallel()
	tests := []struct{ pattern, lang, want string }{
		{"^[0-9]{4}$", "en", "4 digits"},
		{"^[0-9]{1}$", "en", "1 digit"},
		{"^[0-9]{4}$", "ru", "4 цифры"},
		{"^[0-9]{5}$", "ru", "5 цифр"},
		{"^[0-9]{21}$", "ru", "21 цифра"},
		{"^[0-9]{6}$", "uk", "6 цифр"},
		{"^[A-Z]{3}$", "ru", "3 заглавные латинские буквы"},
		{"^OP-[0-9]{4,10}$", "en", `"OP-", then 4 to 10 digits`},
		{"^OP-[0-9]{4,10}$", "uk", `"OP-", потім від 4 до 10 цифр`},
		{`^\d+$`, "ru", "цифры (не меньше 1)"},
		{`^\d*$`, "en", "any number of digits"},
		{`^.?$`, "uk", "необов'язково символ"},
		{`^[A-Z0-9]{2}\d{2}$`, "en", "2 capital Latin letters or digits, then 2 digits"},
		{`^\.\-\(\)$`, "en", `".-()"`},
		{"^(ab|cd)$", "en", "matching the pattern ^(ab|cd)$"},
		{"^$", "en", "matching the pattern ^$"},
		{"[", "en", "matching the pattern ["},
	}
	for _, tt := range tests {
		if got := wording.Pattern(tt.pattern, phrase.Lang(tt.lang, "")); got != tt.want {
			t.Errorf("Pattern(%s, %s) = %q, want %q", tt.pattern, tt.lang, got, tt.want)
		}
	}
}

func TestPatternDigits(t *testing.T) {
	t.Parallel()
	for pattern, want := range map[string]int{
		"^[0-9]{4}$": 4, `^\d{6}$`: 6, "^[0-9]{2,4}$": 0, "^[A-Z]{4}$": 0, "^x[0-9]{4}$": 0, "[0-9]{4}": 0, "": 0, "(": 0,
	} {
		if got := wording.PatternDigits(pattern); got != want {
			t.Errorf("PatternDigits(%q) = %d, want %d", pattern, got, want)
		}
	}
}

func TestConstraints(t *testing.T) {
	t.Parallel()
	tests := []struct{ schema, lang, want string }{
		{`{"exclusiveMinimum": 0, "maximum": 10000000}`, "en", "more than 0, at most 10000000"},
		{`{"minimum": 1, "exclusiveMaximum": 5, "multipleOf": 0.5}`, "ru", "не меньше 1, меньше 5, кратно 0.5"},
		{`{"minLength": 3, "maxLength": 64}`, "uk", "від 3 до 64 символів"},
		{`{"minLength": 4, "maxLength": 4}`, "en", "exactly 4 characters"},
		{`{"minLength": 2}`, "en", "at least 2 characters"},
		{`{"maxLength": 9, "pattern": "^[0-9]+$"}`, "en", "at most 9 characters, 1 or more digits"},
		{`{"type": "string"}`, "en", ""},
	}
	for _, tt := range tests {
		if got := wording.Constraints(tree(t, tt.schema).(*jsontree.Object), phrase.Lang(tt.lang, "")); got != tt.want {
			t.Errorf("Constraints(%s, %s) = %q, want %q", tt.schema, tt.lang, got, tt.want)
		}
	}
	if got := wording.Constraints(nil, phrase.English); got != "" {
		t.Errorf("Constraints(nil) = %q", got)
	}
}

func TestRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		schema, lang string
		cond         bool
		want         string
	}{
		{`{"properties": {"mode": {"const": "cash"}}, "required": ["mode"]}`, "en", true, `mode is "cash"`},
		{`{"required": ["iban"]}`, "en", false, "iban is required"},
		{`{"dependentRequired": {"iban": ["bic", "name"]}}`, "en", false, "when iban is given: bic is required and name is required"},
		{`{"if": {"properties": {"m": {"enum": ["a", 1]}}}, "then": {"required": ["x"]}, "else": {"properties": {"y": {"maximum": 3}}}}`, "en", false,
			`when m is one of "a", 1: x is required and unless m is one of "a", 1: y must be: at most 3`},
		{`{"not": {"properties": {"a": {"const": true}}, "required": ["a"]}}`, "ru", false, "не допускается: a = true"},
		{`{"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}`, "uk", false, "має виконуватися одне з: (1) потрібно вказати a; (2) потрібно вказати b"},
		{`{"properties": {"n": {"type": "integer"}}}`, "ru", false, "n должно быть: целое число"},
		{`false`, "en", false, "is not allowed here"},
		{`true`, "en", false, ""},
	}
	for _, tt := range tests {
		describe := wording.Requirement
		if tt.cond {
			describe = wording.Condition
		}
		if got := describe(tree(t, tt.schema), phrase.Lang(tt.lang, "")); got != tt.want {
			t.Errorf("%s in %s:\n got %q\nwant %q", tt.schema, tt.lang, got, tt.want)
		}
	}
}

func TestValue(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		v    any
		want string
	}{{"a\"b", `"a\"b"`}, {float64(2), "2"}, {true, "true"}, {nil, "null"}, {[]any{"x", 1.5}, `["x",1.5]`}} {
		if got := wording.Value(tt.v); got != tt.want {
			t.Errorf("Value(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}
