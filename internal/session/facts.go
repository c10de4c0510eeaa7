package session

import (
	"strings"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/problem"
)

// Marks are what a session's turns have shown so far about the model's
// arguments. They are kept with the session because a turn alone cannot
// tell whether READY is the session's first, or whether an earlier turn
// refused a value.
type Marks struct {
	// Ready: a turn of the session answered READY.
	Ready bool `json:"ready,omitempty"`
	// Flawed: a turn of the session refused a value or answered REPAIR.
	Flawed bool `json:"flawed,omitempty"`
	// Asked is the slot the last turn asked about; "" when it asked none.
	Asked string `json:"asked,omitempty"`
}

// Facts are what one turn showed about the model's arguments, for metrics
// and logs. They are not part of the response: a replayed turn has none.
// Every string in them is a name from the contract (or a fixed word), never
// a value.
type Facts struct {
	// Rejected are the values this turn refused.
	Rejected []Rejection
	// Repaired are the slots a REPAIR's violations point at; RootField
	// for a rule of the whole object.
	Repaired []string
	// Reasked is the slot asked again: the previous turn asked about it too.
	Reasked string
	// FirstReady: the session answered READY for the first time.
	FirstReady bool
	// FirstAttempt: FirstReady, and no turn of the session refused a value
	// or answered REPAIR before.
	FirstAttempt bool
	// HandedOff is the slot whose failed attempts reached the cap, when
	// the turn answered HANDOFF.
	HandedOff string
	// Valid are the slots that took a value this turn, each with the number
	// of attempts it took (failed ones before, plus this one).
	Valid []ValidAfter
}

// ValidAfter is a slot that took a value after Attempts attempts.
type ValidAfter struct {
	Slot     string
	Attempts int
}

// Rejection is one refused value: its slot and the normalizer that stands
// for the slot's kind of value.
type Rejection struct {
	// Slot is the contract's slot, or UnknownArgument.
	Slot string
	// Normalizer is the slot's normalizer chain ("amount", "last4",
	// "date", "enum", ...): the one that refused the value or whose output
	// the property schema refused. SchemaOnly for a slot without one,
	// UnknownArgument for a name the contract lacks.
	Normalizer string
}

// Fixed words in Facts.
const (
	UnknownArgument = "unknown_argument"
	SchemaOnly      = "schema"
	RootField       = "_root"
)

// observe updates the session's marks with a turn's response and returns
// what the turn showed. It runs in finish, before the session is written.
func observe(c *contract.Contract, marks Marks, res *Result) (Marks, Facts) {
	var f Facts
	if p := res.Problem; p != nil {
		switch p.Type {
		case problem.TypeInvalidValue:
			for _, fe := range p.Errors {
				if fe.Input == "null" {
					// A null for an empty required slot is said, not
					// refused: models in strict modes send null for what
					// the user has not said yet, which is no flaw.
					continue
				}
				f.Rejected = append(f.Rejected, rejection(c, contract.SlotOf(fe.Pointer)))
			}
		case problem.TypeRuleViolated:
			for _, fe := range p.Errors {
				slot := contract.SlotOf(fe.Pointer)
				if c.Property(slot) == nil {
					slot = RootField
				}
				f.Repaired = append(f.Repaired, slot)
			}
		}
	}
	if len(f.Rejected) > 0 || res.Action == clarify.Repair {
		marks.Flawed = true
	}
	asked := ""
	if res.Action == clarify.Ask && res.Question != nil {
		asked = res.Question.Slot
		if asked != "" && asked == marks.Asked {
			f.Reasked = asked
		}
	}
	marks.Asked = asked
	if res.Action == clarify.Handoff && res.Question != nil {
		f.HandedOff = res.Question.Slot
	}
	if res.Action == clarify.Ready && !marks.Ready {
		marks.Ready = true
		f.FirstReady, f.FirstAttempt = true, !marks.Flawed
	}
	return marks, f
}

func rejection(c *contract.Contract, slot string) Rejection {
	p := c.Property(slot)
	switch {
	case p == nil:
		return Rejection{Slot: UnknownArgument, Normalizer: UnknownArgument}
	case len(p.Normalizers()) > 0:
		return Rejection{Slot: slot, Normalizer: strings.Join(p.Normalizers(), "+")}
	}
	return Rejection{Slot: slot, Normalizer: SchemaOnly}
}
