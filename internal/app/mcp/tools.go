package mcp

import (
	"fmt"
	"maps"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/contract/provider"
	"github.com/slotd/slotd/internal/metrics"
)

// The arguments slotd adds to every contract's own.
const (
	// ConfirmArg is the user's yes or no to the last re-confirmation,
	// approval or resume question the model was told to ask.
	ConfirmArg = "slotd_confirm"
	// ConversationArg names the conversation on the stateless protocol.
	ConversationArg = "slotd_conversation_id"
)

// Keys of a request's _meta that slotd reads. The conversation and turn
// ids are for clients that name them better than the model can; locale and
// time_zone are the turn's (the contract's defaults otherwise).
const (
	MetaConversation = "dev.slotd/conversation_id"
	MetaTurn         = "dev.slotd/turn_id"
	MetaLocale       = "dev.slotd/locale"
	MetaTimeZone     = "dev.slotd/time_zone"
	// MetaTraceparent and MetaTracestate are the caller's W3C trace
	// context, under the keys OpenTelemetry's MCP conventions use.
	MetaTraceparent = "traceparent"
	MetaTracestate  = "tracestate"
)

// toolDef is one contract as an MCP tool.
type toolDef struct {
	c           *contract.Contract
	name        string
	description string
	input       map[string]any
	annotations *sdk.ToolAnnotations
}

func buildTools(cat *contract.Catalog) ([]*toolDef, error) {
	var out []*toolDef
	seen := map[string]string{metrics.CompleteTool: metrics.CompleteTool}
	for _, c := range cat.All() {
		t, err := newTool(c)
		if err != nil {
			return nil, err
		}
		if other, dup := seen[t.name]; dup {
			return nil, fmt.Errorf("mcp: contracts %s and %s both become the MCP tool %q", other, c.Name, t.name)
		}
		seen[t.name] = c.Name
		out = append(out, t)
	}
	return out, nil
}

// newTool derives the tool from the contract's MCP export: its schema with
// every property optional (the model calls with what it has), lenient where
// slotd normalizes (a validating client must let "1 200,50 ₽" through), its
// rules in the description, plus slotd's own arguments. The result stays
// strict: slotd checks the arguments against the contract itself.
func newTool(c *contract.Contract) (*toolDef, error) {
	export, err := provider.Export(c, provider.MCP)
	if err != nil {
		return nil, err
	}
	input := export.Parameters()
	props, _ := input["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		input["properties"] = props
	}
	for _, own := range []string{ConfirmArg, ConversationArg} {
		if _, clash := props[own]; clash {
			return nil, fmt.Errorf("mcp: contract %s has a property named %s, which slotd's MCP tools add", c.Name, own)
		}
	}
	props[ConfirmArg] = map[string]any{
		"type": "boolean",
		"description": "The user's answer to the last confirmation this tool's result told you to ask for (a changed value, the approval of a summary, " +
			"or whether to go on): true for yes, false for no. Leave it out otherwise.",
	}
	input["type"] = "object"

	irreversible := false
	for _, p := range c.Properties {
		irreversible = irreversible || p.Irreversible
	}
	return &toolDef{
		c:           c,
		name:        contract.ProviderName(c.Name),
		description: export.Description,
		input:       input,
		annotations: &sdk.ToolAnnotations{
			// An action the user approves changes something; a lookup does
			// not. Filling slots is slotd's state, not the world's.
			ReadOnlyHint:    !c.Confirm,
			DestructiveHint: &irreversible,
			OpenWorldHint:   new(bool),
		},
	}, nil
}

// tool is the MCP tool; on the stateless protocol its input also takes the
// conversation id.
func (t *toolDef) tool(stateless bool) *sdk.Tool {
	input := t.input
	if stateless {
		input = withConversation(input)
	}
	return &sdk.Tool{
		Name:         t.name,
		Title:        t.c.Name,
		Description:  t.description,
		InputSchema:  input,
		OutputSchema: turnOutputSchema(),
		Annotations:  t.annotations,
	}
}

// withConversation is an input schema that also takes ConversationArg.
func withConversation(input map[string]any) map[string]any {
	out := maps.Clone(input)
	props := maps.Clone(input["properties"].(map[string]any))
	props[ConversationArg] = map[string]any{
		"type": "string",
		"description": "The conversation_id of this conversation's last slotd result. Pass it on every call after the first, unchanged; " +
			"leave it out only on the first call of a new conversation.",
	}
	out["properties"] = props
	return out
}
