// Package normalizer owns the parsers that turn what models send into slot
// values, in ru, uk and en: dates and times of day, amounts and currencies,
// counts, the last digits of a card, enum values, IATA airport codes, and
// text cleaned of what a person cannot see. docs/contracts.md describes what
// each accepts.
//
// The parsers know nothing of contracts: each takes a value and plain
// options, and returns the normalized value or a *Refusal, a message key and
// its arguments that the caller words in the turn's language. They expect
// text Clean has cleaned; package contract cleans a value once before its
// normalizers run.
//
// This package is public: authoring tools import it to read values as slotd
// does. slotd's public Go packages are client, contract (with
// contract/normalizer and contract/provider), problem and the wire API in
// api/proto/slotd/v1; everything else is internal to the slotd binary and
// may change without notice.
package normalizer

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Refusal is why a parser did not take a value. Key names the sentence of
// slotd's message catalog that says so, and Args fill its placeholders.
type Refusal struct {
	Key  string
	Args Args
}

// Args are a refusal's arguments by name: Args{"found": 2, "need": 4}.
type Args = map[string]any

func (r *Refusal) Error() string {
	if len(r.Args) == 0 {
		return "normalizer: " + r.Key
	}
	names := slices.Sorted(maps.Keys(r.Args))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s=%v", n, r.Args[n])
	}
	return "normalizer: " + r.Key + " (" + strings.Join(parts, ", ") + ")"
}

func refuse(key string, args ...Args) *Refusal {
	r := &Refusal{Key: key}
	if len(args) > 0 {
		r.Args = args[0]
	}
	return r
}

// invisible are the characters models copy from chat messages that a person
// cannot see: zero-width spaces and joiners, the word joiner, the BOM, the
// soft hyphen, and bidirectional marks.
func invisible(r rune) bool {
	switch r {
	case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad',
		'\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e',
		'\u2066', '\u2067', '\u2068', '\u2069', '\u180e':
		return true
	}
	return false
}

// Clean trims, folds runs of white space to one space, strips invisible
// characters, and composes to Unicode NFC. A clean ASCII string comes back
// as it is, without allocating.
func Clean(s string) string {
	if isCleanASCII(s) {
		return s
	}
	if !norm.NFC.IsNormalString(s) {
		s = norm.NFC.String(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case invisible(r):
			continue
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if b.Len() == len(s) && b.String() == s {
		return s
	}
	return b.String()
}

// Blank reports whether Clean(s) is "": s holds nothing but white space
// and invisible characters. It answers without cleaning when it can: a
// clean ASCII string is blank only when empty, and a letter or a digit
// survives Clean (NFC maps a letter to a letter, a digit to a digit).
func Blank(s string) bool {
	if isCleanASCII(s) {
		return s == ""
	}
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	return Clean(s) == ""
}

func isCleanASCII(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	prevSpace := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c < ' ' || c == 0x7f {
			return false
		}
		if c == ' ' {
			if prevSpace {
				return false
			}
			prevSpace = true
		} else {
			prevSpace = false
		}
	}
	return true
}

// CleanValue cleans every string in a value, in lists and objects too.
func CleanValue(v any) any {
	switch t := v.(type) {
	case string:
		return Clean(t)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = CleanValue(x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = CleanValue(x)
		}
		return out
	}
	return v
}

// Text is the text normalizer: a string cleaned, anything else as it is
// (the schema says whether it fits).
func Text(v any) any {
	if s, ok := v.(string); ok {
		return Clean(s)
	}
	return v
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
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
