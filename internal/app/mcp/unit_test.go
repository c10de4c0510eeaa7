package mcp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/contract"
)

func dispute(t *testing.T) *contract.Contract {
	t.Helper()
	cat, err := contract.LoadDir("../../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	return cat.Get("bank.open_dispute")
}

func ask(slot string, missing ...string) *slotdv1.TurnResponse {
	slots, _ := structpb.NewStruct(map[string]any{"card_last4": "4417", "amount": "1200.50"})
	return &slotdv1.TurnResponse{Action: slotdv1.Action_ACTION_ASK,
		Session:  &slotdv1.Session{Locale: "ru", Slots: slots, Missing: missing},
		Question: &slotdv1.Question{Slot: slot, Text: "вопрос о " + slot}}
}

func TestFormFor(t *testing.T) {
	t.Parallel()
	c := dispute(t)
	for _, tc := range []struct {
		name   string
		resp   *slotdv1.TurnResponse
		kind   string
		fields []string
	}{
		{"missing slots, the asked first", ask("operation_date", "reason", "operation_date"), formSlots, []string{"operation_date", "reason"}},
		{"a sensitive slot asked: no form", ask("original_operation_id", "original_operation_id"), "", nil},
		{"a sensitive slot among the missing stays out", ask("reason", "reason", "original_operation_id"), formSlots, []string{"reason"}},
		{"approval", &slotdv1.TurnResponse{Action: slotdv1.Action_ACTION_CONFIRM, Question: &slotdv1.Question{Text: "Всё верно?"}}, formConfirm, nil},
		{"re-confirmation", &slotdv1.TurnResponse{Action: slotdv1.Action_ACTION_RECONFIRM, Question: &slotdv1.Question{Slot: "amount", Text: "Сумма меняется?"}}, formConfirm, nil},
		{"ready: no form", &slotdv1.TurnResponse{Action: slotdv1.Action_ACTION_READY}, "", nil},
		{"hand-off: no form", &slotdv1.TurnResponse{Action: slotdv1.Action_ACTION_HANDOFF, Question: &slotdv1.Question{Text: "…"}}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := formFor(c, tc.resp)
			if tc.kind == "" {
				if f != nil {
					t.Fatalf("got a %s form %v, want none", f.kind, f.fields)
				}
				return
			}
			if f == nil || f.kind != tc.kind || strings.Join(f.fields, ",") != strings.Join(tc.fields, ",") {
				t.Fatalf("got %+v, want a %s form of %v", f, tc.kind, tc.fields)
			}
			props := f.params.RequestedSchema.(map[string]any)["properties"].(map[string]any)
			if len(props) != len(tc.fields) {
				t.Fatalf("schema properties %v, want %v", props, tc.fields)
			}
		})
	}
	f := formFor(c, ask("operation_date", "operation_date", "reason"))
	props := f.params.RequestedSchema.(map[string]any)["properties"].(map[string]any)
	reason := props["reason"].(map[string]any)
	if reason["title"] != "причина" || len(reason["enum"].([]any)) != 4 || !strings.Contains(reason["description"].(string), "1200.50") {
		t.Errorf("the reason field is titled by its label, described by its question filled with the slots, and keeps its enum: %v", reason)
	}
	if names, _ := reason["enumNames"].([]any); len(names) != 4 || names[1] != "мошенническая операция" || reason["enum"].([]any)[1] != "fraud" {
		t.Errorf("the reason's choices read by their labels, in the enum's order, and answer with the codes: %v", reason)
	}
	if d := props["operation_date"].(map[string]any); d["format"] != "date" || d["description"] != "вопрос о operation_date" {
		t.Errorf("the asked slot is described by the turn's own question and keeps its format: %v", d)
	}
}

func TestFormAnswer(t *testing.T) {
	t.Parallel()
	slots := &form{kind: formSlots, fields: []string{"reason", "amount"}}
	confirm := &form{kind: formConfirm}
	for _, tc := range []struct {
		name    string
		f       *form
		res     *sdk.ElicitResult
		args    string
		confirm string
		stop    bool
	}{
		{"filled", slots, &sdk.ElicitResult{Action: "accept", Content: map[string]any{"reason": "fraud", "amount": 5.0, "other": "x"}}, `{"amount":5,"reason":"fraud"}`, "", false},
		{"blank fields are not answers", slots, &sdk.ElicitResult{Action: "accept", Content: map[string]any{"reason": "  "}}, "", "", true},
		{"declined form", slots, &sdk.ElicitResult{Action: "decline"}, "", "", true},
		{"closed form", slots, &sdk.ElicitResult{Action: "cancel"}, "", "", true},
		{"approved", confirm, &sdk.ElicitResult{Action: "accept"}, "", "true", false},
		{"refused", confirm, &sdk.ElicitResult{Action: "decline"}, "", "false", false},
		{"closed approval", confirm, &sdk.ElicitResult{Action: "cancel"}, "", "", true},
		{"no answer", confirm, nil, "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.f.answer(tc.res)
			args := ""
			if a.args != nil {
				b, _ := json.Marshal(a.args)
				args = string(b)
			}
			confirm := ""
			if a.confirm != nil {
				confirm = map[bool]string{true: "true", false: "false"}[*a.confirm]
			}
			if args != tc.args || confirm != tc.confirm || a.stop != tc.stop || (a.stop && a.note == "") {
				t.Errorf("got args %s confirm %q stop %v (%q), want %s %q %v", args, confirm, a.stop, a.note, tc.args, tc.confirm, tc.stop)
			}
		})
	}
}

func TestReadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw, args, conv string
		confirm         *bool
		bad             bool
	}{
		{raw: `{"reason":"Duplicate","slotd_confirm":true,"slotd_conversation_id":" c-1 "}`, args: `{"reason":"Duplicate"}`, conv: "c-1", confirm: ptr(true)},
		{raw: `{"slotd_confirm":"false"}`, args: `{}`, confirm: ptr(false)},
		{raw: `{"slotd_confirm":null}`, args: `{}`},
		{raw: ``, args: `{}`},
		{raw: `{"slotd_confirm":"maybe"}`, bad: true},
		{raw: `{"slotd_confirm":1}`, bad: true},
		{raw: `[1,2]`, bad: true},
	} {
		in, p := readInput(json.RawMessage(tc.raw))
		if tc.bad {
			if p == nil {
				t.Errorf("%s: accepted, want a problem", tc.raw)
			}
			continue
		}
		b, _ := json.Marshal(in.args)
		if p != nil || string(b) != tc.args || in.conversation != tc.conv || (in.confirm == nil) != (tc.confirm == nil) ||
			(in.confirm != nil && *in.confirm != *tc.confirm) {
			t.Errorf("%s: got %s %q %v %v", tc.raw, b, in.conversation, in.confirm, p)
		}
	}
}

func ptr(b bool) *bool { return &b }

func TestRoundState(t *testing.T) {
	t.Parallel()
	st := roundState{V: 1, Conv: "c", Base: "mcp/x", Round: 2, Kind: formSlots, Fields: []string{"reason"}}
	got, ok := decodeState(st.encode())
	if !ok || got.Conv != "c" || got.Round != 2 || got.Fields[0] != "reason" {
		t.Fatalf("round trip: %+v %v", got, ok)
	}
	for _, bad := range []roundState{
		{V: 1, Conv: "c", Base: "b", Round: MaxRounds + 1, Kind: formSlots},
		{V: 1, Conv: "c", Base: "b", Round: 0, Kind: formSlots},
		{V: 1, Conv: "", Base: "b", Round: 1, Kind: formSlots},
		{V: 1, Conv: "c", Base: "b", Round: 1, Kind: "url"},
		{V: 2, Conv: "c", Base: "b", Round: 1, Kind: formSlots},
	} {
		if _, ok := decodeState(bad.encode()); ok {
			t.Errorf("accepted %+v", bad)
		}
	}
	if _, ok := decodeState("not base64!"); ok {
		t.Error("accepted garbage")
	}
}

// Every member the builder writes is in the outputSchema clients check
// results against, and none is written empty.
func TestTurnContentMatchesItsSchema(t *testing.T) {
	t.Parallel()
	args, _ := structpb.NewStruct(map[string]any{"amount": "1200.50"})
	r := &slotdv1.TurnResponse{Action: slotdv1.Action_ACTION_READY, Arguments: args, IdempotencyKey: "sd_x", TurnId: "t",
		Session: &slotdv1.Session{ConversationId: "c"}, Changes: []*slotdv1.Change{{Slot: "amount", Decision: slotdv1.Decision_DECISION_FILLED}}}
	content := turnContent(r)
	props := turnOutputSchema()["properties"].(map[string]any)
	for k := range content {
		if props[k] == nil {
			t.Errorf("member %s is not in the outputSchema", k)
		}
	}
	for _, k := range []string{"action", "arguments", "idempotency_key", "changes", "conversation_id", "turn_id"} {
		if content[k] == nil {
			t.Errorf("READY lacks %s: %v", k, content)
		}
	}
	for _, k := range []string{"question", "slot", "allowed_values", "problem", "missing", "old", "new", "notice"} {
		if _, ok := content[k]; ok {
			t.Errorf("READY carries an empty %s", k)
		}
	}
	if content["action"] != "READY" {
		t.Errorf("action %v", content["action"])
	}
}

func TestTurnTextSaysWhatToDo(t *testing.T) {
	t.Parallel()
	oldV, newV := structpb.NewStringValue("1200.50"), structpb.NewStringValue("1340.00")
	for _, tc := range []struct {
		r    *slotdv1.TurnResponse
		want []string
	}{
		{&slotdv1.TurnResponse{Action: slotdv1.Action_ACTION_RECONFIRM, Question: &slotdv1.Question{Slot: "amount", Text: "Сумма 1340.00?", Old: oldV, New: newV}},
			[]string{"Tell the user the amount changes from 1200.50 to 1340.00 and ask them to confirm", "slotd_confirm: true"}},
		{&slotdv1.TurnResponse{Action: slotdv1.Action_ACTION_CONFIRM, Question: &slotdv1.Question{Text: "Открываю спор"}},
			[]string{`Ask the user to approve: "Открываю спор"`}},
		{&slotdv1.TurnResponse{Action: slotdv1.Action_ACTION_ASK, Question: &slotdv1.Question{Slot: "reason", Text: "Что случилось?", AllowedValues: []string{"fraud"}},
			Problem: &slotdv1.Problem{Errors: []*slotdv1.FieldError{{Pointer: "/reason", Input: `"chargeback"`, Message: "не из списка", AllowedValues: []string{"fraud"}}}}},
			[]string{`Not accepted: reason = "chargeback": не из списка; allowed values: fraud.`, `Ask the user: "Что случилось?"`}},
		{&slotdv1.TurnResponse{Action: slotdv1.Action_ACTION_HANDOFF, Question: &slotdv1.Question{Text: "Передаю"}}, []string{"Hand the conversation to a person", "Do not call t again"}},
		{&slotdv1.TurnResponse{Action: slotdv1.Action_ACTION_CANCELLED}, []string{"nothing was done"}},
		{&slotdv1.TurnResponse{Action: slotdv1.Action_ACTION_RESUME, Question: &slotdv1.Question{Text: "Продолжим?"}}, []string{"idle", "false to start over"}},
	} {
		got := turnText("t", tc.r)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: text lacks %q:\n%s", tc.r.Action, w, got)
			}
		}
	}
}

func TestToolFromContract(t *testing.T) {
	t.Parallel()
	tl, err := newTool(dispute(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"required", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas"} {
		if _, ok := tl.input[k]; ok {
			t.Errorf("the input schema keeps %s", k)
		}
	}
	props := tl.input["properties"].(map[string]any)
	if !reflect.DeepEqual(props["amount"].(map[string]any)["type"], []any{"number", "string"}) || props[ConfirmArg] == nil || props[ConversationArg] != nil {
		t.Errorf("properties %v", props)
	}
	if props := tl.tool(true).InputSchema.(map[string]any)["properties"].(map[string]any); props[ConversationArg] == nil {
		t.Error("the stateless tool takes no conversation id")
	}
	if _, leaked := tl.input["properties"].(map[string]any)[ConversationArg]; leaked {
		t.Error("the stateless tool's schema changed the one with sessions")
	}
	if tl.name != "bank_open_dispute" || tl.annotations.ReadOnlyHint || !*tl.annotations.DestructiveHint {
		t.Errorf("name %s annotations %+v", tl.name, tl.annotations)
	}
}

// The caller's trace context goes from _meta to the turn's metadata; what
// gRPC metadata cannot carry (a control character would fail the call) or
// no trace context is (a long value) stays behind, and the call goes on.
func TestTraceContextFromMeta(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tc := range []struct {
		name       string
		meta       map[string]any
		parent     string
		tracestate string
	}{
		{"traceparent", map[string]any{"traceparent": tp}, tp, ""},
		{"with tracestate", map[string]any{"traceparent": tp, "tracestate": "vendor=opaque,rojo=00f067aa0ba902b7"}, tp, "vendor=opaque,rojo=00f067aa0ba902b7"},
		{"none", map[string]any{"dev.slotd/locale": "ru"}, "", ""},
		{"not a string", map[string]any{"traceparent": map[string]any{"version": 0}}, "", ""},
		{"newline", map[string]any{"traceparent": tp + "\r\nauthorization: Bearer stolen"}, "", ""},
		{"NUL", map[string]any{"traceparent": "00-\x00"}, "", ""},
		{"unicode", map[string]any{"traceparent": "00-•• 4417"}, "", ""},
		{"long", map[string]any{"traceparent": tp, "tracestate": strings.Repeat("k=v,", 10000)}, tp, ""},
	} {
		req := &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: "bank_open_dispute", Meta: tc.meta}}
		md := mdOf(req)
		if got := strings.Join(md.Get("traceparent"), "|"); got != tc.parent {
			t.Errorf("%s: traceparent metadata %q, want %q", tc.name, got, tc.parent)
		}
		if got := strings.Join(md.Get("tracestate"), "|"); got != tc.tracestate {
			t.Errorf("%s: tracestate metadata %q, want %q", tc.name, got, tc.tracestate)
		}
		if len(md.Get("x-request-id")) != 1 {
			t.Errorf("%s: metadata %v lost its request id", tc.name, md)
		}
	}
}
