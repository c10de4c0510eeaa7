// Package redact owns what slotd knows about payment card numbers in what
// callers send: finding one (a Luhn-valid run of 13 to 19 digits of any
// script, in groups split by the separators people and models put between
// them), and masking every card-like number down to its last four digits
// before anything is echoed, stored or logged.
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
	// maxSeparators is the longest run of separators inside a number.
	maxSeparators = 3
)

// HasCard reports whether s holds a full card number: a run of 13 to 19
// digits, the groups of which are split by one kind of separator, that
// starts the way card numbers start (issuer) and is either grouped the way
// card numbers are printed (4-4-4-4, 4-6-5) or Luhn-valid and in one group
// or groups of even size (4111111111111111, 4 1 1 1 …). Ids such as UUIDs
// and timestamps fail one of these.
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

// String masks every card-like number in s (13 to 19 digits in groups split
// by one kind of separator, Luhn-valid or not, and any group of more than 19
// digits) as "•••• " and its last four digits.
func String(s string) string {
	if !enoughDigits(s) {
		return s
	}
	var spans [][2]int
	var lasts []string
	scan(s, func(w window) bool {
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
// of any script holds no card number.
func enoughDigits(s string) bool {
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
			if unicode.Is(unicode.Nd, r) {
				n++
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
// what HasCard makes of it, and its last four digits as ASCII. It holds
// no slice of scan's scratch, which so stays on scan's stack.
type window struct {
	start, end int
	// card: the digits start as a card's do and are either printed in a
	// card's groups or Luhn-valid in one group or groups of one size up to
	// four (the last may be shorter).
	card  bool
	last4 [4]byte
	n4    int8
}

// newWindow is the window of the bytes [start, end) holding digits, laid
// out in groups as printed and even say.
func newWindow(start, end int, digits []byte, printed, even bool) window {
	w := window{start: start, end: end}
	w.card = issuer(digits) && (printed || even && luhn(digits))
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

// sepKind says which separators a gap between two groups holds: a number's
// groups are split by one kind ("4000 0212 …", "4000-0212-…"), so that two
// numbers written side by side with other punctuation are not read as one.
type sepKind uint8

const (
	sepSpace sepKind = 1 << iota
	sepDot
	sepComma
	sepDash
	sepSlash
	sepUnderscore
)

// separator is the kind of r when it may stand between the digit groups of
// a number, 0 otherwise.
func separator(r rune) sepKind {
	switch r {
	case '.', '·', '．', '｡', '。', '‧':
		return sepDot
	case ',', '，', '、', '،', '٫', '٬':
		return sepComma
	case '/', '\\', '／', '＼', '⁄', '∕':
		return sepSlash
	case '_', '＿':
		return sepUnderscore
	case '−', '‐', '‑', '‒', '–', '—', '―', '－', '﹣':
		return sepDash
	}
	switch {
	case r == '-' || unicode.Is(unicode.Pd, r):
		return sepDash
	case unicode.IsSpace(r) || unicode.Is(unicode.Zs, r):
		return sepSpace
	}
	return 0
}

// ignorable runes are invisible: zero-width spaces and joiners, soft
// hyphens, byte-order marks. They never split a number.
func ignorable(r rune) bool { return unicode.Is(unicode.Cf, r) }

// scan calls fn for every candidate card number in s, in order, until fn
// returns false: each run of 13 to 19 digits that starts and ends on group
// boundaries and whose gaps are all of one kind, and each single group of
// more than 19 digits.
func scan(s string, fn func(window) bool) {
	// Room for an id's groups and digits on the stack; longer runs grow
	// on the heap.
	var groupBuf [16]group
	var gapBuf [16]sepKind
	var digitBuf [64]byte
	groups, gaps, digits := groupBuf[:0], gapBuf[:0], digitBuf[:0]
	var cur *group
	gap, gapLen := sepKind(0), 0
	flush := func() bool {
		ok := run(groups, gaps, digits, fn)
		groups, gaps, digits, cur, gap, gapLen = groups[:0], gaps[:0], digits[:0], nil, 0, 0
		return ok
	}
	for i := 0; i < len(s); {
		if end := hexToken(s, i); end > i {
			// The digits of an id such as a UUID or a hash are not a number.
			if !flush() {
				return
			}
			i = end
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch d, isDigit := digit(r); {
		case isDigit:
			if cur == nil {
				if len(groups) > 0 {
					gaps = append(gaps, gap)
				}
				groups = append(groups, group{start: i, from: len(digits), to: len(digits)})
				cur = &groups[len(groups)-1]
				gap, gapLen = 0, 0
			}
			digits = append(digits, '0'+d)
			cur.end, cur.to = i+size, len(digits)
		case ignorable(r):
		case separator(r) != 0 && len(groups) > 0 && gapLen < maxSeparators:
			cur = nil
			gap |= separator(r)
			gapLen++
		default:
			if !flush() {
				return
			}
		}
		i += size
	}
	flush()
}

// hexToken is the end of the hexadecimal token that starts at i (a run of
// at least eight ASCII letters and digits, all of them hex, with both a
// digit and a letter: a part of a UUID, a hash), or i when there is none.
func hexToken(s string, i int) int {
	if i > 0 && isAlnum(s[i-1]) || !isAlnum(s[i]) {
		return i
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
	if !hex || j-i < 8 || letters == 0 || digits == 0 || cardRun(s[i:j]) {
		return i
	}
	return j
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
// follow one another in digits.
func run(groups []group, gaps []sepKind, digits []byte, fn func(window) bool) bool {
	for i, first := range groups {
		if first.len() > maxDigits {
			if !fn(newWindow(first.start, first.end, digits[first.from:first.to], false, false)) {
				return false
			}
			continue
		}
		for j := i; j < len(groups); j++ {
			if j > i && gaps[j-1] != gaps[i] {
				break
			}
			n := groups[j].to - first.from
			if n > maxDigits {
				break
			}
			if n >= minDigits {
				g := groups[i : j+1]
				w := newWindow(first.start, groups[j].end, digits[first.from:groups[j].to], printed(g), even(g))
				if !fn(w) {
					return false
				}
			}
		}
	}
	return true
}

// even reports one group, or groups of one size up to four with a last
// group no longer than the others.
func even(groups []group) bool {
	size := groups[0].len()
	if len(groups) == 1 {
		return true
	}
	if size > 4 || groups[len(groups)-1].len() > size {
		return false
	}
	for _, g := range groups[1 : len(groups)-1] {
		if g.len() != size {
			return false
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

// issuer reports whether digits start as a payment card's do (ISO/IEC
// 7812): the major industry identifier of cards is 2 to 6, 13-digit cards
// are Visa's (4), and 14- and 15-digit ones Diners' and Amex's (3). Numbers
// that are not cards but look alike, such as timestamps in milliseconds or
// nanoseconds, mostly fail here.
func issuer(digits []byte) bool {
	first := digits[0]
	switch len(digits) {
	case 13:
		return first == '4'
	case 14, 15:
		return first == '3'
	}
	return first >= '2' && first <= '6'
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
