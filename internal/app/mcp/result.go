package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/redact"
	"github.com/slotd/slotd/problem"
)

// member is one member of a turn's structured result: its name, its JSON
// Schema in the tool's outputSchema, and how it is read from the response.
// A read that gives a zero value ("", nil, an empty list) leaves the member
// out. A new TurnResponse field is one line here.
type member struct {
	name   string
	schema map[string]any
	get    func(r *slotdv1.TurnResponse) any
}

var turnMembers = []member{
	{"action", enumSchema("The next step; the text content says what to do.", actionNames...), func(r *slotdv1.TurnResponse) any { return actionName(r.GetAction()) }},
	{"conversation_id", strSchema("The conversation this call belongs to."), func(r *slotdv1.TurnResponse) any { return r.GetSession().GetConversationId() }},
	{"question", strSchema("What to ask or tell the user, in the conversation's language."), func(r *slotdv1.TurnResponse) any { return r.GetQuestion().GetText() }},
	{"slot", strSchema("The argument asked about."), func(r *slotdv1.TurnResponse) any { return r.GetQuestion().GetSlot() }},
	{"allowed_values", listSchema("The values the asked argument accepts."), func(r *slotdv1.TurnResponse) any { return r.GetQuestion().GetAllowedValues() }},
	{"format", strSchema("The form the asked argument expects."), func(r *slotdv1.TurnResponse) any { return r.GetQuestion().GetFormat() }},
	{"old", anySchema("RECONFIRM: the value the argument holds."), func(r *slotdv1.TurnResponse) any { return valueOf(r.GetQuestion().GetOld()) }},
	{"new", anySchema("RECONFIRM: the value waiting for the user's yes."), func(r *slotdv1.TurnResponse) any { return valueOf(r.GetQuestion().GetNew()) }},
	{"missing", listSchema("Required arguments still missing, in order."), func(r *slotdv1.TurnResponse) any { return r.GetSession().GetMissing() }},
	{"changes", changesSchema, func(r *slotdv1.TurnResponse) any { return changesOf(r.GetChanges()) }},
	{"arguments", objSchema("READY (and CONFIRM): the normalized arguments for the backend call."), func(r *slotdv1.TurnResponse) any { return structOf(r.GetArguments()) }},
	{"idempotency_key", strSchema("READY: send it with the backend call, then to slotd_complete."), func(r *slotdv1.TurnResponse) any { return r.GetIdempotencyKey() }},
	{"problem", problemSchema, func(r *slotdv1.TurnResponse) any { return api.ProblemOf(r.GetProblem()) }},
	{"notice", strSchema("Something to tell the user about the conversation itself."), func(r *slotdv1.TurnResponse) any { return r.GetNotice() }},
	{"turn_id", strSchema("The turn this result answers."), func(r *slotdv1.TurnResponse) any { return r.GetTurnId() }},
	{"open_sessions", openSessionsSchema, func(r *slotdv1.TurnResponse) any { return openSessionsOf(r.GetOpenSessions()) }},
	{"resumed", boolSchema("The conversation came back to this tool after others were used; tell the user the notice."), func(r *slotdv1.TurnResponse) any { return r.GetResumed() }},
}

// openSessionsSchema lists the conversation's other open tools.
var openSessionsSchema = map[string]any{
	"type":        "array",
	"description": "The conversation's other unfinished tools, parked; call one again to go on with it.",
	"items": map[string]any{"type": "object", "properties": map[string]any{
		"tool": map[string]any{"type": "string"}, "missing": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"last_action": map[string]any{"type": "string"},
	}},
}

func openSessionsOf(os []*slotdv1.OpenSession) any {
	var out []any
	for _, o := range os {
		out = append(out, map[string]any{"tool": o.GetTool(), "missing": o.GetMissing(), "last_action": actionName(o.GetLastAction())})
	}
	return out
}

// actionNames are the names of the actions, in the order the proto
// declares them.
var actionNames = func() []string {
	var out []string
	values := slotdv1.Action(0).Descriptor().Values()
	for i := range values.Len() {
		if n := actionName(slotdv1.Action(values.Get(i).Number())); n != "" {
			out = append(out, n)
		}
	}
	return out
}()

func actionName(a slotdv1.Action) string {
	if a == slotdv1.Action_ACTION_UNSPECIFIED {
		return ""
	}
	return strings.TrimPrefix(a.String(), "ACTION_")
}

// turnOutputSchema is the outputSchema of every contract's tool. It keeps
// to the keywords of JSON Schema draft-07, which clients validate with.
func turnOutputSchema() map[string]any {
	props := map[string]any{}
	for _, m := range turnMembers {
		props[m.name] = m.schema
	}
	return map[string]any{"type": "object", "properties": props, "required": []any{"conversation_id"}}
}

// turnContent is the structured result of a turn.
func turnContent(r *slotdv1.TurnResponse) map[string]any {
	out := map[string]any{}
	for _, m := range turnMembers {
		if v := m.get(r); !zero(v) {
			out[m.name] = v
		}
	}
	return out
}

func zero(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case []string:
		return len(t) == 0
	case []any:
		return len(t) == 0
	case map[string]any:
		return t == nil
	case *problem.Problem:
		return t == nil
	case int32:
		return t == 0
	case int64:
		return t == 0
	case bool:
		return !t
	}
	return false
}

func boolSchema(description string) map[string]any {
	return map[string]any{"type": "boolean", "description": description}
}

func strSchema(d string) map[string]any { return map[string]any{"type": "string", "description": d} }
func anySchema(d string) map[string]any { return map[string]any{"description": d} }
func objSchema(d string) map[string]any { return map[string]any{"type": "object", "description": d} }
func listSchema(d string) map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": d}
}

func enumSchema(d string, values ...string) map[string]any {
	enum := make([]any, len(values))
	for i, v := range values {
		enum[i] = v
	}
	return map[string]any{"type": "string", "enum": enum, "description": d}
}

var changesSchema = map[string]any{
	"type":        "array",
	"description": "What this call did to each argument; tell the user every message.",
	"items": map[string]any{"type": "object", "properties": map[string]any{
		"slot": map[string]any{"type": "string"}, "old": map[string]any{}, "new": map[string]any{},
		"decision": map[string]any{"type": "string"}, "message": map[string]any{"type": "string"},
	}},
}

// problemSchema is an RFC 9457 problem with slotd's members.
var problemSchema = map[string]any{
	"type":        "object",
	"description": "RFC 9457: why a value was not accepted or what a rule needs; for a failure, whether a retry is safe.",
	"properties": map[string]any{
		"type": map[string]any{"type": "string"}, "title": map[string]any{"type": "string"}, "status": map[string]any{"type": "integer"},
		"detail": map[string]any{"type": "string"}, "retryable": map[string]any{"type": "boolean"},
		"retry_after_seconds": map[string]any{"type": "integer"}, "owner_action_required": map[string]any{"type": "boolean"},
		"errors": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
			"pointer": map[string]any{"type": "string"}, "input": map[string]any{"type": "string"}, "message": map[string]any{"type": "string"},
			"allowed_values": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, "format": map[string]any{"type": "string"},
		}}},
	},
}

func valueOf(v *structpb.Value) any {
	if v == nil {
		return nil
	}
	return v.AsInterface()
}

func structOf(s *structpb.Struct) any {
	if s == nil {
		return nil
	}
	return s.AsMap()
}

func changesOf(cs []*slotdv1.Change) any {
	var out []any
	for _, c := range cs {
		m := map[string]any{"slot": c.GetSlot(), "decision": strings.TrimPrefix(c.GetDecision().String(), "DECISION_")}
		if v := valueOf(c.GetOld()); v != nil {
			m["old"] = v
		}
		if v := valueOf(c.GetNew()); v != nil {
			m["new"] = v
		}
		if c.GetMessage() != "" {
			m["message"] = c.GetMessage()
		}
		out = append(out, m)
	}
	return out
}

// turnText is what the model should do next, in words it acts on; what the
// user is told is quoted in the conversation's language.
func turnText(tool string, r *slotdv1.TurnResponse) string {
	var b strings.Builder
	for _, c := range r.GetChanges() {
		if c.GetMessage() != "" {
			fmt.Fprintf(&b, "Tell the user: %q\n", c.GetMessage())
		}
	}
	if n := r.GetNotice(); n != "" {
		fmt.Fprintf(&b, "Tell the user: %q\n", n)
	}
	q := r.GetQuestion()
	switch r.GetAction() {
	case slotdv1.Action_ACTION_ASK:
		refused(&b, r.GetProblem())
		fmt.Fprintf(&b, "Ask the user: %q\n", q.GetText())
		if len(q.GetAllowedValues()) > 0 {
			fmt.Fprintf(&b, "%s accepts: %s.\n", q.GetSlot(), strings.Join(q.GetAllowedValues(), ", "))
		} else if q.GetFormat() != "" {
			fmt.Fprintf(&b, "%s expects: %s.\n", q.GetSlot(), q.GetFormat())
		}
		fmt.Fprintf(&b, "Then call %s again with what they answer as %s; the other arguments are kept.", tool, q.GetSlot())
	case slotdv1.Action_ACTION_RECONFIRM:
		fmt.Fprintf(&b, "Tell the user the %s changes from %s to %s and ask them to confirm: %q\nThen call %s with %s: true if they confirm, false if not.",
			q.GetSlot(), display(q.GetOld()), display(q.GetNew()), q.GetText(), tool, ConfirmArg)
	case slotdv1.Action_ACTION_CONFIRM:
		fmt.Fprintf(&b, "Ask the user to approve: %q\nThen call %s with %s: true if they approve, false if not.", q.GetText(), tool, ConfirmArg)
	case slotdv1.Action_ACTION_READY:
		args, _ := json.Marshal(structOf(r.GetArguments()))
		fmt.Fprintf(&b, "Ready: call the backend with these arguments and this idempotency key (as its Idempotency-Key); then call slotd_complete "+
			"with the idempotency_key and the backend's result, or its failure.\narguments: %s\nidempotency_key: %s", args, r.GetIdempotencyKey())
	case slotdv1.Action_ACTION_REPAIR:
		refused(&b, r.GetProblem())
		if q.GetText() != "" {
			fmt.Fprintf(&b, "Ask the user: %q\n", q.GetText())
		}
		fmt.Fprintf(&b, "Then call %s again with the corrected value.", tool)
	case slotdv1.Action_ACTION_RESUME:
		fmt.Fprintf(&b, "The conversation was idle. Ask the user: %q\nThen call %s with %s: true to go on, false to start over.", q.GetText(), tool, ConfirmArg)
	case slotdv1.Action_ACTION_HANDOFF:
		fmt.Fprintf(&b, "Hand the conversation to a person: no valid value came after several tries. Tell the user: %q\nDo not call %s again for this request.", q.GetText(), tool)
	case slotdv1.Action_ACTION_CANCELLED:
		b.WriteString("The user declined: nothing was done and the request is closed.")
		if q.GetText() != "" {
			fmt.Fprintf(&b, " Tell the user: %q", q.GetText())
		}
	}
	return b.String()
}

// refused says which values were not accepted and what would fit.
func refused(b *strings.Builder, p *slotdv1.Problem) {
	if p == nil {
		return
	}
	if len(p.GetErrors()) == 0 && p.GetDetail() != "" {
		fmt.Fprintf(b, "%s: %s\n", p.GetTitle(), p.GetDetail())
	}
	for _, e := range p.GetErrors() {
		fmt.Fprintf(b, "Not accepted: %s", strings.TrimPrefix(e.GetPointer(), "/"))
		if e.GetInput() != "" {
			fmt.Fprintf(b, " = %s", e.GetInput())
		}
		fmt.Fprintf(b, ": %s", e.GetMessage())
		if len(e.GetAllowedValues()) > 0 {
			fmt.Fprintf(b, "; allowed values: %s", strings.Join(e.GetAllowedValues(), ", "))
		}
		if e.GetFormat() != "" {
			fmt.Fprintf(b, "; expected: %s", e.GetFormat())
		}
		b.WriteString(".\n")
	}
}

func display(v *structpb.Value) string {
	switch x := valueOf(v).(type) {
	case nil:
		return "(nothing)"
	case string:
		return x
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// failure is a system failure as a tool result: isError, with the problem
// and whether calling again is safe.
func failure(conv string, p *problem.Problem) *sdk.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "slotd could not take this call: %s", p.Title)
	if p.Detail != "" {
		fmt.Fprintf(&b, " (%s)", p.Detail)
	}
	b.WriteString(". ")
	switch {
	case p.Retryable && p.RetryAfterSeconds > 0:
		fmt.Fprintf(&b, "Calling again with the same arguments is safe after %d seconds.", p.RetryAfterSeconds)
	case p.Retryable:
		b.WriteString("Calling again with the same arguments is safe.")
	case p.OwnerActionRequired:
		b.WriteString("Do not call again: an operator must fix this; tell the user the request cannot be taken now.")
	default:
		b.WriteString("Do not call again with the same arguments.")
	}
	// The id is the caller's, and may be what slotd refused: echoed
	// masked, as every echo is.
	content := map[string]any{"problem": p, "conversation_id": redact.String(conv)}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: b.String()}}, StructuredContent: content}
}
