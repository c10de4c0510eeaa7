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
	segjson "github.com/segmentio/encoding/json"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/auth"
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
	// MaxRounds bounds the forms one tool call shows.
	MaxRounds = 3
	// writeSlack is what a response may take past a form's answer: a turn
	// and its delivery.
	writeSlack = 35 * time.Second
)

// Config is what the endpoint needs from the server that mounts it.
type Config struct {
	// Slots is slotd's own SlotService, called in the process.
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
	// Limits bound sessions and waiting forms; zero fields take the
	// defaults.
	Limits Limits
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
	// places are the sessions and waiting forms of each tenant; opening
	// are the places of requests that may open a session, by the token put
	// in their placeHeader, for the initialize handler to bind.
	places  *places
	opening sync.Map
}

// placeHeader carries an opening token from the HTTP layer to the
// initialize handler. A client's own value is dropped.
const placeHeader = "Slotd-Mcp-Place"

// callHeader carries a calls token from the HTTP layer to the tool handler.
// A client's own value is dropped.
const callHeader = "Slotd-Mcp-Call"

type httpCall struct {
	id string // the JSON-RPC id as JSON text
	rc *http.ResponseController
	// ctx is the HTTP request's: it ends when the client hangs up, which
	// the SDK does not pass on to a session's handlers.
	ctx context.Context
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
	cfg.Limits = cfg.Limits.WithDefaults()
	if err := cfg.Limits.Validate(); err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg, m: cfg.Metrics.MCP()}
	h.places = newPlaces(cfg.Limits, h.m)
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
	h.sessions.AddReceivingMiddleware(h.bindSession)
	h.stateless.AddTool(completeTool(true), h.completeHandler)

	opts := func(stateless bool) *sdk.StreamableHTTPOptions {
		return &sdk.StreamableHTTPOptions{
			Stateless: stateless,
			Logger:    cfg.Log,
			// places closes idle sessions (the SDK's SessionTimeout would
			// close them without telling it).
			MaxRequestBodyBytes: int64(cfg.Limits.MaxBodyBytes),
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
	h.m.CountSessions(h.places.count)
	h.m.SessionCap(h.places.lim.MaxSessions)
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

// ServeHTTP routes a request to the stateless server when it speaks
// StatelessVersion or later, else to the server with sessions, where it
// takes a place for the session it may open or marks its session's busy.
// The edge has checked the key and bounded the body.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		// slotd sends nothing unasked, so it opens no standalone stream;
		// the protocol lets a server answer 405 here, which spares a
		// connection held open per client.
		h.m.Refused("method")
		w.Header().Set("Allow", "POST, DELETE")
		api.WriteProblem(w, http.StatusMethodNotAllowed,
			problem.MethodNotAllowed("slotd opens no stream for messages it is not asked for; POST requests").Problem)
		return
	}
	tenant := ""
	if h.cfg.Keys.Enabled() {
		who, err := h.cfg.Keys.Check(r.Header.Values("Authorization"))
		if err == nil && who.Admin {
			h.m.Refused("admin_key")
			api.WriteProblem(w, http.StatusForbidden, problem.PermissionDenied("an admin key cannot act for a tenant; use the tenant's key").Problem)
			return
		}
		tenant = who.Tenant
	}
	r.Header.Del(callHeader)
	r.Header.Del(placeHeader)
	stateless := r.Header.Get("Mcp-Protocol-Version") >= StatelessVersion
	if r.Method == http.MethodPost {
		msgs, batch := requests(r)
		if batch {
			if detail := batchRefused(r, msgs); detail != "" {
				h.m.Refused("batch")
				api.WriteProblem(w, http.StatusBadRequest, problem.BatchRefused(detail).Problem)
				return
			}
		} else if len(msgs) == 1 && msgs[0].Method == "tools/call" && msgs[0].ID.IsValid() {
			token := rand.Text()
			id, _ := json.Marshal(msgs[0].ID.Raw())
			h.calls.Store(token, &httpCall{id: string(id), rc: http.NewResponseController(w), ctx: r.Context()})
			defer h.calls.Delete(token)
			r.Header.Set(callHeader, token)
		}
	}
	if stateless {
		h.without.ServeHTTP(w, r)
		return
	}
	switch sid := r.Header.Get("Mcp-Session-Id"); {
	case sid != "":
		p := h.places.use(sid, tenant)
		if p == nil {
			break // not this tenant's session: the SDK refuses it
		}
		defer h.places.done(p)
		if r.Method == http.MethodDelete {
			sw := &statusWriter{ResponseWriter: w}
			h.withSess.ServeHTTP(sw, r)
			if sw.status == http.StatusNoContent {
				h.places.drop(p)
			}
			return
		}
	case r.Method == http.MethodPost:
		// Any POST without a session makes one in the SDK, kept when it
		// initializes: its place is taken first.
		p, why := h.places.open(tenant)
		if p == nil {
			h.refuseSession(w, why)
			return
		}
		defer h.places.done(p)
		token := rand.Text()
		h.opening.Store(token, p)
		defer h.opening.Delete(token)
		r.Header.Set(placeHeader, token)
	}
	h.withSess.ServeHTTP(w, r)
}

func (h *Handler) refuseSession(w http.ResponseWriter, why string) {
	idle := h.cfg.Limits.SessionIdle.String()
	if why == fullTenant {
		h.m.Refused("tenant_sessions_full")
		api.WriteProblem(w, http.StatusTooManyRequests, problem.TenantSessionsFull(
			"this tenant holds as many MCP sessions as it may, none of them idle; end sessions with DELETE, or wait: idle ones close after "+idle, 60).Problem)
		return
	}
	h.m.Refused("sessions_full")
	api.WriteProblem(w, http.StatusServiceUnavailable, problem.SessionsFull("slotd holds as many MCP sessions as it may; idle ones close after "+idle, 60).Problem)
}

// bindSession gives the place a request took to the session its
// initialize made.
func (h *Handler) bindSession(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if method != "initialize" || err != nil || req.GetExtra() == nil {
			return res, err
		}
		ss, _ := req.GetSession().(*sdk.ServerSession)
		if v, ok := h.opening.LoadAndDelete(req.GetExtra().Header.Get(placeHeader)); ok && ss != nil {
			h.places.made(v.(*place), ss)
		}
		return res, err
	}
}

// requests are the body's JSON-RPC requests, and whether it is a batch.
// The body is read again by the SDK; one it cannot read is its to refuse.
func requests(r *http.Request) ([]*jsonrpc.Request, bool) {
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil, false
	}
	body = bytes.TrimLeft(body, " \t\r\n")
	var raws []json.RawMessage
	batch := len(body) > 0 && body[0] == '['
	if !batch {
		raws = []json.RawMessage{body}
	} else if json.Unmarshal(body, &raws) != nil {
		return nil, true
	}
	var out []*jsonrpc.Request
	for _, raw := range raws {
		if req := decodeRequest(raw); req != nil {
			out = append(out, req)
		}
	}
	return out, batch
}

// wireMessage is what jsonrpc.DecodeMessage reads of a message to tell a
// request from a response, less the response's fields.
type wireMessage struct {
	Version string          `json:"jsonrpc"`
	ID      any             `json:"id,omitempty"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// decodeRequest is raw's request as jsonrpc.DecodeMessage reads it (the
// same decoder, the SDK's, with its flags and rules), nil when raw is not
// one. DecodeMessage makes a decoder with a buffer of 32 KiB of its own
// for each message and for its method; this reads raw where it lies.
func decodeRequest(raw []byte) *jsonrpc.Request {
	const flags = segjson.DontMatchCaseInsensitiveStructFields
	var w wireMessage
	if _, err := segjson.Parse(raw, &w, flags); err != nil || w.Version != "2.0" || len(w.Method) == 0 {
		return nil
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil
	}
	var method string
	if _, err := segjson.Parse(w.Method, &method, flags); err != nil {
		return nil
	}
	return &jsonrpc.Request{Method: method, ID: id, Params: w.Params}
}

// batchRefused says why a JSON-RPC batch is not served, "" when it is:
// protocol versions since 2025-06-18 removed batches, and a batch opens at
// most one session, so it holds at most one initialize.
func batchRefused(r *http.Request, msgs []*jsonrpc.Request) string {
	const removedIn = "2025-06-18"
	if v := r.Header.Get("Mcp-Protocol-Version"); v >= removedIn {
		return "protocol version " + removedIn + " and later have no JSON-RPC batches; send one message per request"
	}
	inits := 0
	for _, m := range msgs {
		if m.Method != "initialize" {
			continue
		}
		inits++
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.ProtocolVersion >= removedIn {
			return "protocol version " + removedIn + " and later have no JSON-RPC batches; send one message per request"
		}
	}
	if inits > 1 {
		return "a batch may hold one initialize: each opens a session"
	}
	return ""
}

// statusWriter records the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

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
func (c *httpCall) awaitUser(wait time.Duration) {
	if c.rc != nil {
		_ = c.rc.SetWriteDeadline(time.Now().Add(wait + writeSlack))
	}
}
