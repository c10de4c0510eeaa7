package wording

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/slotd/slotd/contract/internal/jsontree"
	"github.com/slotd/slotd/internal/phrase"
)

// Constraints says a property schema's bounds, lengths and pattern in
// words: "more than 0, at most 10000000"; "3 to 64 characters"; "4 digits".
// Empty when the schema has none.
func Constraints(s *jsontree.Object, lang phrase.Language) string {
	if s == nil {
		return ""
	}
	var parts []string
	num := func(k string) (string, bool) {
		v, ok := s.Get(k)
		if !ok {
			return "", false
		}
		n, ok := v.(json.Number)
		return string(n), ok
	}
	if v, ok := num("exclusiveMinimum"); ok {
		parts = append(parts, phrase.Text(lang, "words.more_than", phrase.Args{"limit": v}))
	}
	if v, ok := num("minimum"); ok {
		parts = append(parts, phrase.Text(lang, "words.at_least", phrase.Args{"limit": v}))
	}
	if v, ok := num("exclusiveMaximum"); ok {
		parts = append(parts, phrase.Text(lang, "words.less_than", phrase.Args{"limit": v}))
	}
	if v, ok := num("maximum"); ok {
		parts = append(parts, phrase.Text(lang, "words.at_most", phrase.Args{"limit": v}))
	}
	if v, ok := num("multipleOf"); ok {
		parts = append(parts, phrase.Text(lang, "words.multiple", phrase.Args{"limit": v}))
	}
	minL, hasMin := num("minLength")
	maxL, hasMax := num("maxLength")
	switch {
	case hasMin && hasMax && minL == maxL:
		parts = append(parts, phrase.Text(lang, "words.len_exact", phrase.Args{"n": atoi(minL)}))
	case hasMin && hasMax:
		parts = append(parts, phrase.Text(lang, "words.len_range", phrase.Args{"min": atoi(minL), "max": atoi(maxL)}))
	case hasMin:
		parts = append(parts, phrase.Text(lang, "words.len_min", phrase.Args{"min": atoi(minL)}))
	case hasMax:
		parts = append(parts, phrase.Text(lang, "words.len_max", phrase.Args{"max": atoi(maxL)}))
	}
	if p := s.Str("pattern"); p != "" {
		parts = append(parts, Pattern(p, lang))
	}
	return strings.Join(parts, ", ")
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
