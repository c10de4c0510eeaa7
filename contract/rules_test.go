package contract_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/slotd/slotd/contract"
)

// transfer has one rule of every kind: if/then with a required slot and
// with a narrowed enum, dependentRequired, dependentSchemas, not, and an
// anyOf of two ways to name the recipient.
const transfer = `{
	"type": "object",
	"properties": {
		"mode":     {"type": "string", "enum": ["card", "transfer", "cash"]},
		"speed":    {"type": "string", "enum": ["instant", "standard", "slow"]},
		"iban":     {"type": "string"},
		"bic":      {"type": "string"},
		"phone":    {"type": "string"},
		"from_day": {"type": "integer"},
		"to_day":   {"type": "integer"},
		"amount":   {"type": "number"}
	},
	"required": ["mode"],
	"dependentRequired": {"iban": ["bic"]},
	"allOf": [
		{"if": {"properties": {"mode": {"const": "transfer"}}, "required": ["mode"]},
		 "then": {"required": ["iban"], "properties": {"speed": {"enum": ["standard", "slow"]}}}},
		{"if": {"properties": {"mode": {"const": "cash"}}, "required": ["mode"]},
		 "then": {"properties": {"amount": {"maximum": 500}}},
		 "else": {"properties": {"amount": {"minimum": 1}}}}
	],
	"dependentSchemas": {"to_day": {"properties": {"from_day": {"maximum": 10}}}},
	"not": {"properties": {"mode": {"const": "cash"}, "speed": {"const": "instant"}}, "required": ["mode", "speed"]},
	"anyOf": [{"required": ["iban"]}, {"required": ["phone"]}, {"required": ["mode"], "properties": {"mode": {"const": "cash"}}}],
	"x-slotd": {"name": "t.transfer", "default_locale": "ru"}
}`

func TestCheckCrossFieldRules(t *testing.T) {
	t.Parallel()
	c := mustParse(t, transfer)
	tests := []struct {
		name       string
		slots      map[string]any
		locale     string
		missing    []string
		pointers   []string
		messages   []string // substrings, one per violation
		allowed    [][]string
		wantRepair bool
	}{
		{
			name:    "if/then naming a missing slot asks for it",
			slots:   map[string]any{"mode": "transfer"},
			missing: []string{"iban"},
		},
		{
			name:    "dependentRequired names a missing slot",
			slots:   map[string]any{"mode": "card", "iban": "DE89"},
			missing: []string{"bic"},
		},
		{
			name:    "anyOf of missing slots asks for the first way that needs the fewest",
			slots:   map[string]any{"mode": "card"},
			missing: []string{"iban"},
		},
		{
			name:     "then narrows an enum: a REPAIR listing what the rule allows",
			slots:    map[string]any{"mode": "transfer", "iban": "DE89", "bic": "X", "speed": "instant"},
			pointers: []string{"/speed"},
			messages: []string{`when mode is "transfer": must be one of: standard, slow`},
			allowed:  [][]string{{"standard", "slow"}},
		},
		{
			name:     "then with a bound",
			slots:    map[string]any{"mode": "cash", "amount": 900.0},
			pointers: []string{"/amount"},
			messages: []string{`when mode is "cash": maximum: want at most 500`},
		},
		{
			name:     "else",
			slots:    map[string]any{"mode": "card", "phone": "+7", "amount": 0.0},
			pointers: []string{"/amount"},
			messages: []string{`unless mode is "cash": minimum: want at least 1`},
		},
		{
			name:     "dependentSchemas",
			slots:    map[string]any{"mode": "card", "phone": "+7", "from_day": 12.0, "to_day": 3.0},
			pointers: []string{"/from_day"},
			messages: []string{"when to_day is given: maximum: want at most 10"},
		},
		{
			name:     "not",
			slots:    map[string]any{"mode": "cash", "speed": "instant"},
			pointers: []string{""},
			messages: []string{`must not be: mode is "cash" and speed is "instant"`},
		},
		{
			name:     "in Russian",
			slots:    map[string]any{"mode": "cash", "amount": 900.0},
			locale:   "ru-RU",
			pointers: []string{"/amount"},
			messages: []string{`если mode = "cash": должно быть не больше 500`},
		},
		{
			name:     "in Ukrainian",
			slots:    map[string]any{"mode": "cash", "speed": "instant"},
			locale:   "uk",
			pointers: []string{""},
			messages: []string{`не допускається: mode = "cash" і speed = "instant"`},
		},
		{
			name:     "a locale slotd has no words for: the contract's default (ru)",
			slots:    map[string]any{"mode": "card", "phone": "+7", "from_day": 12.0, "to_day": 3.0},
			locale:   "de-AT",
			pointers: []string{"/from_day"},
			messages: []string{"если указано to_day: должно быть не больше 10"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := c.CheckIn(tt.slots, tt.locale)
			if !reflect.DeepEqual(r.Missing, tt.missing) && len(r.Missing)+len(tt.missing) > 0 {
				t.Errorf("missing = %q, want %q", r.Missing, tt.missing)
			}
			var ptrs []string
			for _, v := range r.Violations {
				ptrs = append(ptrs, v.Pointer)
			}
			if !reflect.DeepEqual(ptrs, tt.pointers) {
				t.Fatalf("violations = %+v, want pointers %q", r.Violations, tt.pointers)
			}
			for i, want := range tt.messages {
				if got := r.Violations[i].Message; !strings.Contains(got, want) {
					t.Errorf("violation %d message:\n got %q\nwant it to contain %q", i, got, want)
				}
			}
			for i, want := range tt.allowed {
				if got := r.Violations[i].Allowed; !reflect.DeepEqual(got, want) {
					t.Errorf("violation %d allowed = %q, want %q", i, got, want)
				}
			}
		})
	}
}

func TestReportViolationsIn(t *testing.T) {
	t.Parallel()
	c := mustParse(t, transfer)
	r := c.Check(map[string]any{"mode": "cash", "amount": 900.0})
	if len(r.Violations) != 1 || !strings.Contains(r.Violations[0].Message, "when mode") {
		t.Fatalf("Check (English) = %+v", r.Violations)
	}
	ru := r.ViolationsIn("ru")
	if len(ru) != 1 || !strings.Contains(ru[0].Message, "если mode") || ru[0].Pointer != "/amount" {
		t.Errorf("ViolationsIn(ru) = %+v, want the same violation in Russian", ru)
	}
	if got := r.ViolationsIn("en")[0].Message; got != r.Violations[0].Message {
		t.Errorf("ViolationsIn(en) = %q, want %q", got, r.Violations[0].Message)
	}
	hand := contract.Report{Violations: r.Violations[:1]}
	if got := hand.ViolationsIn("ru"); !reflect.DeepEqual(got, hand.Violations) {
		t.Errorf("a Report built by hand came back reworded: %+v", got)
	}
}

func TestLocalizedRefusals(t *testing.T) {
	t.Parallel()
	bank := shipped(t, "bank.open_dispute")
	tests := []struct {
		locale, slot string
		raw          any
		msg, format  string
	}{
		{"ru", "amount", "двести", "не похоже на сумму", "сумма в рублях больше нуля"},
		{"uk-UA", "amount", "двісті", "не схоже на суму", "сума в рублях більше нуля"},
		{"en", "amount", "two hundred", "not an amount", "a positive amount in roubles"},
		{"ru", "amount", "$5", "сумма в USD, а инструмент принимает суммы в RUB", "сумма в рублях"},
		{"ru", "operation_date", "31.02", "такой даты нет", "дата в виде YYYY-MM-DD"},
		{"uk", "operation_date", "завтра", "дата в майбутньому", "дата у вигляді YYYY-MM-DD"},
		{"ru", "card_last4", "44", "найдено цифр: 2, нужно 4", "последние четыре цифры"},
		{"ru", "reason", "chargeback", "должно быть одним из: duplicate, fraud", "одно из: duplicate"},
		{"ru", "original_operation_id", "1", "слишком коротко", "от 3 до 64 символов"},
		{"ru", "amount", "0", "должно быть больше 0", "больше 0, не больше 10000000"},
		{"de", "amount", "zwei", "не похоже на сумму", ""}, // no German: the contract's ru
		{"", "amount", "zwei", "not an amount", ""},        // no locale: English
		{"ru", "no_such_slot", "x", "неизвестный аргумент", "один из аргументов"},
	}
	for _, tt := range tests {
		t.Run(tt.locale+"/"+tt.slot, func(t *testing.T) {
			t.Parallel()
			env := moscowEnv(t)
			env.Locale = tt.locale
			_, fe := bank.Normalize(tt.slot, tt.raw, env)
			if fe == nil {
				t.Fatalf("Normalize(%s, %v) accepted it", tt.slot, tt.raw)
			}
			if !strings.Contains(fe.Message, tt.msg) || !strings.Contains(fe.Format, tt.format) {
				t.Errorf("refusal = %q / %q, want %q / %q", fe.Message, fe.Format, tt.msg, tt.format)
			}
		})
	}
	flights := shipped(t, "travel.search_flights")
	_, fe := flights.Normalize("from", "Мадрид", contract.Env{Locale: "uk"})
	if fe == nil || !strings.Contains(fe.Message, "назва міста") || !strings.Contains(fe.Format, "трилітерний код IATA") {
		t.Errorf("a city for an airport in Ukrainian = %+v", fe)
	}
}

func TestPatternInWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, locale, want string
	}{
		{"^[0-9]{4}$", "en", "4 digits"},
		{"^[0-9]{4}$", "ru", "4 цифры"},
		{"^[0-9]{6}$", "uk", "6 цифр"},
		{"^[A-Z]{3}$", "en", "3 capital Latin letters"},
		{"^[A-Z]{3}$", "ru", "3 заглавные латинские буквы"},
		{"^OP-[0-9]{4,10}$", "en", `"OP-", then 4 to 10 digits`},
		{"^OP-[0-9]{4,10}$", "ru", `"OP-", затем от 4 до 10 цифр`},
		{`^\d+$`, "en", "1 or more digits"},
		{`^[A-Z0-9]{2}\d{2}$`, "en", "2 capital Latin letters or digits, then 2 digits"},
		{"^[a-z]+(-[a-z]+)*$", "en", "matching the pattern ^[a-z]+(-[a-z]+)*$"},
		{"^(ab|cd)$", "ru", "по шаблону ^(ab|cd)$"},
		{`^\d{2}-\d{2}$`, "uk", `2 цифри, потім "-", потім 2 цифри`},
		{`^[А-Яа-яЁё]+$`, "en", "1 or more Cyrillic letters"},
		{`^\w{3,}$`, "en", "3 or more Latin letters or digits"},
		{`^[a-z]?$`, "en", "optionally lower-case Latin letter"},
		{`^[ ]{2}$`, "en", "2 spaces"},
		{`^(?:[0-9]{4})$`, "en", "4 digits"}, // a group that captures nothing is no group
		{`^\+7[0-9]{10}$`, "en", `"+7", then 10 digits`},
		{`^[0-9]{4}`, "en", "matching the pattern ^[0-9]{4}"}, // not anchored at the end
		{`^a{3}$`, "en", "matching the pattern ^a{3}$"},       // a repeated literal
		{`^(?i)abc$`, "en", "matching the pattern ^(?i)abc$"},
		{`^[^!]+$`, "en", "matching the pattern ^[^!]+$"},
		{`^\t$`, "en", "matching the pattern ^\\t$"},
		{`^a\$`, "en", "matching the pattern ^a\\$"},
	}
	for _, tt := range tests {
		c := mustParse(t, `{"type": "object", "properties": {"code": {"type": "string", "pattern": `+quoteJSON(tt.pattern)+`}}, "x-slotd": {"name": "t.p"}}`)
		_, fe := c.Normalize("code", "!!!", contract.Env{Locale: tt.locale})
		if fe == nil {
			t.Fatalf("%s accepted !!!", tt.pattern)
		}
		if !strings.Contains(fe.Format, tt.want) {
			t.Errorf("%s in %s: format %q, want it to contain %q", tt.pattern, tt.locale, fe.Format, tt.want)
		}
	}
}

// TestDigitsFromPattern: the last4 normalizer keeps as many digits as the
// pattern holds, when it holds one count of digits only.
func TestDigitsFromPattern(t *testing.T) {
	t.Parallel()
	for pattern, want := range map[string]int{
		"^[0-9]{6}$": 6, `^\d{3}$`: 3, "^[0123456789]{5}$": 5,
		"^[0-9]{2,4}$": 4, "^[0-9]+$": 4, "^x[0-9]{6}$": 4, "^[0-9]{6}": 4,
	} {
		c := mustParse(t, `{"type": "object", "properties": {"d": {"type": "string", "pattern": `+quoteJSON(pattern)+`,
			"x-slotd": {"normalize": ["last4"]}}}, "x-slotd": {"name": "t.d"}}`)
		if got := c.Property("d").Digits; got != want {
			t.Errorf("pattern %s: %d digits, want %d", pattern, got, want)
		}
	}
}

func quoteJSON(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

func TestRegionalDefaultLocaleFallsBackToItsBase(t *testing.T) {
	t.Parallel()
	// default_locale "ru-RU" with texts keyed "ru": a turn in a language the
	// contract lacks gets the Russian text, not English, and Russian refusals.
	c := mustParse(t, `{
		"type": "object",
		"properties": {"city": {"type": "string", "pattern": "^[A-Z]{3}$",
			"x-slotd": {"ask": {"ru": "Из какого города?", "en": "Which city?"}, "label": {"ru": "город", "en": "city"},
				"expected": {"ru": "код города, например MOW", "en": "a city code such as MOW"}}}},
		"x-slotd": {"name": "t.regional", "default_locale": "ru-RU", "confirm_text": {"ru": "Готово?", "en": "Done?"}}
	}`)
	p := c.Property("city")
	if got := p.Ask("de", c.DefaultLocale); got != "Из какого города?" {
		t.Errorf("Ask(de) = %q, want the default locale's base text", got)
	}
	if got := p.Label("", c.DefaultLocale); got != "город" {
		t.Errorf("Label() = %q, want город", got)
	}
	if got := c.ConfirmText("pl"); got != "Готово?" {
		t.Errorf("ConfirmText(pl) = %q, want Готово?", got)
	}
	_, fe := c.Normalize("city", "moscow", contract.Env{Locale: "de-DE"})
	if fe == nil || !strings.Contains(fe.Message, "не соответствует шаблону") || !strings.HasPrefix(fe.Format, "код города, например MOW") {
		t.Errorf("a refusal in de-DE = %+v, want it in Russian with the contract's own expected form", fe)
	}
}
