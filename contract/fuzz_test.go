package contract_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shopspring/decimal"
	"golang.org/x/text/unicode/norm"
)

// Every normalizer has a fuzz target (go test -fuzz=FuzzNormalizeDate
// ./contract/): whatever a model sends, it never panics, a refusal is valid
// UTF-8 that says what would fit, and an accepted value has the slot's form
// and normalizes to itself.

func fuzzSlot(f *testing.F, slot string, seeds []string, check func(t *testing.T, v any)) {
	c := kitchen(f)
	env := monday(f, "ru")
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, fe := c.Normalize(slot, raw, env)
		if fe != nil {
			for _, s := range []string{fe.Message, fe.Input, fe.Format} {
				if !utf8.ValidString(s) {
					t.Fatalf("refusal of %q is not valid UTF-8: %+v", raw, fe)
				}
			}
			if fe.Format == "" || fe.Message == "" {
				t.Fatalf("refusal of %q does not say what would fit: %+v", raw, fe)
			}
			return
		}
		check(t, v)
		again, fe := c.Normalize(slot, v, env)
		if fe != nil || again != v {
			t.Fatalf("%q → %#v, which normalizes to %#v (%v)", raw, v, again, fe)
		}
	})
}

var (
	isoDay   = regexp.MustCompile(`^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$`)
	clock24  = regexp.MustCompile(`^([01]\d|2[0-3]):[0-5]\d$`)
	fourDigs = regexp.MustCompile(`^\d{4}$`)
	iataCode = regexp.MustCompile(`^[A-Z]{3}$`)
)

func FuzzNormalizeDate(f *testing.F) {
	fuzzSlot(f, "day", []string{"вчера", "next Friday", "the 3rd of next month", "15 декабря", "15.12", "31.02", "2026-12-15T10:00Z",
		"наступної п'ятниці", "10-го", "через 2 дня", "Dec 15th", "99.99.9999", "0000-00-00", "today at 17:30", "сегодня вечером",
		"сьогодні о п’ятій", "later today", "через 367 дней", "two days ago", "today at the bank"}, func(t *testing.T, v any) {
		if s, _ := v.(string); !isoDay.MatchString(s) {
			t.Fatalf("date %#v is not YYYY-MM-DD", v)
		}
	})
}

func FuzzNormalizeTime(f *testing.F) {
	fuzzSlot(f, "at", []string{"6:15 pm", "7 вечера", "в половине седьмого вечера", "о пів на сьому", "half past 6 in the evening",
		"noon", "25:00", "без четверти восемь", "12 am", "полседьмого"}, func(t *testing.T, v any) {
		if s, _ := v.(string); !clock24.MatchString(s) {
			t.Fatalf("time %#v is not HH:MM", v)
		}
	})
}

func FuzzNormalizeAmount(f *testing.F) {
	fuzzSlot(f, "sum", []string{"1 200,50 ₽", "1,200.50", "1.200,50 €", "$1,200", "1,2 тыс. руб", "1e309", "NaN", "--5", "1.2.3",
		"٣٤", "1\u00a0200"}, func(t *testing.T, v any) {
		s, _ := v.(string)
		d, err := decimal.NewFromString(s)
		if err != nil || d.StringFixed(2) != s {
			t.Fatalf("amount %#v is not a decimal with two places", v)
		}
	})
}

func FuzzNormalizeInteger(f *testing.F) {
	fuzzSlot(f, "count", []string{"two people", "двое", "двоє", "4 человека", "на 4-х", "2.5", "twenty-one", "-3"}, func(t *testing.T, v any) {
		n, ok := v.(float64)
		if !ok || n != float64(int(n)) || n < 1 || n > 20 {
			t.Fatalf("count %#v is not a whole number within the schema's bounds", v)
		}
	})
}

func FuzzNormalizeLastDigits(f *testing.F) {
	fuzzSlot(f, "card", []string{"•• 4417", "**** **** **** 4417", "карта 4417", "4276 1234 5678 4417", "44"}, func(t *testing.T, v any) {
		if s, _ := v.(string); !fourDigs.MatchString(s) {
			t.Fatalf("last digits %#v are not four digits", v)
		}
	})
}

func FuzzNormalizeEnum(f *testing.F) {
	enum := []string{"duplicate", "fraud", "not_received", "wrong_amount"}
	fuzzSlot(f, "kind", []string{"Duplicate", "not-received", "двойное списание", "chargeback", "ДУБЛЬ"}, func(t *testing.T, v any) {
		if s, _ := v.(string); !slices.Contains(enum, s) {
			t.Fatalf("enum value %#v is not one of %v", v, enum)
		}
	})
}

func FuzzNormalizeIATA(f *testing.F) {
	fuzzSlot(f, "airport", []string{"mad", "Madrid (MAD)", "Madrid", "МАД", "JFK airport"}, func(t *testing.T, v any) {
		if s, _ := v.(string); !iataCode.MatchString(s) {
			t.Fatalf("airport %#v is not three capital letters", v)
		}
	})
}

func FuzzNormalizeText(f *testing.F) {
	fuzzSlot(f, "note", []string{"\u00a0OP-1\u200b", "e\u0301te\u0301", "a  b", "\u202eab"}, func(t *testing.T, v any) {
		s, _ := v.(string)
		if s != strings.TrimSpace(s) || strings.Contains(s, "  ") || !norm.NFC.IsNormalString(s) || strings.ContainsAny(s, "\u200b\u200c\u200d\ufeff\u2060\u00ad") {
			t.Fatalf("text %q is not clean", s)
		}
	})
}

func FuzzNormalizeCurrency(f *testing.F) {
	fuzzSlot(f, "cur", []string{"₽", "руб.", "dollars", "€", "грн", "xyz"}, func(t *testing.T, v any) {
		if s, _ := v.(string); !slices.Contains([]string{"RUB", "USD", "EUR", "UAH", "GBP"}, s) {
			t.Fatalf("currency %#v is not one of the enum", v)
		}
	})
}

// FuzzNormalizeArgsAndCheck runs a whole call of the shipped dispute
// contract: normalize every argument, then check the object.
func FuzzNormalizeArgsAndCheck(f *testing.F) {
	c := shipped(f, "bank.open_dispute")
	env := moscowEnv(f)
	f.Add("•• 4417", "вчера", "1 200,50 ₽", "дубль", "OP-1")
	f.Add("4276 1234 5678 4417", "31.02", "$5", "chargeback", "")
	f.Fuzz(func(t *testing.T, card, day, amount, reason, op string) {
		args := map[string]any{"card_last4": card, "operation_date": day, "amount": amount, "reason": reason, "original_operation_id": op}
		for _, locale := range []string{"en", "ru", "uk"} {
			env.Locale = locale
			vals, errs := c.NormalizeArgs(args, env)
			for _, e := range errs {
				if !utf8.ValidString(e.Message + e.Input + e.Format) {
					t.Fatalf("refusal is not valid UTF-8: %+v", e)
				}
				assertNoCard(t, e)
			}
			r := c.CheckIn(vals, locale)
			for _, v := range r.Violations {
				assertNoCard(t, v)
			}
		}
	})
}
