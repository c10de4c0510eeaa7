package normalizer_test

import (
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shopspring/decimal"
	"golang.org/x/text/unicode/norm"

	"github.com/slotd/slotd/contract/normalizer"
)

// Every parser has a fuzz target (go test -fuzz=FuzzNormalizeDate
// ./contract/normalizer/): whatever a model sends, it never panics, a
// refusal names a message and carries valid UTF-8, and an accepted value has
// the parser's form and parses to itself.

func fuzzParser(f *testing.F, seeds []string, parse parser, check func(t *testing.T, raw string, v any)) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		clean := normalizer.Clean(raw)
		v, err := parse(clean)
		if err != nil {
			var r *normalizer.Refusal
			if !errors.As(err, &r) || r.Key == "" {
				t.Fatalf("%q: %v is not a refusal with a message key", raw, err)
			}
			for _, a := range r.Args {
				if s, ok := a.(string); ok && !utf8.ValidString(s) {
					t.Fatalf("%q: refusal %s carries invalid UTF-8 %q", raw, r.Key, s)
				}
			}
			return
		}
		check(t, clean, v)
		again, err := parse(v)
		if err != nil || !reflect.DeepEqual(again, v) {
			t.Fatalf("%q → %#v, which parses to %#v (%v)", raw, v, again, err)
		}
	})
}

var (
	isoDay    = regexp.MustCompile(`^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$`)
	clock24   = regexp.MustCompile(`^([01]\d|2[0-3]):[0-5]\d$`)
	fourDigs  = regexp.MustCompile(`^\d{4}$`)
	threeCaps = regexp.MustCompile(`^[A-Z]{3}$`) // IATA and ISO 4217 codes
)

func FuzzNormalizeDate(f *testing.F) {
	fuzzParser(f, []string{"вчера", "next Friday", "the 3rd of next month", "15 декабря", "15.12", "31.02", "2026-12-15T10:00Z",
		"наступної п'ятниці", "10-го", "через 2 дня", "Dec 15th", "99.99.9999", "0000-00-00", "today at 17:30", "сегодня вечером",
		"сьогодні о п’ятій", "later today", "через 367 дней", "two days ago", "today at the bank"}, date(""), func(t *testing.T, _ string, v any) {
		if s, _ := v.(string); !isoDay.MatchString(s) {
			t.Fatalf("date %#v is not YYYY-MM-DD", v)
		}
	})
}

func FuzzNormalizeTime(f *testing.F) {
	fuzzParser(f, []string{"6:15 pm", "7 вечера", "в половине седьмого вечера", "о пів на сьому", "half past 6 in the evening",
		"noon", "25:00", "без четверти восемь", "12 am", "полседьмого"}, func(v any) (any, error) { return result(normalizer.Time(v)) },
		func(t *testing.T, _ string, v any) {
			if s, _ := v.(string); !clock24.MatchString(s) {
				t.Fatalf("time %#v is not HH:MM", v)
			}
		})
}

func FuzzNormalizeAmount(f *testing.F) {
	fuzzParser(f, []string{"1 200,50 ₽", "1,200.50", "1.200,50 €", "$1,200", "1,2 тыс. руб", "1e309", "NaN", "--5", "1.2.3",
		"٣٤", "1\u00a0200"}, amount(normalizer.AmountOptions{Scale: 2}), func(t *testing.T, _ string, v any) {
		s, _ := v.(string)
		d, err := decimal.NewFromString(s)
		if err != nil || d.StringFixed(2) != s {
			t.Fatalf("amount %#v is not a decimal with two places", v)
		}
	})
}

func FuzzNormalizeInteger(f *testing.F) {
	fuzzParser(f, []string{"two people", "двое", "двоє", "4 человека", "на 4-х", "2.5", "twenty-one", "-3"},
		func(v any) (any, error) { return result(normalizer.Integer(v)) }, func(t *testing.T, _ string, v any) {
			n, ok := v.(float64)
			if !ok || n != float64(int64(n)) || n > 999999999 || n < -999999999 {
				t.Fatalf("count %#v is not a whole number of at most nine digits", v)
			}
		})
}

func FuzzNormalizeLastDigits(f *testing.F) {
	fuzzParser(f, []string{"•• 4417", "**** **** **** 4417", "карта 4417", "4276 1234 5678 4417", "44"}, lastDigits(4),
		func(t *testing.T, _ string, v any) {
			if s, _ := v.(string); !fourDigs.MatchString(s) {
				t.Fatalf("last digits %#v are not four digits", v)
			}
		})
}

func FuzzNormalizeEnum(f *testing.F) {
	e := normalizer.NewEnum(reasons, synonyms)
	fuzzParser(f, []string{"Duplicate", "not-received", "двойное списание", "chargeback", "ДУБЛЬ"},
		func(v any) (any, error) { return e.Match(v), nil }, func(t *testing.T, raw string, v any) {
			if s, _ := v.(string); !slices.Contains(reasons, s) && s != raw {
				t.Fatalf("%q matched %#v, which is neither one of %v nor the value as sent", raw, v, reasons)
			}
		})
}

func FuzzNormalizeIATA(f *testing.F) {
	fuzzParser(f, []string{"mad", "Madrid (MAD)", "Madrid", "МАД", "JFK airport"}, func(v any) (any, error) { return result(normalizer.IATA(v)) },
		func(t *testing.T, _ string, v any) {
			if s, _ := v.(string); !threeCaps.MatchString(s) {
				t.Fatalf("airport %#v is not three capital letters", v)
			}
		})
}

func FuzzNormalizeText(f *testing.F) {
	fuzzParser(f, []string{"\u00a0OP-1\u200b", "e\u0301te\u0301", "a  b", "\u202eab"}, func(v any) (any, error) { return normalizer.Text(v), nil },
		func(t *testing.T, _ string, v any) {
			s, _ := v.(string)
			if s != strings.TrimSpace(s) || strings.Contains(s, "  ") || !norm.NFC.IsNormalString(s) || strings.ContainsAny(s, "\u200b\u200c\u200d\ufeff\u2060\u00ad") {
				t.Fatalf("text %q is not clean", s)
			}
		})
}

func FuzzNormalizeCurrency(f *testing.F) {
	fuzzParser(f, []string{"₽", "руб.", "dollars", "€", "грн", "xyz"}, func(v any) (any, error) { return result(normalizer.Currency(v)) },
		func(t *testing.T, _ string, v any) {
			if s, _ := v.(string); !threeCaps.MatchString(s) {
				t.Fatalf("currency %#v is not an ISO 4217 code", v)
			}
		})
}
