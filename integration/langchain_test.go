package integration

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// slotd's MCP tools through clients that read inputSchema before they call:
// LangChain's MCP adapters validate the model's arguments against it, and
// the MCP Inspector CLI converts each --tool-arg by the property's type
// (Number() for a number, which makes "1 200,50 ₽" null). Both are pinned
// by the committed lockfile of examples/mcp/langchain.

// TestLangChainQuickStartReachesReady runs the README's quick start through
// @langchain/mcp-adapters: the first turn carries the README's dirty values
// ("•• 4417", "вчера", "1 200,50 ₽", "Duplicate"), which the adapter must
// let through to slotd, and the dispute reaches READY and slotd_complete.
func TestLangChainQuickStartReachesReady(t *testing.T) {
	t.Parallel()
	dir := npmExample(t, "examples/mcp/langchain")
	inst := newMCPServer(t)
	run := runNodeApp(t, dir, inst.srv.HTTPAddr(), bankKey, 90*time.Second, "quickstart", "quickstart.mjs")
	// The adapter does validate: what no normalizer could fix stays refused
	// on the client.
	if s := run.step(t, "refused-on-client"); !strings.Contains(s.Error, "did not match expected schema") {
		t.Errorf("a boolean amount: %q, want the adapter's schema refusal", s.Error)
	}
	dirty := run.step(t, "dirty")
	wantMCPAction(t, dirty, "ASK")
	if dirty.Structured["slot"] != "original_operation_id" {
		t.Errorf("after the dirty first turn slotd asks for %v, want original_operation_id; text:\n%s", dirty.Structured["slot"], dirty.Text)
	}
	wantMCPAction(t, run.step(t, "operation"), "CONFIRM")
	ready := run.step(t, "approve")
	wantMCPAction(t, ready, "READY")
	args, _ := ready.Structured["arguments"].(map[string]any)
	for k, want := range map[string]any{"card_last4": "4417", "amount": "1200.50", "reason": "duplicate", "original_operation_id": "op-20260822-0117"} {
		if args[k] != want {
			t.Errorf("READY %s = %v, want %v", k, args[k], want)
		}
	}
	if d, _ := args["operation_date"].(string); len(d) != len("2026-08-22") {
		t.Errorf("READY operation_date = %v, want a date", args["operation_date"])
	}
	done := run.step(t, "complete")
	if done.Structured["status"] != "COMPLETED" || done.Structured["conversation_id"] != ready.Structured["conversation_id"] {
		t.Errorf("slotd_complete: %v", done.Structured)
	}
}

// TestInspectorCLISendsTheValuesAsTyped lists the tools and makes one
// dirty call with the official Inspector's CLI, as the README's reader
// would: `--tool-arg amount=1 200,50 ₽` must reach slotd as typed, not as
// Number()'s null. A second invocation (a new session) continues the
// conversation by naming it. The Inspector CLI sends no headers, so this
// slotd has no keys (loopback only, the default tenant).
func TestInspectorCLISendsTheValuesAsTyped(t *testing.T) {
	t.Parallel()
	dir := npmExample(t, "examples/mcp/langchain")
	inst := startServer(t, dbtestURL(t), contractsDir(t), withHTTP)
	url := "http://" + inst.srv.HTTPAddr() + "/mcp"
	inspector := func(args ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "node", append([]string{"node_modules/.bin/mcp-inspector", "--cli", url}, args...)...)
		cmd.Dir = dir
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var v map[string]any
		if err == nil {
			err = json.Unmarshal(out, &v)
		}
		if err != nil {
			t.Fatalf("mcp-inspector --cli %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, out, stderr.String())
		}
		return v
	}

	list := inspector("--method", "tools/list")
	raw, _ := json.Marshal(list["tools"])
	var tools []struct {
		Name        string `json:"name"`
		InputSchema struct {
			Properties map[string]map[string]any `json:"properties"`
		} `json:"inputSchema"`
	}
	if err := json.Unmarshal(raw, &tools); err != nil {
		t.Fatal(err)
	}
	var amount map[string]any
	for _, tl := range tools {
		if tl.Name == "bank_open_dispute" {
			amount = tl.InputSchema.Properties["amount"]
		}
	}
	if amount == nil || amount["type"] == "number" {
		t.Fatalf("bank_open_dispute's amount in tools/list: %v; a bare number type makes the Inspector send null", amount)
	}

	res := inspector("--method", "tools/call", "--tool-name", "bank_open_dispute",
		"--tool-arg", "card_last4=•• 4417", "--tool-arg", "operation_date=вчера", "--tool-arg", "amount=1 200,50 ₽", "--tool-arg", "reason=Duplicate")
	sc, _ := res["structuredContent"].(map[string]any)
	if sc["action"] != "ASK" || sc["slot"] != "original_operation_id" || res["isError"] == true {
		t.Fatalf("the dirty call through the Inspector: %v", res)
	}
	for _, ch := range sc["changes"].([]any) {
		if c := ch.(map[string]any); c["slot"] == "amount" && (c["decision"] != "FILLED" || c["new"] != "1200.50") {
			t.Errorf("amount arrived as %v", c)
		}
	}

	conv, _ := sc["conversation_id"].(string)
	next := inspector("--method", "tools/call", "--tool-name", "bank_open_dispute",
		"--tool-arg", "original_operation_id=op-20260822-0117", "--tool-arg", "slotd_conversation_id="+conv)
	if sc, _ := next["structuredContent"].(map[string]any); sc["action"] != "CONFIRM" || sc["conversation_id"] != conv {
		t.Errorf("a second Inspector call naming %s: %v", conv, next)
	}
}
