package contract

import (
	"fmt"
	"math"
	"strings"
	"unicode"
)

// normalizeLastDigits keeps the last N digits of a card or account number
// as models copy it: "•• 4417", "**** **** **** 4417", "карта 4417", "card
// ending in 4417", a whole "4276 1234 5678 4417". N is x-slotd.digits, else
// what the property's pattern or length says, else 4. The digits are taken
// from the last group of digits (groups joined by single spaces or
// hyphens count as one), so a date or a count elsewhere in the text is not
// mixed in.
func normalizeLastDigits(v any, p *Property, _ Env) (any, error) {
	n := p.Digits
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case float64:
		if t < 0 || t != math.Trunc(t) || t > 1e19 {
			return nil, refuse("digits.not_digits", n)
		}
		s = fmt.Sprintf("%0*.0f", n, t)
	default:
		return nil, refuse("digits.not_digits", n)
	}
	group := lastDigitGroup(s)
	if len(group) < n {
		return nil, refuse("digits.found", len(group), n)
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

// fold makes enum matching blind to case, spaces, hyphens, underscores,
// quotes and full stops, and to ё against е.
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToLower(cleanText(s)) {
		switch {
		case r == 'ё':
			b.WriteRune('е')
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// normalizeEnum matches a value to the property's enum values case- and
// separator-blind ("Not Received", "not-received" → not_received), then
// to x-slotd.synonyms ("дубль", "двойное списание" → duplicate). A value
// that matches nothing is left for the schema to refuse with the allowed
// values listed.
func normalizeEnum(v any, p *Property, _ Env) (any, error) {
	s, ok := v.(string)
	if !ok {
		return v, nil // the schema says what fits
	}
	for _, e := range p.Enum {
		if e == s {
			return e, nil
		}
	}
	f := fold(s)
	for i, e := range p.Enum {
		if p.foldedEnum[i] == f {
			return e, nil
		}
	}
	if e, ok := p.synonyms[f]; ok {
		return e, nil
	}
	return s, nil
}

// normalizeIATA upper-cases a three-letter airport code. A city name is
// refused: turning "Madrid" into MAD is knowledge, not format (seed 004),
// and a schema cannot supply it. A code written beside the city ("Madrid
// (MAD)", "MAD - Madrid") is taken.
func normalizeIATA(v any, _ *Property, _ Env) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, refuse("iata.not_text")
	}
	if len(s) == 3 && isLatin(s) {
		return strings.ToUpper(s), nil
	}
	var code string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(f) == 3 && isLatin(f) && strings.ToUpper(f) == f {
			if code != "" && code != f {
				return nil, refuse("iata.city")
			}
			code = f
		}
	}
	if code == "" || code == strings.TrimSpace(s) {
		return nil, refuse("iata.city")
	}
	return code, nil
}

func isLatin(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
