package session

import (
	"time"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/merge"
)

// open makes the session the turn works on: a clone of the tool's open
// one, or a new one; the request's locale and time zone, when it names
// them, become the session's. A new session takes the slots of the other
// open sessions (the most recently used first) whose names exist in this
// contract and whose values pass its property schema; an exclusive tool
// ends the others; past the cap the least recently used ones end. Coming
// back to a session after other tools were used is said.
func (t *turn) open() {
	req, c := t.in.req, t.c
	fresh := t.s == nil
	if fresh {
		t.s = &Session{
			ID:        t.in.newID(),
			Key:       Key{Tenant: req.Tenant, ConversationID: req.ConversationID},
			Tool:      c.Name,
			Status:    Active,
			State:     merge.State{Slots: map[string]any{}},
			Locale:    c.DefaultLocale,
			TimeZone:  c.TimeZone,
			CreatedAt: req.Now,
			Open:      true,

			ContractVersion: c.Version,
		}
	} else {
		t.s = t.s.Clone()
		t.resumed = t.cameBack()
	}
	s := t.s
	s.Held = nil
	if s.ContractVersion == "" {
		s.ContractVersion = c.Version // a session stored before versions were kept
	}
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
	if fresh {
		t.carry()
		t.makeRoom()
	}
}

// resumeGap separates the calls of one model message from the turns of
// another: parallel tool calls land within it, a user's digression does not.
const resumeGap = 2 * time.Second

// cameBack reports whether another open session was used after this one's
// last turn and before the model message this turn is of: a turn on
// another tool more than resumeGap after this session's last turn, and
// more than resumeGap before this one. Both the other session's last use
// and the one before it count, so that a call of this same message that
// used it again a moment ago does not hide the digression.
func (t *turn) cameBack() bool {
	last, now := t.s.lastUse(), t.in.req.Now
	away := func(u Use) bool {
		in := func(at time.Time) bool { return at.Sub(last) > resumeGap && now.Sub(at) > resumeGap }
		// The previous turn counts too: a call of this same model message
		// may have used the tool again a moment ago.
		return u.Tool != t.s.Tool && (in(u.At) || in(u.Previous))
	}
	for _, o := range t.others {
		if away(o.Use()) {
			return true
		}
	}
	// A tool used and finished in between (a balance looked up and its
	// backend call completed) has left the open set, and counts the same.
	return t.in.left.Tool != "" && away(t.in.left)
}

// carry fills a new session from the other open sessions' slots.
func (t *turn) carry() {
	if !t.c.CarryOver {
		return
	}
	s := t.s
	for _, o := range t.others {
		for _, slot := range slotOrder(t.c, o.State.Slots) {
			if _, ok := s.State.Slots[slot]; ok {
				continue
			}
			if v, fe := t.c.Normalize(slot, o.State.Slots[slot], t.env); fe == nil {
				s.State.Slots[slot] = v
				t.changes = append(t.changes, merge.Change{Slot: slot, New: v, Decision: merge.Carried})
			}
		}
	}
}

// makeRoom ends the other open sessions an exclusive tool replaces, or the
// least recently used ones past the cap, and says which.
func (t *turn) makeRoom() {
	keep := len(t.others)
	if t.c.Exclusive {
		keep = 0
	} else if max := t.in.config.MaxOpenSessions; max > 0 && keep > max-1 {
		keep = max - 1
	}
	if keep == len(t.others) {
		return
	}
	var closed []*contract.Contract
	for _, o := range t.others[keep:] {
		t.end(o, Abandoned)
		if oc := t.in.contracts.Get(o.Tool); oc != nil {
			closed = append(closed, oc)
		}
	}
	t.others = t.others[:keep]
	t.notices = append(t.notices, clarify.ClosedText(t.c, t.s.Locale, closed))
}
