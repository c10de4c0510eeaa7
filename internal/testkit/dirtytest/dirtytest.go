// Package dirtytest makes the dirty strings (and turn results made of
// them) tests feed what slotd writes out (log lines, JSON): the languages slotd's users write in, card
// numbers, and whatever JSON escapes, or might.
package dirtytest

import (
	"math/rand/v2"
	"strings"

	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/merge"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/problem"
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

// Decisions are every decision a change may get: merge's constants, kept
// here by hand (add a new one here too).
var Decisions = []merge.Decision{merge.Filled, merge.Unchanged, merge.Overwritten, merge.Pending, merge.IgnoredNull,
	merge.Rejected, merge.Carried, merge.Confirmed, merge.Discarded, merge.Cleared}

// Result is a random turn result as a log line shows it: a session id and
// version (negative too), none to a hundred changes with every decision
// and now and then a made-up one, a question, a problem, the facts; its
// strings are String(r, longest).
func Result(r *rand.Rand, longest int) *session.Result {
	dirty := func() string { return String(r, longest) }
	res := &session.Result{Session: session.View{ID: dirty(), Version: r.Int64() >> r.IntN(64)}, Replayed: r.IntN(2) == 0}
	if r.IntN(3) == 0 {
		res.Session.Version = -res.Session.Version
	}
	n := r.IntN(6)
	if r.IntN(10) == 0 {
		n = r.IntN(100)
	}
	for range n {
		d := Decisions[r.IntN(len(Decisions))]
		if r.IntN(8) == 0 {
			d = merge.Decision(dirty())
		}
		res.Changes = append(res.Changes, session.Change{Change: merge.Change{Slot: dirty(), Decision: d}})
	}
	if r.IntN(2) == 0 {
		res.Question = &clarify.Question{Slot: dirty()}
	}
	if r.IntN(3) == 0 {
		res.Problem = &problem.Problem{Type: dirty(), Errors: make([]problem.FieldError, r.IntN(4))}
	}
	res.Facts.FirstReady, res.Facts.FirstAttempt = r.IntN(3) == 0, r.IntN(2) == 0
	return res
}
