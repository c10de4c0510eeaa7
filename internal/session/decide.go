package session

import (
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/merge"
)

// decide picks the next step (clarify.Decide). The idempotency key of the
// arguments as they now stand answers both "were these approved?" and
// READY; a turn that needs it for neither does not make it. A "no" to the
// final approval with nothing changed cancels; an approval answers one
// CONFIRM: a new summary needs a new "yes", and a "no" withdraws any
// earlier one.
func (t *turn) decide() {
	s := t.s
	t.report = t.c.Check(s.State.Slots)
	t.step = clarify.Decide(clarify.Input{
		Contract: t.c,
		State:    s.State,
		Report:   t.report,
		Rejected: t.rejected,
		Approved: s.ApprovedKey != "" && s.ApprovedKey == t.slotsKey(),
		Locale:   s.Locale,
	})
	if t.step.Action == clarify.Ready {
		t.slotsKey()
	}
	if t.declined && !changedSlots(t.merged) {
		t.step = clarify.Step{Action: clarify.Cancelled, Question: &clarify.Question{Text: clarify.Notice(t.c, s.Locale, "cancelled")}}
		s.Status, s.EndedAt, s.Open = Cancelled, t.in.req.Now, false
	}
	if t.declined || t.step.Action == clarify.Confirm {
		s.ApprovedKey = ""
	}
}

// slotsKey is the idempotency key of the slots as they stand, made once.
func (t *turn) slotsKey() string {
	if t.key == "" {
		t.key = idempotencyKey(t.s.ID, t.s.State.Slots)
	}
	return t.key
}

// changedSlots reports whether the arguments changed any slot, or wait to.
func changedSlots(changes []merge.Change) bool {
	for _, ch := range changes {
		switch ch.Decision {
		case merge.Filled, merge.Overwritten, merge.Pending:
			return true
		}
	}
	return false
}
