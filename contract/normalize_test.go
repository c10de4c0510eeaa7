package contract_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/redact"
	"github.com/slotd/slotd/problem"
)

var reasons = []string{"duplicate", "fraud", "not_received", "wrong_amount"}

// refusal is what a refused value's FieldError must say; empty members are
// not checked.
type refusal struct {
	message string   // a substring of Message
	format  string   // a substring of Format
	allowed []string // exactly Allowed
}

type normalizeCase struct {
	name    string
	tool    string
	slot    string
	raw     any
	env     func(testing.TB) contract.Env // moscowEnv when nil
	want    any
	refused *refusal
}

func runNormalize(t *testing.T, tests []normalizeCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s", tt.slot, tt.name), func(t *testing.T) {
			t.Parallel()
			tool := tt.tool
			if tool == "" {
				tool = "bank.open_dispute"
			}
			c := shipped(t, tool)
			envOf := tt.env
			if envOf == nil {
				envOf = moscowEnv
			}
			got, fe := c.Normalize(tt.slot, tt.raw, envOf(t))
			if tt.refused == nil {
				if fe != nil {
					t.Fatalf("Normalize(%s, %#v) refused it: %v; want %#v", tt.slot, tt.raw, fe, tt.want)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("Normalize(%s, %#v) = %#v, want %#v", tt.slot, tt.raw, got, tt.want)
				}
				return
			}
			if fe == nil {
				t.Fatalf("Normalize(%s, %#v) = %#v, want a refusal (%+v)", tt.slot, tt.raw, got, *tt.refused)
			}
			if got != nil {
				t.Errorf("a refused value came back as %#v, want nil", got)
			}
			if want := "/" + tt.slot; fe.Pointer != want {
				t.Errorf("pointer = %q, want %q", fe.Pointer, want)
			}
			if fe.Input == "" {
				t.Errorf("the refusal does not say what was received")
			}
			if !strings.Contains(fe.Message, tt.refused.message) {
				t.Errorf("message = %q, want it to contain %q", fe.Message, tt.refused.message)
			}
			if !strings.Contains(fe.Format, tt.refused.format) {
				t.Errorf("format = %q, want it to contain %q", fe.Format, tt.refused.format)
			}
			if tt.refused.allowed != nil && !reflect.DeepEqual(fe.Allowed, tt.refused.allowed) {
				t.Errorf("allowed = %q, want %q", fe.Allowed, tt.refused.allowed)
			}
		})
	}
}

func TestNormalizeDate(t *testing.T) {
	t.Parallel()
	const dateForm = "YYYY-MM-DD"
	runNormalize(t, []normalizeCase{
		{name: "вчера", slot: "operation_date", raw: "вчера", want: "2026-08-23"},
		{name: "capital and trailing space", slot: "operation_date", raw: "Вчера ", want: "2026-08-23"},
		{name: "with a full stop", slot: "operation_date", raw: "вчера.", want: "2026-08-23"},
		{name: "позавчера", slot: "operation_date", raw: "позавчера", want: "2026-08-22"},
		{name: "сегодня", slot: "operation_date", raw: "сегодня", want: "2026-08-24"},
		{name: "СЕГОДНЯ!", slot: "operation_date", raw: "СЕГОДНЯ!", want: "2026-08-24"},
		{name: "yesterday", slot: "operation_date", raw: "yesterday", want: "2026-08-23"},
		{name: "Today", slot: "operation_date", raw: "Today", want: "2026-08-24"},
		{name: "the day before yesterday", slot: "operation_date", raw: "The day before  yesterday", want: "2026-08-22"},
		{name: "uk сьогодні", slot: "operation_date", raw: "сьогодні", want: "2026-08-24"},
		{name: "uk вчора", slot: "operation_date", raw: "вчора", want: "2026-08-23"},
		{name: "uk позавчора", slot: "operation_date", raw: "позавчора", want: "2026-08-22"},
		{name: "NBSP and zero-width around", slot: "operation_date", raw: "\u00a0\u200bвчера\u200d\ufeff", want: "2026-08-23"},
		{name: "ISO", slot: "operation_date", raw: "2026-08-22", want: "2026-08-22"},
		{name: "ISO without zero padding", slot: "operation_date", raw: "2026-8-5", want: "2026-08-05"},
		{name: "dd.mm.yyyy", slot: "operation_date", raw: "22.08.2026", want: "2026-08-22"},
		{name: "dd/mm/yyyy", slot: "operation_date", raw: "22/08/2026", want: "2026-08-22"},
		{name: "dd.mm.yy", slot: "operation_date", raw: "22.08.26", want: "2026-08-22"},
		{name: "dd.mm takes the turn's year", slot: "operation_date", raw: "22.08", want: "2026-08-22"},
		{name: "leap day of a leap year", slot: "operation_date", raw: "29.02.2024", want: "2024-02-29"},
		{name: "an operation date is never in the future", slot: "operation_date", raw: "29.02.2028",
			refused: &refusal{message: "in the future", format: dateForm}},
		{name: "a day and month without a year: the last one that passed", slot: "operation_date", raw: "31.12",
			want: "2025-12-31"},
		{name: "31 February is refused, never rolled over", slot: "operation_date", raw: "31.02.2026",
			refused: &refusal{message: "no such date", format: dateForm}},
		{name: "29 February of a common year", slot: "operation_date", raw: "2026-02-29",
			refused: &refusal{message: "no such date", format: dateForm}},
		{name: "month 13", slot: "operation_date", raw: "2026-13-01",
			refused: &refusal{message: "no such date", format: dateForm}},
		{name: "US order is not guessed", slot: "operation_date", raw: "08/22/2026",
			refused: &refusal{message: "no such date", format: dateForm}},
		{name: "someday", slot: "operation_date", raw: "someday",
			refused: &refusal{message: "not a date", format: dateForm}},
		{name: "a number", slot: "operation_date", raw: 20260822.0,
			refused: &refusal{message: "date", format: dateForm}},
		{name: "a flight date in Kyiv", tool: "travel.search_flights", slot: "date", raw: "Завтра",
			want: "2026-08-25"},
	})
}

func TestNormalizeDateNearMidnight(t *testing.T) {
	t.Parallel()
	// 21:30 UTC on 23 August is 00:30 on 24 August in Moscow: the user's
	// "today" is the 24th, although the server's UTC clock still says the 23rd.
	now := time.Date(2026, 8, 23, 21, 30, 0, 0, time.UTC)
	moscow := mustLocation(t, "Europe/Moscow")
	kyiv := mustLocation(t, "Europe/Kyiv")
	c := shipped(t, "bank.open_dispute")
	tests := []struct {
		raw  string
		loc  *time.Location
		want string
	}{
		{"сегодня", moscow, "2026-08-24"},
		{"вчера", moscow, "2026-08-23"},
		{"позавчера", moscow, "2026-08-22"},
		{"сегодня", time.UTC, "2026-08-23"},
		{"вчера", time.UTC, "2026-08-22"},
		{"сьогодні", kyiv, "2026-08-24"}, // 00:30 in Kyiv too (UTC+3 in summer)
		{"22.08", moscow, "2026-08-22"},
		// "tonight" and "this evening" just after midnight are the day that
		// has begun, as "today" is; relative counts start from it too.
		{"tonight", moscow, "2026-08-24"},
		{"сегодня вечером", moscow, "2026-08-24"},
		{"today at 17:30", time.UTC, "2026-08-23"},
		{"два дня назад", moscow, "2026-08-22"},
		{"два дні тому", time.UTC, "2026-08-21"},
	}
	for _, tt := range tests {
		t.Run(tt.raw+"@"+tt.loc.String(), func(t *testing.T) {
			t.Parallel()
			got, fe := c.Normalize("operation_date", tt.raw, contract.Env{Now: now, Location: tt.loc})
			if fe != nil {
				t.Fatalf("Normalize(%q) refused: %v", tt.raw, fe)
			}
			if got != tt.want {
				t.Errorf("Normalize(%q) at %s in %s = %v, want %s", tt.raw, now.Format(time.RFC3339), tt.loc, got, tt.want)
			}
		})
	}

}

func TestNormalizeDateUsesContractZoneByDefault(t *testing.T) {
	t.Parallel()
	// A caller that names no zone gets the contract's x-slotd.time_zone, not
	// UTC: 21:30 UTC is already tomorrow in Moscow.
	c := shipped(t, "bank.open_dispute")
	now := time.Date(2026, 8, 23, 21, 30, 0, 0, time.UTC)
	got, fe := c.Normalize("operation_date", "сегодня", contract.Env{Now: now})
	if fe != nil {
		t.Fatalf("refused: %v", fe)
	}
	if got != "2026-08-24" {
		t.Errorf("сегодня at %s with no zone given = %v, want 2026-08-24 (Europe/Moscow, the contract's zone)", now.Format(time.RFC3339), got)
	}
}

func TestNormalizeAmount(t *testing.T) {
	t.Parallel()
	const amountForm = "a positive amount in roubles, e.g. 1200.50"
	runNormalize(t, []normalizeCase{
		{name: "roubles with a space and a decimal comma", slot: "amount", raw: "1 200,50 ₽", want: "1200.50"},
		{name: "NBSP between thousands", slot: "amount", raw: "1\u00a0200,50\u00a0₽", want: "1200.50"},
		{name: "narrow NBSP between thousands", slot: "amount", raw: "1\u202f200 ₽", want: "1200.00"},
		{name: "English separators", slot: "amount", raw: "1,200.50", want: "1200.50"},
		{name: "German separators", slot: "amount", raw: "1.200,50", want: "1200.50"},
		{name: "euros are not roubles", slot: "amount", raw: "1.200,50 €",
			refused: &refusal{message: "in EUR, but this tool takes amounts in RUB", format: "roubles"}},
		{name: "one decimal and руб.", slot: "amount", raw: "1200.5 руб.", want: "1200.50"},
		{name: "рублей", slot: "amount", raw: "1 340 рублей", want: "1340.00"},
		{name: "a thousands comma", slot: "amount", raw: "1,200", want: "1200.00"},
		{name: "a thousands stop: the same rule as the comma", slot: "amount", raw: "1.200 ₽", want: "1200.00"},
		{name: "extra decimals drop to the canonical scale", slot: "amount", raw: "1200.500", want: "1200.50"},
		{name: "dollars are not roubles", slot: "amount", raw: "$1,200",
			refused: &refusal{message: "in USD", format: "roubles"}},
		{name: "hryvnias are not roubles", slot: "amount", raw: "1 200 грн",
			refused: &refusal{message: "in UAH", format: "roubles"}},
		{name: "RUB code", slot: "amount", raw: "RUB 99,9", want: "99.90"},
		{name: "zero-width inside", slot: "amount", raw: "1\u200b200", want: "1200.00"},
		{name: "a JSON number", slot: "amount", raw: 1200.5, want: "1200.50"},
		{name: "a whole JSON number", slot: "amount", raw: 1340.0, want: "1340.00"},
		{name: "a json.Number", slot: "amount", raw: json.Number("1200.5"), want: "1200.50"},
		{name: "a small number", slot: "amount", raw: 0.1, want: "0.10"},
		{name: "negative is refused by exclusiveMinimum", slot: "amount", raw: "-5",
			refused: &refusal{message: "exclusiveMinimum", format: amountForm}},
		{name: "zero is refused by exclusiveMinimum", slot: "amount", raw: "0",
			refused: &refusal{message: "exclusiveMinimum", format: amountForm}},
		{name: "a negative number", slot: "amount", raw: -5.0,
			refused: &refusal{message: "exclusiveMinimum", format: amountForm}},
		{name: "above the maximum", slot: "amount", raw: "20 000 000 ₽",
			refused: &refusal{message: "maximum", format: amountForm}},
		{name: "a number in words", slot: "amount", raw: "двести",
			refused: &refusal{message: "not an amount", format: amountForm}},
		{name: "a currency sign alone", slot: "amount", raw: "₽",
			refused: &refusal{message: "not an amount", format: amountForm}},
		{name: "two minus signs", slot: "amount", raw: "--5",
			refused: &refusal{message: "not an amount", format: amountForm}},
		{name: "a boolean", slot: "amount", raw: true,
			refused: &refusal{message: "expected an amount", format: amountForm}},
	})
}

func TestNormalizeCard(t *testing.T) {
	t.Parallel()
	const cardForm = "last four digits"
	runNormalize(t, []normalizeCase{
		{name: "bullets", slot: "card_last4", raw: "•• 4417", want: "4417"},
		{name: "masked groups", slot: "card_last4", raw: "**** **** **** 4417", want: "4417"},
		{name: "with a word", slot: "card_last4", raw: "карта 4417", want: "4417"},
		{name: "digits", slot: "card_last4", raw: "4417", want: "4417"},
		{name: "a JSON number", slot: "card_last4", raw: 4417.0, want: "4417"},
		{name: "a JSON number that lost its leading zeros", slot: "card_last4", raw: 17.0, want: "0017"},
		{name: "a whole card number keeps only the last four", slot: "card_last4", raw: "4276 1234 5678 4417", want: "4417"},
		{name: "zero-width inside", slot: "card_last4", raw: "44\u200b17", want: "4417"},
		{name: "two digits", slot: "card_last4", raw: "44",
			refused: &refusal{message: "found 2 digits", format: cardForm}},
		{name: "no digits", slot: "card_last4", raw: "моя карта",
			refused: &refusal{message: "found 0 digits", format: cardForm}},
		{name: "a fraction", slot: "card_last4", raw: 44.17,
			refused: &refusal{message: "digits", format: cardForm}},
		{name: "a negative number", slot: "card_last4", raw: -4417.0,
			refused: &refusal{message: "digits", format: cardForm}},
		{name: "a boolean", slot: "card_last4", raw: false,
			refused: &refusal{message: "digits", format: cardForm}},
	})
}

func TestNormalizeEnum(t *testing.T) {
	t.Parallel()
	runNormalize(t, []normalizeCase{
		{name: "capital", slot: "reason", raw: "Duplicate", want: "duplicate"},
		{name: "upper case with spaces", slot: "reason", raw: " DUPLICATE ", want: "duplicate"},
		{name: "hyphen for underscore", slot: "reason", raw: "not-received", want: "not_received"},
		{name: "words", slot: "reason", raw: "Not Received", want: "not_received"},
		{name: "lower-case words", slot: "reason", raw: "wrong amount", want: "wrong_amount"},
		{name: "zero-width inside", slot: "reason", raw: "dupli\u200bcate", want: "duplicate"},
		{name: "synonym дубль", slot: "reason", raw: "дубль", want: "duplicate"},
		{name: "synonym двойное списание", slot: "reason", raw: "двойное списание", want: "duplicate"},
		{name: "synonym in capitals with NBSP", slot: "reason", raw: "Двойное\u00a0Списание", want: "duplicate"},
		{name: "synonym не я", slot: "reason", raw: "не я", want: "fraud"},
		{name: "synonym charged twice", slot: "reason", raw: "Charged twice", want: "duplicate"},
		{name: "not a reason", slot: "reason", raw: "chargeback",
			refused: &refusal{message: "must be one of", allowed: reasons}},
		{name: "a number", slot: "reason", raw: 3.0,
			refused: &refusal{message: "want string", allowed: reasons}},
		{name: "a list of reasons", slot: "reason", raw: []any{"duplicate", "fraud"},
			refused: &refusal{message: "want string", allowed: reasons}},
	})
}

func TestNormalizeIATA(t *testing.T) {
	t.Parallel()
	runNormalize(t, []normalizeCase{
		{name: "lower case", tool: "travel.search_flights", slot: "from", raw: "mad", want: "MAD"},
		{name: "NBSP and zero-width", tool: "travel.search_flights", slot: "to", raw: "\u00a0kbp\u200b ", want: "KBP"},
		{name: "a city name", tool: "travel.search_flights", slot: "from", raw: "Madrid",
			refused: &refusal{message: "IATA", format: "IATA"}},
		{name: "Cyrillic look-alike", tool: "travel.search_flights", slot: "from", raw: "МАД",
			refused: &refusal{format: "IATA"}},
		{name: "two letters", tool: "travel.search_flights", slot: "to", raw: "KB",
			refused: &refusal{format: "IATA"}},
		{name: "a number", tool: "travel.search_flights", slot: "to", raw: 123.0,
			refused: &refusal{format: "IATA"}},
	})
}

func TestNormalizeText(t *testing.T) {
	t.Parallel()
	runNormalize(t, []normalizeCase{
		{name: "NBSP and zero-width stripped", slot: "original_operation_id", raw: "\u00a0OP-12345\u200b", want: "OP-12345"},
		{name: "runs of spaces folded", slot: "original_operation_id", raw: "  op \t 1 ", want: "op 1"},
		{name: "composed to NFC", slot: "original_operation_id", raw: "Пе\u0438\u0306", want: "Пей"},
		{name: "too short after cleaning", slot: "original_operation_id", raw: " a\u200bb ",
			refused: &refusal{message: "minLength"}},
		{name: "a number is not text", slot: "original_operation_id", raw: 12345.0,
			refused: &refusal{message: "want string"}},
	})
}

func TestNormalizeUnknownArgument(t *testing.T) {
	t.Parallel()
	c := shipped(t, "bank.open_dispute")
	_, fe := c.Normalize("card_number", "4276 1234 5678 4417", moscowEnv(t))
	if fe == nil {
		t.Fatal("an argument the contract lacks was accepted")
	}
	if fe.Pointer != "/card_number" || fe.Message != "unknown argument" {
		t.Errorf("got pointer %q, message %q; want /card_number, unknown argument", fe.Pointer, fe.Message)
	}
	want := []string{"card_last4", "operation_date", "amount", "reason", "original_operation_id"}
	if !reflect.DeepEqual(fe.Allowed, want) {
		t.Errorf("allowed = %q, want the contract's arguments %q", fe.Allowed, want)
	}
}

// cardNumber matches the card numbers the tests write: 13 to 19 digits,
// the lengths of card numbers, maybe grouped by spaces or dashes.
var cardNumber = regexp.MustCompile(`\d(?:[ \-\x{00A0}]?\d){12,18}`)

func TestRefusalsNeverEchoACardNumber(t *testing.T) {
	t.Parallel()
	const card = "4276 1234 5678 4417"
	pan := strings.ReplaceAll(card, " ", "")
	withPattern := mustParse(t, `{
		"type": "object",
		"properties": {
			"code": {"type": "string", "pattern": "^[A-Z]{3}$"},
			"day":  {"type": "string", "format": "date", "x-slotd": {"normalize": ["text"]}}
		},
		"x-slotd": {"name": "t.pattern"}
	}`)
	bank := shipped(t, "bank.open_dispute")
	tests := []struct {
		name string
		c    *contract.Contract
		slot string
		raw  any
	}{
		{"unknown argument", bank, "card_number", card},
		{"unknown argument as a number", bank, "pan", 4276123456784417.0},
		{"card number for the amount", bank, "amount", pan},
		{"grouped card number for the amount", bank, "amount", card},
		{"card number as a JSON number for the amount", bank, "amount", 4276123456784417.0},
		{"dashed card number for the amount", bank, "amount", "4276-1234-5678-4417"},
		{"card number for the date", bank, "operation_date", card},
		{"card number inside a long unknown argument", bank, "comment", "op " + card + strings.Repeat(" x", 30)},
		{"card number in a list", bank, "reason", []any{"fraud", "card " + card}},
		{"card number in an object", bank, "reason", map[string]any{"card": pan}},
		{"card number against a pattern", withPattern, "code", card},
		{"card number against a format", withPattern, "day", pan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, fe := tt.c.Normalize(tt.slot, tt.raw, moscowEnv(t))
			if fe == nil {
				t.Fatalf("Normalize(%s, %#v) = %#v, want a refusal", tt.slot, tt.raw, got)
			}
			assertNoCard(t, *fe)
			if !strings.Contains(fe.Input, "4417") {
				t.Errorf("input %q does not keep the last four digits to show what was received", fe.Input)
			}
		})
	}
}

func TestSensitiveInputIsMasked(t *testing.T) {
	t.Parallel()
	c := mustParse(t, `{
		"type": "object",
		"properties": {"cvv": {"type": "string", "pattern": "^[0-9]{3}$", "x-slotd": {"sensitive": true}}},
		"x-slotd": {"name": "t.sensitive"}
	}`)
	_, fe := c.Normalize("cvv", "12a4", moscowEnv(t))
	if fe == nil {
		t.Fatal("a value failing the pattern was accepted")
	}
	if fe.Input != `"•••"` {
		t.Errorf("input of a sensitive slot = %s, want it masked entirely", fe.Input)
	}
	if strings.Contains(fe.Message+fe.Error(), "12a4") {
		t.Errorf("the refusal repeats the sensitive value: %v", fe)
	}
	if !c.Property("cvv").Sensitive {
		t.Errorf("x-slotd.sensitive was not read")
	}
}

func TestRefusalInputIsShortValidUTF8(t *testing.T) {
	t.Parallel()
	c := shipped(t, "bank.open_dispute")
	long := "x" + strings.Repeat("д", 300) // one ASCII byte first: a byte cut lands inside a letter
	for _, raw := range []any{long, []any{long}, map[string]any{"why": long}} {
		_, fe := c.Normalize("reason", raw, moscowEnv(t))
		if fe == nil {
			t.Fatalf("Normalize(reason, %T) accepted a value that is not a reason", raw)
		}
		if !utf8.ValidString(fe.Input) {
			t.Errorf("input for a %T is not valid UTF-8 (a protobuf string cannot carry it): %q", raw, fe.Input)
		}
		if n := utf8.RuneCountInString(fe.Input); n > 210 {
			t.Errorf("input for a %T is %d characters long, want it cut to about 200", raw, n)
		}
	}
}

func TestIsEmpty(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    any
		want bool
	}{
		{nil, true},
		{"", true},
		{"   ", true},
		{"\u00a0", true},
		{"\u200b\u200c\u200d\u2060\ufeff", true},
		{" \t\n ", true},
		{"0", false},
		{"—", false},
		{0.0, false},
		{false, false},
		{"null", false}, // a word, not JSON null: the normalizer decides
	}
	for _, tt := range tests {
		if got := contract.IsEmpty(tt.v); got != tt.want {
			t.Errorf("IsEmpty(%#v) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

func TestExpected(t *testing.T) {
	t.Parallel()
	bank := shipped(t, "bank.open_dispute")
	flights := shipped(t, "travel.search_flights")
	tests := []struct {
		p    *contract.Property
		want string
	}{
		{bank.Property("card_last4"), "the last four digits of the card or account, e.g. 4417"},
		{bank.Property("operation_date"), "YYYY-MM-DD"},
		{bank.Property("amount"), "a positive amount in roubles, e.g. 1200.50"},
		{bank.Property("reason"), "one of: duplicate (duplicate charge), fraud (fraudulent charge), not_received (goods or services not received), wrong_amount (wrong amount charged)"},
		{flights.Property("from"), "IATA"},
	}
	for _, tt := range tests {
		if got := contract.Expected(tt.p); !strings.Contains(got, tt.want) {
			t.Errorf("Expected(%s) = %q, want it to contain %q", tt.p.Name, got, tt.want)
		}
	}
	if got := contract.ExpectedIn(bank.Property("reason"), "uk"); !strings.Contains(got, "одне з: duplicate (повторне списання), fraud (шахрайська операція),") {
		t.Errorf("ExpectedIn(reason, uk) = %q, want the codes with their Ukrainian labels beside them", got)
	}
	if got := contract.Expected(bank.Property("original_operation_id")); got != "" {
		t.Errorf("Expected(original_operation_id) = %q, want empty for free text", got)
	}
}

func TestNormalizerNames(t *testing.T) {
	t.Parallel()
	want := []string{"amount", "currency", "date", "enum", "iata", "integer", "last4", "text", "time"}
	if got := contract.NormalizerNames(); !reflect.DeepEqual(got, want) {
		t.Errorf("NormalizerNames() = %v, want %v", got, want)
	}
}

// assertNoCard fails when any member of fe could carry a card number.
func assertNoCard(t *testing.T, fe problem.FieldError) {
	t.Helper()
	for member, s := range map[string]string{
		"input": fe.Input, "message": fe.Message, "format": fe.Format,
		"allowed": strings.Join(fe.Allowed, " "), "Error()": fe.Error(),
	} {
		digits := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, s)
		// A run of 13-19 digits is a card only as slotd's detector reads it
		// (an issuer's prefix, and printed groups or the checksum): an
		// all-zero amount like "0000000000000A" is none, and is echoed.
		if cardNumber.MatchString(s) && redact.HasCard(s) || strings.Contains(digits, "427612345678") {
			t.Errorf("%s carries a card number: %q", member, s)
		}
	}
}
