package normalizer

import (
	"fmt"
	"math"
	"strings"
	"unicode"
)

// LastDigits keeps the last n digits of a card or account number as models
// copy it: "•• 4417", "**** **** **** 4417", "карта 4417", "card ending in
// 4417", a whole "4276 1234 5678 4417". The digits are taken from the last
// group of digits (groups joined by single spaces or hyphens count as one),
// so a date or a count elsewhere in the text is not mixed in.
func LastDigits(v any, n int) (string, error) {
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case float64:
		if t < 0 || t != math.Trunc(t) || t > 1e19 {
			return "", refuse("digits.not_digits", Args{"digits": n})
		}
		s = fmt.Sprintf("%0*.0f", n, t)
	default:
		return "", refuse("digits.not_digits", Args{"digits": n})
	}
	group := lastDigitGroup(s)
	if len(group) < n {
		return "", refuse("digits.found", Args{"found": len(group), "need": n})
	}
	return string(group[len(group)-n:]), nil
}

// lastDigitGroup returns the digits of the last run of digits, where runs
// separated by one space, hyphen or bullet form one group: "4276 1234 5678
// 4417" is one group, "12.08 карта 4417" ends in the group "4417".
func lastDigitGroup(s string) []byte {
	var group []byte
	gap := 0 // separators since the last digit
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			if gap > 1 {
				group = group[:0]
			}
			group = append(group, byte(r))
			gap = 0
		case (r == ' ' || r == '-') && len(group) > 0 && gap == 0:
			gap = 1
		default:
			if len(group) > 0 {
				gap = 2
			}
		}
	}
	return group
}

// Enum matches values to a set of enum values.
type Enum struct {
	values   []string
	folded   []string          // values, folded
	synonyms map[string]string // folded synonym → value
}

// NewEnum is an Enum of the values, with synonyms by value ("duplicate":
// ["дубль", "двойное списание"]).
func NewEnum(values []string, synonyms map[string][]string) *Enum {
	e := &Enum{values: values, folded: make([]string, len(values))}
	for i, v := range values {
		e.folded[i] = fold(v)
	}
	if len(synonyms) > 0 {
		e.synonyms = map[string]string{}
		for value, syns := range synonyms {
			for _, s := range syns {
				e.synonyms[fold(s)] = value
			}
		}
	}
	return e
}

// Match matches a value to an enum value case- and separator-blind ("Not
// Received", "not-received" → not_received), then to the synonyms ("дубль",
// "двойное списание" → duplicate). A value that matches nothing comes back
// as it is, for the schema to refuse with the allowed values listed.
func (e *Enum) Match(v any) any {
	s, ok := v.(string)
	if !ok {
		return v // the schema says what fits
	}
	for _, x := range e.values {
		if x == s {
			return x
		}
	}
	f := fold(s)
	for i, x := range e.values {
		if e.folded[i] == f {
			return x
		}
	}
	if x, ok := e.synonyms[f]; ok {
		return x
	}
	return s
}

// fold makes enum matching blind to case, spaces, hyphens, underscores,
// quotes and full stops, and to ё against е.
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToLower(Clean(s)) {
		switch {
		case r == 'ё':
			b.WriteRune('е')
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// IATA upper-cases a three-letter airport code. A city name is refused:
// turning "Madrid" into MAD is knowledge, not format, and a schema cannot
// supply it. A code written beside the city ("Madrid (MAD)", "MAD - Madrid")
// is taken.
func IATA(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", refuse("iata.not_text")
	}
	if len(s) == 3 && isLatin(s) {
		return strings.ToUpper(s), nil
	}
	var code string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(f) == 3 && isLatin(f) && strings.ToUpper(f) == f {
			if code != "" && code != f {
				return "", refuse("iata.city")
			}
			code = f
		}
	}
	if code == "" || code == strings.TrimSpace(s) {
		return "", refuse("iata.city")
	}
	return code, nil
}
