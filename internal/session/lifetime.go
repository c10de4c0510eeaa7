package session

import (
	"slices"
	"time"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/merge"
	"github.com/slotd/slotd/problem"
)

// lifetime decides, with the turn's clock, what becomes of the tool's open
// session: one that ended outside a turn makes way (said so when it expired
// or was reset); past its ttl it expires and a new one starts (said so);
// past stale_after the user is asked whether to go on, and the answer to
// that question comes here too. The conversation's other open sessions stay
// as they are: a turn on one tool never ends another's session.
func (t *turn) lifetime() error {
	req, c := t.in.req, t.in.contract
	t.args, t.confirm = req.Arguments, req.Confirmation
	var s *Session
	for _, o := range t.in.open {
		switch {
		case o.Tool == c.Name:
			s = o
		case o.Status == Active:
			t.others = append(t.others, o)
		}
	}
	slices.SortFunc(t.others, func(a, b *Session) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	if s != nil && s.Status != Active {
		switch s.Status {
		case Expired:
			t.notices = append(t.notices, clarify.Notice(c, turnLocale(req, s, c), "expired"))
		case Reset:
			t.notices = append(t.notices, clarify.Notice(c, turnLocale(req, s, c), "closed"))
		}
		t.see(s)
		s = nil
	}
	if s != nil {
		if _, ttl := lifetimes(t.in.contracts, t.in.config, s.Tool); ttl > 0 && req.Now.Sub(s.UpdatedAt) >= ttl {
			t.end(s, Expired)
			t.notices = append(t.notices, clarify.Notice(c, turnLocale(req, s, c), "expired"))
			s = nil
		}
	}
	// A session that goes on is bounded; one that just ended is not held
	// to its length.
	if s != nil && s.Version >= MaxTurnsPerSession {
		return tooLong()
	}
	t.s = s
	if s != nil {
		return t.staleness()
	}
	return nil
}

// staleness handles a session that goes on: the answer to "shall we go
// on?" (the held arguments come back, with this turn's on top, within the
// bounds of one request), or a session idle past stale_after.
func (t *turn) staleness() error {
	s, req := t.s, t.in.req
	staleAfter, _ := lifetimes(t.in.contracts, t.in.config, s.Tool)
	switch {
	case s.LastAction == string(clarify.Resume):
		t.args = mergeArgs(s.Held, t.args)
		if err := checkArgs(t.args); err != nil {
			return err
		}
		switch {
		case t.confirm == nil:
			t.resume = true
		case !*t.confirm:
			t.end(s, Reset)
			t.notices = append(t.notices, clarify.Notice(t.c, turnLocale(req, s, t.c), "restarted"))
			t.s = nil
		}
		t.confirm = nil // consumed by the resume question
	case staleAfter > 0 && req.Now.Sub(s.UpdatedAt) >= staleAfter:
		t.resume = true
	}
	return nil
}

// end ends s within the turn's commit and reports it: the turn says so, so
// the session is no longer open.
func (t *turn) end(s *Session, status Status) {
	ended := endCommit(t.in.contracts, s, status, t.in.req.Now)
	ended.Ended[0].Open = false
	t.commit.Ended = append(t.commit.Ended, ended.Ended...)
	t.commit.Changes = append(t.commit.Changes, ended.Changes...)
	t.ended = append(t.ended, ended.Ended[0])
}

// see reports a session that ended outside a turn: said once, it is no
// longer open.
func (t *turn) see(s *Session) {
	seen := s.Clone()
	seen.Version++
	seen.Open = false
	t.commit.Ended = append(t.commit.Ended, seen)
	if s.Status == Expired || s.Status == Reset {
		t.ended = append(t.ended, seen)
	}
}

// endCommit is the commit that ends s with status: every slot it held is
// recorded as cleared, so no value changes without a history record.
func endCommit(contracts *contract.Catalog, s *Session, status Status, now time.Time) *Commit {
	out := s.Clone()
	out.Status, out.EndedAt = status, now
	out.Version++
	commit := &Commit{Ended: []*Session{out}}
	c := contracts.Get(s.Tool)
	for _, slot := range slotOrder(c, s.State.Slots) {
		commit.Changes = append(commit.Changes, ChangeRecord{
			SessionID: s.ID, Version: out.Version, Slot: slot, Old: shown(c, slot, s.State.Slots[slot]), Decision: merge.Cleared, At: now,
		})
	}
	return commit
}

// lifetimes are the tool's stale_after and ttl, or the server's defaults.
func lifetimes(contracts *contract.Catalog, d Config, tool string) (staleAfter, ttl time.Duration) {
	staleAfter, ttl = d.StaleAfter, d.TTL
	if c := contracts.Get(tool); c != nil {
		if c.StaleAfter > 0 {
			staleAfter = c.StaleAfter
		}
		if c.TTL > 0 {
			ttl = c.TTL
		}
	}
	return staleAfter, ttl
}

// turnLocale is the locale a turn speaks: the request's, else the
// session's, else the contract's default.
func turnLocale(req TurnRequest, s *Session, c *contract.Contract) string {
	switch {
	case req.Locale != "":
		return req.Locale
	case s != nil && s.Locale != "":
		return s.Locale
	}
	return c.DefaultLocale
}

// mergeArgs lays b's keys over a's; a null in b does not hide a value in a.
func mergeArgs(a, b map[string]any) map[string]any {
	if len(a) == 0 {
		return b
	}
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if _, ok := out[k]; ok && contract.IsEmpty(v) {
			continue
		}
		out[k] = v
	}
	return out
}

func tooLong() error { return problem.TooManyTurns(MaxTurnsPerSession) }
