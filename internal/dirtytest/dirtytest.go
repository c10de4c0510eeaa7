// Package dirtytest makes the dirty strings tests feed what slotd writes
// out (log lines, JSON): the languages slotd's users write in, card
// numbers, and whatever JSON escapes, or might.
package dirtytest

import (
	"math/rand/v2"
	"strings"
)

// Pieces are what the strings are made of.
var Pieces = []string{
	"", "a", "chat-42", "bank.open_dispute", "Оспорить операцию", "Привіт, як справи?", "ґанок, їжак, є", "Ёё",
	"🙂", "👩‍👩‍👧", "🇺🇦", `"`, `\`, `\"`, `\u0041`, "\n", "\r", "\r\n", "\t", "\x00", "\x01", "\x1f", "\x7f", " ",
	"<script>", "&amp;", "<>&", "\u2028", "\u2029", "\u202a", "\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80",
	"\ufffd", "\u00a0", "e\u0301", "•••• 1111", "4111 1111 1111 1111", "4276160012345678", "'", "/", "%s", "{}",
}

// String is a random string of Pieces, now and then after random bytes or
// a long id of up to longest repeats of six bytes.
func String(r *rand.Rand, longest int) string {
	var b strings.Builder
	switch r.IntN(20) {
	case 0:
		for range r.IntN(40) {
			b.WriteByte(byte(r.Uint32()))
		}
	case 1:
		b.WriteString(strings.Repeat("id-Ж\"", 1+r.IntN(longest)))
	}
	for range r.IntN(6) {
		b.WriteString(Pieces[r.IntN(len(Pieces))])
	}
	return b.String()
}
