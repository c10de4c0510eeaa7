// Package redact owns what slotd knows about payment card numbers in what
// callers send: finding one the way a person reading the text would (a
// Luhn-valid run of 13 to 19 digits that starts as cards start, in digits
// of any script or any form NFKC makes digits of, in groups split by
// whatever is not a letter or a digit), and masking every card-like number
// down to its last four digits before anything is echoed, stored or logged.
//
// Both walk a string once, in time and memory linear in its length; the
// walks of JSON values are bounded in depth.
package redact

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Masked replaces the digits of a masked card number; the last four follow.
const Masked = "•••• "

// MaxDepth bounds the walks of JSON values: deeper values are masked whole.
// Callers' values are refused long before this depth.
const MaxDepth = 64

// Card and PAN lengths (ISO/IEC 7812).
const (
	minDigits = 13
	maxDigits = 19
)

// HasCard reports whether s holds a full card number: a run of 13 to 19
// digits, read as a person reads them (see reader), that starts the way
// card numbers of its length start (issuer) and is Luhn-valid whatever its
// grouping, or is printed the way card numbers are (4-4-4-4, 4-6-5). UUIDs,
// hex ids and timestamps fail one of these.
func HasCard(s string) bool {
	if !enoughDigits(s) {
		return false
	}
	found := false
	scan(s, func(w window) bool {
		if w.card {
			found = true
			return false
		}
		return true
	})
	return found
}

// String masks every card-like number in s (a card number as HasCard finds
// it, and any unbroken run of 13 digits or more, Luhn-valid or not) as
// "•••• " and its last four digits.
func String(s string) string {
	if !enoughDigits(s) {
		return s
	}
	var spans [][2]int
	var lasts []string
	scan(s, func(w window) bool {
		if !w.mask {
			return true
		}
		if n := len(spans); n > 0 && w.start < spans[n-1][1] {
			// Overlapping windows of one number mask as one.
			if w.end > spans[n-1][1] {
				spans[n-1][1], lasts[n-1] = w.end, w.lastFour()
			}
			return true
		}
		spans = append(spans, [2]int{w.start, w.end})
		lasts = append(lasts, w.lastFour())
		return true
	})
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for i, sp := range spans {
		b.WriteString(s[at:sp[0]])
		b.WriteString(Masked)
		b.WriteString(lasts[i])
		at = sp[1]
	}
	b.WriteString(s[at:])
	return b.String()
}

// MaxLoggedID bounds an id in a log line: ids are at most 256 bytes when
// valid, and a refused one may be any size.
const MaxLoggedID = 256

// LoggedID is an id as a log line shows it: cut to MaxLoggedID bytes and
// with card-like numbers masked.
func LoggedID(id string) string {
	if len(id) > MaxLoggedID {
		id = strings.ToValidUTF8(id[:MaxLoggedID], "") + "…"
	}
	return String(id)
}

// Value masks card-like numbers everywhere in a JSON value: strings, object
// keys, and numbers with as many digits as a card number. It returns v
// itself when there is nothing to mask.
func Value(v any) any { return value(v, 0) }

func value(v any, depth int) any {
	if depth > MaxDepth {
		return Masked + "…"
	}
	switch t := v.(type) {
	case string:
		return String(t)
	case float64:
		if t >= 1e12 || t <= -1e12 {
			digits := strconv.FormatFloat(t, 'f', -1, 64)
			if m := String(digits); m != digits {
				return m
			}
		}
		return t
	case json.Number:
		if m := String(string(t)); m != string(t) {
			return m
		}
		return t
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[String(k)] = value(x, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = value(x, depth+1)
		}
		return out
	}
	return v
}

// ValueHasCard reports whether a JSON value holds a full card number in a
// string, an object key or a number, at any depth up to MaxDepth (and, past
// it, says yes: such a value is refused anyway).
func ValueHasCard(v any) bool { return valueHasCard(v, 0) }

func valueHasCard(v any, depth int) bool {
	if depth > MaxDepth {
		return true
	}
	switch t := v.(type) {
	case string:
		return HasCard(t)
	case float64:
		return (t >= 1e12 || t <= -1e12) && HasCard(strconv.FormatFloat(t, 'f', -1, 64))
	case json.Number:
		return HasCard(string(t))
	case map[string]any:
		for k, x := range t {
			if HasCard(k) || valueHasCard(x, depth+1) {
				return true
			}
		}
	case []any:
		for _, x := range t {
			if valueHasCard(x, depth+1) {
				return true
			}
		}
	}
	return false
}

// enoughDigits is the cheap first look: a string with fewer than 13 digits
// of any script, counting what NFKC makes digits of (superscripts, circled
// numbers, two digits for the likes of ⑳), holds no card number.
func enoughDigits(s string) bool {
	if off {
		return false
	}
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= '0' && c <= '9' {
				n++
			}
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			if unicode.IsNumber(r) {
				n += 2
			}
			i += size
		}
		if n >= minDigits {
			return true
		}
	}
	return false
}

// window is a candidate card number within s: the bytes [start, end),
// what HasCard makes of it, whether String masks it, and its last four
// digits as ASCII. It holds no slice of scan's scratch, which so stays on
// scan's stack.
type window struct {
	start, end int
	// card: the digits start as a card's do and are Luhn-valid, or printed
	// in a card's groups.
	card bool
	// mask: a card, or one unbroken run of 13 digits or more (card-like
	// whatever its checksum: echoes keep only its last four).
	mask  bool
	last4 [4]byte
	n4    int8
}

// newWindow is the window of the bytes [start, end) holding digits in
// groups, printed as cards are or not.
func newWindow(start, end int, digits []byte, groups int, printed bool) window {
	w := window{start: start, end: end}
	w.card = len(digits) <= maxDigits && issuer(digits) && (printed || luhn(digits))
	if len(digits) < 15 && groups > 1 && !printed {
		// 13- and 14-digit numbers (Visa's and Diners' old ones) count in
		// one run or as printed: split otherwise, they are mostly a time
		// ("46:24.246589751", "30 18:15:58.159820").
		w.card = false
	}
	w.mask = w.card || groups == 1
	w.n4 = int8(copy(w.last4[:], digits[max(0, len(digits)-4):]))
	return w
}

func (w window) lastFour() string { return string(w.last4[:w.n4]) }

// group is a run of digits within s: the bytes [start, end), and its
// digits as ASCII at [from, to) of the scan's digits.
type group struct {
	start, end int
	from, to   int
}

func (g group) len() int { return g.to - g.from }

// scan calls fn for every candidate card number in s, in order, until fn
// returns false: each run of 13 to 19 digits that starts and ends on group
// boundaries, and each single group of 13 digits or more.
//
// It reads s as a person does: each rune in its NFKC form (fullwidth,
// superscript, circled and mathematical digits are digits), format
// characters (zero-width spaces, joiners, bidi controls) unseen, letters
// ending a number, and any run of anything else (spaces, tabs, punctuation,
// symbols, mixed as they come) a gap between its groups.
func scan(s string, fn func(window) bool) {
	// Room for an id's groups and digits on the stack; longer runs grow
	// on the heap.
	var groupBuf [16]group
	var digitBuf [64]byte
	groups, digits := groupBuf[:0], digitBuf[:0]
	// in: the last rune read was a digit of the last group.
	in := false
	flush := func() bool {
		ok := run(groups, digits, fn)
		groups, digits, in = groups[:0], digits[:0], false
		return ok
	}
	// read reads r, which spells the bytes [start, end) of s (with the
	// other runes of their NFKC form).
	read := func(r rune, start, end int) bool {
		if d, ok := digit(r); ok {
			if !in {
				groups = append(groups, group{start: start, from: len(digits)})
				in = true
			}
			digits = append(digits, '0'+d)
			g := &groups[len(groups)-1]
			g.end, g.to = end, len(digits)
			return true
		}
		switch {
		case unicode.Is(unicode.Cf, r):
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			return flush()
		default:
			in = false
		}
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			// An id starts after a break, not inside a number's group
			// ("4111\u200b41111111-…" is no UUID).
			if end := idToken(s, i); !in && end > i {
				// The digits of an id such as a UUID or a hash are not a number.
				if !flush() {
					return
				}
				i = end
				continue
			}
			if !read(rune(c), i, i+1) {
				return
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if nfkc := norm.NFKC.PropertiesString(s[i:]).Decomposition(); len(nfkc) > 0 {
			for _, r := range string(nfkc) {
				if !read(r, i, i+size) {
					return
				}
			}
		} else if !read(r, i, i+size) {
			return
		}
		i += size
	}
	flush()
}

// idToken is the end of the id that starts at i, or i when there is none:
// a UUID in its canonical form (8-4-4-4-12 hex digits), or a run of at
// least eight ASCII letters and digits, all of them hex, with both a digit
// and a letter: a UUID without dashes or a hash (32 hex digits or more)
// whatever digits it holds, a shorter one (a part of a UUID) when it has
// no card number written whole inside ("deadbeef4111111111111111" has).
func idToken(s string, i int) int {
	if i > 0 && isAlnum(s[i-1]) || !isAlnum(s[i]) {
		return i
	}
	if end := i + 36; canonicalUUID(s[i:min(end, len(s))]) && (end == len(s) || !isAlnum(s[end])) {
		return end
	}
	j, letters, digits, hex := i, 0, 0, true
	for ; j < len(s) && isAlnum(s[j]); j++ {
		switch c := s[j] | 0x20; {
		case s[j] >= '0' && s[j] <= '9':
			digits++
		case c >= 'a' && c <= 'f':
			letters++
		default:
			hex = false
		}
	}
	if !hex || j-i < 8 || letters == 0 || digits == 0 || j-i < 32 && cardRun(s[i:j]) {
		return i
	}
	return j
}

// canonicalUUID reports a UUID as slotd and most systems write one: 36
// characters, hex digits in groups of 8-4-4-4-12. Its digit groups read as
// a number (8-4-4 in a UUID of digits only) would be a card in one UUID of
// a few tens of thousands.
func canonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i] | 0x20
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// cardRun reports whether a token holds a run of 13 to 19 decimal digits
// that starts like a card number and is Luhn-valid: a card number written
// next to hex letters ("4276123456784417ab") is still one.
func cardRun(tok string) bool {
	for i := 0; i < len(tok); {
		j := i
		for j < len(tok) && tok[j] >= '0' && tok[j] <= '9' {
			j++
		}
		if n := j - i; n >= minDigits && n <= maxDigits && issuer([]byte(tok[i:j])) && luhn([]byte(tok[i:j])) {
			return true
		}
		i = j + 1
	}
	return false
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// run reports the candidate windows of one run of groups, whose digits
// follow one another in digits: each span of whole groups holding 13 to 19
// digits, whatever the groups' sizes, and each group of 13 digits or more.
func run(groups []group, digits []byte, fn func(window) bool) bool {
	for i, first := range groups {
		for j := i; j < len(groups); j++ {
			n := groups[j].to - first.from
			if n > maxDigits && j > i {
				break
			}
			if n >= minDigits {
				g := groups[i : j+1]
				w := newWindow(first.start, groups[j].end, digits[first.from:groups[j].to], len(g), printed(g))
				if !fn(w) {
					return false
				}
			}
			if n > maxDigits {
				break
			}
		}
	}
	return true
}

// printed reports whether groups are laid out as card numbers are printed:
// fours with a last group of up to four (4-4-4-4, 4-4-4-4-3), or 4-6-5 and
// 4-6-4.
func printed(groups []group) bool {
	if len(groups) < 3 {
		return false
	}
	if len(groups) == 3 && groups[0].len() == 4 && groups[1].len() == 6 {
		if n := groups[2].len(); n == 4 || n == 5 {
			return true
		}
	}
	for _, g := range groups[:len(groups)-1] {
		if g.len() != 4 {
			return false
		}
	}
	return groups[len(groups)-1].len() <= 4
}

// digit is the value of a decimal digit of any script (Unicode category Nd,
// whose digits come in runs of ten from zero).
func digit(r rune) (byte, bool) {
	if r < utf8.RuneSelf {
		if r >= '0' && r <= '9' {
			return byte(r - '0'), true
		}
		return 0, false
	}
	for _, rg := range unicode.Nd.R16 {
		if r < rune(rg.Lo) {
			return 0, false
		}
		if r <= rune(rg.Hi) {
			return byte((r - rune(rg.Lo)) % 10), true
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r < rune(rg.Lo) {
			return 0, false
		}
		if r <= rune(rg.Hi) {
			return byte((r - rune(rg.Lo)) % 10), true
		}
	}
	return 0, false
}

// issuer reports whether digits start as a payment card's of that length
// do: Visa (4; 13, 16 or 19 digits), Amex (34, 37; 15), Diners (300-305;
// 14, 36; 14 to 19, 38 and 39; 16 to 19), JCB (3528-3589), Mastercard (51-55, 2221-2720; 16),
// Mir (2200-2204), Maestro (50, 56-58, 6), Discover and UnionPay (6; 16 to
// 19). Numbers that are not cards but look alike, such as dates and
// timestamps (1…, 20…), fail here.
func issuer(digits []byte) bool {
	n := len(digits)
	p2 := int(digits[0]-'0')*10 + int(digits[1]-'0')
	p4 := p2*100 + int(digits[2]-'0')*10 + int(digits[3]-'0')
	switch {
	case p2 >= 40 && p2 <= 49:
		return n == 13 || n == 16 || n == 19
	case p2 == 34 || p2 == 37:
		return n == 15
	case p4 >= 3000 && p4 <= 3059:
		return n == 14
	case p2 == 36:
		return n >= 14
	case p2 == 38 || p2 == 39:
		return n >= 16
	case p4 >= 3528 && p4 <= 3589:
		return n >= 16
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720:
		return n == 16
	case p4 >= 2200 && p4 <= 2204, p2 == 50, p2 >= 56 && p2 <= 69:
		return n >= 16
	}
	return false
}

// luhn checks the Luhn (mod 10) checksum of ASCII digits.
func luhn(digits []byte) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}
