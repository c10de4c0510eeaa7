// Package phrase holds every sentence slotd itself says, in English,
// Russian and Ukrainian: refusals and their accepted forms, rules in words,
// and the questions and notices of a turn. It owns how a locale becomes one
// of those languages (Lang, the one fallback rule, which contracts' own
// texts follow too), how a template is filled ({name} placeholders, with
// [optional parts]), how a calendar day reads in a sentence (LongDate), and
// which form a counted noun takes, by the CLDR plural rules of
// golang.org/x/text.
package phrase

import (
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
)

// Language is one of the languages slotd speaks.
type Language int

// The languages, English first: it is the last fallback.
const (
	English Language = iota
	Russian
	Ukrainian
	// Languages is how many there are: range over it for each of them.
	Languages Language = iota
)

var (
	codes = [...]string{English: "en", Russian: "ru", Ukrainian: "uk"}
	tags  = [...]language.Tag{English: language.English, Russian: language.Russian, Ukrainian: language.Ukrainian}
)

// String is the language's code: "en", "ru" or "uk".
func (l Language) String() string { return codes[l] }

// Lang is the language slotd speaks for a locale: the first of
// Locales(locale, fallback) it has words for, else English.
func Lang(locale, fallback string) Language {
	for l := range Locales(locale, fallback) {
		for i, code := range codes {
			if l == code {
				return Language(i)
			}
		}
	}
	return English
}

// Locales are the locales a text is looked for in, in order: the locale as
// given, its base language, the fallback (a contract's default locale) and
// its base, then English. Empty ones are skipped.
func Locales(locale, fallback string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, l := range [...]string{locale, Base(locale), fallback, Base(fallback), "en"} {
			if l != "" && !yield(l) {
				return
			}
		}
	}
}

// Base reduces "ru-RU" or "uk_UA" to "ru" or "uk".
func Base(locale string) string {
	locale = strings.ToLower(strings.TrimSpace(locale))
	if i := strings.IndexAny(locale, "-_"); i > 0 {
		locale = locale[:i]
	}
	return locale
}

// Args fill a sentence's placeholders by name.
type Args map[string]any

// Text is a sentence of the catalog in a language, its {name} placeholders
// filled from args. A sentence the language lacks is said in English; a key
// the catalog lacks comes back as it is.
func Text(l Language, key string, args Args) string {
	t, ok := catalog[l].texts[key]
	if !ok {
		if t, ok = catalog[English].texts[key]; !ok {
			return key
		}
	}
	return Fill(t, args.value, keep)
}

// Has reports a sentence the catalog holds.
func Has(key string) bool {
	_, ok := catalog[English].texts[key]
	return ok
}

// HasIn reports a sentence the catalog holds in the language l itself, not
// by falling back to English.
func HasIn(l Language, key string) bool {
	_, ok := catalog[l].texts[key]
	return ok
}

func (a Args) value(name string) (string, bool) {
	v, ok := a[name]
	if !ok {
		return "", false
	}
	switch t := v.(type) {
	case string:
		return t, true
	case int:
		return strconv.Itoa(t), true
	}
	return fmt.Sprint(v), true
}

// keep leaves a placeholder without a value as written.
func keep(name string) string { return "{" + name + "}" }

// TypeName is a JSON Schema type in words ("integer" is "целое число"); an
// unknown type is its own name.
func TypeName(l Language, t string) string {
	if s, ok := catalog[l].texts["type."+t]; ok {
		return s
	}
	return t
}

// LongDate is a calendar day as a user reads it in a sentence: "22 ноября
// 2026", "22 листопада 2026", "22 November 2026". The year is always said:
// a sentence knows no clock to leave it out by.
func LongDate(l Language, d time.Time) string {
	return Text(l, "value.date", Args{
		"day":   d.Day(),
		"month": Text(l, "month."+strconv.Itoa(int(d.Month())), nil),
		"year":  d.Year(),
	})
}

// Fill replaces each {name} of a template with value(name); a name is
// letters, digits, "_", "." and "-". A [bracketed] part is kept, without its
// brackets, only when every placeholder in it has a value, so that a
// sentence can mention what may still be unknown; a placeholder outside
// brackets without a value becomes absent(name). The values are written as
// they are: a value that looks like a template is not read as one.
func Fill(tmpl string, value func(name string) (string, bool), absent func(name string) string) string {
	if !strings.ContainsAny(tmpl, "{[") {
		return tmpl
	}
	if strings.IndexByte(tmpl, '[') >= 0 {
		tmpl = keepKnown(tmpl, value)
	}
	var b strings.Builder
	b.Grow(len(tmpl) + 32)
	for {
		i, j, name := nextPlaceholder(tmpl)
		if i < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		b.WriteString(tmpl[:i])
		if s, ok := value(name); ok {
			b.WriteString(s)
		} else {
			b.WriteString(absent(name))
		}
		tmpl = tmpl[j:]
	}
}

// keepKnown drops the [bracketed] parts that name a placeholder without a
// value, and the brackets of the others. Brackets inside brackets are text.
func keepKnown(tmpl string, value func(string) (string, bool)) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '[')
		if i < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		k := strings.IndexAny(tmpl[i+1:], "[]")
		if k < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		if tmpl[i+1+k] == '[' { // "[a[b]": the part starts at the inner one
			b.WriteString(tmpl[:i+1+k])
			tmpl = tmpl[i+1+k:]
			continue
		}
		b.WriteString(tmpl[:i])
		if inner := tmpl[i+1 : i+1+k]; allKnown(inner, value) {
			b.WriteString(inner)
		}
		tmpl = tmpl[i+2+k:]
	}
}

func allKnown(s string, value func(string) (string, bool)) bool {
	for {
		_, j, name := nextPlaceholder(s)
		if j < 0 {
			return true
		}
		if _, ok := value(name); !ok {
			return false
		}
		s = s[j:]
	}
}

// nextPlaceholder finds the first {name} of s: it starts at i, ends before
// j; i and j are -1 when there is none.
func nextPlaceholder(s string) (i, j int, name string) {
	for from := 0; ; {
		k := strings.IndexByte(s[from:], '{')
		if k < 0 {
			return -1, -1, ""
		}
		start := from + k
		end := start + 1
		for end < len(s) && isNameByte(s[end]) {
			end++
		}
		if end > start+1 && end < len(s) && s[end] == '}' {
			return start, end + 1, s[start+1 : end]
		}
		from = start + 1
	}
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

// noun is a noun slotd counts, in the forms its sentences need.
type noun struct {
	// One, Few, Many and Other follow a number, by the CLDR plural category
	// the number falls in (English has One and Other only).
	One, Few, Many, Other string
	// Plural stands without a number: "any number of digits".
	Plural string
}

func (n noun) form(f plural.Form) string {
	switch {
	case f == plural.One && n.One != "":
		return n.One
	case f == plural.Few && n.Few != "":
		return n.Few
	case f == plural.Many && n.Many != "":
		return n.Many
	case n.Other != "":
		return n.Other
	}
	return n.Many
}

// Count is a noun in the form that follows the number n: "1 digit", "4
// цифры", "5 цифр".
func Count(l Language, key string, n int) string {
	return catalog[l].nouns[key].form(plural.Cardinal.MatchPlural(tags[l], n, 0, 0, 0, 0))
}

// Plural is a noun said without a number: "digits".
func Plural(l Language, key string) string { return catalog[l].nouns[key].Plural }

// Ranged is a noun after a range, "4 to 10 digits".
func Ranged(l Language, key string) string {
	return catalog[l].nouns[key].form(catalog[l].afterRange)
}

// words are one language's sentences and nouns.
type words struct {
	texts map[string]string
	nouns map[string]noun
	// afterRange is the form a noun takes after "from A to B": Russian and
	// Ukrainian put B in the genitive, which governs the genitive plural
	// whatever B is ("от 2 до 4 цифр").
	afterRange plural.Form
}

// catalog is every language's words.
var catalog = [...]words{English: english, Russian: russian, Ukrainian: ukrainian}
