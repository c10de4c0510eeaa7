package integration

import (
	"context"
	"testing"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// Tools without arguments ("list my cards", "block all my cards"), served
// from files by a real server on Postgres: READY at once with {} as the
// arguments, or CONFIRM first for an action; their strict schema is an
// empty, closed object.
func TestToolsWithoutArguments(t *testing.T) {
	t.Parallel()
	dir := contractsDir(t)
	writeContract(t, dir, "bank.list_cards", `{"type": "object", "description": "List the user's cards.",
		"x-slotd": {"name": "bank.list_cards"}}`)
	writeContract(t, dir, "bank.block_cards", `{"type": "object", "properties": {}, "description": "Block every card of the user.",
		"x-slotd": {"name": "bank.block_cards", "confirm": true, "label": {"ru": "блокировка всех карт"}}}`)
	inst := startServer(t, dbtestURL(t), dir)

	list := newConvo(t, inst.client, "bank.list_cards")
	r := list.send("")
	wantAction(t, r, slotdv1.Action_ACTION_READY)
	if r.Arguments == nil || len(r.Arguments.Fields) != 0 || r.IdempotencyKey == "" || len(r.Session.Missing) != 0 {
		t.Errorf("READY: arguments %v, key %q, missing %v; want {} and a key", r.Arguments, r.IdempotencyKey, r.Session.Missing)
	}

	block := newConvo(t, inst.client, "bank.block_cards")
	c := block.send(`{}`)
	wantAction(t, c, slotdv1.Action_ACTION_CONFIRM)
	if c.Arguments == nil || len(c.Arguments.Fields) != 0 || c.GetQuestion().GetText() == "" {
		t.Errorf("CONFIRM: arguments %v, question %q; want {} and a summary", c.Arguments, c.GetQuestion().GetText())
	}
	ready := block.confirm(true)
	wantAction(t, ready, slotdv1.Action_ACTION_READY)
	if ready.Arguments == nil || len(ready.Arguments.Fields) != 0 || ready.IdempotencyKey == "" {
		t.Errorf("READY after the approval: arguments %v, key %q", ready.Arguments, ready.IdempotencyKey)
	}

	schema, err := inst.client.GetToolSchema(context.Background(), &slotdv1.GetToolSchemaRequest{Tool: "bank.list_cards", Provider: "openai-chat"})
	if err != nil {
		t.Fatal(err)
	}
	p := schema.Parameters.AsMap()
	props, _ := p["properties"].(map[string]any)
	if p["type"] != "object" || props == nil || len(props) != 0 || p["additionalProperties"] != false {
		t.Errorf("openai-chat parameters of a tool without arguments = %v; want an empty, closed object", p)
	}
}
