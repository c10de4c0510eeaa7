package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/session"
	"github.com/slotd/slotd/session/memstore"
)

// The direct side of the bench does each turn's database work without
// slotd: pgstore's own Store.Turn (the same statements, the same
// transaction and batches, the same JSON encoding of the state) with a
// commit that the engine made for the same turn of the same dialogue. What
// it leaves out is exactly what slotd adds: gRPC, the conversion of
// arguments, normalizing, merging, deciding and encoding the response.

// template is the engine's commit for one step of a dialogue, and the
// session it was computed from.
type template struct {
	before *session.Session // nil when the conversation had no active session
	commit *session.Commit
}

// recorder is a memory store that keeps the commits it writes.
type recorder struct {
	*memstore.Store
	last template
}

func (r *recorder) Turn(ctx context.Context, key session.Key, turnID string, fn session.TurnFunc) (session.Applied, error) {
	return r.Store.Turn(ctx, key, turnID, func(open []*session.Session) (*session.Commit, error) {
		c, err := fn(open)
		r.last = template{before: only(open), commit: c}
		return c, err
	})
}

// captureTemplates runs each prepared dialogue once through the engine on a memory
// store and keeps every step's commit, checking the actions on the way.
func captureTemplates(ctx context.Context, cat *contract.Catalog, ds []Dialogue) ([][]template, error) {
	rec := &recorder{Store: memstore.New()}
	engine := session.NewEngine(rec, cat, nil)
	out := make([][]template, len(ds))
	for i, d := range ds {
		if cat.Get(d.Tool) == nil {
			return nil, fmt.Errorf("dialogue %s: the contracts lack the tool %s", d.Name, d.Tool)
		}
		for j, st := range d.Steps {
			req := session.TurnRequest{
				ConversationID: "template-" + d.Name, Tool: d.Tool, TurnID: fmt.Sprintf("t%d", j+1),
				Confirmation: st.Confirm, Locale: d.Locale, TimeZone: d.Zone,
			}
			if st.args != nil {
				req.Arguments = st.args.AsMap() // as the gRPC adapter sees them: numbers are float64
			}
			res, err := engine.Turn(ctx, req)
			if err != nil {
				return nil, fmt.Errorf("dialogue %s step %d: %w", d.Name, j+1, err)
			}
			if got := "ACTION_" + string(res.Action); got != st.Want.String() {
				return nil, fmt.Errorf("dialogue %s step %d: the engine answers %s%s, the dialogue expects %s", d.Name, j+1, got, explain(res), st.Want)
			}
			out[i] = append(out[i], rec.last)
		}
	}
	return out, nil
}

// rebase turns a template commit into the commit of the same step in a live
// conversation: its session ids, versions, key and turn id, with the
// template's data (slots, request, response, changes) as they are.
func rebase(t template, active *session.Session, key session.Key, turnID string, now time.Time) (*session.Commit, error) {
	if (t.before == nil) != (active == nil) {
		return nil, fmt.Errorf("bench: the conversation's session does not match the dialogue (active %v, template %v)", active != nil, t.before != nil)
	}
	ids := map[string]string{}
	var shift int64
	if active != nil {
		ids[t.before.ID] = active.ID
		shift = active.Version - t.before.Version
	}
	id := func(tplID string) string {
		if v, ok := ids[tplID]; ok {
			return v
		}
		v, err := uuid.NewV7()
		if err != nil {
			return uuid.NewString()
		}
		ids[tplID] = v.String()
		return ids[tplID]
	}
	version := func(tplID string, v int64) int64 {
		if t.before != nil && tplID == t.before.ID {
			return v + shift
		}
		return v
	}
	sess := func(s *session.Session) *session.Session {
		c := s.Clone()
		c.ID, c.Key, c.Version = id(s.ID), key, version(s.ID, s.Version)
		c.UpdatedAt = now
		if active != nil && s.ID == t.before.ID {
			c.CreatedAt = active.CreatedAt
		} else {
			c.CreatedAt = now
		}
		if !c.EndedAt.IsZero() {
			c.EndedAt = now
		}
		return c
	}
	out := &session.Commit{}
	for _, s := range t.commit.Ended {
		out.Ended = append(out.Ended, sess(s))
	}
	if s := t.commit.Session; s != nil {
		out.Session = sess(s)
	}
	if tr := t.commit.Turn; tr != nil {
		out.Turn = &session.TurnRecord{ID: turnID, SessionID: id(tr.SessionID), Version: version(tr.SessionID, tr.Version),
			Action: tr.Action, Request: tr.Request, Response: tr.Response, At: now}
	}
	for _, ch := range t.commit.Changes {
		ch.Version = version(ch.SessionID, ch.Version)
		ch.SessionID = id(ch.SessionID)
		if ch.TurnID != "" {
			ch.TurnID = turnID
		}
		ch.At = now
		out.Changes = append(out.Changes, ch)
	}
	return out, nil
}

// explain says what a response asked or refused, by slot names.
func explain(res *session.Result) string {
	out := ""
	if q := res.Question; q != nil && q.Slot != "" {
		out += " about " + q.Slot
	}
	if p := res.Problem; p != nil {
		for _, fe := range p.Errors {
			out += fmt.Sprintf(" (%s: %s)", fe.Pointer, fe.Message)
		}
	}
	return out
}

// only is the one open session of a conversation of one tool, or nil.
func only(open []*session.Session) *session.Session {
	if len(open) == 0 {
		return nil
	}
	return open[0]
}
