package mcp

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
)

// The kinds of form slotd shows a user.
const (
	formSlots   = "slots"   // the missing arguments
	formConfirm = "confirm" // yes or no to a summary, a changed value, or going on
)

// form is one elicitation: what to show and how to read the answer.
type form struct {
	kind   string
	fields []string // formSlots: the slots asked, the asked one first
	params *sdk.ElicitParams
}

// formFor is the form that asks the user for what a turn answered with,
// or nil when the answer goes back to the model: READY and the other ends,
// and any question about a sensitive slot, which the protocol forbids
// asking in a form (credentials, payment data) and slotd never shows in
// one.
func formFor(c *contract.Contract, r *slotdv1.TurnResponse) *form {
	q := r.GetQuestion()
	switch r.GetAction() {
	case slotdv1.Action_ACTION_RECONFIRM, slotdv1.Action_ACTION_CONFIRM, slotdv1.Action_ACTION_RESUME:
		if q.GetText() == "" {
			return nil
		}
		return &form{kind: formConfirm, params: &sdk.ElicitParams{
			Mode:            "form",
			Message:         q.GetText(),
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
		}}
	case slotdv1.Action_ACTION_ASK, slotdv1.Action_ACTION_REPAIR:
	default:
		return nil
	}
	asked := c.Property(q.GetSlot())
	if asked == nil || asked.Sensitive {
		return nil
	}
	locale := r.GetSession().GetLocale()
	slots := r.GetSession().GetSlots().AsMap()
	f := &form{kind: formSlots}
	props := map[string]any{}
	for _, name := range append([]string{asked.Name}, r.GetSession().GetMissing()...) {
		p := c.Property(name)
		if p == nil || p.Sensitive || props[name] != nil {
			continue
		}
		text := clarify.AskText(c, locale, slots, name)
		if name == asked.Name {
			text = q.GetText()
		}
		props[name] = fieldSchema(c, p, locale, text)
		f.fields = append(f.fields, name)
	}
	message := q.GetText()
	if reason := refusedText(r.GetProblem()); reason != "" {
		message = reason + "\n" + message
	}
	f.params = &sdk.ElicitParams{
		Mode:    "form",
		Message: message,
		RequestedSchema: map[string]any{
			"type": "object", "properties": props,
			// Only the slot asked about must be answered: the rest the user
			// may not know yet, and they are asked again in their turn.
			"required": []any{asked.Name},
		},
	}
	return f
}

// fieldSchema is a slot as a form field: the flat, primitive schema forms
// take, titled by the slot's label and described by its question.
func fieldSchema(c *contract.Contract, p *contract.Property, locale, ask string) map[string]any {
	s := map[string]any{"title": p.Label(locale, c.DefaultLocale), "description": ask}
	switch {
	case len(p.Enum) > 0:
		// The choices read by their labels (enumNames), the answer is the
		// code; a value without a label reads as itself.
		enum, names := make([]any, len(p.Enum)), make([]any, len(p.Enum))
		for i, v := range p.Enum {
			enum[i], names[i] = v, v
			if l := p.ValueLabel(v, locale, c.DefaultLocale); l != "" {
				names[i] = l
			}
		}
		s["type"], s["enum"] = "string", enum
		if p.HasValueLabels() {
			s["enumNames"] = names
		}
	case p.Type == "boolean" || p.Type == "integer" || p.Type == "number":
		s["type"] = p.Type
	default:
		s["type"] = "string"
		switch p.Format {
		case "date", "date-time", "email", "uri":
			s["format"] = p.Format
		}
	}
	return s
}

// refusedText is why the last value was not accepted, for the form's
// message: the field errors' own words, which slotd writes in the turn's
// language.
func refusedText(p *slotdv1.Problem) string {
	var parts []string
	for _, e := range p.GetErrors() {
		if e.GetMessage() != "" {
			parts = append(parts, e.GetMessage())
		}
	}
	return strings.Join(parts, "; ")
}

// answer is what the user's response to a form does next.
type answer struct {
	args    map[string]any
	confirm *bool
	// stop: the user gave nothing to apply; the question goes back to the
	// model with note.
	stop bool
	note string
}

func (f *form) answer(res *sdk.ElicitResult) answer {
	if res == nil {
		return answer{stop: true, note: "The user did not answer the form."}
	}
	switch f.kind {
	case formConfirm:
		switch res.Action {
		case "accept":
			yes := true
			return answer{confirm: &yes}
		case "decline":
			no := false
			return answer{confirm: &no}
		}
		return answer{stop: true, note: "The user closed the form without answering."}
	}
	switch res.Action {
	case "accept":
		args := map[string]any{}
		for _, name := range f.fields {
			switch v := res.Content[name].(type) {
			case string:
				if strings.TrimSpace(v) != "" {
					args[name] = v
				}
			case float64, bool, json.Number:
				args[name] = v
			}
		}
		if len(args) == 0 {
			return answer{stop: true, note: "The user sent the form empty."}
		}
		return answer{args: args}
	case "decline":
		return answer{stop: true, note: "The user declined to answer in the form."}
	}
	return answer{stop: true, note: "The user closed the form without answering."}
}

// roundState is what a stateless call hands the client with a form, and
// gets back with the user's answer (requestState): the call's
// conversation and turn, the round, and the form's shape. It is the
// client's to change, like every argument; it names nothing the client
// could not name in them.
type roundState struct {
	V      int      `json:"v"`
	Conv   string   `json:"c"`
	Base   string   `json:"b"`
	Round  int      `json:"r"`
	Kind   string   `json:"k"`
	Fields []string `json:"f,omitempty"`
}

func (s roundState) encode() string {
	b, _ := json.Marshal(s)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeState(v string) (roundState, bool) {
	var s roundState
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || json.Unmarshal(b, &s) != nil || s.V != 1 || s.Conv == "" || s.Base == "" ||
		s.Round < 1 || s.Round > MaxRounds || (s.Kind != formSlots && s.Kind != formConfirm) {
		return roundState{}, false
	}
	return s, true
}

// elicitKey names slotd's form among a result's input requests.
const elicitKey = "slotd_form"
