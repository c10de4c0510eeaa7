package session

import (
	"slices"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/merge"
	"github.com/slotd/slotd/problem"
)

// merge normalizes every argument (the before phase) and checks it against
// its own property schema; a refused value is never stored, and reported.
// What fits is merged: nulls never overwrite, irreversible changes wait.
func (t *turn) merge() {
	s := t.s
	normalized, rejected, refused := normalizeArgs(t.c, t.args, t.env)
	for _, fe := range refused {
		slot := contract.SlotOf(fe.Pointer)
		t.changes = append(t.changes, merge.Change{Slot: slot, Old: s.State.Slots[slot], New: t.args[slot], Decision: merge.Rejected})
	}
	state, merged := merge.Apply(s.State, normalized, func(slot string) bool {
		p := t.c.Property(slot)
		return p != nil && p.Irreversible
	})
	s.State = state
	t.changes = append(t.changes, merged...)
	t.merged = merged
	t.rejected, t.refused = append(t.rejected, rejected...), append(t.refused, refused...)
	t.nulls = nullSlots(t.c, t.args)
}

// nullSlots are the contract's slots the arguments named with a JSON null,
// in contract order. Like an empty string, a null changes nothing; unlike
// one, for a required slot that is still empty it gets said (see
// nullErrors).
func nullSlots(c *contract.Contract, raw map[string]any) []string {
	var names []string
	for k, v := range raw {
		if v == nil && c.Property(k) != nil {
			names = append(names, k)
		}
	}
	return c.InOrder(names)
}

// nullErrors are the problems of the nulls for slots the contract requires
// now (conditionally too) that hold nothing: the value arrived as null,
// most likely coerced by a client, and the model is told so rather than
// asked again without a reason. They do not count as attempts: the model
// may have sent what the user said.
func nullErrors(c *contract.Contract, locale string, nulls, missing []string) []problem.FieldError {
	var out []problem.FieldError
	for _, slot := range nulls {
		if slices.Contains(missing, slot) {
			if fe := c.NullError(slot, locale); fe != nil {
				out = append(out, *fe)
			}
		}
	}
	return out
}

// normalizeArgs normalizes the arguments (contract.NormalizeArgs: known
// ones in contract order, slots they imply such as a currency, then unknown
// keys) and turns them into merge arguments in contract order. It returns the
// slots whose value was refused, and why.
func normalizeArgs(c *contract.Contract, raw map[string]any, env contract.Env) ([]merge.Arg, []string, []problem.FieldError) {
	values, errs := c.NormalizeArgs(raw, env)
	names := make([]string, 0, len(raw)+len(values))
	for k := range raw {
		names = append(names, k)
	}
	for k := range values {
		if _, ok := raw[k]; !ok {
			names = append(names, k) // implied by another argument
		}
	}
	var args []merge.Arg
	for _, slot := range c.InOrder(names) {
		if v, ok := values[slot]; ok {
			args = append(args, merge.Arg{Slot: slot, Value: v})
		} else if contract.IsEmpty(raw[slot]) {
			args = append(args, merge.Arg{Slot: slot, Empty: true})
		}
	}
	var rejected []string
	for _, fe := range errs {
		if slot := contract.SlotOf(fe.Pointer); c.Property(slot) != nil {
			rejected = append(rejected, slot)
		}
	}
	return args, rejected, errs
}
