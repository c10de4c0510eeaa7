package provider_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/contract/provider"
)

// An MCP client that validates tool input against inputSchema (LangChain's
// adapters) must let through what models send for the slots slotd
// normalizes; the plain export, which is the contract, still refuses each
// of those values, and the MCP export's descriptions say the strict form.
func TestMCPExportTakesWhatModelsSend(t *testing.T) {
	t.Parallel()
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	c := cat.Get("bank.open_dispute")
	lenientTool, err := provider.Export(c, provider.MCP)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := provider.Export(c, provider.Plain)
	if err != nil {
		t.Fatal(err)
	}
	lenientSchema, strictSchema := compileAsserting(t, lenientTool), compileAsserting(t, plain)

	// The README's quick start, one slot at a time, and as one call.
	dirty := []map[string]any{
		{"card_last4": "•• 4417"},
		{"operation_date": "вчера"},
		{"amount": "1 200,50 ₽"},
		{"reason": "Duplicate"},
		{"card_last4": "**** 4417", "operation_date": "15.12", "amount": "1,200.50 руб.", "reason": " charged twice "},
	}
	for _, args := range dirty {
		if err := lenientSchema.Validate(args); err != nil {
			t.Errorf("the mcp inputSchema refuses %v: %v", args, err)
		}
		if len(args) == 1 {
			if err := strictSchema.Validate(withRest(args)); err == nil {
				t.Errorf("the contract itself accepts %v: the test proves nothing", args)
			}
		}
	}
	// What slotd does not normalize stays checked on the client, and an
	// argument the tool does not have is still refused.
	for _, args := range []map[string]any{
		{"original_operation_id": "ab"},
		{"amount": true},
		{"card": "4417"},
	} {
		if err := lenientSchema.Validate(args); err == nil {
			t.Errorf("the mcp inputSchema accepts %v", args)
		}
	}

	props := lenientTool.Parameters()["properties"].(map[string]any)
	for slot, want := range map[string]string{
		"card_last4":     "slotd normalizes it to the last four digits",
		"operation_date": "YYYY-MM-DD",
		"amount":         "1200.50",
		"reason":         "duplicate (duplicate charge), fraud (fraudulent charge), not_received",
	} {
		d, _ := props[slot].(map[string]any)["description"].(string)
		if !strings.Contains(d, want) {
			t.Errorf("%s: the description does not say %q: %q", slot, want, d)
		}
		for _, k := range []string{"pattern", "format", "enum"} {
			if _, kept := props[slot].(map[string]any)[k]; kept {
				t.Errorf("%s keeps %s, which its normalizer fixes", slot, k)
			}
		}
	}
	if lenientTool.Strict || lenientTool.Name != "bank_open_dispute" || !strings.Contains(lenientTool.Description, "original_operation_id is required") {
		t.Errorf("mcp tool %s strict=%v description %q", lenientTool.Name, lenientTool.Strict, lenientTool.Description)
	}
}

// withRest completes one dirty argument with clean values of the other
// required slots, so that the strict schema can only refuse the dirty one.
func withRest(args map[string]any) map[string]any {
	out := map[string]any{"card_last4": "4417", "operation_date": "2026-12-03", "amount": 1200.5, "reason": "fraud"}
	for k, v := range args {
		out[k] = v
	}
	return out
}

// compileAsserting compiles a tool's input schema with formats asserted, as
// a validating client and slotd's own check do.
func compileAsserting(t *testing.T, tool *provider.Tool) *jsonschema.Schema {
	t.Helper()
	raw, err := tool.ParametersJSON()
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	comp := jsonschema.NewCompiler()
	comp.AssertFormat()
	if err := comp.AddResource("x:///mcp.json", inst); err != nil {
		t.Fatal(err)
	}
	s, err := comp.Compile("x:///mcp.json")
	if err != nil {
		t.Fatalf("the export is not a valid schema: %v", err)
	}
	return s
}
