package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
)

// The direct side of the bench does each turn's database work without
// slotd: pgstore's own Store.Turn (the same statements, the same
// transaction and batches, the same JSON encoding of the state) with a
// commit that the engine made for the same turn of the same dialogue. What
// it leaves out is exactly what slotd adds: gRPC, the conversion of
// arguments, normalizing, merging, deciding and encoding the response.

// template is the engine's commit for one step of a dialogue, and the
// conversation's open sessions it was computed from.
type template struct {
	open   []*session.Session
	commit *session.Commit
}

// recorder is a memory store that keeps the commits it writes.
type recorder struct {
	*memstore.Store
	last template
}

func (r *recorder) Turn(ctx context.Context, key session.Key, turnID string, fn session.TurnFunc) (session.Applied, error) {
	return r.Store.Turn(ctx, key, turnID, func(cv session.Conversation) (*session.Commit, error) {
		c, err := fn(cv)
		r.last = template{open: cv.Open, commit: c}
		return c, err
	})
}

// captureTemplates runs each prepared dialogue once through the engine on a memory
// store and keeps every step's commit, checking the actions on the way.
func captureTemplates(ctx context.Context, cat *contract.Catalog, ds []Dialogue) ([][]template, error) {
	rec := &recorder{Store: memstore.New()}
	engine := session.NewEngine(rec, cat, session.Config{})
	out := make([][]template, len(ds))
	for i, d := range ds {
		for j, st := range d.Steps {
			if cat.Get(d.tool(j)) == nil {
				return nil, fmt.Errorf("dialogue %s: the contracts lack the tool %s", d.Name, d.tool(j))
			}
			req := session.TurnRequest{
				ConversationID: "template-" + d.Name, Tool: d.tool(j), TurnID: fmt.Sprintf("t%d", j+1),
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
// template's data (slots, request, response, changes) as they are. The
// template's open sessions are the live ones of the same tools.
func rebase(t template, open []*session.Session, key session.Key, turnID string, now time.Time) (*session.Commit, error) {
	if len(open) != len(t.open) {
		return nil, fmt.Errorf("bench: the conversation has %d open sessions, the dialogue %d", len(open), len(t.open))
	}
	live := map[string]*session.Session{} // by template session id
	for _, tpl := range t.open {
		i := slices.IndexFunc(open, func(s *session.Session) bool { return s.Tool == tpl.Tool })
		if i < 0 {
			return nil, fmt.Errorf("bench: the conversation has no open session of %s, as the dialogue has", tpl.Tool)
		}
		live[tpl.ID] = open[i]
	}
	ids := map[string]string{}
	id := func(tplID string) string {
		if s, ok := live[tplID]; ok {
			return s.ID
		}
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
		if s, ok := live[tplID]; ok {
			return v + s.Version - versionOf(t.open, tplID)
		}
		return v
	}
	sess := func(s *session.Session) *session.Session {
		c := s.Clone()
		c.ID, c.Key, c.Version = id(s.ID), key, version(s.ID, s.Version)
		c.UpdatedAt, c.CreatedAt = now, now
		if l, ok := live[s.ID]; ok {
			c.CreatedAt = l.CreatedAt
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

// versionOf is the version of the session id among ss.
func versionOf(ss []*session.Session, id string) int64 {
	for _, s := range ss {
		if s.ID == id {
			return s.Version
		}
	}
	return 0
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
