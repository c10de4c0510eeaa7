// Package mcp owns slotd as a Model Context Protocol server: one tool per
// contract whose every call is a turn of slotd's SlotService, slotd_complete
// for the backend's outcome, the conversation each call belongs to and the
// turn id that makes a retried request harmless, and the forms slotd shows
// the user itself (elicitation) when the client can show them.
//
// It serves Streamable HTTP in both protocol eras: versions up to
// 2025-11-25, where the MCP session is the conversation, and the stateless
// 2026-07-28, where the result hands the model a conversation_id to pass
// back. Every call goes through slotd's gRPC services over the in-process
// connection the HTTP gateway uses, so authentication, limits, recovery,
// metrics and logs apply to it exactly as to a gRPC call.
package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/slotd/slotd/api"
	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/auth"
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/metrics"
	"github.com/slotd/slotd/internal/redact"
	"github.com/slotd/slotd/problem"
)

// Path is where the endpoint answers on the HTTP listener.
const Path = "/mcp"

// StatelessVersion is the first protocol version without sessions; a
// request carrying it (in the Mcp-Protocol-Version header, which the
// protocol makes mirror the request's own _meta) is served statelessly.
const StatelessVersion = "2026-07-28"

// Bounds of what the endpoint holds for its callers.
const (
	// MaxSessions bounds the MCP sessions held at once; an initialize past
	// it is refused with 503 until idle ones close.
	MaxSessions = 10000
	// SessionIdle closes a session no request has used for this long. It
	// matches the default session ttl: a conversation older than that
	// starts over anyway.
	SessionIdle = 24 * time.Hour
	// ElicitTimeout bounds the time a user has to answer one form.
	ElicitTimeout = 5 * time.Minute
	// MaxRounds bounds the forms one tool call shows.
	MaxRounds = 3
	// callTimeout bounds each in-process call to SlotService.
	callTimeout = 10 * time.Second
	// writeSlack is what a response may take past a form's answer: a turn
	// and its delivery.
	writeSlack = 35 * time.Second
)

// Config is what the endpoint needs from the server that mounts it.
type Config struct {
	// Slots is slotd's own SlotService over the in-process connection.
	Slots slotdv1.SlotServiceClient
	// Contracts are the tools.
	Contracts *contract.Catalog
	// Keys are the server's API keys: a session is bound to the tenant that
	// opened it, and admin keys act for no tenant.
	Keys    *auth.Keys
	Metrics *metrics.Metrics
	Log     *slog.Logger
	// Version is slotd's, for serverInfo.
	Version string
}

// Handler serves /mcp.
type Handler struct {
	cfg       Config
	m         *metrics.MCP
	sessions  *sdk.Server // protocol versions with sessions
	stateless *sdk.Server // 2026-07-28
	withSess  http.Handler
	without   http.Handler
	// calls are the tools/call requests being answered, by the token put in
	// their callHeader: how a tool handler learns the JSON-RPC id of its
	// request and extends the time its response may take while a user fills
	// in a form. The SDK hands handlers the request's headers but neither.
	calls sync.Map
}

// callHeader carries a calls token from the HTTP layer to the tool handler.
// A client's own value is dropped.
const callHeader = "Slotd-Mcp-Call"

type httpCall struct {
	id string // the JSON-RPC id as JSON text
	rc *http.ResponseController
}

// New builds the endpoint: both MCP servers with a tool per contract and
// slotd_complete, behind one HTTP handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	h := &Handler{cfg: cfg, m: cfg.Metrics.MCP()}
	tools, err := buildTools(cfg.Contracts)
	if err != nil {
		return nil, err
	}
	impl := &sdk.Implementation{Name: "slotd", Title: "slotd slot filling", Version: cfg.Version}
	instructions := "Each tool fills one backend request's arguments over several turns: call it with whatever the user has said so far, " +
		"and do what the result's text says (ask the user, confirm, or call the backend). After the backend call, report its outcome with slotd_complete."
	h.sessions = sdk.NewServer(impl, &sdk.ServerOptions{Instructions: instructions, Logger: cfg.Log})
	h.stateless = sdk.NewServer(impl, &sdk.ServerOptions{Instructions: instructions + statelessInstructions, Logger: cfg.Log})
	h.sessions.AddReceivingMiddleware(maskErrors)
	h.stateless.AddReceivingMiddleware(maskErrors)
	for _, t := range tools {
		h.sessions.AddTool(t.tool(false), h.turnHandler(t))
		h.stateless.AddTool(t.tool(true), h.turnHandler(t))
	}
	h.sessions.AddTool(completeTool(false), h.completeHandler)
	h.stateless.AddTool(completeTool(true), h.completeHandler)

	opts := func(stateless bool) *sdk.StreamableHTTPOptions {
		return &sdk.StreamableHTTPOptions{
			Stateless:           stateless,
			Logger:              cfg.Log,
			SessionTimeout:      SessionIdle,
			MaxRequestBodyBytes: maxBody,
			// The SDK refuses a loopback request whose Host is not loopback
			// (DNS rebinding against a local server without keys). With
			// keys, a request needs one anyway, and a proxy on the same host
			// that keeps the Host header must get through.
			DisableLocalhostProtection: cfg.Keys.Enabled(),
		}
	}
	h.withSess = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return h.sessions }, opts(false))
	h.without = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return h.stateless }, opts(true))
	if cfg.Keys.Enabled() {
		// The SDK binds a session to the user the first request named and
		// refuses it to anyone else: here the tenant, so that no tenant can
		// drive (or show forms to the user of) another tenant's session.
		bind := mcpauth.RequireBearerToken(h.verify, nil)
		h.withSess, h.without = bind(h.withSess), bind(h.without)
	}
	h.m.CountSessions(h.sessionCount)
	return h, nil
}

// maskErrors masks card numbers in the SDK's own error texts, which echo
// what the client sent (`unknown tool "…"` names the tool as called), before
// the SDK answers or logs them. slotd's handlers answer with problems,
// masked where they are made.
func maskErrors(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil {
			return res, nil
		}
		msg := err.Error()
		var wire *jsonrpc.Error
		if errors.As(err, &wire) {
			msg = wire.Message
		}
		masked := redact.String(msg)
		if call, ok := req.(*sdk.CallToolRequest); ok && call.Params != nil {
			// The SDK quotes the name with %q, whose escapes (\u00a0,
			// \u200b) would hide the number from the detector.
			if q := strconv.Quote(call.Params.Name); strings.Contains(masked, q) {
				masked = strings.ReplaceAll(masked, q, strconv.Quote(redact.String(call.Params.Name)))
			}
		}
		switch {
		case masked == msg:
			return res, err
		case wire != nil:
			return res, &jsonrpc.Error{Code: wire.Code, Message: masked}
		}
		return res, errors.New(masked)
	}
}

// maxBody matches the gateway's bound of a request body, which the edge in
// front of the endpoint enforces first.
const maxBody = 1 << 20

const statelessInstructions = " This server keeps no MCP session: pass the conversation_id of a result back as slotd_conversation_id on every later call of the same conversation."

// verify names the tenant of a key the edge has already accepted.
func (h *Handler) verify(_ context.Context, token string, _ *http.Request) (*mcpauth.TokenInfo, error) {
	who, ok := h.cfg.Keys.Lookup(token)
	if !ok || who.Admin {
		return nil, mcpauth.ErrInvalidToken
	}
	// A key has no expiry of its own; the SDK wants one.
	return &mcpauth.TokenInfo{UserID: "tenant:" + who.Tenant, Expiration: time.Now().Add(24 * time.Hour)}, nil
}

func (h *Handler) sessionCount() int {
	n := 0
	for range h.sessions.Sessions() {
		n++
	}
	return n
}

// ServeHTTP routes a request to the stateless server when it speaks
// StatelessVersion or later, else to the server with sessions. The edge has
// checked the key and bounded the body.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		// slotd sends nothing unasked, so it opens no standalone stream;
		// the protocol lets a server answer 405 here, which spares a
		// connection held open per client.
		h.m.Refused("method")
		w.Header().Set("Allow", "POST, DELETE")
		api.WriteProblem(w, http.StatusMethodNotAllowed, problem.Problem{Type: problem.TypeInvalidRequest,
			Title: "Method not allowed", Detail: "slotd opens no stream for messages it is not asked for; POST requests", OwnerActionRequired: true})
		return
	}
	if h.cfg.Keys.Enabled() {
		if who, err := h.cfg.Keys.Check(r.Header.Values("Authorization")); err == nil && who.Admin {
			h.m.Refused("admin_key")
			api.WriteProblem(w, http.StatusForbidden, problem.Problem{Type: problem.TypePermissionDenied, Title: "Permission denied",
				Detail: "an admin key cannot act for a tenant; use the tenant's key", OwnerActionRequired: true})
			return
		}
	}
	r.Header.Del(callHeader)
	stateless := r.Header.Get("Mcp-Protocol-Version") >= StatelessVersion
	if r.Method == http.MethodPost {
		msg := singleRequest(r)
		switch {
		case msg == nil:
		case msg.Method == "initialize" && !stateless && h.sessionCount() >= MaxSessions:
			h.m.Refused("sessions_full")
			api.WriteProblem(w, http.StatusServiceUnavailable, problem.Problem{Type: problem.TypeOverloaded, Title: "Too many MCP sessions",
				Detail: "slotd holds as many MCP sessions as it may; idle ones close after " + SessionIdle.String(), Retryable: true, RetryAfterSeconds: 60})
			return
		case msg.Method == "tools/call" && msg.ID.IsValid():
			token := rand.Text()
			id, _ := json.Marshal(msg.ID.Raw())
			h.calls.Store(token, &httpCall{id: string(id), rc: http.NewResponseController(w)})
			defer h.calls.Delete(token)
			r.Header.Set(callHeader, token)
		}
	}
	if stateless {
		h.without.ServeHTTP(w, r)
		return
	}
	h.withSess.ServeHTTP(w, r)
}

// singleRequest is the body's JSON-RPC request when it holds exactly one
// (every protocol version since 2025-06-18 sends no batches); nil else.
// The body is read again by the SDK.
func singleRequest(r *http.Request) *jsonrpc.Request {
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return nil
	}
	req, _ := msg.(*jsonrpc.Request)
	return req
}

// call is the HTTP side of a tool call: its JSON-RPC id, "" when unknown
// (a batch, or a transport other than HTTP).
func (h *Handler) call(header http.Header) *httpCall {
	if v, ok := h.calls.Load(header.Get(callHeader)); ok {
		return v.(*httpCall)
	}
	return &httpCall{}
}

// awaitUser lets the response of a call take until a form's answer and a
// turn after it: the HTTP server's write timeout is sized for a turn, not
// for a person.
func (c *httpCall) awaitUser() {
	if c.rc != nil {
		_ = c.rc.SetWriteDeadline(time.Now().Add(ElicitTimeout + writeSlack))
	}
}
