package clarify_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/problem"
)

// dirtyInputs are what models send for a slot of any kind: each normalizer
// refuses some of them, and the property schemas refuse others.
var dirtyInputs = []any{
	"", " ", "someday", "today or tomorrow", "сегодня или завтра", "31.02", "2026-13-01", "08/22/2026",
	"через 400 дней", "400 days ago", "завтра", "вчера", "сегодня 5", "25:00", "7:75", "19:00 утра",
	"двести", "1 200 50", "$5 €", "1200.505", "$1,200", "1 200 грн", "-5", "0", "100000000", "5k",
	"many", "2 adults and 1 child", "2.5", "двое и ребёнок", "44", "ab", "•• 44", "Madrid", "Мадрид",
	"МАД", "money", "chargeback", "Duplicate", "x", "OP-12", "op-20260822-0117",
	"4276 1234 5678 4417", "card 4276-1234-5678-4417", strings.Repeat("я", 90),
	3.0, -1.0, 0.0, 2.5, 1e12, true, false, []any{"a", "b"}, map[string]any{"x": 1.0}, []any{},
}

// contractsUnderTest are the shipped contracts and the testdata ones,
// which between them name every normalizer.
func contractsUnderTest(t *testing.T) []*contract.Contract {
	t.Helper()
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	cs := cat.All()
	more, err := contract.LoadDir("../../contract/testdata/contracts")
	if err != nil {
		t.Fatal(err)
	}
	return append(cs, more.All()...)
}

// TestProblemsSpeakTheTurnsLanguage: a problem of a ru or uk turn is
// Russian or Ukrainian throughout — title, detail, and each field error's
// message and format. Latin script is allowed only for what is data, not
// words: slot names and pointers, enum codes and other quoted values,
// patterns, format names, codes in capitals (IATA, ISO 4217, RUB,
// YYYY-MM-DD), the examples of e-mail, URI and UUID forms, and slotd's name.
func TestProblemsSpeakTheTurnsLanguage(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 8, 24, 12, 0, 0, 0, time.UTC)
	checked := 0
	for _, c := range contractsUnderTest(t) {
		allow := dataOf(c)
		for _, locale := range []string{"ru", "uk-UA"} {
			env := contract.Env{Now: now, Locale: locale}
			check := func(what string, p *problem.Problem, sent ...string) {
				t.Helper()
				checked++
				allow := append(slices.Clone(sent), allow...)
				texts := []string{p.Title, p.Detail}
				for _, e := range p.Errors {
					texts = append(texts, e.Message, e.Format)
				}
				for _, s := range texts {
					if w := leaks(s, allow); len(w) > 0 {
						t.Errorf("%s, %s, %s: English %q in %q", c.Name, locale, what, w, s)
					}
				}
				if p.Title == "" || p.Detail == "" {
					t.Errorf("%s, %s, %s: title %q, detail %q; want both", c.Name, locale, what, p.Title, p.Detail)
				}
			}
			for _, prop := range c.Properties {
				for _, in := range dirtyInputs {
					_, refused := c.NormalizeArgs(map[string]any{prop.Name: in}, env)
					if len(refused) > 0 {
						check(prop.Name+" = "+js(in), clarify.RefusedProblem(c, locale, refused))
						check(prop.Name+" = "+js(in)+", handed off", clarify.HandoffProblem(c, locale, prop.Name, 3, clarify.RefusedProblem(c, locale, refused)))
					}
				}
			}
			// The name of an argument the contract lacks is what the call
			// sent: data.
			_, refused := c.NormalizeArgs(map[string]any{"card_number": "4276 1234 5678 4417", "x": 1.0}, env)
			check("unknown arguments", clarify.RefusedProblem(c, locale, refused), "card_number")
			for _, args := range corpusArgs(t, c.Name) {
				slots, refused := c.NormalizeArgs(args, env)
				if len(refused) > 0 {
					check("corpus "+js(args), clarify.RefusedProblem(c, locale, refused), slices.Collect(maps.Keys(args))...)
				}
				if r := c.CheckIn(slots, locale); len(r.Violations) > 0 {
					check("rules of "+js(slots), clarify.RepairProblem(c, locale, r.Violations))
				}
			}
			if o := c.Output(); o != nil {
				for _, result := range []any{"accepted", map[string]any{"status": "lost"}, map[string]any{"status": "accepted"},
					map[string]any{"status": "error", "error": map[string]any{"type": 1.0}}} {
					if _, errs := o.Shape(result, locale); len(errs) > 0 {
						check("output "+js(result), &problem.Problem{Title: clarify.ProblemTitle(c, locale, problem.TypeBackendOutputInvalid),
							Detail: clarify.FailureText(c, locale, false, 0), Errors: errs})
					}
				}
			}
		}
	}
	if checked < 2000 {
		t.Errorf("checked %d problems, want the refusals of every slot of every contract", checked)
	}
}

// TestProblemTitles: every problem type a response carries has a title in
// each language, and a system failure's has none (it is English for the
// operator, whatever the turn spoke).
func TestProblemTitles(t *testing.T) {
	t.Parallel()
	bank := shipped(t, "bank.open_dispute")
	types := []string{problem.TypeInvalidValue, problem.TypeRuleViolated, problem.TypeHandoff, problem.TypeBackendTimeout,
		problem.Base + "backend-unavailable", problem.Base + "backend-rate-limited", problem.Base + "backend-unauthorized",
		problem.Base + "backend-error", problem.TypeBackendOutputInvalid}
	seen := map[string]string{}
	for _, locale := range []string{"ru", "uk", "en"} {
		for _, typ := range types {
			title := clarify.ProblemTitle(bank, locale, typ)
			if title == "" {
				t.Errorf("%s has no %s title", typ, locale)
			}
			if other, ok := seen[title]; ok && other != typ {
				t.Errorf("%s and %s share the title %q", typ, other, title)
			}
			seen[title] = typ
			if locale != "en" {
				if w := leaks(title, []string{"slotd"}); len(w) > 0 {
					t.Errorf("the %s title of %s is not %s: %q", locale, typ, locale, title)
				}
			}
		}
	}
	if got := clarify.ProblemTitle(bank, "ru", problem.TypeUnavailable); got != "" {
		t.Errorf("the title of a system failure = %q, want none from clarify", got)
	}
}

// TestProblemDetail: the detail says the first field error with the glue of
// the turn's language, the way the dispute example words a repair hint ("прислано …,
// не подходит …; допустимо: …").
func TestProblemDetail(t *testing.T) {
	t.Parallel()
	bank := shipped(t, "bank.open_dispute")
	env := func(locale string) contract.Env {
		return contract.Env{Now: time.Date(2026, 8, 24, 12, 0, 0, 0, time.UTC), Locale: locale}
	}
	refusal := func(locale, slot string, v any) *problem.Problem {
		_, refused := bank.NormalizeArgs(map[string]any{slot: v}, env(locale))
		if len(refused) == 0 {
			t.Fatalf("%s = %v was accepted", slot, v)
		}
		return clarify.RefusedProblem(bank, locale, refused)
	}
	tests := []struct {
		name string
		p    *problem.Problem
		want problem.Problem // Type, Title and Detail exactly
	}{
		{"digits in Russian", refusal("ru", "card_last4", "•• 44"), problem.Problem{Type: problem.TypeInvalidValue,
			Title:  "Часть аргументов не принята",
			Detail: "/card_last4: найдено цифр: 2, нужно 4; ожидается: последние четыре цифры карты или счёта, например 4417; 4 цифры"}},
		{"digits in Ukrainian", refusal("uk", "card_last4", "•• 44"), problem.Problem{Type: problem.TypeInvalidValue,
			Title:  "Частину аргументів не прийнято",
			Detail: "/card_last4: знайдено цифр: 2, потрібно 4; очікується: останні чотири цифри картки або рахунку, наприклад 4417; 4 цифри"}},
		{"digits in English", refusal("en", "card_last4", "•• 44"), problem.Problem{Type: problem.TypeInvalidValue,
			Title:  "Some arguments were not accepted",
			Detail: "/card_last4: found 2 digits, need 4; expected: the last four digits of the card or account, e.g. 4417; 4 digits"}},
		{"an enum in Russian: the codes, with labels beside them in the form", refusal("ru", "reason", "chargeback"), problem.Problem{
			Type: problem.TypeInvalidValue, Title: "Часть аргументов не принята",
			Detail: "/reason: должно быть одним из: duplicate, fraud, not_received, wrong_amount; " +
				"допустимые значения: duplicate, fraud, not_received, wrong_amount; " +
				"ожидается: одно из: duplicate (повторное списание), fraud (мошенническая операция), " +
				"not_received (товар или услуга не получены), wrong_amount (списана неверная сумма)"}},
		{"a rule in Ukrainian", clarify.RepairProblem(bank, "uk", bank.CheckIn(dispute(map[string]any{"reason": "chargeback"}), "uk").Violations),
			problem.Problem{Type: problem.TypeRuleViolated, Title: "Аргументи порушують правило контракту",
				Detail: "/reason: має бути одним із: duplicate, fraud, not_received, wrong_amount; " +
					"допустимі значення: duplicate, fraud, not_received, wrong_amount; " +
					"очікується: одне з: duplicate (повторне списання), fraud (шахрайська операція), " +
					"not_received (товар або послугу не отримано), wrong_amount (списано неправильну суму)"}},
		{"a rule of the whole object: no pointer", clarify.RepairProblem(bank, "ru", []problem.FieldError{{Message: "неизвестные аргументы: x"}}),
			problem.Problem{Type: problem.TypeRuleViolated, Title: "Аргументы нарушают правило контракта", Detail: "неизвестные аргументы: x"}},
		{"handed off in Russian", clarify.HandoffProblem(bank, "ru", "reason", 3, nil), problem.Problem{Type: problem.TypeHandoff,
			Title: "Разговор передан сотруднику", Detail: "reason: значение так и не принято (3 попытки)."}},
		{"handed off in Ukrainian after five", clarify.HandoffProblem(bank, "uk", "amount", 5, nil), problem.Problem{Type: problem.TypeHandoff,
			Title: "Розмову передано співробітнику", Detail: "amount: значення так і не прийнято (5 спроб)."}},
		{"handed off in English after one", clarify.HandoffProblem(bank, "en", "amount", 1, nil), problem.Problem{Type: problem.TypeHandoff,
			Title: "Handed off to a person", Detail: "amount was not accepted after 1 attempt."}},
	}
	for _, tt := range tests {
		if tt.p.Type != tt.want.Type || tt.p.Title != tt.want.Title || tt.p.Detail != tt.want.Detail {
			t.Errorf("%s:\n got %s | %s | %s\nwant %s | %s | %s", tt.name, tt.p.Type, tt.p.Title, tt.p.Detail, tt.want.Type, tt.want.Title, tt.want.Detail)
		}
	}
	last := refusal("ru", "amount", "двести")
	if h := clarify.HandoffProblem(bank, "ru", "amount", 3, last); len(h.Errors) != 1 || h.Errors[0].Pointer != "/amount" || !h.OwnerActionRequired {
		t.Errorf("a hand-off keeps the last attempt's field errors and needs a person: %+v", h)
	}
}

// leaks are the Latin-script words of s that are not data: what is left of
// s after the allowed strings, quoted parts, capitals-only codes and digits
// are taken out.
func leaks(s string, allow []string) []string {
	for _, a := range allow {
		s = strings.ReplaceAll(s, a, " ")
	}
	s = quoted.ReplaceAllString(s, " ")
	var out []string
	for _, w := range latinWord.FindAllString(s, -1) {
		if strings.ToUpper(w) == w {
			continue // a code: IATA, RUB, YYYY-MM-DD, JSON
		}
		out = append(out, w)
	}
	return out
}

var (
	latinWord = regexp.MustCompile(`[A-Za-z]+`)
	quoted    = regexp.MustCompile(`"[^"]*"|'[^']*'`)
)

// dataOf is what a contract's problems may say in Latin script as data:
// its slot names (the output contract's too), enum values, patterns and
// formats, the examples of the
// standard formats, JSON type names and slotd's own name; longest first, so
// that a name inside another is taken out after it.
func dataOf(c *contract.Contract) []string {
	allow := []string{"slotd", "name@example.com", "https://example.com/a", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "boolean", "null"}
	for _, p := range c.Properties {
		allow = append(allow, p.Name, p.Format)
		allow = append(allow, p.Enum...)
	}
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				switch k {
				case "pattern":
					if s, ok := x.(string); ok {
						allow = append(allow, s)
					}
				case "properties": // also the output contract's
					if props, ok := x.(map[string]any); ok {
						allow = append(allow, slices.Collect(maps.Keys(props))...)
					}
				case "enum":
					if vs, ok := x.([]any); ok {
						for _, v := range vs {
							if s, ok := v.(string); ok {
								allow = append(allow, s)
							}
						}
					}
				}
				walk(x)
			}
		case []any:
			for _, x := range t {
				walk(x)
			}
		}
	}
	var src any
	if err := json.Unmarshal(c.Source, &src); err == nil {
		walk(src)
	}
	allow = slices.DeleteFunc(allow, func(s string) bool { return s == "" })
	sort.SliceStable(allow, func(i, j int) bool { return len(allow[i]) > len(allow[j]) })
	return allow
}

// corpusArgs are the recorded argument objects of the dirty corpus for a
// tool: what models really send.
func corpusArgs(t *testing.T, tool string) []map[string]any {
	t.Helper()
	files, err := filepath.Glob("../../contract/testdata/corpus/*.json")
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var file struct {
			Tool  string `json:"tool"`
			Cases []struct {
				Args map[string]any `json:"args"`
			} `json:"cases"`
		}
		if err := json.Unmarshal(src, &file); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if file.Tool != tool {
			continue
		}
		for _, c := range file.Cases {
			out = append(out, c.Args)
		}
	}
	return out
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
