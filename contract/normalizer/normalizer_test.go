package normalizer_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/slotd/slotd/contract/normalizer"
)

// dirty is one input a model sends and what a parser must make of it: want,
// or a refusal with key (and args, when given).
type dirty struct {
	raw  any
	want any
	key  string
	args normalizer.Args
}

// parser is one parser with its options bound.
type parser func(v any) (any, error)

// result is a parser's result as a parser func's: nothing beside a refusal.
func result[T any](v T, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return v, nil
}

// run checks each input the way package contract feeds it to a parser:
// cleaned first. An accepted value must parse to itself, so that a stored
// slot compares equal to the same value sent again.
func run(t *testing.T, parse parser, tests []dirty) {
	t.Helper()
	if len(tests) < 15 {
		t.Fatalf("the table has %d cases, want at least 15", len(tests))
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v", tt.raw), func(t *testing.T) {
			t.Parallel()
			got, err := parse(normalizer.CleanValue(tt.raw))
			if tt.key != "" {
				var r *normalizer.Refusal
				if !errors.As(err, &r) {
					t.Fatalf("%#v → %#v, %v; want a refusal %s", tt.raw, got, err, tt.key)
				}
				if r.Key != tt.key || (tt.args != nil && !reflect.DeepEqual(r.Args, tt.args)) {
					t.Fatalf("%#v refused with %s %#v, want %s %#v", tt.raw, r.Key, r.Args, tt.key, tt.args)
				}
				return
			}
			if err != nil {
				t.Fatalf("%#v refused: %v; want %#v", tt.raw, err, tt.want)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("%#v → %#v, want %#v", tt.raw, got, tt.want)
			}
			again, err := parse(got)
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("%#v → %#v again = %#v, %v; want it unchanged", tt.raw, got, again, err)
			}
		})
	}
}

func zone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(fmt.Sprintf("time zone %s: %v", name, err))
	}
	return loc
}

var moscow = zone("Europe/Moscow")

// monday is the clock of most cases: Monday 24 August 2026, noon in Moscow.
var monday = time.Date(2026, 8, 24, 12, 0, 0, 0, moscow)

func TestText(t *testing.T) {
	t.Parallel()
	run(t, func(v any) (any, error) { return normalizer.Text(v), nil }, []dirty{
		{raw: "\u00a0OP-12345\u200b", want: "OP-12345"},
		{raw: "  op \t 1 ", want: "op 1"},
		{raw: "Пе\u0438\u0306", want: "Пей"}, // composed to NFC
		{raw: "line\none", want: "line one"},
		{raw: "\ufeffbom first", want: "bom first"},
		{raw: "soft\u00adhyphen", want: "softhyphen"},
		{raw: "\u202eRTL\u202c mark", want: "RTL mark"},
		{raw: "word\u2060joiner", want: "wordjoiner"},
		{raw: "narrow\u202fspace", want: "narrow space"},
		{raw: "ideographic\u3000sp", want: "ideographic sp"},
		{raw: "e\u0301te\u0301", want: "été"},
		{raw: "ok", want: "ok"},
		{raw: "\r\n\tcrlf\r\n", want: "crlf"},
		{raw: "a\u200cb", want: "ab"},
		{raw: " a\u200bb ", want: "ab"},
		{raw: " a\u200b ", want: "a"},
		{raw: "\u200b", want: ""},
		{raw: 12345.0, want: 12345.0}, // not text: the schema says so
	})
}

func TestCleanKeepsCleanASCII(t *testing.T) {
	// Not parallel: AllocsPerRun counts every goroutine's allocations.
	for _, s := range []string{"", "ok", "OP-2026-08-23-001", "a b c"} {
		if got := normalizer.Clean(s); got != s {
			t.Errorf("Clean(%q) = %q", s, got)
		}
		if n := testing.AllocsPerRun(10, func() { normalizer.Clean(s) }); n != 0 {
			t.Errorf("Clean(%q) allocates %v times, want none for clean ASCII", s, n)
		}
	}
}

func TestCleanValue(t *testing.T) {
	t.Parallel()
	got := normalizer.CleanValue(map[string]any{"a": []any{" x\u200b ", 1.0}, "b": "\u00a0y"})
	want := map[string]any{"a": []any{"x", 1.0}, "b": "y"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CleanValue = %#v, want %#v", got, want)
	}
}

func TestRefusalError(t *testing.T) {
	t.Parallel()
	_, err := normalizer.LastDigits("44", 4)
	if err == nil || err.Error() != "normalizer: digits.found (found=2, need=4)" {
		t.Errorf("error = %v, want the key and its arguments", err)
	}
	_, err = normalizer.IATA(1.0)
	if err == nil || err.Error() != "normalizer: iata.not_text" {
		t.Errorf("error = %v, want the key alone", err)
	}
}

func TestBlank(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"", " ", "   ", "\t\n", "\u00a0", "\u200b", "\u200b \u200d\ufeff", "\u2003\u3000", "\u00ad",
		"a", " a ", "\u200ba", "Вчера", " двойное\u00a0списание ", "٣", "1 200,50 ₽", "₽", "—", "\u0301",
		"e\u0301", " \u0301 ", "\u1fef", "\u037e", "\u212b", "\u2160", "**** 4417", "\u202e\u2066",
	} {
		if got, want := normalizer.Blank(s), normalizer.Clean(s) == ""; got != want {
			t.Errorf("Blank(%q) = %v, want %v (Clean gives %q)", s, got, want, normalizer.Clean(s))
		}
	}
}

func FuzzBlank(f *testing.F) {
	for _, s := range []string{"", " ", "\u200b", "a", "Вчера", "\u0301", "\u00a0\u2003"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := normalizer.Blank(s), normalizer.Clean(s) == ""; got != want {
			t.Fatalf("Blank(%q) = %v, Clean gives %q", s, got, normalizer.Clean(s))
		}
	})
}
