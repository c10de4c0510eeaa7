package console

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/auth"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
)

// The playground sends turns to a tool in a throwaway conversation of the
// playground tenant, on an engine of its own over a memory store with the
// server's contracts: never a real tenant's data, never the database.
const (
	// PlaygroundTenant is the tenant of every playground conversation.
	PlaygroundTenant = "console-playground"
	// maxPlayTurns bounds the playground's memory: past it the store is
	// dropped and begun anew, every playground conversation with it.
	maxPlayTurns = 5000
)

// playground is the engine the playground's turns run on.
type playground struct {
	engine *session.Engine
	slots  *api.SlotService
	admin  *api.AdminService
}

// playEngine is the engine to take a turn on, a fresh one once maxPlayTurns were.
func (c *Console) playEngine() *playground {
	c.play.mu.Lock()
	defer c.play.mu.Unlock()
	if c.play.engine == nil || c.play.turns >= maxPlayTurns {
		e := session.NewEngine(memstore.New(), c.cfg.Engine.Contracts(), session.Config{Clock: c.cfg.Clock})
		c.play.engine, c.play.turns = e, 0
		c.play.slots = api.NewSlotService(e)
		c.play.admin = api.NewAdminService(e, c.cfg.Log, c.cfg.Clock)
	}
	c.play.turns++
	return &playground{engine: c.play.engine, slots: c.play.slots, admin: c.play.admin}
}

type playData struct {
	storyData
	Tools []string
	// Picked is the tool of the form, Conv the playground's conversation.
	Picked, Conv, Args, Confirm, Locale string
	// Answer is the turn's answer.
	Answer *answer
	Turns  int
}

type answer struct {
	Action, Question, Slot, Notice, Problem string
	Allowed                                 []string
}

func (c *Console) playgroundPage(w http.ResponseWriter, r *http.Request, p *page) {
	d := playData{Tools: c.cfg.Engine.Contracts().Names(), Conv: "play-" + token()[:12], Args: "{}", Locale: "en"}
	if len(d.Tools) > 0 {
		d.Picked = d.Tools[0]
	}
	if t := r.URL.Query().Get("tool"); c.cfg.Engine.Contracts().Get(t) != nil {
		d.Picked = t
	}
	p.Nav, p.Data = "contracts", &d
	c.render(w, r, http.StatusOK, "playground", p)
}

// playgroundTurn takes one turn in the playground and shows its answer
// and the conversation's story so far.
func (c *Console) playgroundTurn(w http.ResponseWriter, r *http.Request, p *page) {
	d := playData{Tools: c.cfg.Engine.Contracts().Names(), Picked: r.PostFormValue("tool"), Conv: r.PostFormValue("conversation"),
		Args: r.PostFormValue("arguments"), Confirm: r.PostFormValue("confirmation"), Locale: r.PostFormValue("locale")}
	p.Nav, p.Data = "contracts", &d
	fail := func(key, problem string) {
		p.Error, p.Problem = key, problem
		c.render(w, r, http.StatusBadRequest, "playground", p)
	}
	if !strings.HasPrefix(d.Conv, "play-") || len(d.Conv) > 64 || c.cfg.Engine.Contracts().Get(d.Picked) == nil {
		fail("console.playground.bad", "")
		return
	}
	req := &slotdv1.TurnRequest{ConversationId: d.Conv, Tool: d.Picked, TurnId: "play-" + token()[:16], Locale: d.Locale}
	if strings.TrimSpace(d.Args) != "" {
		var args map[string]any
		dec := json.NewDecoder(strings.NewReader(d.Args))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil || dec.More() {
			fail("console.playground.json", "")
			return
		}
		st, err := structpb.NewStruct(numbers(args).(map[string]any))
		if err != nil {
			fail("console.playground.json", "")
			return
		}
		req.Arguments = st
	}
	switch d.Confirm {
	case "yes":
		req.Confirmation = &slotdv1.Confirmation{Accept: true}
	case "no":
		req.Confirmation = &slotdv1.Confirmation{Accept: false}
	}
	pg := c.playEngine()
	ctx := auth.With(r.Context(), auth.Principal{Tenant: PlaygroundTenant})
	resp, err := pg.slots.Turn(ctx, req)
	if err != nil {
		fail("", c.failure(r.Context(), err))
		return
	}
	a := &answer{Action: strings.ToLower(strings.TrimPrefix(resp.GetAction().String(), "ACTION_")), Notice: resp.GetNotice()}
	if q := resp.GetQuestion(); q != nil {
		a.Question, a.Slot, a.Allowed = q.GetText(), q.GetSlot(), q.GetAllowedValues()
	}
	if pr := resp.GetProblem(); pr != nil {
		a.Problem = strings.TrimSpace(pr.GetTitle() + ": " + pr.GetDetail())
	}
	d.Answer = a
	story, err := buildStory(r, pg.admin, &slotdv1.GetSessionHistoryRequest{Tenant: PlaygroundTenant,
		SessionId: resp.GetSession().GetId()})
	if err == nil {
		d.storyData = story
	}
	d.Turns = len(d.Steps)
	var pretty bytes.Buffer
	if json.Indent(&pretty, []byte(d.Args), "", "  ") == nil {
		d.Args = pretty.String()
	}
	c.render(w, r, http.StatusOK, "playground", p)
}

// numbers turns json.Numbers into float64s, as structpb takes them, and
// leaves every other value as it is.
func numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return v.String()
		}
		return f
	case map[string]any:
		for k, x := range v {
			v[k] = numbers(x)
		}
	case []any:
		for i, x := range v {
			v[i] = numbers(x)
		}
	}
	return v
}
