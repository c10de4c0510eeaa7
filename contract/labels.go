package contract

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/text/language"

	"github.com/slotd/slotd/contract/internal/jsontree"
)

// parseValueLabels reads x-slotd.value_labels: per enum value, how a user is
// told it, per locale ({"fraud": {"ru": "мошенническая операция", "en":
// "fraudulent charge"}}). Every key must be a value of the property's enum
// and every locale a BCP 47 tag; an error names the member's JSON pointer.
func (p *Property) parseValueLabels(x *jsontree.Object) error {
	raw, ok := x.Get("value_labels")
	if !ok {
		return nil
	}
	ptr := "/properties/" + jsontree.Escape(p.Name) + "/x-slotd/value_labels"
	byValue, ok := raw.(*jsontree.Object)
	if !ok {
		return fmt.Errorf("x-slotd.value_labels: an object of labels by enum value, each a text per locale, at '%s'", ptr)
	}
	if len(p.Enum) == 0 {
		return fmt.Errorf("x-slotd.value_labels: the property has no enum of strings to label, at '%s'", ptr)
	}
	p.valueLabels = make(map[string]map[string]string, byValue.Len())
	for _, value := range byValue.Keys() {
		at := ptr + "/" + jsontree.Escape(value)
		if !slices.Contains(p.Enum, value) {
			return fmt.Errorf("x-slotd.value_labels: %q is not a value of the enum (%s), at '%s'", value, strings.Join(p.Enum, ", "), at)
		}
		texts := byValue.Obj(value)
		if texts == nil {
			return fmt.Errorf("x-slotd.value_labels: the labels of %q are texts per locale ({\"en\": \"…\"}), at '%s'", value, at)
		}
		labels := make(map[string]string, texts.Len())
		for _, locale := range texts.Keys() {
			lat := at + "/" + jsontree.Escape(locale)
			if _, err := language.Parse(locale); err != nil {
				return fmt.Errorf("x-slotd.value_labels: %q is not a locale (a BCP 47 tag such as ru, uk or en-GB), at '%s'", locale, lat)
			}
			text := texts.Str(locale)
			if strings.TrimSpace(text) == "" {
				return fmt.Errorf("x-slotd.value_labels: the %s label of %q must be a non-empty text, at '%s'", locale, value, lat)
			}
			labels[locale] = text
		}
		p.valueLabels[value] = labels
	}
	return nil
}

// ValueLabel is how an enum value is named to a user in the locale
// (x-slotd.value_labels), looked for as every contract text is; "" when
// the contract gives the value no label, and the value is shown as it is.
func (p *Property) ValueLabel(value, locale, fallback string) string {
	return pick(p.valueLabels[value], locale, fallback)
}

// AskIn is Ask, with the locale the question was found under: its
// placeholders are filled in that language, so that a question the turn's
// locale lacks reads in one language still.
func (p *Property) AskIn(locale, fallback string) (text, found string) {
	return pickIn(p.ask, locale, fallback)
}

// ConfirmTextIn is ConfirmText, with the locale the summary was found under.
func (c *Contract) ConfirmTextIn(locale string) (text, found string) {
	return pickIn(c.confirmText, locale, c.DefaultLocale)
}

// HasValueLabels reports a property whose enum values have labels.
func (p *Property) HasValueLabels() bool { return len(p.valueLabels) > 0 }

// labelSynonyms adds the value labels to the enum's synonyms: a user who was
// shown "мошенническая операция" may say it back, and a model pass it on.
func (p *Property) labelSynonyms(synonyms map[string][]string) map[string][]string {
	if len(p.valueLabels) == 0 {
		return synonyms
	}
	out := make(map[string][]string, len(synonyms)+len(p.valueLabels))
	for v, syns := range synonyms {
		out[v] = slices.Clone(syns)
	}
	for v, labels := range p.valueLabels {
		out[v] = append(out[v], sortedTexts(labels)...)
	}
	return out
}

// sortedTexts are a per-locale text map's texts, by locale.
func sortedTexts(m map[string]string) []string {
	locales := make([]string, 0, len(m))
	for l := range m {
		locales = append(locales, l)
	}
	slices.Sort(locales)
	out := make([]string, len(locales))
	for i, l := range locales {
		out[i] = m[l]
	}
	return out
}
