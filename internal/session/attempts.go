package session

import (
	"slices"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/merge"
	"github.com/slotd/slotd/problem"
)

// cap counts attempts: every refused value and every REPAIR counts against
// its slot, an accepted value clears the count, and a slot at its cap hands
// the conversation to a person instead of asking once more.
func (t *turn) cap() {
	s := t.s
	t.valid = validAfter(s.Attempts, t.merged)
	s.Attempts = countAttempts(s.Attempts, t.rejected, t.merged, t.step)
	refused := append(slices.Clone(t.refused), nullErrors(t.c, t.env.Locale, t.nulls, t.report.Missing)...)
	t.problem = turnProblem(t.c, s.Locale, refused, t.step)
	slot := exhausted(t.c, t.in.config.MaxAttempts, s.Attempts)
	if slot == "" || t.step.Action == clarify.Cancelled {
		return
	}
	in := clarify.Input{Contract: t.c, State: s.State, Locale: s.Locale}
	t.step = clarify.Step{Action: clarify.Handoff, Question: &clarify.Question{Slot: slot, Text: clarify.HandoffText(in, slot)}}
	t.problem = clarify.HandoffProblem(t.c, s.Locale, slot, s.Attempts[slot], t.problem)
	s.Status, s.EndedAt, s.Open = Failed, t.in.req.Now, false
}

// validAfter lists the slots this turn gave a value, with the attempts it
// took: the failed ones counted so far, plus this one.
func validAfter(attempts map[string]int, merged []merge.Change) []ValidAfter {
	var out []ValidAfter
	for _, ch := range merged {
		switch ch.Decision {
		case merge.Filled, merge.Overwritten, merge.Pending:
			out = append(out, ValidAfter{Slot: ch.Slot, Attempts: attempts[ch.Slot] + 1})
		}
	}
	return out
}

// countAttempts is the per-slot count of failed attempts after this turn.
func countAttempts(prev map[string]int, rejected []string, merged []merge.Change, step clarify.Step) map[string]int {
	out := make(map[string]int, len(prev)+len(rejected))
	for k, v := range prev {
		out[k] = v
	}
	for _, ch := range merged {
		switch ch.Decision {
		case merge.Filled, merge.Overwritten, merge.Pending, merge.Confirmed:
			// A new value was accepted. An unchanged one was not: a model
			// that resends the same broken call keeps counting.
			delete(out, ch.Slot)
		}
	}
	for _, slot := range rejected {
		out[slot]++
	}
	if step.Action == clarify.Repair {
		seen := map[string]bool{}
		for _, v := range step.Violations {
			if slot := contract.SlotOf(v.Pointer); slot != "" && !seen[slot] {
				seen[slot] = true
				out[slot]++
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// exhausted is the first slot, in contract order, whose failed attempts
// reached its cap (x-slotd.max_attempts, else the server's default).
func exhausted(c *contract.Contract, defaultMax int, attempts map[string]int) string {
	names := make([]string, 0, len(attempts))
	for k := range attempts {
		names = append(names, k)
	}
	for _, slot := range c.InOrder(names) {
		max := defaultMax
		if p := c.Property(slot); p != nil && p.MaxAttempts > 0 {
			max = p.MaxAttempts
		}
		if max > 0 && attempts[slot] >= max {
			return slot
		}
	}
	return ""
}

// turnProblem is the problem a turn reports, in the turn's language: refused
// values first, else the rules a REPAIR must satisfy.
func turnProblem(c *contract.Contract, locale string, refused []problem.FieldError, step clarify.Step) *problem.Problem {
	switch {
	case len(refused) > 0:
		return clarify.RefusedProblem(c, locale, refused)
	case step.Action == clarify.Repair:
		return clarify.RepairProblem(c, locale, step.Violations)
	}
	return nil
}
