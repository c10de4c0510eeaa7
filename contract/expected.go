package contract

import (
	"strconv"
	"strings"

	"github.com/slotd/slotd/contract/internal/wording"
	"github.com/slotd/slotd/internal/phrase"
)

// lang is the language a turn's refusals and rules are worded in. A turn
// without a locale is worded in English, as Env and Check promise; any other
// locale follows phrase.Lang, with the contract's default locale as the
// fallback.
func (c *Contract) lang(locale string) phrase.Language {
	if locale == "" {
		return phrase.English
	}
	return phrase.Lang(locale, c.DefaultLocale)
}

// Expected describes the accepted form of a slot with an example, in
// English, or "" for free text: the contract's own x-slotd.expected when it
// has one, else the form of its normalizer or format.
func Expected(p *Property) string { return p.expectedText(phrase.English) }

// ExpectedIn is Expected worded in a locale. A property does not know its
// contract, so a locale slotd has no words for is English here.
func ExpectedIn(p *Property, locale string) string {
	return p.expectedText(phrase.Lang(locale, ""))
}

// expectedText is the slot's accepted form in one of slotd's languages.
func (p *Property) expectedText(lang phrase.Language) string {
	if s := pick(p.expected, lang.String(), ""); s != "" {
		return s
	}
	if len(p.Enum) > 0 {
		return phrase.Text(lang, "fmt.enum", phrase.Args{"values": p.enumInWords(lang)})
	}
	for _, n := range p.normalizers() {
		if key := formatKeys[n]; key != "" {
			if n == "last4" {
				return digitsFormat(lang, p.Digits)
			}
			if n == "amount" && p.Currency != "" {
				return phrase.Text(lang, "fmt.amount_in", phrase.Args{"currency": p.Currency})
			}
			return phrase.Text(lang, key, nil)
		}
	}
	if p.Format != "" {
		return formatText(lang, p.Format)
	}
	return ""
}

// enumInWords lists the enum values as a model must send them, each with its
// label in the language beside it when the contract gives one ("fraud
// (мошенническая операция)"): the label helps a model map what the user said
// to a code, and the code stays what it sends.
func (p *Property) enumInWords(lang phrase.Language) string {
	parts := make([]string, len(p.Enum))
	for i, v := range p.Enum {
		parts[i] = v
		if l := p.valueLabels[v][lang.String()]; l != "" {
			parts[i] = v + " (" + l + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// repairFormat is what a refusal lists as the accepted form: the slot's
// expected form, then its bounds and pattern in words, as compiling the
// contract worded it (wording a pattern parses it, which cost a refused
// turn more than its whole check).
func (p *Property) repairFormat(lang phrase.Language) string { return p.formats[lang] }

// wordFormats words repairFormat in each of slotd's languages.
func (p *Property) wordFormats() [phrase.Languages]string {
	var out [phrase.Languages]string
	for lang := range phrase.Languages {
		out[lang] = p.wordFormat(lang)
	}
	return out
}

// wordFormat words repairFormat in one language.
func (p *Property) wordFormat(lang phrase.Language) string {
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
func formatText(lang phrase.Language, format string) string {
	switch format {
	case "date":
		return phrase.Text(lang, "fmt.date", nil)
	case "date-time", "email", "uuid", "uri", "time":
		return phrase.Text(lang, "fmt.format."+format, nil)
	}
	return phrase.Text(lang, "fmt.format", phrase.Args{"format": format})
}

// digitsFormat is the accepted form of the last n digits, with an example:
// "the last four digits of the card or account, e.g. 4417". Up to ten
// digits are counted in words.
func digitsFormat(lang phrase.Language, n int) string {
	example := strings.Repeat("0", max(0, n-4)) + "4417"
	example = example[len(example)-n:]
	number := strconv.Itoa(n)
	if n >= 1 && n <= 10 {
		number = phrase.Text(lang, "digits.number."+number, nil)
	}
	count := phrase.Text(lang, "digits.count", phrase.Args{"number": number, "noun": phrase.Count(lang, "digit", n)})
	return phrase.Text(lang, "fmt.digits", phrase.Args{"count": count, "example": example})
}
