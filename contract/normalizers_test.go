package contract_test

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/contract"
)

// kitchen is testdata/contracts/kitchen.json: one property per normalizer
// and variant, so that each normalizer's table reads on its own.
func kitchen(t testing.TB) *contract.Contract {
	t.Helper()
	src, err := os.ReadFile("testdata/contracts/kitchen.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.Parse("kitchen.json", src)
	if err != nil {
		t.Fatalf("Parse(kitchen.json): %v", err)
	}
	return c
}

// monday is the kitchen tests' clock: Monday 24 August 2026, noon in Moscow.
func monday(t testing.TB, locale string) contract.Env {
	loc := mustLocation(t, "Europe/Moscow")
	return contract.Env{Now: time.Date(2026, 8, 24, 12, 0, 0, 0, loc), Location: loc, Locale: locale}
}

// dirty is one input a model sends and what must come of it: want, or a
// refusal whose message and format contain the given texts.
type dirty struct {
	slot   string
	raw    any
	want   any    // nil: refused
	msg    string // refusal: substring of Message
	format string // refusal: substring of Format
}

func runDirty(t *testing.T, c *contract.Contract, env contract.Env, tests []dirty) {
	t.Helper()
	if len(tests) < 15 {
		t.Fatalf("the table has %d cases, want at least 15", len(tests))
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v", tt.slot, tt.raw), func(t *testing.T) {
			t.Parallel()
			got, fe := c.Normalize(tt.slot, tt.raw, env)
			if tt.want == nil {
				if fe == nil {
					t.Fatalf("Normalize(%s, %#v) = %#v, want a refusal saying %q", tt.slot, tt.raw, got, tt.msg)
				}
				if !strings.Contains(fe.Message, tt.msg) {
					t.Errorf("message = %q, want it to contain %q", fe.Message, tt.msg)
				}
				if !strings.Contains(fe.Format, tt.format) {
					t.Errorf("format = %q, want it to contain %q", fe.Format, tt.format)
				}
				if fe.Pointer != "/"+tt.slot || fe.Input == "" || fe.Format == "" {
					t.Errorf("refusal %+v: want pointer /%s, the input and the accepted form", fe, tt.slot)
				}
				return
			}
			if fe != nil {
				t.Fatalf("Normalize(%s, %#v) refused it: %v; want %#v", tt.slot, tt.raw, fe, tt.want)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Normalize(%s, %#v) = %#v, want %#v", tt.slot, tt.raw, got, tt.want)
			}
			// A normalized value normalizes to itself: what slotd stored
			// compares equal to the same value sent again.
			again, fe := c.Normalize(tt.slot, got, env)
			if fe != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("Normalize(%s, %#v) again = %#v, %v; want it unchanged", tt.slot, got, again, fe)
			}
		})
	}
}

// TestNormalizerOptions: what a property says reaches its parser: the
// turn's zone and date range, the amount's scale and currency, the number of
// card digits, the enum's synonyms. The parsers' own tables are in package
// normalizer.
func TestNormalizerOptions(t *testing.T) {
	t.Parallel()
	runDirty(t, kitchen(t), monday(t, "en"), []dirty{
		{slot: "day", raw: "сегодня", want: "2026-08-24"},
		{slot: "day", raw: "next Friday", want: "2026-08-28"},
		{slot: "past_day", raw: "31.12", want: "2025-12-31"}, // an operation date: last year's, not the future
		{slot: "past_day", raw: "в пятницу", want: "2026-08-21"},
		{slot: "future_day", raw: "15.01", want: "2027-01-15"},
		{slot: "at", raw: "7 вечера", want: "19:00"},
		{slot: "count", raw: "двое", want: 2.0},
		{slot: "sum", raw: "1 200,50 ₽", want: "1200.50"},
		{slot: "sum", raw: 1200.5, want: "1200.50"},
		{slot: "rub", raw: "1200.5 руб.", want: "1200.50"},
		{slot: "yen", raw: "1,200 JPY", want: "1200"},
		{slot: "price", raw: "$1,200", want: "1200.00"}, // the currency goes into its own slot
		{slot: "cur", raw: "₽", want: "RUB"},
		{slot: "card", raw: "•• 4417", want: "4417"},
		{slot: "card", raw: 17.0, want: "0017"},
		{slot: "acct", raw: "счёт 40817810000000123456", want: "123456"},
		{slot: "kind", raw: "Not Received", want: "not_received"},
		{slot: "kind", raw: "дубль", want: "duplicate"},
		{slot: "airport", raw: "Madrid (MAD)", want: "MAD"},
		{slot: "note", raw: "\u00a0OP-12345\u200b", want: "OP-12345"},
	})
}

// TestRefusalWording: every refusal says why and what would fit, whether a
// parser refused the value or the property's schema did.
func TestRefusalWording(t *testing.T) {
	t.Parallel()
	const (
		date   = "YYYY-MM-DD"
		clock  = "HH:MM"
		amount = "1200.50"
		count  = "whole number"
		iata   = "a three-letter IATA code such as MAD"
	)
	runDirty(t, kitchen(t), monday(t, "en"), []dirty{
		{slot: "day", raw: "31.02", msg: "no such date", format: date},
		{slot: "day", raw: "31 февраля", msg: "no such date", format: date},
		{slot: "day", raw: "2026-13-01", msg: "no such date", format: date},
		{slot: "day", raw: "08/22/2026", msg: "no such date", format: date}, // month-first is not guessed
		{slot: "day", raw: "someday", msg: "not a date", format: date},
		{slot: "day", raw: "10", msg: "not a date", format: date}, // a bare number is no day
		{slot: "day", raw: "next blursday", msg: "not a date", format: date},
		{slot: "day", raw: 20261215.0, msg: "date as text", format: date},
		// Phrases that are not one date stay refused.
		{slot: "day", raw: "today at the bank", msg: "not a date", format: date},
		{slot: "day", raw: "сегодня в банке", msg: "not a date", format: date},
		{slot: "day", raw: "today or tomorrow", msg: "not a date", format: date},
		{slot: "day", raw: "сегодня или завтра", msg: "not a date", format: date},
		{slot: "day", raw: "сьогодні або завтра", msg: "not a date", format: date},
		{slot: "day", raw: "через два банана", msg: "not a date", format: date},
		{slot: "day", raw: "tomorrow 15.12", msg: "not a date", format: date},
		{slot: "day", raw: "сегодня 5", msg: "not a date", format: date},    // five what?
		{slot: "day", raw: "завтра 2 дня", msg: "not a date", format: date}, // 14:00 or two days?
		{slot: "day", raw: "later this week", msg: "not a date", format: date},
		{slot: "day", raw: "later tomorrow", msg: "not a date", format: date},
		{slot: "day", raw: "today at 25:00", msg: "not a date", format: date},
		{slot: "day", raw: "сегодня в 19:00 утра", msg: "not a date", format: date},
		{slot: "day", raw: "сегодня в", msg: "not a date", format: date},
		{slot: "day", raw: "вечером", msg: "not a date", format: date},
		{slot: "day", raw: "в 5", msg: "not a date", format: date},
		{slot: "day", raw: "2 days", msg: "not a date", format: date},
		{slot: "day", raw: "in 2", msg: "not a date", format: date},
		{slot: "day", raw: "one two days ago", msg: "not a date", format: date},
		{slot: "day", raw: "31.02 at 5", msg: "no such date", format: date},
		// Counts are bounded.
		{slot: "day", raw: "через 367 дней", msg: "more than 366 days", format: date},
		{slot: "day", raw: "in 53 weeks", msg: "more than 366 days", format: date},
		{slot: "day", raw: "1000 days ago", msg: "more than 366 days", format: date},
		// A date on the wrong side of today; relative days are checked,
		// never moved to the allowed side.
		{slot: "past_day", raw: "завтра", msg: "in the future", format: date},
		{slot: "past_day", raw: "2999-01-01", msg: "in the future"},
		{slot: "past_day", raw: "next Friday", msg: "in the future"},
		{slot: "future_day", raw: "вчера", msg: "in the past"},
		{slot: "future_day", raw: "2026-08-01", msg: "in the past"},
		{slot: "past_day", raw: "через два дня", msg: "the date is in the future; a date on or before 2026-08-24", format: date},
		{slot: "past_day", raw: "in 2 days", msg: "in the future"},
		{slot: "past_day", raw: "Послезавтра", msg: "in the future"},
		{slot: "past_day", raw: "через тиждень", msg: "in the future"},
		{slot: "future_day", raw: "два дня назад", msg: "the date is in the past; a date on or after 2026-08-24", format: date},
		{slot: "future_day", raw: "3 days ago", msg: "in the past"},
		{slot: "at", raw: "25:00", msg: "no such time", format: clock},
		{slot: "at", raw: "7:75", msg: "no such time", format: clock},
		{slot: "at", raw: "19:00 утра", msg: "no such time", format: clock},
		{slot: "at", raw: "asap", msg: "not a time", format: clock},
		{slot: "at", raw: 1930.0, msg: "time of day as text", format: clock},
		{slot: "sum", raw: "1200.505", msg: "more than 2 decimal places", format: amount},
		{slot: "yen", raw: "12.50", msg: "whole amount"},
		{slot: "sum", raw: "1 200 50", msg: "not an amount", format: amount},
		{slot: "sum", raw: "1.2.3", msg: "not an amount"},
		{slot: "sum", raw: "двести", msg: "not an amount", format: amount},
		{slot: "sum", raw: "₽", msg: "not an amount"},
		{slot: "sum", raw: "--5", msg: "not an amount"},
		{slot: "sum", raw: "$5 €", msg: "two different currencies"},
		{slot: "sum", raw: true, msg: "expected an amount"},
		{slot: "rub", raw: "$1,200", msg: "in USD, but this tool takes amounts in RUB", format: "in RUB"},
		{slot: "rub", raw: "1 200 грн", msg: "in UAH"},
		{slot: "rub", raw: "0", msg: "exclusiveMinimum", format: "more than 0"},
		{slot: "rub", raw: "-1 200,50 ₽", msg: "exclusiveMinimum"},
		{slot: "count", raw: "twenty-one", msg: "maximum", format: "at most 20"},
		{slot: "count", raw: "2.5", msg: "not a whole number", format: count},
		{slot: "count", raw: 2.5, msg: "not a whole number", format: count},
		{slot: "count", raw: "2 adults and 1 child", msg: "more than one number", format: count},
		{slot: "count", raw: "many", msg: "not a count", format: count},
		{slot: "count", raw: "0", msg: "minimum", format: "at least 1"},
		{slot: "count", raw: true, msg: "not a count"},
		{slot: "acct", raw: "•• 4417", msg: "found 4 digits, need 6", format: "last six digits"},
		{slot: "card", raw: "44", msg: "found 2 digits, need 4", format: "last four digits"},
		{slot: "card", raw: "моя карта", msg: "found 0 digits"},
		{slot: "card", raw: 44.17, msg: "expected digits"},
		{slot: "card", raw: -4417.0, msg: "expected digits"},
		{slot: "card", raw: false, msg: "expected digits"},
		{slot: "kind", raw: "chargeback", msg: "must be one of", format: strings.Join(reasons, ", ")},
		{slot: "kind", raw: 3.0, msg: "want string"},
		{slot: "kind", raw: []any{"duplicate"}, msg: "want string"},
		{slot: "airport", raw: "Madrid", msg: "a city name cannot be turned into one", format: iata},
		{slot: "airport", raw: "Kyiv", msg: "not an IATA airport code", format: iata},
		{slot: "airport", raw: "Мадрид", msg: "not an IATA airport code", format: iata},
		{slot: "airport", raw: "МАД", msg: "not an IATA airport code", format: iata},
		{slot: "airport", raw: "KB", msg: "not an IATA airport code", format: iata},
		{slot: "airport", raw: "MAD or BCN", msg: "not an IATA airport code", format: iata},
		{slot: "airport", raw: 123.0, msg: "airport code as text", format: iata},
		{slot: "note", raw: " a\u200b ", msg: "minLength"},
		{slot: "note", raw: strings.Repeat("x", 21), msg: "maxLength", format: "2 to 20 characters"},
		{slot: "note", raw: 12345.0, msg: "want string"},
		{slot: "cur", raw: "JPY", msg: "must be one of"},
		{slot: "cur", raw: "money", msg: "not a currency", format: "one of: RUB, USD, EUR, UAH, GBP"},
		{slot: "cur", raw: 5.0, msg: "not a currency"},
	})
}

// TestNormalizerDateTooFarWording: the bound is said in the turn's language.
func TestNormalizerDateTooFarWording(t *testing.T) {
	t.Parallel()
	c := kitchen(t)
	for locale, want := range map[string]string{"ru": "больше 366 дней", "uk": "більше 366 днів", "en": "more than 366 days"} {
		_, fe := c.Normalize("day", "через 400 дней", monday(t, locale))
		if fe == nil || !strings.Contains(fe.Message, want) {
			t.Errorf("через 400 дней in %s: refusal %+v, want a message containing %q", locale, fe, want)
		}
	}
}

// TestRefusalAllowedValuesAreACopy: changing the allowed values a refusal
// lists does not change the contract.
func TestRefusalAllowedValuesAreACopy(t *testing.T) {
	t.Parallel()
	c := kitchen(t)
	_, fe := c.Normalize("kind", "chargeback", monday(t, "en"))
	if !reflect.DeepEqual(fe.Allowed, reasons) {
		t.Fatalf("allowed = %v, want %v", fe.Allowed, reasons)
	}
	fe.Allowed[0] = "changed"
	if got := c.Property("kind").Enum[0]; got != "duplicate" {
		t.Errorf("changing a refusal's allowed values changed the contract's enum to %q", got)
	}
	allowed := c.Property("kind").AllowedValues()
	allowed[0] = "changed"
	if got := c.Property("kind").Enum[0]; got != "duplicate" {
		t.Errorf("AllowedValues shares the contract's enum: %q", got)
	}
}

func TestNormalizeArgsFillsTheCurrencySlot(t *testing.T) {
	t.Parallel()
	c := kitchen(t)
	tests := []struct {
		name    string
		args    map[string]any
		want    map[string]any
		errPtrs []string
		errMsg  string
	}{
		{"a dollar sign fills the currency", map[string]any{"price": "$1,200"}, map[string]any{"price": "1200.00", "cur": "USD"}, nil, ""},
		{"a rouble word fills it", map[string]any{"price": "1 200 рублей"}, map[string]any{"price": "1200.00", "cur": "RUB"}, nil, ""},
		{"the same currency twice is fine", map[string]any{"price": "€ 99", "cur": "eur"}, map[string]any{"price": "99.00", "cur": "EUR"}, nil, ""},
		{"no sign: only the given currency", map[string]any{"price": "99", "cur": "₴"}, map[string]any{"price": "99.00", "cur": "UAH"}, nil, ""},
		{"no sign and no currency", map[string]any{"price": "99"}, map[string]any{"price": "99.00"}, nil, ""},
		{"a contradiction is refused", map[string]any{"price": "1 200 ₽", "cur": "EUR"}, map[string]any{"cur": "EUR"}, []string{"/price"}, "in RUB, but the currency given is EUR"},
		{"a currency the slot does not take", map[string]any{"price": "1000 ₸"}, map[string]any{}, []string{"/price"}, "KZT"},
		{"a refused currency argument keeps its own error", map[string]any{"price": "$5", "cur": "money"}, map[string]any{"price": "5.00"}, []string{"/cur"}, "not a currency"},
		{"nulls and blanks are left out", map[string]any{"price": nil, "cur": " ", "note": "\u200b"}, map[string]any{}, nil, ""},
		{"an unknown argument", map[string]any{"card_number": "4276 1234 5678 4417", "note": "hi"}, map[string]any{"note": "hi"}, []string{"/card_number"}, "unknown argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, errs := c.NormalizeArgs(tt.args, monday(t, "en"))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("values = %v, want %v", got, tt.want)
			}
			var ptrs []string
			for _, e := range errs {
				ptrs = append(ptrs, e.Pointer)
				if tt.errMsg != "" && !strings.Contains(e.Message, tt.errMsg) {
					t.Errorf("error %v does not say %q", e, tt.errMsg)
				}
				assertNoCard(t, e)
			}
			if !reflect.DeepEqual(ptrs, tt.errPtrs) {
				t.Errorf("errors at %v, want %v (%v)", ptrs, tt.errPtrs, errs)
			}
		})
	}
}
