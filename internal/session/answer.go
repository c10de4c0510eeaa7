package session

import (
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/merge"
)

// answer applies the user's yes or no to the last question: a
// re-confirmation resolves the first pending change; an approval approves
// the arguments shown (their idempotency key), a refusal is remembered for
// decide.
func (t *turn) answer() {
	if t.confirm == nil {
		return
	}
	s := t.s
	if pending := slotOrder(t.c, s.State.Pending); len(pending) > 0 {
		var ch []merge.Change
		s.State, ch = merge.Resolve(s.State, pending[0], *t.confirm)
		t.changes = append(t.changes, ch...)
		return
	}
	if s.LastAction == string(clarify.Confirm) {
		if *t.confirm {
			s.ApprovedKey = idempotencyKey(s.ID, s.State.Slots)
		} else {
			t.declined = true
		}
	}
}
