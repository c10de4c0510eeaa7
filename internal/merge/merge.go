// Package merge decides how a turn's arguments change the slots: nulls and
// empty values never overwrite, the same value is a no-op, a changed
// reversible value is overwritten and reported, and a changed irreversible
// value waits as pending until the user re-confirms it. Nothing changes
// silently: every argument yields a Change.
package merge

import (
	"bytes"
	"encoding/json"
)

// Decision says what a turn did to one slot.
type Decision string

// The decisions, as they appear in responses and in the history.
const (
	Filled      Decision = "FILLED"
	Unchanged   Decision = "UNCHANGED"
	Overwritten Decision = "OVERWRITTEN"
	Pending     Decision = "PENDING"
	IgnoredNull Decision = "IGNORED_NULL"
	Rejected    Decision = "REJECTED"
	Carried     Decision = "CARRIED"
	Confirmed   Decision = "CONFIRMED"
	Discarded   Decision = "DISCARDED"
	Cleared     Decision = "CLEARED"
	// Migrated: a newer contract version took the value over.
	Migrated Decision = "MIGRATED"
)

// Change is one slot's fate in a turn. Old and New are JSON values; New is
// the value received (normalized) even when it was not applied.
type Change struct {
	Slot     string   `json:"slot"`
	Old      any      `json:"old,omitempty"`
	New      any      `json:"new,omitempty"`
	Decision Decision `json:"decision"`
}

// State is a session's slots and the irreversible changes waiting for
// re-confirmation (slot → the new value; the old one is still in Slots).
type State struct {
	Slots   map[string]any `json:"slots"`
	Pending map[string]any `json:"pending,omitempty"`
}

// Clone returns a copy that shares no maps with s.
func (s State) Clone() State {
	out := State{Slots: make(map[string]any, len(s.Slots))}
	for k, v := range s.Slots {
		out.Slots[k] = v
	}
	if len(s.Pending) > 0 {
		out.Pending = make(map[string]any, len(s.Pending))
		for k, v := range s.Pending {
			out.Pending[k] = v
		}
	}
	return out
}

// Arg is one normalized argument of a turn. Empty marks a null or blank
// value, which never overwrites a slot.
type Arg struct {
	Slot  string
	Value any
	Empty bool
}

// Apply merges args, in the order given, into a copy of s. irreversible tells
// which slots must be re-confirmed before a changed value is applied.
func Apply(s State, args []Arg, irreversible func(slot string) bool) (State, []Change) {
	out := s.Clone()
	changes := make([]Change, 0, len(args))
	for _, a := range args {
		old, has := out.Slots[a.Slot]
		pending, waiting := out.Pending[a.Slot]
		switch {
		case a.Empty:
			changes = append(changes, Change{Slot: a.Slot, Old: old, Decision: IgnoredNull})
		case !has:
			out.Slots[a.Slot] = a.Value
			changes = append(changes, Change{Slot: a.Slot, New: a.Value, Decision: Filled})
		case Equal(old, a.Value) && waiting:
			// The user went back to the value the slot holds: the waiting
			// change is dropped, and said so.
			delete(out.Pending, a.Slot)
			changes = append(changes, Change{Slot: a.Slot, Old: old, New: pending, Decision: Discarded})
		case Equal(old, a.Value):
			changes = append(changes, Change{Slot: a.Slot, Old: old, New: a.Value, Decision: Unchanged})
		case irreversible(a.Slot):
			if out.Pending == nil {
				out.Pending = map[string]any{}
			}
			out.Pending[a.Slot] = a.Value
			changes = append(changes, Change{Slot: a.Slot, Old: old, New: a.Value, Decision: Pending})
		default:
			out.Slots[a.Slot] = a.Value
			changes = append(changes, Change{Slot: a.Slot, Old: old, New: a.Value, Decision: Overwritten})
		}
	}
	if len(out.Pending) == 0 {
		out.Pending = nil
	}
	return out, changes
}

// Resolve applies (accept) or drops (decline) the pending change of one
// slot: the one the user was asked to re-confirm.
func Resolve(s State, slot string, accept bool) (State, []Change) {
	v, ok := s.Pending[slot]
	if !ok {
		return s, nil
	}
	out := s.Clone()
	delete(out.Pending, slot)
	if len(out.Pending) == 0 {
		out.Pending = nil
	}
	old := out.Slots[slot]
	if accept {
		out.Slots[slot] = v
		return out, []Change{{Slot: slot, Old: old, New: v, Decision: Confirmed}}
	}
	return out, []Change{{Slot: slot, Old: old, New: v, Decision: Discarded}}
}

// Equal compares two JSON values by their canonical encoding, so that 2 and
// 2.0, or maps with keys in another order, are the same value.
func Equal(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
