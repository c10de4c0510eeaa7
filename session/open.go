package session

import (
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/merge"
)

// open makes the session the turn works on: a clone of the current one, or
// a new one of the turn's tool; the request's locale and time zone, when it
// names them, become the session's. Slots of a session of another tool that
// the turn ended carry over where their names exist in this contract and
// their values pass its property schema.
func (t *turn) open() {
	req, c := t.in.req, t.c
	if t.s == nil {
		t.s = &Session{
			ID:        t.in.newID,
			Key:       Key{Tenant: req.Tenant, ConversationID: req.ConversationID},
			Tool:      c.Name,
			Status:    Active,
			State:     merge.State{Slots: map[string]any{}},
			Locale:    c.DefaultLocale,
			TimeZone:  c.TimeZone,
			CreatedAt: req.Now,
		}
	} else {
		t.s = t.s.Clone()
	}
	s := t.s
	s.Held = nil
	if req.Locale != "" {
		s.Locale = req.Locale
	}
	if req.TimeZone != "" {
		s.TimeZone = req.TimeZone
	}
	loc := t.in.zones[s.TimeZone]
	if loc == nil {
		loc = c.Location()
	}
	t.env = contract.Env{Now: req.Now, Location: loc, Locale: s.Locale}
	for _, slot := range slotOrder(c, t.carried) {
		if v, fe := c.Normalize(slot, t.carried[slot], t.env); fe == nil {
			s.State.Slots[slot] = v
			t.changes = append(t.changes, merge.Change{Slot: slot, New: v, Decision: merge.Carried})
		}
	}
}
