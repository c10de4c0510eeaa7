package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// slotd's MCP endpoint driven by a client nobody here wrote: the official
// TypeScript SDK (@modelcontextprotocol/sdk, pinned by the committed
// lockfile of examples/mcp/js), over Streamable HTTP, against the real
// server on Postgres. The scenarios are examples/mcp/js/client.mjs's; each
// prints one JSON object per step, which the tests check.

// mcpStep is one line a scenario printed.
type mcpStep struct {
	Step            string          `json:"step"`
	IsError         bool            `json:"isError"`
	Structured      map[string]any  `json:"structured"`
	Text            string          `json:"text"`
	ProtocolVersion string          `json:"protocolVersion"`
	SessionID       *string         `json:"sessionId"`
	Tools           json.RawMessage `json:"tools"`
	Message         string          `json:"message"`
	Schema          map[string]any  `json:"schema"`
	Answer          map[string]any  `json:"answer"`
	Connected       bool            `json:"connected"`
	Code            any             `json:"code"`
	Error           string          `json:"error"`
	Done            string          `json:"done"`
}

type mcpRun []mcpStep

// step is the named step; the test fails when there is none.
func (r mcpRun) step(t *testing.T, name string) mcpStep {
	t.Helper()
	for _, s := range r {
		if s.Step == name {
			return s
		}
	}
	t.Fatalf("no step %q in the scenario's output: %+v", name, r)
	return mcpStep{}
}

func (r mcpRun) all(name string) []mcpStep {
	var out []mcpStep
	for _, s := range r {
		if s.Step == name {
			out = append(out, s)
		}
	}
	return out
}

// runMCPClient runs a scenario of client.mjs against the slotd at httpAddr
// and returns what it printed; it fails the test when the scenario fails.
func runMCPClient(t *testing.T, httpAddr, key, scenario string) mcpRun {
	t.Helper()
	return runNodeApp(t, npmExample(t, "examples/mcp/js"), httpAddr, key, 60*time.Second, scenario, "client.mjs", scenario)
}

// runNodeApp runs one of the Node example apps in dir against slotd's MCP
// endpoint at httpAddr with key, and reads the steps it prints, a JSON line
// each; the last one must say the run named done finished.
func runNodeApp(t *testing.T, dir, httpAddr, key string, within time.Duration, done string, args ...string) mcpRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SLOTD_MCP_URL=http://"+httpAddr+"/mcp", "SLOTD_API_KEY="+key)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	var run mcpRun
	sc := bufio.NewScanner(strings.NewReader(string(stdout)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var s mcpStep
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("node %s printed a line that is not JSON: %v\n%s", strings.Join(args, " "), err, sc.Text())
		}
		run = append(run, s)
	}
	if err != nil || len(run) == 0 || run[len(run)-1].Done != done {
		t.Fatalf("node %s: %v, want it to finish; stdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout, stderr.String())
	}
	return run
}

func newMCPServer(t *testing.T) *instance {
	t.Helper()
	return startServer(t, dbtestURL(t), contractsDir(t), withHTTP, withKeys)
}

func wantMCPAction(t *testing.T, s mcpStep, action string) {
	t.Helper()
	if s.IsError || s.Structured["action"] != action {
		t.Fatalf("step %s: action %v (isError %v), want %s; text:\n%s", s.Step, s.Structured["action"], s.IsError, action, s.Text)
	}
}

func TestMCPToolsList(t *testing.T) {
	t.Parallel()
	inst := newMCPServer(t)
	run := runMCPClient(t, inst.srv.HTTPAddr(), bankKey, "tools")
	conn := run.step(t, "connected")
	if conn.ProtocolVersion != "2025-11-25" || conn.SessionID == nil || *conn.SessionID == "" {
		t.Errorf("the TypeScript client negotiated %q with session %v, want 2025-11-25 with a session", conn.ProtocolVersion, conn.SessionID)
	}
	var tools []struct {
		Name         string         `json:"name"`
		Description  string         `json:"description"`
		InputSchema  map[string]any `json:"inputSchema"`
		OutputSchema map[string]any `json:"outputSchema"`
		Annotations  map[string]any `json:"annotations"`
	}
	if err := json.Unmarshal(run.step(t, "tools").Tools, &tools); err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for i, tl := range tools {
		byName[tl.Name] = i
	}
	// Every shipped contract is a tool, and slotd_complete reports the
	// backend's outcome; the test contracts of contractsDir are tools too.
	for _, name := range []string{"bank_block_card", "bank_check_balance", "bank_open_dispute", "travel_search_flights", "slotd_complete"} {
		if _, ok := byName[name]; !ok {
			t.Fatalf("tools/list lacks %s: %v", name, byName)
		}
	}
	if shipped, _ := filepath.Glob("../contracts/*.json"); len(tools) < len(shipped)+1 {
		t.Errorf("tools/list has %d tools, want at least the %d shipped contracts and slotd_complete", len(tools), len(shipped))
	}
	d := tools[byName["bank_open_dispute"]]
	if !strings.HasPrefix(d.Description, "Open a dispute about a card operation") || !strings.Contains(d.Description, "original_operation_id") {
		t.Errorf("bank_open_dispute's description is the contract's with its rule in words; got %q", d.Description)
	}
	if _, ok := d.InputSchema["required"]; ok {
		t.Errorf("bank_open_dispute's inputSchema requires %v; every argument must be optional", d.InputSchema["required"])
	}
	if _, ok := d.InputSchema["allOf"]; ok {
		t.Errorf("bank_open_dispute's inputSchema keeps a conditional requirement (allOf)")
	}
	props, _ := d.InputSchema["properties"].(map[string]any)
	for _, p := range []string{"card_last4", "operation_date", "amount", "reason", "original_operation_id", "slotd_confirm"} {
		if props[p] == nil {
			t.Errorf("bank_open_dispute's inputSchema lacks %s", p)
		}
	}
	if props["slotd_conversation_id"] != nil {
		t.Errorf("with sessions, the session is the conversation: slotd_conversation_id is not an argument")
	}
	if c, _ := props["slotd_confirm"].(map[string]any); c["type"] != "boolean" {
		t.Errorf("slotd_confirm is %v, want a boolean", c)
	}
	if d.OutputSchema["type"] != "object" {
		t.Errorf("bank_open_dispute has no outputSchema: %v", d.OutputSchema)
	}
	if d.Annotations["readOnlyHint"] != false || d.Annotations["destructiveHint"] != true {
		t.Errorf("bank_open_dispute asks approval and has irreversible slots: annotations %v, want readOnlyHint false, destructiveHint true", d.Annotations)
	}
	for _, name := range []string{"travel_search_flights", "bank_check_balance"} {
		f := tools[byName[name]]
		if f.Annotations["readOnlyHint"] != true || f.Annotations["destructiveHint"] != false {
			t.Errorf("%s needs no approval and has no irreversible slot: annotations %v", name, f.Annotations)
		}
	}
	b := tools[byName["bank_block_card"]]
	if b.Annotations["readOnlyHint"] != false || b.Annotations["destructiveHint"] != true {
		t.Errorf("bank_block_card asks approval and its card is irreversible: annotations %v, want readOnlyHint false, destructiveHint true", b.Annotations)
	}
	if !strings.HasPrefix(b.Description, "Block the customer's card at once") {
		t.Errorf("bank_block_card's description is the contract's; got %q", b.Description)
	}
}

func TestMCPSeedDisputeToReady(t *testing.T) {
	t.Parallel()
	inst := newMCPServer(t)
	run := runMCPClient(t, inst.srv.HTTPAddr(), bankKey, "dispute")

	dirty := run.step(t, "dirty")
	wantMCPAction(t, dirty, "ASK")
	if dirty.Structured["slot"] != "reason" || !strings.HasPrefix(dirty.Text, `Ask the user: "Что случилось с операцией на 1200.50 ₽`) {
		t.Errorf("the dirty first call asks the reason by meaning; got slot %v, text:\n%s", dirty.Structured["slot"], dirty.Text)
	}
	conv, _ := dirty.Structured["conversation_id"].(string)
	if !strings.HasPrefix(conv, "mcp-") {
		t.Errorf("conversation_id %q, want the MCP session's", conv)
	}
	if strings.Contains(dirty.Text, "slotd_conversation_id") {
		t.Errorf("with sessions the model need not pass a conversation id; the text says to:\n%s", dirty.Text)
	}

	op := run.step(t, "reason")
	wantMCPAction(t, op, "ASK")
	if op.Structured["slot"] != "original_operation_id" || op.Structured["conversation_id"] != conv {
		t.Errorf("after reason=Duplicate slotd asks the original operation in the same conversation; got %v", op.Structured)
	}

	confirm := run.step(t, "operation")
	wantMCPAction(t, confirm, "CONFIRM")
	if !strings.HasPrefix(confirm.Text, `Ask the user to approve: "Открываю спор по карте •• 4417`) || !strings.Contains(confirm.Text, "slotd_confirm: true") {
		t.Errorf("CONFIRM tells the model to ask for approval and how to answer; text:\n%s", confirm.Text)
	}

	ready := run.step(t, "approve")
	wantMCPAction(t, ready, "READY")
	key, _ := ready.Structured["idempotency_key"].(string)
	args, _ := ready.Structured["arguments"].(map[string]any)
	if !strings.HasPrefix(key, "sd_") || args["amount"] != "1200.50" || args["card_last4"] != "4417" || args["reason"] != "duplicate" ||
		args["original_operation_id"] != "op-20260822-0117" {
		t.Errorf("READY carries the normalized arguments and a key; got key %q, arguments %v", key, args)
	}
	if !strings.HasPrefix(ready.Text, "Ready: call the backend") || !strings.Contains(ready.Text, key) || !strings.Contains(ready.Text, "slotd_complete") {
		t.Errorf("READY's text says to call the backend with the key, then slotd_complete:\n%s", ready.Text)
	}

	done := run.step(t, "complete")
	out, _ := done.Structured["output"].(map[string]any)
	if done.IsError || done.Structured["status"] != "COMPLETED" || out["case_id"] != "DSP-7781" {
		t.Fatalf("slotd_complete records the backend's result; got %v\n%s", done.Structured, done.Text)
	}
	if _, leaked := out["internal_score"]; leaked {
		t.Errorf("slotd_complete passed on a field the output contract does not name: %v", out)
	}
}

func TestMCPRefusedEnumIsAResultWithAllowedValues(t *testing.T) {
	t.Parallel()
	inst := newMCPServer(t)
	s := runMCPClient(t, inst.srv.HTTPAddr(), bankKey, "refused").step(t, "refused")
	wantMCPAction(t, s, "ASK")
	p, _ := s.Structured["problem"].(map[string]any)
	errs, _ := p["errors"].([]any)
	if s.Structured["slot"] != "reason" || len(errs) == 0 {
		t.Fatalf("a refused reason is asked again with a problem; got %v", s.Structured)
	}
	first, _ := errs[0].(map[string]any)
	allowed, _ := first["allowed_values"].([]any)
	if first["pointer"] != "/reason" || len(allowed) != 4 {
		t.Errorf("the problem points at /reason with the 4 allowed values; got %v", first)
	}
	if !strings.Contains(s.Text, "allowed values: duplicate, fraud, not_received, wrong_amount") {
		t.Errorf("the text tells the model what fits:\n%s", s.Text)
	}
}

func TestMCPTwoClientsAreTwoConversations(t *testing.T) {
	t.Parallel()
	inst := newMCPServer(t)
	run := runMCPClient(t, inst.srv.HTTPAddr(), bankKey, "two")
	a1, b1, a2 := run.step(t, "a1"), run.step(t, "b1"), run.step(t, "a2")
	if a1.Structured["conversation_id"] == b1.Structured["conversation_id"] {
		t.Fatalf("two MCP sessions share conversation %v", a1.Structured["conversation_id"])
	}
	if b1.Structured["slot"] != "card_last4" {
		t.Errorf("the second client's conversation has none of the first's slots: it asks the card first; got %v", b1.Structured)
	}
	if a2.Structured["slot"] != "original_operation_id" {
		t.Errorf("the first client's conversation went on unaffected; got %v", a2.Structured)
	}
}

func TestMCPWithoutKeyIs401(t *testing.T) {
	t.Parallel()
	inst := newMCPServer(t)
	s := runMCPClient(t, inst.srv.HTTPAddr(), "", "nokey").step(t, "nokey")
	if s.Connected || s.Code != float64(401) {
		t.Errorf("a client without a key connected=%v with code %v, want refused with 401: %s", s.Connected, s.Code, s.Message)
	}
}

func TestMCPElicitationFillsTheForm(t *testing.T) {
	t.Parallel()
	inst := newMCPServer(t)
	run := runMCPClient(t, inst.srv.HTTPAddr(), bankKey, "elicit")
	forms := run.all("elicitation")
	if len(forms) != 2 {
		t.Fatalf("slotd showed %d forms, want 2 (the reason, then the approval): %+v", len(forms), forms)
	}
	reason := forms[0]
	props, _ := reason.Schema["properties"].(map[string]any)
	field, _ := props["reason"].(map[string]any)
	if len(props) != 1 || field["type"] != "string" || len(field["enum"].([]any)) != 4 ||
		!strings.HasPrefix(field["description"].(string), "Что случилось с операцией") {
		t.Errorf("the first form asks the reason, with its question and its enum; got %v", reason.Schema)
	}
	if props["original_operation_id"] != nil {
		t.Errorf("a sensitive slot was put in a form: %v", props)
	}

	// The form's answer was a turn: the call came back asking what no
	// form may ask, the operation id.
	op := run.step(t, "dirty")
	wantMCPAction(t, op, "ASK")
	if op.Structured["slot"] != "original_operation_id" {
		t.Errorf("after the form, the sensitive operation id goes back to the model; got %v", op.Structured)
	}

	approval := forms[1]
	if p, _ := approval.Schema["properties"].(map[string]any); len(p) != 0 || !strings.HasPrefix(approval.Message, "Открываю спор по карте •• 4417") {
		t.Errorf("the second form is the approval of the summary; got %q %v", approval.Message, approval.Schema)
	}
	ready := run.step(t, "operation")
	wantMCPAction(t, ready, "READY")
	done := run.step(t, "complete")
	if done.IsError || done.Structured["status"] != "COMPLETED" {
		t.Errorf("slotd_complete after the forms: %v\n%s", done.Structured, done.Text)
	}
}
