package session

import (
	"strings"
	"testing"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
)

// noArgsCatalog holds two tools without arguments: one that only reads
// ("list my cards") and one that acts and needs approval ("block all my
// cards").
func noArgsCatalog(t *testing.T) *contract.Catalog {
	t.Helper()
	return catalogWith(t, nil, `"type": "object", "description": "x"`, map[string]string{"test.list_cards": "",
		"test.block_cards": `, "confirm": true, "label": {"ru": "блокировка всех карт"}`})
}

// A tool without arguments is READY on its first turn with {} as its
// arguments, or asks for approval first when it is an action. What a model
// sends to such a tool anyway changes nothing.
func TestPlanToolWithoutArguments(t *testing.T) {
	t.Parallel()
	c := newConvo(t)
	c.cat = noArgsCatalog(t)
	ready := c.send("test.list_cards", nil)
	c.want(ready, clarify.Ready)
	if ready.Arguments == nil || len(ready.Arguments) != 0 || ready.IdempotencyKey == "" {
		t.Errorf("READY arguments %s, key %q; want {} and a key", js(ready.Arguments), ready.IdempotencyKey)
	}
	if len(ready.Session.Missing) != 0 || ready.Problem != nil {
		t.Errorf("missing %v, problem %s; want none", ready.Session.Missing, js(ready.Problem))
	}

	c = newConvo(t)
	c.cat = noArgsCatalog(t)
	confirm := c.send("test.block_cards", map[string]any{"all": true})
	c.want(confirm, clarify.Confirm)
	if confirm.Arguments == nil || len(confirm.Arguments) != 0 || !strings.Contains(questionText(confirm), "блокировка всех карт") {
		t.Errorf("CONFIRM arguments %s, question %s; want {} and a summary to approve", js(confirm.Arguments), js(confirm.Question))
	}
	yes := c.answer("test.block_cards", true)
	c.want(yes, clarify.Ready)
	if len(yes.Arguments) != 0 || yes.IdempotencyKey == "" || yes.IdempotencyKey != confirm.IdempotencyKey && confirm.IdempotencyKey != "" {
		t.Errorf("READY after the approval: arguments %s, key %q (CONFIRM's %q)", js(yes.Arguments), yes.IdempotencyKey, confirm.IdempotencyKey)
	}

	c = newConvo(t)
	c.cat = noArgsCatalog(t)
	c.send("test.block_cards", nil)
	c.want(c.answer("test.block_cards", false), clarify.Cancelled)
}
