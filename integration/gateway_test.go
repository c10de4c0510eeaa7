package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/slotd/slotd/api/openapi"
	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

// The HTTP/JSON gateway of slotd serve, against the real server on Postgres.

type httpReply struct {
	status int
	header http.Header
	body   []byte
}

func (r httpReply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.body)
	}
	return m
}

func httpCall(t *testing.T, method, url, key, body string) httpReply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return httpReply{status: resp.StatusCode, header: resp.Header, body: b}
}

func withHTTP(c *server.Config) { c.HTTPListen = "127.0.0.1:0" }

func withKeys(c *server.Config) {
	c.APIKeys = "bank:" + bankKey
	c.AdminKeys = "ops:" + adminKey
}

const seedTurnJSON = `{"conversation_id": "chat-42", "tool": "bank.open_dispute", "turn_id": "chat-42/1",
	"locale": "ru", "time_zone": "Europe/Moscow", "now": "2026-08-23T10:00:00Z",
	"arguments": {"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽"}}`

func TestGatewayTurn(t *testing.T) {
	t.Parallel()
	inst := startServer(t, dbtestURL(t), contractsDir(t), withHTTP, withKeys)
	base := "http://" + inst.srv.HTTPAddr()

	r := httpCall(t, http.MethodPost, base+"/v1/turn", bankKey, seedTurnJSON)
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("POST /v1/turn = %d %s, want 200 application/json\n%s", r.status, r.header.Get("Content-Type"), r.body)
	}
	got := r.json(t)
	q, _ := got["question"].(map[string]any)
	sess, _ := got["session"].(map[string]any)
	if got["action"] != "ACTION_ASK" || q["slot"] != "reason" || sess["conversation_id"] != "chat-42" || sess["version"] != "1" {
		t.Errorf("turn = %s, want ACTION_ASK about reason in conversation chat-42 at version 1 (proto field names)", r.body)
	}
	if r.header.Get("Slotd-Replayed") != "" {
		t.Errorf("a first turn says Slotd-Replayed: %q", r.header.Get("Slotd-Replayed"))
	}

	// The same turn_id again: the stored response, said so in a header.
	again := httpCall(t, http.MethodPost, base+"/v1/turn", bankKey, seedTurnJSON)
	if again.status != http.StatusOK || again.header.Get("Slotd-Replayed") != "true" || !bytes.Equal(again.body, r.body) {
		t.Errorf("repeated turn = %d, Slotd-Replayed %q, same body %v; want 200, true, true",
			again.status, again.header.Get("Slotd-Replayed"), bytes.Equal(again.body, r.body))
	}

	// What HTTP did is what gRPC sees: one turn, in the tenant's conversation.
	gs, err := inst.client.GetSession(as(bankKey), &slotdv1.GetSessionRequest{ConversationId: "chat-42"})
	if err != nil || gs.Session.Version != 1 {
		t.Fatalf("GetSession over gRPC after the HTTP turn = %v, %v; want version 1", gs, err)
	}

	// A refused value is a business outcome: 200 with the problem in the body.
	r = httpCall(t, http.MethodPost, base+"/v1/turn", bankKey,
		`{"conversation_id": "chat-42", "tool": "bank.open_dispute", "turn_id": "chat-42/2", "now": "2026-08-23T10:01:00Z", "arguments": {"reason": "chargeback please"}}`)
	got = r.json(t)
	p, _ := got["problem"].(map[string]any)
	if r.status != http.StatusOK || p == nil || got["action"] != "ACTION_ASK" {
		t.Fatalf("refused value = %d %s, want 200 with ACTION_ASK and a problem", r.status, r.body)
	}
	if errs, _ := p["errors"].([]any); len(errs) != 1 || !strings.Contains(fmt.Sprint(errs[0]), "not_received") {
		t.Errorf("problem errors = %v, want the reason's allowed values", p["errors"])
	}

	// GET with query parameters; the admin API under /v1/admin with an admin key.
	r = httpCall(t, http.MethodGet, base+"/v1/session?conversation_id=chat-42", bankKey, "")
	if s, _ := r.json(t)["session"].(map[string]any); r.status != http.StatusOK || s["version"] != "2" {
		t.Errorf("GET /v1/session = %d %s, want 200 at version 2", r.status, r.body)
	}
	r = httpCall(t, http.MethodGet, base+"/v1/admin/sessions?tenant=bank", adminKey, "")
	if list, _ := r.json(t)["sessions"].([]any); r.status != http.StatusOK || len(list) != 1 {
		t.Errorf("GET /v1/admin/sessions = %d %s, want 200 with one session", r.status, r.body)
	}
	r = httpCall(t, http.MethodGet, base+"/v1/contracts", bankKey, "")
	if !strings.Contains(string(r.body), `"bank.open_dispute"`) {
		t.Errorf("GET /v1/contracts = %d %s, want bank.open_dispute listed", r.status, r.body)
	}
}

// TestGatewayRefusesDataAfterTheBody: a body is one JSON object. A second
// one after it (two requests glued together by a client's bug, or a
// smuggling attempt) is refused with a problem before anything is stored,
// while the whitespace and line ends editors and curl leave after it are
// not data.
func TestGatewayRefusesDataAfterTheBody(t *testing.T) {
	t.Parallel()
	inst := startServer(t, dbtestURL(t), contractsDir(t), withHTTP, withKeys)
	base := "http://" + inst.srv.HTTPAddr()
	turn := func(conv string) string {
		return `{"conversation_id": "` + conv + `", "tool": "bank.open_dispute", "turn_id": "` + conv + `/1", "arguments": {"reason": "not_received"}}`
	}
	for _, body := range []string{
		turn("glued") + turn("glued-too"),
		turn("glued") + "\n" + turn("glued-too"),
		turn("glued") + ` 4111 1111 1111 1111`,
		turn("glued") + `}`,
		turn("glued") + "\r\nGET /v1/admin/sessions HTTP/1.1\r\n",
	} {
		r := httpCall(t, http.MethodPost, base+"/v1/turn", bankKey, body)
		p := r.json(t)
		if r.status != http.StatusBadRequest || p["type"] != "https://slotd.dev/problems/invalid-request" ||
			!strings.Contains(fmt.Sprint(p["detail"]), "goes on after its JSON object") {
			t.Errorf("POST /v1/turn with %q = %d %s, want 400 invalid-request saying the body goes on", body, r.status, r.body)
		}
		if strings.Contains(string(r.body), "4111") {
			t.Errorf("the problem repeats the body's card number: %s", r.body)
		}
	}
	for _, conv := range []string{"glued", "glued-too"} {
		if _, err := inst.client.GetSession(as(bankKey), &slotdv1.GetSessionRequest{ConversationId: conv}); status.Code(err) != codes.NotFound {
			t.Errorf("GetSession(%s) after the refused bodies = %v, want NotFound: nothing may be stored", conv, err)
		}
	}
	for _, tail := range []string{"\n", "\r\n", " \t\r\n\n"} {
		conv := fmt.Sprintf("tail-%d", len(tail))
		if r := httpCall(t, http.MethodPost, base+"/v1/turn", bankKey, turn(conv)+tail); r.status != http.StatusOK {
			t.Errorf("POST /v1/turn ending in %q = %d %s, want 200", tail, r.status, r.body)
		}
	}
}

// TestGatewayErrorsAreProblems checks every kind of refusal: an RFC 9457
// document as application/problem+json whose status is the HTTP status, and
// the HTTP status of the gRPC code the same call gets over gRPC.
func TestGatewayErrorsAreProblems(t *testing.T) {
	t.Parallel()
	inst := startServer(t, dbtestURL(t), contractsDir(t), withHTTP, withKeys)
	base := "http://" + inst.srv.HTTPAddr()
	turn := func(tool string) string {
		return `{"conversation_id": "c", "tool": "` + tool + `", "turn_id": "t", "arguments": {"reason": "fraud"}}`
	}
	grpcTurn := func(key, tool string) error {
		req := &slotdv1.TurnRequest{}
		if err := protojson.Unmarshal([]byte(turn(tool)), req); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if key != "" {
			ctx = as(key)
		}
		_, err := inst.client.Turn(ctx, req)
		return err
	}
	tests := []struct {
		name, method, path, key, body string
		wantStatus                    int
		wantType                      string
		grpc                          func() error // the same call over gRPC, when there is one
	}{
		{"no key", "POST", "/v1/turn", "", turn("bank.open_dispute"), 401, "unauthenticated",
			func() error { return grpcTurn("", "bank.open_dispute") }},
		{"wrong key", "POST", "/v1/turn", "not-a-key-0123456789abcdef", turn("bank.open_dispute"), 401, "unauthenticated",
			func() error { return grpcTurn("not-a-key-0123456789abcdef", "bank.open_dispute") }},
		{"admin key on a tenant's API", "POST", "/v1/turn", adminKey, turn("bank.open_dispute"), 403, "permission-denied",
			func() error { return grpcTurn(adminKey, "bank.open_dispute") }},
		{"tenant key on the admin API", "GET", "/v1/admin/sessions", bankKey, "", 403, "permission-denied",
			func() error {
				_, err := inst.admin.ListSessions(as(bankKey), &slotdv1.ListSessionsRequest{})
				return err
			}},
		{"unknown tool", "POST", "/v1/turn", bankKey, turn("bank.no_such_tool"), 404, "unknown-tool",
			func() error { return grpcTurn(bankKey, "bank.no_such_tool") }},
		{"no such session", "GET", "/v1/session?conversation_id=nobody", bankKey, "", 404, "not-found",
			func() error {
				_, err := inst.client.GetSession(as(bankKey), &slotdv1.GetSessionRequest{ConversationId: "nobody"})
				return err
			}},
		{"malformed JSON", "POST", "/v1/turn", bankKey, `{"conversation_id": `, 400, "invalid-request", nil},
		{"misspelt field", "POST", "/v1/turn", bankKey, `{"conversationId": "c", "tol": "bank.open_dispute"}`, 400, "invalid-request", nil},
		{"no such route", "GET", "/v1/nothing-here", bankKey, "", 404, "not-found", nil},
		{"wrong method", "DELETE", "/v1/turn", bankKey, "", 405, "invalid-request", nil},
		{"body too large", "POST", "/v1/turn", bankKey, `{"conversation_id": "` + strings.Repeat("x", 5<<20) + `"}`, 413, "invalid-request", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := httpCall(t, tt.method, base+tt.path, tt.key, tt.body)
			if r.status != tt.wantStatus {
				t.Errorf("%s %s = %d, want %d\n%s", tt.method, tt.path, r.status, tt.wantStatus, r.body)
			}
			if ct := r.header.Get("Content-Type"); ct != server.ProblemContentType {
				t.Errorf("Content-Type = %q, want %s", ct, server.ProblemContentType)
			}
			p := r.json(t)
			if p["status"] != float64(r.status) {
				t.Errorf("problem status = %v, HTTP status %d: RFC 9457 wants them equal", p["status"], r.status)
			}
			if p["type"] != "https://slotd.dev/problems/"+tt.wantType || p["title"] == "" {
				t.Errorf("problem = %s, want type .../%s and a title", r.body, tt.wantType)
			}
			if _, ok := p["retryable"].(bool); !ok {
				t.Errorf("problem lacks the retryable member: %s", r.body)
			}
			if tt.grpc != nil {
				code := status.Code(tt.grpc())
				if want := runtime.HTTPStatusFromCode(code); r.status != want {
					t.Errorf("HTTP status %d, but gRPC answers %v, which is HTTP %d", r.status, code, want)
				}
			}
		})
	}
}

func TestGatewayRetryableProblemWhilePostgresIsAway(t *testing.T) {
	t.Parallel()
	srv, err := server.New(server.Config{Listen: "127.0.0.1:0", HTTPListen: "127.0.0.1:0", Contracts: contractsDir(t),
		DatabaseURL: "postgres://postgres@" + servertest.FreeAddr(t) + "/postgres?sslmode=disable&connect_timeout=1", Session: session.Config{TrustClientClock: true}}, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	servertest.Run(t, srv.Run) // without waiting for it to be SERVING
	base := "http://" + srv.HTTPAddr()
	r := httpCall(t, http.MethodPost, base+"/v1/turn", "", seedTurnJSON)
	p := r.json(t)
	if r.status != http.StatusServiceUnavailable || p["retryable"] != true || r.header.Get("Content-Type") != server.ProblemContentType {
		t.Fatalf("turn without Postgres = %d %s %s, want 503 problem+json, retryable", r.status, r.header.Get("Content-Type"), r.body)
	}
	if after, _ := p["retry_after_seconds"].(float64); after < 1 || r.header.Get("Retry-After") != fmt.Sprint(after) {
		t.Errorf("retry_after_seconds %v, Retry-After %q; want at least 1 and the same in both", p["retry_after_seconds"], r.header.Get("Retry-After"))
	}
	if h := httpCall(t, http.MethodGet, base+server.HealthPath, "", ""); h.status != http.StatusServiceUnavailable {
		t.Errorf("GET %s without Postgres = %d, want 503\n%s", server.HealthPath, h.status, h.body)
	}
}

// TestGatewayServesEveryOperationOfItsOpenAPIDocument checks that the
// committed document and the gateway agree: every path it lists is routed,
// and it is what the gateway serves at /v1/openapi.json.
func TestGatewayServesEveryOperationOfItsOpenAPIDocument(t *testing.T) {
	t.Parallel()
	inst := startServer(t, dbtestURL(t), contractsDir(t), withHTTP)
	base := "http://" + inst.srv.HTTPAddr()
	served := httpCall(t, http.MethodGet, base+server.OpenAPIPath, "", "")
	if served.status != http.StatusOK || !bytes.Equal(served.body, openapi.Document) {
		t.Fatalf("GET %s = %d (%d bytes), want 200 with the committed document", server.OpenAPIPath, served.status, len(served.body))
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openapi.Document, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Paths) == 0 {
		t.Fatal("the OpenAPI document has no paths")
	}
	for path, ops := range doc.Paths {
		for method := range ops {
			url := base + strings.ReplaceAll(path, "{tool}", "bank.open_dispute")
			body := ""
			if method == "post" {
				body = "{}"
			}
			r := httpCall(t, strings.ToUpper(method), url, "", body)
			if strings.Contains(string(r.body), "no such HTTP route") || r.status == http.StatusMethodNotAllowed {
				t.Errorf("%s %s (in the OpenAPI document) is not routed: %d %s", strings.ToUpper(method), path, r.status, r.body)
			}
		}
	}
}

func TestGatewayHealth(t *testing.T) {
	t.Parallel()
	inst := startServer(t, "", contractsDir(t), withHTTP)
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := httpCall(t, http.MethodGet, "http://"+inst.srv.HTTPAddr()+server.HealthPath, "", "")
		if r.status == http.StatusOK && strings.Contains(string(r.body), "SERVING") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s = %d %s, want 200 SERVING", server.HealthPath, r.status, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
