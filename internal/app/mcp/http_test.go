package mcp_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/slotd/slotd/internal/app/server"
)

// rpc posts one JSON-RPC message to /mcp as a client would, and returns
// the status, the headers and the JSON-RPC message answered (from an SSE
// stream or a JSON body; nil for none).
func rpc(t *testing.T, url, key string, header map[string]string, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var msg map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(strings.NewReader(string(raw)))
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				_ = json.Unmarshal([]byte(d), &msg)
			}
		}
	} else {
		_ = json.Unmarshal(raw, &msg)
	}
	return resp.StatusCode, resp.Header, msg
}

// session opens an MCP session (2025-11-25) by hand and returns its id.
func session(t *testing.T, url, key string) string {
	t.Helper()
	status, h, _ := rpc(t, url, key, nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	sid := h.Get("Mcp-Session-Id")
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", status, sid)
	}
	hdr := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	if status, _, _ := rpc(t, url, key, hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		t.Fatalf("initialized: %d", status)
	}
	return sid
}

func toolResult(t *testing.T, msg map[string]any) map[string]any {
	t.Helper()
	res, _ := msg["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	if sc == nil {
		t.Fatalf("no structured result in %v", msg)
	}
	return sc
}

const seedCall = `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"bank_open_dispute","arguments":{"card_last4":"•• 4417","operation_date":"вчера","amount":"1 200,50 ₽"}}}`

// A client that sends the same JSON-RPC request again (its answer was
// lost) gets the stored answer: the turn is applied once.
func TestRetriedRequestIsAppliedOnce(t *testing.T) {
	t.Parallel()
	srv, url := slotd(t)
	sid := session(t, url, bankKey)
	hdr := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	_, _, first := rpc(t, url, bankKey, hdr, strings.Replace(seedCall, "%s", "7", 1))
	_, _, again := rpc(t, url, bankKey, hdr, strings.Replace(seedCall, "%s", "7", 1))
	_, _, next := rpc(t, url, bankKey, hdr, strings.Replace(seedCall, "%s", "8", 1))
	a, b, c := toolResult(t, first), toolResult(t, again), toolResult(t, next)
	if a["turn_id"] != b["turn_id"] || a["turn_id"] == c["turn_id"] {
		t.Fatalf("turn ids: id 7 %v, id 7 again %v, id 8 %v; want the retry to be the same turn and id 8 another", a["turn_id"], b["turn_id"], c["turn_id"])
	}
	if got := counter(t, srv, "slotd_turn_replays_total", map[string]string{"tool": "bank.open_dispute"}); got != 1 {
		t.Errorf("slotd_turn_replays_total = %v, want 1 (the retried id 7)", got)
	}
	// The same request id in another session is another request.
	sid2 := session(t, url, bankKey)
	_, _, other := rpc(t, url, bankKey, map[string]string{"Mcp-Session-Id": sid2, "Mcp-Protocol-Version": "2025-11-25"}, strings.Replace(seedCall, "%s", "7", 1))
	if d := toolResult(t, other); d["turn_id"] == a["turn_id"] || d["conversation_id"] == a["conversation_id"] {
		t.Errorf("id 7 of another session shares turn %v / conversation %v", d["turn_id"], d["conversation_id"])
	}
}

// On the stateless protocol ids are unique to nothing: the same id with
// the same arguments in the same conversation is a retry, the same id with
// other arguments another turn.
func TestStatelessRetryIsTheSameIDAndContent(t *testing.T) {
	t.Parallel()
	_, url := slotd(t)
	hdr := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "bank_open_dispute"}
	body := func(id, args string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"bank_open_dispute","arguments":` + args +
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	}
	status, _, msg := rpc(t, url, bankKey, hdr, body("1", `{"reason":"fraud"}`))
	if status != http.StatusOK {
		t.Fatalf("stateless tools/call: %d %v", status, msg)
	}
	first := toolResult(t, msg)
	conv := first["conversation_id"].(string)
	args := `{"card_last4":"4417","slotd_conversation_id":"` + conv + `"}`
	_, _, m1 := rpc(t, url, bankKey, hdr, body("2", args))
	_, _, m2 := rpc(t, url, bankKey, hdr, body("2", args))
	_, _, m3 := rpc(t, url, bankKey, hdr, body("2", `{"amount":"1 200,50 ₽","slotd_conversation_id":"`+conv+`"}`))
	a, b, c := toolResult(t, m1), toolResult(t, m2), toolResult(t, m3)
	if a["turn_id"] != b["turn_id"] || a["turn_id"] == c["turn_id"] {
		t.Fatalf("turn ids %v %v %v: want a retry to replay and other arguments to be another turn", a["turn_id"], b["turn_id"], c["turn_id"])
	}
	if c["slot"] != "operation_date" {
		t.Errorf("the conversation went on to the date; got %v", c)
	}
}

func TestEdge(t *testing.T) {
	t.Parallel()
	_, url := slotd(t)
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	for _, tc := range []struct {
		name, key, body string
		method          string
		status          int
	}{
		{"no key", "", init, http.MethodPost, http.StatusUnauthorized},
		{"unknown key", "not-a-key-0123456789abcdef", init, http.MethodPost, http.StatusUnauthorized},
		{"admin key", adminKey, init, http.MethodPost, http.StatusForbidden},
		{"standalone stream", bankKey, "", http.MethodGet, http.StatusMethodNotAllowed},
		{"deep JSON", bankKey, strings.Repeat("[", 100) + strings.Repeat("]", 100), http.MethodPost, http.StatusBadRequest},
		{"large body", bankKey, `{"x":"` + strings.Repeat("a", 2<<20) + `"}`, http.MethodPost, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, url, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.key != "" {
				req.Header.Set("Authorization", "Bearer "+tc.key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status || (tc.status != 405 && resp.Header.Get("Content-Type") != "application/problem+json") {
				t.Errorf("%s: %d %s, want %d with a problem", tc.name, resp.StatusCode, resp.Header.Get("Content-Type"), tc.status)
			}
		})
	}
}

// A session belongs to the tenant that opened it: another tenant's key is
// refused on it, even a valid one.
func TestSessionIsTheTenants(t *testing.T) {
	t.Parallel()
	_, url := slotd(t)
	sid := session(t, url, bankKey)
	status, _, _ := rpc(t, url, shopKey, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"},
		strings.Replace(seedCall, "%s", "1", 1))
	if status != http.StatusForbidden {
		t.Errorf("shop's key on bank's session: %d, want 403", status)
	}
}

func TestMCPCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	_, url := slotd(t, func(c *server.Config) { c.DisableMCP = true })
	if status, _, _ := rpc(t, url, bankKey, nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`); status != http.StatusNotFound {
		t.Errorf("/mcp with DisableMCP: %d, want 404", status)
	}
}

func TestMetricsCountCallsAndTurns(t *testing.T) {
	t.Parallel()
	srv, url := slotd(t)
	cs := connect(t, url, bankKey, "2025-11-25", nil)
	call(t, cs, "bank_open_dispute", seed)
	call(t, cs, "bank_open_dispute", map[string]any{"reason": "chargeback"})
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"slotd_mcp_tool_calls_total", map[string]string{"tool": "bank.open_dispute", "outcome": "ASK"}, 2},
		{"slotd_turn_actions_total", map[string]string{"tool": "bank.open_dispute", "action": "ASK"}, 2},
		{"slotd_rejected_values_total", map[string]string{"tool": "bank.open_dispute", "normalizer": "enum"}, 1},
		{"slotd_mcp_sessions", nil, 1},
	} {
		if got := counter(t, srv, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// counter is the value of the series of name with labels (a counter or a
// gauge); 0 when there is none.
func counter(t *testing.T, srv *server.Server, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := srv.Metrics().Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			for k, v := range labels {
				if !hasLabel(m, k, v) {
					continue next
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

func hasLabel(m *dto.Metric, k, v string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == k {
			return l.GetValue() == v
		}
	}
	return false
}

// Without keys (a loopback demo) anyone is the default tenant, and a
// request naming another host is refused: a page that rebinds a name to
// 127.0.0.1 reaches nothing.
func TestWithoutKeys(t *testing.T) {
	t.Parallel()
	_, url := slotd(t, func(c *server.Config) { c.APIKeys, c.AdminKeys = "", "" })
	cs := connect(t, url, "", "2025-11-25", nil)
	if _, m := call(t, cs, "bank_open_dispute", seed); m["slot"] != "reason" {
		t.Fatalf("a call without a key on a server without keys: %v", m)
	}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`))
	req.Host = "attacker.example"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("Host attacker.example on loopback: %d, want 403", resp.StatusCode)
	}
}

// A client that opens a session per call (the Inspector CLI) keeps its
// conversation by naming it: slotd_conversation_id is honoured on the
// session protocol too, the same JSON-RPC id in the new session is a new
// turn, and another tenant's key naming that id gets a conversation of its
// own, not the bank's slots.
func TestSessionCallNamesItsConversation(t *testing.T) {
	t.Parallel()
	_, url := slotd(t)
	callIn := func(key, args string) map[string]any {
		sid := session(t, url, key)
		_, _, msg := rpc(t, url, key, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"},
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bank_open_dispute","arguments":`+args+`}}`)
		return toolResult(t, msg)
	}
	first := callIn(bankKey, `{"card_last4":"•• 4417","operation_date":"вчера","amount":"1 200,50 ₽"}`)
	conv, _ := first["conversation_id"].(string)
	if first["slot"] != "reason" || conv == "" {
		t.Fatalf("first call: slot %v, conversation %q", first["slot"], conv)
	}
	second := callIn(bankKey, `{"reason":"Duplicate","slotd_conversation_id":"`+conv+`"}`)
	if second["conversation_id"] != conv || second["slot"] != "original_operation_id" || second["turn_id"] == first["turn_id"] {
		t.Fatalf("a second session naming %s: conversation %v, slot %v, turn %v (first turn %v); want the same conversation going on",
			conv, second["conversation_id"], second["slot"], second["turn_id"], first["turn_id"])
	}
	other := callIn(shopKey, `{"reason":"fraud","slotd_conversation_id":"`+conv+`"}`)
	if other["slot"] != "card_last4" {
		t.Errorf("another tenant naming %s sees its slots: asked %v", conv, other["slot"])
	}
}

// The SDK's own error for an unknown tool names the tool as called: a card
// number in the name, in any spelling, is masked in that answer.
func TestUnknownToolNeverEchoesACardNumber(t *testing.T) {
	t.Parallel()
	_, url := slotd(t)
	for i, name := range []string{"pay 4276 3819 6524 0172", "pay 4276\u00a03819\u200b6524\u202e0172", "⁴²⁷⁶³⁸¹⁹⁶⁵²⁴⁰¹⁷²"} {
		q, _ := json.Marshal(name)
		hdr := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}
		body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/call","params":{"name":` + string(q) +
			`,"arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		_, _, msg := rpc(t, url, bankKey, hdr, body)
		e, _ := msg["error"].(map[string]any)
		text, _ := e["message"].(string)
		if !strings.Contains(text, "unknown tool") || !strings.Contains(text, "•••• 0172") || strings.Contains(text, "3819") || strings.Contains(text, "³⁸¹⁹") {
			t.Errorf("tools/call %q: error %q; want unknown tool with the card masked", name, text)
		}
	}
}
