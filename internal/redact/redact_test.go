package redact

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/google/uuid"
)

// toScript writes the ASCII digits of s in another script's digits.
func toScript(s string, zero rune) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return zero + (r - '0')
		}
		return r
	}, s)
}

func TestHasCard(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want bool
	}{
		{"4111111111111111", true},
		{"4111 1111 1111 1111", true},
		{"card 4111-1111-1111-1111 exp 12/29", true},
		{"4111.1111.1111.1111", true},
		{"4111/1111/1111/1111", true},
		{"4111,1111,1111,1111", true},
		{"4111\u00a01111\u00a01111\u00a01111", true},       // no-break spaces
		{"4111\u202f1111\u202f1111\u202f1111", true},       // narrow no-break spaces
		{"4\u200b111\u200b1111\u200d1111\ufeff1111", true}, // zero-width spaces and joiners inside groups
		{"4111 - 1111 - 1111 - 1111", true},
		{"4111–1111–1111–1111", true},                // en dashes
		{toScript("4111 1111 1111 1111", '٠'), true}, // Arabic-Indic digits
		{toScript("4111111111111111", '۰'), true},    // Extended Arabic-Indic
		{toScript("4111-1111-1111-1111", '०'), true}, // Devanagari
		{toScript("4111111111111111", '０'), true},    // fullwidth
		{"３４００ ０００００ ０００００９", true},                  // Luhn-valid, in any grouping
		{"３４００ ００００００ ００００９", true},                  // Amex 4-6-5 in fullwidth digits
		{"3400 000000 00009", true},                  // Amex 4-6-5, Luhn-valid
		{"4222222222222", true},                      // 13 digits
		{"6011000990139424 12/29", true},
		{"карта 5500 0000 0000 0004, срок 12/29", true},
		{"4000 0212 3456 7899", true}, // printed like a card, Luhn or not
		{"card 4000 0212 3456 7899 exp 12/29", true},
		// Not card numbers.
		{"4000021234567899", false},          // 16 digits, not Luhn-valid, not grouped
		{"•• 4417", false},                   // last four
		{"4417", false},                      // last four
		{"411111111111", false},              // 12 digits
		{"op-20260822-0117", false},          // 12 digits split by dashes
		{"1 200,50 ₽", false},                // an amount
		{"1200.50, 22.11.2026, 4417", false}, // several numbers in one text
		{"+7 (916) 123-45-67", false},        // a phone number
		{"41111111111111111111111", false},   // 23 digits in one group: no card (masked though)
		{"", false},
		// Numbers that pass Luhn but cannot be cards by their issuer.
		{"conv-1796118180433922615-turn-1", false},      // a timestamp in nanoseconds
		{"chat-1733011234569", false},                   // in milliseconds
		{"9111111111111110", false},                     // no card starts with 9
		{"1234 5678 9012 3452", false},                  // printed like a card, but no card starts with 1
		{"41111111-1111-4111-8111-111111111111", false}, // a UUID of digits: 8-4-4-4-12 is no card's grouping
		{"411111-1111111111", true},                     // Luhn-valid, in uneven groups
		{"4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1", true},       // digit by digit
		{"41 11 11 11 11 11 11 11", true},               // in pairs
		{"8260700e-4360-4063-9035-5e2e229b0e8c", false}, // a UUID: 4360-4063-9035-5 is no number
		{"sha 4111abcdef1111111111111111", false},       // a hash
		{"card4111111111111111", true},                  // glued to a word
		{"4111111111111111ab", true},                    // glued to hex letters: a card, not a hash
		{"deadbeef4111111111111111", true},
		{"карта4111111111111111", true},
		// Read as a person reads: any run of what is not a letter or a
		// digit splits groups, in any grouping, in any digits NFKC knows.
		{"4111 1111-1111.1111", true},                // mixed separators
		{"4111+1111+1111+1111", true},                // +
		{"4111*1111*1111*1111", true},                // *
		{"4111|1111|1111|1111", true},                // |
		{"4111:1111:1111:1111", true},                // :
		{"4111_1111_1111_1111", true},                // _
		{"4111~1111~1111~1111", true},                // ~
		{"4111   1111\t\t1111 \t 1111", true},        // runs of spaces and tabs
		{"(4111) [1111] {1111} <1111>", true},        // brackets
		{"41 1111 1111 1111 11", true},               // 2-4-4-4-2
		{"41111 11111 11111 1", true},                // 5-5-5-1
		{"411111 1111111111", true},                  // 6-10
		{"4111 1111 11111111", true},                 // 4-4-8
		{"⁴¹¹¹ ¹¹¹¹ ¹¹¹¹ ¹¹¹¹", true},                // superscripts
		{"₄₁₁₁₁₁₁₁₁₁₁₁₁₁₁₁", true},                   // subscripts
		{"④①①① ①①①① ①①①① ①①①①", true},                // circled
		{"𝟒𝟏𝟏𝟏 𝟏𝟏𝟏𝟏 𝟏𝟏𝟏𝟏 𝟏𝟏𝟏𝟏", true},                // mathematical bold
		{"𝟜𝟙𝟙𝟙𝟙𝟙𝟙𝟙𝟙𝟙𝟙𝟙𝟙𝟙𝟙𝟙", true},                   // mathematical double-struck
		{"4111\u202e1111\u20661111\u20691111", true}, // bidi controls are unseen
		{"⒋⒈⒈⒈ 1111 1111 1111", true},                // digits with full stop
		{"2200 1234 5678 9015", true},                // Mir prefix, not Luhn-valid, printed: a card
		{"2201 0000 0000 0000", true},                // Mir, printed
		{"2221 0000 0000 0009", true},                // Mastercard 2-series, Luhn-valid
		{"2100 0000 0000 0005", false},               // 21… is no issuer's
		{"2026-12-01 10:15:00.123456", false},        // a time
		{"14:46:24.246589751", false},                // 13 digits split: a time, no Visa
		{"30 14:46:24.246589751", false},             // 30… with 17 digits is no Diners
		{"4111111111111111 is the card", true},
		{"0041111111111111111", false},                  // 19 digits starting 00
		{"12345678-1234-4234-8234-123456789012", false}, // a canonical UUID of digits
	}
	for _, tc := range cases {
		if got := HasCard(tc.in); got != tc.want {
			t.Errorf("HasCard(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestStringMasksKeepingTheLastFour(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"4111 1111 1111 1111", "•••• 1111"},
		{"card 4000 0212 3456 7899 exp 12/29", "card •••• 7899 exp 12/29"},
		{"4000021234567899", "•••• 7899"}, // card-like, Luhn or not: masked in what is echoed
		{"a 4111111111111111 and 5500-0000-0000-0004.", "a •••• 1111 and •••• 0004."},
		{toScript("4111 1111 1111 1234", '٠'), "•••• 1234"},
		{"41111111111111111111111", "•••• 1111"},
		{"1200.50, 22.11.2026, 4417", "1200.50, 22.11.2026, 4417"},
		{"op-20260822-0117", "op-20260822-0117"},
		{"•• 4417", "•• 4417"},
	}
	for _, tc := range cases {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := String(tc.in); HasCard(got) {
			t.Errorf("String(%q) = %q still holds a card number", tc.in, got)
		}
	}
}

func TestValue(t *testing.T) {
	t.Parallel()
	in := map[string]any{
		"note":                "pay with 4111 1111 1111 1111",
		"4111111111111111":    "the key is a card",
		"list":                []any{"x", 4111111111111111.0, json.Number("5500000000000004")},
		"amount":              1200.5,
		"nested":              map[string]any{"deep": []any{map[string]any{"pan": "6011-0009-9013-9424"}}},
		"short":               "4417",
		"big but not a card?": 1e25,
	}
	if !ValueHasCard(in) {
		t.Fatal("ValueHasCard = false for a value full of card numbers")
	}
	out := Value(in)
	b, _ := json.Marshal(out)
	if HasCard(string(b)) || ValueHasCard(out) {
		t.Errorf("Value left a card number: %s", b)
	}
	for _, want := range []string{`"•••• 1111":"the key is a card"`, `"amount":1200.5`, `"short":"4417"`, `"•••• 9424"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("Value(...) = %s, want it to contain %s", b, want)
		}
	}
	if ValueHasCard(map[string]any{"card_last4": "4417", "amount": 1200.5, "when": "2026-11-28"}) {
		t.Error("ValueHasCard = true for a dispute without a card number")
	}
}

func TestDeepValuesAreBounded(t *testing.T) {
	t.Parallel()
	var v any = "4111111111111111"
	for i := 0; i < 10*MaxDepth; i++ {
		v = []any{v}
	}
	if !ValueHasCard(v) {
		t.Error("ValueHasCard of a value nested past MaxDepth = false, want true (refused)")
	}
	b, _ := json.Marshal(Value(v))
	if HasCard(string(b)) {
		t.Error("Value of a deep value kept the card number")
	}
}

// TestDigitsOfEveryScript checks the assumption digit relies on: Unicode's
// decimal digits come in runs of ten starting at zero.
func TestDigitsOfEveryScript(t *testing.T) {
	t.Parallel()
	check := func(lo, hi, stride uint32) {
		if stride != 1 || (hi-lo+1)%10 != 0 {
			t.Errorf("Nd range %U-%U (stride %d) is not runs of ten", lo, hi, stride)
		}
	}
	for _, r := range unicode.Nd.R16 {
		check(uint32(r.Lo), uint32(r.Hi), uint32(r.Stride))
	}
	for _, r := range unicode.Nd.R32 {
		check(r.Lo, r.Hi, r.Stride)
	}
	for _, zero := range []rune{'0', '٠', '۰', '०', '০', '๐', '０', '𝟎', '𝟘'} {
		for i := rune(0); i < 10; i++ {
			if d, ok := digit(zero + i); !ok || rune(d) != i {
				t.Errorf("digit(%U) = %d, %v; want %d", zero+i, d, ok, i)
			}
		}
	}
	if _, ok := digit('a'); ok {
		t.Error("digit('a') is a digit")
	}
}

// TestLinear checks that the walks cost time in proportion to the input:
// a string of digit groups twice as long takes about twice as many steps
// (measured as allocations, which do not depend on the machine's load).
func TestLinear(t *testing.T) {
	long := func(n int) string { return strings.Repeat("1234 5678 ", n) }
	a := testing.AllocsPerRun(5, func() { _ = String(long(2000)) })
	b := testing.AllocsPerRun(5, func() { _ = String(long(4000)) })
	if b > 2.5*a+10 {
		t.Errorf("allocations for 2x the input: %.0f vs %.0f; want at most about double", b, a)
	}
}

func BenchmarkHasCardNoDigits(b *testing.B) {
	s := "conversation-7f3a9c2e-turn-12"
	for b.Loop() {
		HasCard(s)
	}
}

func BenchmarkHasCard(b *testing.B) {
	s := "card 4111 1111 1111 1111 exp 12/29"
	for b.Loop() {
		HasCard(s)
	}
}

// randomIDs says how many ids of each kind TestRandomIDsAreNoCards draws:
// 10^5 by default, SLOTD_TEST_RANDOM_IDS=1000000 for the long measurement.
func randomIDs(t *testing.T) int {
	n := 100_000
	if v := os.Getenv("SLOTD_TEST_RANDOM_IDS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			t.Fatalf("SLOTD_TEST_RANDOM_IDS=%q: want a count", v)
		}
	}
	return n
}

// crockford is the alphabet of ULIDs.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// ulid is a ULID: 48 bits of milliseconds and 80 random bits, in 26
// characters of Crockford's base32.
func ulid(ms int64, r *rand.Rand) string {
	var b [26]byte
	for i := 9; i >= 0; i-- {
		b[i] = crockford[ms&31]
		ms >>= 5
	}
	for i := 10; i < 26; i++ {
		b[i] = crockford[r.IntN(32)]
	}
	return string(b[:])
}

// Ids are refused when they hold a card number, and masked where shown when
// they hold one or a long run of digits: random ids must never look like
// one. Each kind is drawn randomIDs times; the rate of each is logged.
func TestRandomIDsAreNoCards(t *testing.T) {
	t.Parallel()
	n := randomIDs(t)
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	now := time.Now()
	digits19 := func() string {
		b := []byte(strconv.FormatUint(1e18+r.Uint64N(9e18), 10))
		return string(b)
	}
	kinds := []struct {
		name string
		next func(i int) string
		// cards: the rate of ids HasCard may find a card in; masked: whether
		// String may change them (ids with a run of 13 digits or more).
		cards  float64
		masked bool
	}{
		{"UUIDv4", func(int) string { return uuid.NewString() }, 0, false},
		{"UUIDv7", func(int) string { return uuid.Must(uuid.NewV7()).String() }, 0, false},
		{"UUIDv4 in upper case", func(int) string { return strings.ToUpper(uuid.NewString()) }, 0, false},
		// One in a few million is all digits: a long number, masked.
		{"UUIDv4 without dashes", func(int) string { return strings.ReplaceAll(uuid.NewString(), "-", "") }, 0, true},
		// A ULID has a run of 13 digits about once in a million: masked
		// where shown, as any such run is.
		{"ULID", func(i int) string { return ulid(now.UnixMilli()+int64(i), r) }, 0, true},
		{"nanosecond timestamp", func(i int) string { return "conv-" + strconv.FormatInt(now.UnixNano()+r.Int64N(1e15), 10) }, 0, true},
		{"date and time, microseconds", func(i int) string {
			return now.Add(time.Duration(r.Int64N(1e17))).UTC().Format("2006-01-02 15:04:05.000000")
		}, 0, false},
		{"RFC 3339 time, nanoseconds", func(i int) string {
			return now.Add(time.Duration(r.Int64N(1e17))).UTC().Format(time.RFC3339Nano)
		}, 0, false},
		// Snowflake-like operation ids: milliseconds since 2010-11-04 shifted
		// by 22 bits, 19 digits starting 21 until mid-2027.
		{"19-digit operation id, time-ordered", func(i int) string {
			return strconv.FormatInt((now.UnixMilli()-1288834974657)<<22|r.Int64N(1<<22), 10)
		}, 0, true},
		// Uniformly random 19-digit numbers: a third start as 19-digit cards
		// do (Visa, Diners, Maestro, UnionPay), and one in ten of those is
		// Luhn-valid: such an id is a card number by any reading.
		{"19-digit operation id, random", func(int) string { return digits19() }, 0.04, true},
	}
	for _, k := range kinds {
		cards, masked := 0, 0
		for i := 0; i < n; i++ {
			id := k.next(i)
			if HasCard(id) {
				cards++
			}
			if String(id) != id {
				masked++
			}
			if !k.masked && masked > 0 {
				t.Fatalf("%s %q: masked as %q", k.name, id, String(id))
			}
		}
		rate := float64(cards) / float64(n)
		t.Logf("%s: %d of %d read as card numbers (%.4f%%), %d masked", k.name, cards, n, 100*rate, masked)
		if rate > k.cards {
			t.Errorf("%s: %d of %d read as card numbers, want a rate of at most %g", k.name, cards, n, k.cards)
		}
	}
}

// A UUID-shaped run of hex next to a card number, or spelling one across
// its groups, hides nothing: the card is found and masked.
func TestCardsBesideAndInsideUUIDShapes(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"41111111\u200b11111111-abcd-abcd-abcd-abcdabcdabcd",
		"card ４１１１１１１１11111111-2222-3333-4444-55555555555a",
	} {
		if got := String(s); !strings.Contains(got, "•••• ") {
			t.Errorf("String(%q) = %q, want the card masked", s, got)
		}
	}
	for _, s := range []string{
		"41111111\u200b11111111-abcd-abcd-abcd-abcdabcdabcd",
		"card ４１１１１１１１11111111-2222-3333-4444-55555555555a",
	} {
		if !HasCard(s) {
			t.Errorf("HasCard(%q) = false, want true", s)
		}
	}
}

// idsWithDigits are ids with 13 digits or more and no card-like number:
// each is scanned, and nothing in it masked.
var idsWithDigits = []string{
	"18a3b4c5d6e7f809-slotd-3-0-15/4",
	// Fixed: one random UUID in a few thousand has digit groups that mask
	// as a card's tail.
	"27a9e047-b898-42f2-bb4e-ba6e872d9697",
	"conv-2026-12-01/000123",
	"٣٤٥٦-١٢٣٤-tenant-2026-12-01",
	"at 2026-12-01 10:15:00.123456",
}

// BenchmarkLookAtIDs is what a turn pays to look at ids: HasCard and
// String of each of idsWithDigits.
func BenchmarkLookAtIDs(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, id := range idsWithDigits {
			_, _ = HasCard(id), String(id)
		}
	}
}

// TestLookingAtIDsAllocatesNothing: every turn looks at its ids twice (is
// there a card? what does the log line show?), so an id with digits but no
// card-like number costs no allocation; a scan that met a long number does
// not leave its scratch to the next, and scans at once keep to their own.
func TestLookingAtIDsAllocatesNothing(t *testing.T) {
	long := strings.Repeat("4234 ", 10_000)
	if got := String(long); strings.Contains(got, "4234 4234 4234 4234") {
		t.Fatalf("a long run of groups was not masked: %.40q", got)
	}
	for _, id := range idsWithDigits {
		if String(id) != id || HasCard(id) {
			t.Fatalf("%q: masked as %q, card %v", id, String(id), HasCard(id))
		}
		if n := testing.AllocsPerRun(50, func() { _, _ = HasCard(id), String(id) }); n != 0 {
			t.Errorf("%q: %v allocations to look at it, after a long number was looked at", id, n)
		}
	}
	card := "card 4111 1111 1111 1111, at 2026-12-01 10:15:00.123456"
	done := make(chan string)
	for range 8 {
		go func() {
			got := ""
			for range 500 {
				got = String(card)
				if !HasCard(card) || got != "card "+Masked+"1111, at 2026-12-01 10:15:00.123456" {
					break
				}
			}
			done <- got
		}()
	}
	for range 8 {
		if got := <-done; got != "card "+Masked+"1111, at 2026-12-01 10:15:00.123456" {
			t.Fatalf("concurrent scans: %q", got)
		}
	}
}
