package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

const (
	bankKey  = "bank-key-0123456789abcdef"
	shopKey  = "shop-key-0123456789abcdef"
	adminKey = "admin-key-0123456789abcdef"
)

// slotd is a real slotd on the memory store with its HTTP listener; the
// MCP endpoint's URL.
func slotd(t *testing.T, opts ...func(*server.Config)) (*server.Server, string) {
	t.Helper()
	cfg := server.Config{Listen: "127.0.0.1:0", HTTPListen: "127.0.0.1:0", Contracts: "../../../contracts", Store: "memory",
		HealthInterval: 50 * time.Millisecond, APIKeys: "bank:" + bankKey + ",shop:" + shopKey, AdminKeys: "ops:" + adminKey}
	for _, o := range opts {
		o(&cfg)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := server.New(cfg, log)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	servertest.Run(t, srv.Run)
	url := "http://" + srv.HTTPAddr()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return srv, url + "/mcp"
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("slotd did not become ready")
	return nil, ""
}

type bearer struct {
	key  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.key != "" {
		r.Header.Set("Authorization", "Bearer "+b.key)
	}
	return b.base.RoundTrip(r)
}

func connect(t *testing.T, url, key, version string, copts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "slotd-test", Version: "1"}, copts)
	tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{key, http.DefaultTransport}}}
	cs, err := c.Connect(context.Background(), tr, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) (*sdk.CallToolResult, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s %v: %v", tool, args, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return res, m
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

var seed = map[string]any{"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽"}

func structured(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	b, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func want(t *testing.T, m map[string]any, action, slot string) {
	t.Helper()
	if m["action"] != action || (slot != "" && m["slot"] != slot) {
		t.Fatalf("got action %v slot %v, want %s %s: %v", m["action"], m["slot"], action, slot, m)
	}
}

// The Go SDK's own client speaks the stateless protocol when the server
// does: no session, so the model carries the conversation id.
func TestStatelessConversationIsPassedBack(t *testing.T) {
	t.Parallel()
	_, url := slotd(t)
	cs := connect(t, url, bankKey, "", nil)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the Go client negotiated %s, want the stateless 2026-07-28", v)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) == 0 {
		t.Fatal("tools/list on the stateless protocol lists no tools")
	}
	for _, tl := range tools.Tools {
		props := tl.InputSchema.(map[string]any)["properties"].(map[string]any)
		if props["slotd_conversation_id"] == nil {
			t.Errorf("%s takes no slotd_conversation_id on the stateless protocol", tl.Name)
		}
	}

	res, m := call(t, cs, "bank_open_dispute", seed)
	want(t, m, "ASK", "reason")
	conv, _ := m["conversation_id"].(string)
	if conv == "" || !strings.Contains(text(res), `slotd_conversation_id: "`+conv+`"`) {
		t.Fatalf("the first stateless result names its conversation and tells the model to pass it back; conv %q, text:\n%s", conv, text(res))
	}
	_, m = call(t, cs, "bank_open_dispute", map[string]any{"reason": "Duplicate", "slotd_conversation_id": conv})
	want(t, m, "ASK", "original_operation_id")

	// Without the id the model starts another conversation, which has
	// none of the first's slots.
	_, other := call(t, cs, "bank_open_dispute", map[string]any{"reason": "fraud"})
	want(t, other, "ASK", "card_last4")
	if other["conversation_id"] == conv {
		t.Fatalf("a call without slotd_conversation_id joined conversation %s", conv)
	}

	// A client may name the conversation in _meta instead.
	res2, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "bank_open_dispute",
		Arguments: map[string]any{"original_operation_id": "op-20260822-0117"}, Meta: sdk.Meta{"dev.slotd/conversation_id": conv}})
	if err != nil {
		t.Fatal(err)
	}
	want(t, structured(t, res2), "CONFIRM", "")
	_, m = call(t, cs, "bank_open_dispute", map[string]any{"slotd_confirm": true, "slotd_conversation_id": conv})
	want(t, m, "READY", "")
	_, done := call(t, cs, "slotd_complete", map[string]any{"idempotency_key": m["idempotency_key"], "slotd_conversation_id": conv,
		"result": map[string]any{"status": "accepted", "case_id": "DSP-7781"}})
	if done["status"] != "COMPLETED" || done["conversation_id"] != conv {
		t.Fatalf("slotd_complete: %v", done)
	}
}

// On the stateless protocol a form is the call's result (input required);
// the Go client shows it through its handler and calls again with the
// answer, which slotd applies as the next turn.
func TestStatelessElicitationRoundTrips(t *testing.T) {
	t.Parallel()
	_, url := slotd(t)
	var asked []*sdk.ElicitParams
	cs := connect(t, url, bankKey, "", &sdk.ClientOptions{ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		asked = append(asked, req.Params)
		props := req.Params.RequestedSchema.(map[string]any)["properties"].(map[string]any)
		if props["reason"] != nil {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"reason": "duplicate"}}, nil
		}
		return &sdk.ElicitResult{Action: "decline"}, nil
	}})
	_, m := call(t, cs, "bank_open_dispute", seed)
	want(t, m, "ASK", "original_operation_id")
	if len(asked) != 1 {
		t.Fatalf("slotd asked %d forms, want 1 (the reason)", len(asked))
	}
	conv := m["conversation_id"].(string)
	// The approval form, declined: the user said no.
	_, m = call(t, cs, "bank_open_dispute", map[string]any{"original_operation_id": "op-20260822-0117", "slotd_conversation_id": conv})
	want(t, m, "CANCELLED", "")
	if len(asked) != 2 || !strings.HasPrefix(asked[1].Message, "Открываю спор") {
		t.Fatalf("the second form is the approval; forms: %d", len(asked))
	}
}

// With sessions, slotd asks the client mid-call; a user who closes the
// form leaves the question to the model.
func TestSessionElicitationClosedFormGoesBackToTheModel(t *testing.T) {
	t.Parallel()
	_, url := slotd(t)
	forms := 0
	cs := connect(t, url, bankKey, "2025-11-25", &sdk.ClientOptions{ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		forms++
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}})
	res, m := call(t, cs, "bank_open_dispute", seed)
	want(t, m, "ASK", "reason")
	if forms != 1 || !strings.HasPrefix(text(res), "The user closed the form without answering.") {
		t.Fatalf("forms %d; text:\n%s", forms, text(res))
	}
	changes, _ := m["changes"].([]any)
	if len(changes) != 3 {
		t.Errorf("the result reports what the call's own arguments did: %v", m["changes"])
	}
}

// A failure of the call itself is isError with the problem: here an id
// that holds a card number, which slotd refuses outright.
func TestSystemFailureIsAnErrorResult(t *testing.T) {
	t.Parallel()
	_, url := slotd(t)
	cs := connect(t, url, bankKey, "", nil)
	res, m := call(t, cs, "bank_open_dispute", map[string]any{"reason": "fraud", "slotd_conversation_id": "4111 1111 1111 1111"})
	p, _ := m["problem"].(map[string]any)
	if !res.IsError || p["retryable"] != false || p["owner_action_required"] != true || !strings.Contains(text(res), "Do not call again") {
		t.Fatalf("isError %v, problem %v, text:\n%s", res.IsError, p, text(res))
	}
	if strings.Contains(text(res)+fmt.Sprint(m), "4111 1111 1111 1111") {
		t.Errorf("the card number came back: %s", text(res))
	}
}

// A digression through MCP: the dispute is parked while flights are
// searched, the result lists it, and coming back is said.
func TestDigressionThroughMCP(t *testing.T) {
	t.Parallel()
	_, url := slotd(t)
	cs := connect(t, url, bankKey, "", nil)
	_, m := call(t, cs, "bank_open_dispute", seed)
	conv := m["conversation_id"].(string)
	// Turns more than two seconds apart: a user's digression, not the
	// parallel calls of one model message.
	time.Sleep(2100 * time.Millisecond)
	_, m = call(t, cs, "travel_search_flights", map[string]any{"from": "MAD", "slotd_conversation_id": conv})
	open, _ := m["open_sessions"].([]any)
	if len(open) != 1 || open[0].(map[string]any)["tool"] != "bank.open_dispute" || open[0].(map[string]any)["last_action"] != "ASK" {
		t.Fatalf("open sessions %v, want the parked dispute", m["open_sessions"])
	}
	time.Sleep(2100 * time.Millisecond)
	res, m := call(t, cs, "bank_open_dispute", map[string]any{"reason": "fraud", "slotd_conversation_id": conv})
	if m["resumed"] != true || !strings.Contains(text(res), "Tell the user:") || !strings.Contains(m["notice"].(string), "спор") {
		t.Errorf("back on the dispute: resumed %v notice %v, text:\n%s", m["resumed"], m["notice"], text(res))
	}
}
