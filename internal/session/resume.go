package session

import (
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/merge"
)

// holdForResume answers RESUME: the session was idle past stale_after, so
// instead of silently going on the turn shows what the session holds and
// asks; its arguments are held, not applied, until the answer. A full card
// number is refused now, not held: the session keeps none.
func (t *turn) holdForResume() {
	s := t.s.Clone()
	if t.in.req.Locale != "" {
		s.Locale = t.in.req.Locale
	}
	if sc := t.in.contracts.Get(s.Tool); sc != nil {
		t.c = sc
	}
	held, refused := map[string]any{}, map[string]any{}
	for k, v := range t.args {
		if t.c.HoldsCard(k, v) {
			refused[k] = v
		} else {
			held[k] = v
		}
	}
	s.Held = held
	t.s = s
	t.resumed = t.cameBack()
	if len(refused) > 0 {
		_, _, t.refused = normalizeArgs(t.c, refused, contract.Env{Now: t.in.req.Now, Locale: s.Locale})
		for _, fe := range t.refused {
			slot := contract.SlotOf(fe.Pointer)
			t.changes = append(t.changes, merge.Change{Slot: slot, Old: s.State.Slots[slot], New: refused[slot], Decision: merge.Rejected})
		}
		t.problem = turnProblem(t.c, s.Locale, t.refused, clarify.Step{})
	}
	in := clarify.Input{Contract: t.c, State: s.State, Locale: s.Locale}
	t.step = clarify.Step{Action: clarify.Resume, Question: &clarify.Question{Text: clarify.ResumeText(in)}}
	t.report = t.c.Check(s.State.Slots)
}
