package phrase

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var languages = []Language{English, Russian, Ukrainian}

// TestCatalogsAgree: every sentence is there in every language, with the
// same placeholders, and every counted noun has its forms.
func TestCatalogsAgree(t *testing.T) {
	t.Parallel()
	keys := map[string]bool{}
	for _, l := range languages {
		for k := range catalog[l].texts {
			keys[k] = true
		}
	}
	if len(keys) < 100 {
		t.Fatalf("the catalog has %d sentences, want the whole of slotd's", len(keys))
	}
	for k := range keys {
		english := placeholders(catalog[English].texts[k])
		uses := map[string]int{} // placeholder → languages that use it
		for _, l := range languages {
			s, ok := catalog[l].texts[k]
			if !ok || s == "" {
				t.Errorf("%s has no sentence %q", l, k)
				continue
			}
			got := placeholders(s)
			for _, p := range english {
				if !slices.Contains(got, p) {
					t.Errorf("%s %q leaves out {%s}, which English says", l, k, p)
				}
			}
			for _, p := range got {
				uses[p]++
			}
		}
		// A language may say more than English ("четыре цифры" where English
		// puts "digits" into the sentence), but never a name no other
		// language knows: that is a typo, and it would show as written.
		for p, n := range uses {
			if n == 1 && !slices.Contains(english, p) {
				t.Errorf("%q: only one language has the placeholder {%s}", k, p)
			}
		}
	}
	nouns := slices.Sorted(maps.Keys(catalog[English].nouns))
	for _, l := range languages {
		if got := slices.Sorted(maps.Keys(catalog[l].nouns)); !slices.Equal(got, nouns) {
			t.Errorf("%s counts %v, English %v", l, got, nouns)
		}
		for k, n := range catalog[l].nouns {
			if n.One == "" || n.Plural == "" || (l == English && n.Other == "") || (l != English && (n.Few == "" || n.Many == "")) {
				t.Errorf("%s noun %q lacks a form: %+v", l, k, n)
			}
		}
	}
}

func placeholders(s string) []string {
	var out []string
	for {
		_, j, name := nextPlaceholder(s)
		if j < 0 {
			break
		}
		out = append(out, name)
		s = s[j:]
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestLang is the one fallback rule: the locale as given, its base, the
// fallback and its base, English.
func TestLang(t *testing.T) {
	t.Parallel()
	tests := []struct {
		locale, fallback string
		want             Language
	}{
		{"ru", "en", Russian},
		{"ru-RU", "en", Russian},
		{"uk_UA", "ru", Ukrainian},
		{"UK", "ru", Ukrainian},
		{" en-GB ", "ru", English},
		{"de", "ru", Russian},
		{"de", "ru-RU", Russian},
		{"de", "pl", English},
		{"", "uk", Ukrainian}, // no locale: the fallback
		{"", "", English},
		{"de", "", English},
		{"be", "uk", Ukrainian},
		{"ru_RU.UTF-8", "en", Russian},
		{"-ru", "en", English}, // no base before the separator
	}
	for _, tt := range tests {
		if got := Lang(tt.locale, tt.fallback); got != tt.want {
			t.Errorf("Lang(%q, %q) = %s, want %s", tt.locale, tt.fallback, got, tt.want)
		}
	}
}

func TestLocales(t *testing.T) {
	t.Parallel()
	tests := []struct {
		locale, fallback string
		want             []string
	}{
		{"ru-RU", "uk_UA", []string{"ru-RU", "ru", "uk_UA", "uk", "en"}},
		{"ru", "en", []string{"ru", "ru", "en", "en", "en"}},
		{"", "", []string{"en"}},
		{"", "de-AT", []string{"de-AT", "de", "en"}},
	}
	for _, tt := range tests {
		if got := slices.Collect(Locales(tt.locale, tt.fallback)); !slices.Equal(got, tt.want) {
			t.Errorf("Locales(%q, %q) = %q, want %q", tt.locale, tt.fallback, got, tt.want)
		}
	}
	for range Locales("ru", "uk") {
		break // stopping early must not panic
	}
}

func TestBase(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ru": "ru", "ru-RU": "ru", "uk_UA": "uk", " EN-us ": "en", "": "", "-x": "-x",
	} {
		if got := Base(in); got != want {
			t.Errorf("Base(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCount: the form after a number is the CLDR plural category's.
func TestCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		l    Language
		n    int
		want string
	}{
		{English, 0, "digits"}, {English, 1, "digit"}, {English, 2, "digits"}, {English, 21, "digits"},
		{Russian, 0, "цифр"}, {Russian, 1, "цифра"}, {Russian, 2, "цифры"}, {Russian, 4, "цифры"}, {Russian, 5, "цифр"},
		{Russian, 11, "цифр"}, {Russian, 12, "цифр"}, {Russian, 14, "цифр"}, {Russian, 21, "цифра"}, {Russian, 22, "цифры"},
		{Russian, 25, "цифр"}, {Russian, 101, "цифра"}, {Russian, 111, "цифр"}, {Russian, 112, "цифр"}, {Russian, 122, "цифры"},
		{Ukrainian, 1, "цифра"}, {Ukrainian, 3, "цифри"}, {Ukrainian, 13, "цифр"}, {Ukrainian, 23, "цифри"}, {Ukrainian, 7, "цифр"},
		{Russian, 3, "символа"}, {Russian, 5, "символов"}, {Ukrainian, 2, "пробіли"},
	}
	for _, tt := range tests {
		noun := "digit"
		switch tt.want {
		case "символа", "символов":
			noun = "any"
		case "пробіли":
			noun = "space"
		}
		if got := Count(tt.l, noun, tt.n); got != tt.want {
			t.Errorf("Count(%s, %s, %d) = %q, want %q", tt.l, noun, tt.n, got, tt.want)
		}
	}
	if got, want := Plural(Russian, "digit"), "цифры"; got != want {
		t.Errorf("Plural(ru, digit) = %q, want %q", got, want)
	}
	for l, want := range map[Language]string{English: "digits", Russian: "цифр", Ukrainian: "цифр"} {
		if got := Ranged(l, "digit"); got != want {
			t.Errorf("Ranged(%s, digit) = %q, want %q", l, got, want)
		}
	}
}

// TestLongDate: a day as a user reads it, the month in the genitive in
// Russian and Ukrainian, every month of the year.
func TestLongDate(t *testing.T) {
	t.Parallel()
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		l    Language
		d    time.Time
		want string
	}{
		{Russian, day(11, 22), "22 ноября 2026"},
		{Ukrainian, day(11, 22), "22 листопада 2026"},
		{English, day(11, 22), "22 November 2026"},
		{Russian, day(8, 1), "1 августа 2026"},
		{Ukrainian, day(8, 31), "31 серпня 2026"},
		{English, day(1, 5), "5 January 2026"},
	}
	for _, tt := range tests {
		if got := LongDate(tt.l, tt.d); got != tt.want {
			t.Errorf("LongDate(%s, %s) = %q, want %q", tt.l, tt.d.Format(time.DateOnly), got, tt.want)
		}
	}
	months := map[Language]string{
		Russian:   "января февраля марта апреля мая июня июля августа сентября октября ноября декабря",
		Ukrainian: "січня лютого березня квітня травня червня липня серпня вересня жовтня листопада грудня",
		English:   "January February March April May June July August September October November December",
	}
	for l, names := range months {
		for i, want := range strings.Fields(names) {
			if got := LongDate(l, day(time.Month(i+1), 10)); got != "10 "+want+" 2026" {
				t.Errorf("LongDate(%s, month %d) = %q, want the month %q", l, i+1, got, want)
			}
		}
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		l    Language
		key  string
		args Args
		want string
	}{
		{Russian, "digits.found", Args{"found": 2, "need": 4}, "найдено цифр: 2, нужно 4"},
		{English, "date.too_far", Args{"days": 366}, "more than 366 days from today; write the date itself"},
		{Ukrainian, "notice.cancelled", nil, "Добре, нічого не роблю."},
		{English, "digits.found", Args{"found": 2}, "found 2 digits, need {need}"},                                                // a missing argument shows
		{English, "step.overwritten", Args{"label": "[x {new}]", "new": "{label}"}, "Got it, changing the [x {new}] to {label}."}, // values are not templates
		{Russian, "no.such.key", nil, "no.such.key"},
		{Russian, "type.integer", nil, "целое число"},
	}
	for _, tt := range tests {
		if got := Text(tt.l, tt.key, tt.args); got != tt.want {
			t.Errorf("Text(%s, %s) = %q, want %q", tt.l, tt.key, got, tt.want)
		}
	}
	if got := TypeName(Ukrainian, "boolean"); got != "так/ні (boolean)" {
		t.Errorf("TypeName(uk, boolean) = %q", got)
	}
	if got := TypeName(Russian, "uint"); got != "uint" {
		t.Errorf("TypeName of an unknown type = %q, want it as it is", got)
	}
	if !Has("notice.expired") || Has("notice.nope") {
		t.Error("Has does not know the catalog")
	}
}

func TestFill(t *testing.T) {
	t.Parallel()
	values := map[string]string{"flight": "IB3101", "cabin": "business"}
	value := func(name string) (string, bool) { v, ok := values[name]; return v, ok }
	absent := func(name string) string { return "…" + name }
	tests := []struct{ tmpl, want string }{
		{"Which seat[ on flight {flight}][ in {cabin} class]?", "Which seat on flight IB3101 in business class?"},
		{"Which seat[ for {passenger}]?", "Which seat?"},
		{"Your code: {promo}.", "Your code: …promo."},
		{"[plain part] stays", "plain part stays"},
		{"no placeholders", "no placeholders"},
		{"{flight}{flight}", "IB3101IB3101"},
		{"{not a name}", "{not a name}"},
		{"{}{{flight}}", "{}{IB3101}"},
		{"[a[ for {passenger}]b]", "[ab]"}, // brackets inside brackets are text
		{"[{flight}]] and [", "IB3101] and ["},
		{"{flight", "{flight"},
		{"[ {cabin}", "[ business"},
	}
	for _, tt := range tests {
		if got := Fill(tt.tmpl, value, absent); got != tt.want {
			t.Errorf("Fill(%q) = %q, want %q", tt.tmpl, got, tt.want)
		}
	}
}

// The placeholder and optional-part rules written as regular expressions:
// the reference FuzzFill holds Fill to.
var (
	placeholderRE = regexp.MustCompile(`\{([A-Za-z0-9_.\-]+)\}`)
	optionalRE    = regexp.MustCompile(`\[([^\[\]]*)\]`)
)

func fillByRegexp(tmpl string, value func(string) (string, bool), absent func(string) string) string {
	tmpl = optionalRE.ReplaceAllStringFunc(tmpl, func(seg string) string {
		inner := seg[1 : len(seg)-1]
		for _, m := range placeholderRE.FindAllStringSubmatch(inner, -1) {
			if _, ok := value(m[1]); !ok {
				return ""
			}
		}
		return inner
	})
	return placeholderRE.ReplaceAllStringFunc(tmpl, func(m string) string {
		name := m[1 : len(m)-1]
		if s, ok := value(name); ok {
			return s
		}
		return absent(name)
	})
}

func FuzzFill(f *testing.F) {
	for _, s := range []string{"Which seat[ on flight {flight}][ in {cabin} class]?", "[a[b]c]", "{{a}}", "[{x}] {y} [z", "}{a-b.c_d}{", "[]", "{ }"} {
		f.Add(s)
	}
	value := func(name string) (string, bool) {
		if strings.HasPrefix(name, "x") {
			return "", false
		}
		return "<" + name + "{x}[y]>", true // a value that looks like a template
	}
	absent := func(name string) string { return "…" }
	f.Fuzz(func(t *testing.T, tmpl string) {
		if got, want := Fill(tmpl, value, absent), fillByRegexp(tmpl, value, absent); got != want {
			t.Fatalf("Fill(%q) = %q, want %q", tmpl, got, want)
		}
	})
}
