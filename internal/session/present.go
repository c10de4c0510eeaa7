package session

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/merge"
	"github.com/slotd/slotd/problem"
)

// present is the one place that masks and shapes what leaves the engine:
// the response, the history's records of the turn's changes, and the
// request as the history keeps it. Values of slots marked x-slotd.sensitive
// are masked and card-like numbers cut to their last four digits
// everywhere; only READY's arguments carry the values as they are, since
// the backend call needs them, and CONFIRM's carry them but the sensitive
// ones.
//
// It first stamps the session with the turn, so that what it shows is the
// session as the turn leaves it.
func (t *turn) present() *Result {
	s, c, req := t.s, t.c, t.in.req
	s.Version++
	if s.Version > 1 {
		s.PreviousUse = s.lastUse()
	}
	s.UpdatedAt, s.LastUse = req.Now, req.Now
	s.LastAction = string(t.step.Action)
	res := &Result{Action: t.step.Action, Question: shownQuestion(c, t.step.Question), Problem: t.problem,
		TurnID: req.TurnID, Resumed: t.resumed, Migration: t.migration}
	for _, ch := range t.changes {
		res.Changes = append(res.Changes, Change{Change: shownChange(c, ch), Message: clarify.ChangeMessage(c, s.Locale, ch)})
	}
	switch t.step.Action {
	case clarify.Ready:
		res.Arguments = copySlots(s.State.Slots)
		res.IdempotencyKey = t.key
	case clarify.Confirm:
		res.Arguments = copySlots(s.State.Slots)
		for k := range res.Arguments {
			if p := c.Property(k); p != nil && p.Sensitive {
				res.Arguments[k] = clarify.Masked
			}
		}
	}
	for _, e := range t.ended {
		res.Ended = append(res.Ended, viewFor(t.in.contracts, e))
	}
	if len(res.Ended) > 0 {
		res.Previous = &res.Ended[0]
	}
	notices := t.notices
	if t.resumed {
		in := clarify.Input{Contract: c, State: s.State, Locale: s.Locale}
		notices = append(notices, clarify.ResumedText(in, t.report.Missing))
	}
	res.Notice = strings.Join(notices, " ")
	res.OpenSessions = openSessions(t.in.contracts, t.others)
	if res.Problem != nil {
		res.Problem.Instance = "/sessions/" + s.ID + "/turns/" + problem.Redact(req.TurnID)
	}
	missing := t.report.Missing
	if s.Status != Active {
		missing = nil
	}
	res.Session = viewOf(s, c, missing)
	t.request = redactRequest(req, c)
	return res
}

// openSessions are the other open sessions as a turn reports them.
func openSessions(contracts *contract.Catalog, others []*Session) []OpenSession {
	var out []OpenSession
	for _, o := range others {
		out = append(out, OpenSession{Tool: o.Tool, SessionID: o.ID, Missing: missingOf(contracts, o),
			LastAction: clarify.Action(o.LastAction), UpdatedAt: o.UpdatedAt})
	}
	return out
}

// records are the history's records of the turn's changes, masked as the
// response shows them: shown are the response's changes, present's
// masking of the turn's changes, one for one.
func (t *turn) records(shown []Change) []ChangeRecord {
	s, req := t.s, t.in.req
	out := make([]ChangeRecord, 0, len(shown))
	for i, ch := range shown {
		out = append(out, ChangeRecord{SessionID: s.ID, Version: s.Version, TurnID: req.TurnID,
			Slot: ch.Slot, Old: ch.Old, New: ch.New, Decision: ch.Decision, At: req.Now})
		if i < len(t.notes) {
			out[i].Note = t.notes[i]
		}
	}
	return out
}

func shownQuestion(c *contract.Contract, q *clarify.Question) *clarify.Question {
	if q != nil {
		q.Old, q.New = shown(c, q.Slot, q.Old), shown(c, q.Slot, q.New)
	}
	return q
}

// shown is a slot value as responses, texts and the history show it:
// masked for a slot marked x-slotd.sensitive, card-like numbers cut to their
// last four digits. Only READY and CONFIRM arguments carry the values as
// they are (CONFIRM with sensitive values masked), since the backend call
// needs them.
func shown(c *contract.Contract, slot string, v any) any {
	if v == nil {
		return nil
	}
	if c != nil {
		if p := c.Property(slot); p != nil && p.Sensitive {
			return clarify.Masked
		}
	}
	return problem.RedactValue(v)
}

// shownChange is a change as responses and the history show it; a refused
// value is shown as received, cut and masked.
func shownChange(c *contract.Contract, ch merge.Change) merge.Change {
	ch.Old = shown(c, ch.Slot, ch.Old)
	if ch.Decision == merge.Rejected {
		ch.New = receivedValue(c, ch.Slot, ch.New)
	} else {
		ch.New = shown(c, ch.Slot, ch.New)
	}
	return ch
}

// receivedValue is a refused value as the response and the history keep it:
// the JSON value received, masked for a sensitive slot, card-like numbers cut
// to their last four digits, long strings shortened.
func receivedValue(c *contract.Contract, slot string, raw any) any {
	if p := c.Property(slot); p != nil && p.Sensitive {
		return clarify.Masked
	}
	if s, ok := raw.(string); ok && len(s) > 200 {
		raw = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return problem.RedactValue(raw)
}

// viewFor is a session as the orchestrator sees it, with its missing slots
// when it is active.
func viewFor(contracts *contract.Catalog, s *Session) View {
	return viewOf(s, contracts.Get(s.Tool), missingOf(contracts, s))
}

// missingOf is the slots an active session still needs.
func missingOf(contracts *contract.Catalog, s *Session) []string {
	if c := contracts.Get(s.Tool); c != nil && s.Status == Active {
		return c.Check(s.State.Slots).Missing
	}
	return nil
}

func viewOf(s *Session, c *contract.Contract, missing []string) View {
	slots := make(map[string]any, len(s.State.Slots))
	for k, x := range s.State.Slots {
		slots[k] = shown(c, k, x)
	}
	v := View{
		ID: s.ID, ConversationID: s.Key.ConversationID, Tool: s.Tool, Status: s.Status,
		Version: s.Version, Slots: slots, Missing: missing,
		Locale: s.Locale, TimeZone: s.TimeZone, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, EndedAt: s.EndedAt,
		Attempts: s.Attempts, ContractVersion: s.ContractVersion,
	}
	for _, slot := range slotOrder(c, s.State.Pending) {
		v.Pending = append(v.Pending, shownChange(c, merge.Change{Slot: slot, Old: s.State.Slots[slot], New: s.State.Pending[slot], Decision: merge.Pending}))
	}
	return v
}

// redactRequest is the request as the history keeps it: sensitive slots
// masked, card-like numbers cut to their last four digits.
func redactRequest(req TurnRequest, c *contract.Contract) TurnRequest {
	out := req
	out.Arguments = make(map[string]any, len(req.Arguments))
	for k, v := range req.Arguments {
		if p := c.Property(k); p != nil && p.Sensitive {
			out.Arguments[k] = "•••"
			continue
		}
		out.Arguments[k] = problem.RedactValue(v)
	}
	return out
}

// slotOrder lists a map's slots in the contract's order, or by name when the
// contract is gone from the catalog.
func slotOrder(c *contract.Contract, m map[string]any) []string {
	names := slices.Collect(maps.Keys(m))
	if c != nil {
		return c.InOrder(names)
	}
	sort.Strings(names)
	return names
}

func copySlots(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
