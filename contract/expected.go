package contract

import (
	"fmt"
	"strings"

	"github.com/slotd/slotd/contract/internal/wording"
	"github.com/slotd/slotd/internal/phrase"
)

// lang is the message language of a locale for this contract: a turn
// without a locale is worded in English.
func (c *Contract) lang(locale string) string { return phrase.Lang(locale, c.DefaultLocale) }

// Expected describes the accepted form of a slot with an example, in
// English, or "" for free text: the contract's own x-slotd.expected when it
// has one, else the form of its normalizer or format.
func Expected(p *Property) string { return p.expectedText("en") }

// ExpectedIn is Expected worded in a locale.
func ExpectedIn(p *Property, locale string) string {
	return p.expectedText(phrase.Lang(locale, ""))
}

// expectedText is the slot's accepted form in one of slotd's languages.
func (p *Property) expectedText(lang string) string {
	if s := pick(p.expected, lang, ""); s != "" {
		return s
	}
	if len(p.Enum) > 0 {
		return phrase.Text(lang, "fmt.enum", strings.Join(p.Enum, ", "))
	}
	for _, n := range p.normalizers() {
		if key := formatKeys[n]; key != "" {
			if n == "last4" {
				return digitsFormat(lang, p.Digits)
			}
			if n == "amount" && p.Currency != "" {
				return phrase.Text(lang, "fmt.amount_in", p.Currency)
			}
			return phrase.Text(lang, key)
		}
	}
	if p.Format != "" {
		return formatText(lang, p.Format)
	}
	return ""
}

// repairFormat is what a refusal lists as the accepted form: the slot's
// expected form, then its bounds and pattern in words.
func (p *Property) repairFormat(lang string) string {
	parts := make([]string, 0, 2)
	if s := p.expectedText(lang); s != "" {
		parts = append(parts, s)
	}
	if s := wording.Constraints(p.raw, lang); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// formatText is a standard format in words.
func formatText(lang, format string) string {
	switch format {
	case "date":
		return phrase.Text(lang, "fmt.date")
	case "date-time", "email", "uuid", "uri", "time":
		return phrase.Text(lang, "fmt.format."+format)
	}
	return phrase.Text(lang, "fmt.format", format)
}

// digitWords name a small count of digits: "the last four digits".
var digitWords = [3][]string{
	{"", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"},
	{"", "одна цифра", "две цифры", "три цифры", "четыре цифры", "пять цифр", "шесть цифр", "семь цифр", "восемь цифр", "девять цифр", "десять цифр"},
	{"", "одна цифра", "дві цифри", "три цифри", "чотири цифри", "п'ять цифр", "шість цифр", "сім цифр", "вісім цифр", "дев'ять цифр", "десять цифр"},
}

// digitsFormat is the accepted form of the last N digits, with an example.
func digitsFormat(lang string, n int) string {
	example := strings.Repeat("0", max(0, n-4)) + "4417"
	example = example[len(example)-n:]
	words := fmt.Sprint(n)
	if n < len(digitWords[0]) {
		words = digitWords[phrase.Index(lang)][n]
	} else if lang != "en" {
		words = fmt.Sprintf("%d %s", n, phrase.Plural(lang, n, "цифра", "цифры", "цифр"))
		if lang == "uk" {
			words = fmt.Sprintf("%d %s", n, phrase.Plural(lang, n, "цифра", "цифри", "цифр"))
		}
	}
	return phrase.Text(lang, "fmt.digits", words, example)
}
