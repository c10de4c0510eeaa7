package mcp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/redact"
	"github.com/slotd/slotd/problem"
)

// turnCall is one tools/call of a contract's tool, as slotd turns see it.
type turnCall struct {
	tool *toolDef
	// conv is the slotd conversation; base the turn id of the call's first
	// turn, to which each form's answer adds "/<round>".
	conv, base       string
	locale, timeZone string
	// md carries the caller's key and request id to SlotService.
	md        metadata.MD
	stateless bool
}

// callInput is a tools/call's arguments with slotd's own taken out.
type callInput struct {
	args         map[string]any
	confirm      *bool
	conversation string
}

func (h *Handler) turnHandler(t *toolDef) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		start := time.Now()
		res, outcome, call := h.answerTurn(ctx, t, req)
		h.m.Call(t.c.Name, outcome, time.Since(start))
		h.logCall(ctx, t.c.Name, outcome, call, time.Since(start))
		return res, nil
	}
}

func (h *Handler) answerTurn(ctx context.Context, t *toolDef, req *sdk.CallToolRequest) (*sdk.CallToolResult, string, *turnCall) {
	in, perr := readInput(req.Params.Arguments)
	call := h.newCall(t, req, in)
	if perr != nil {
		return failure(call.conv, perr), errorOutcome, call
	}
	var (
		resp *slotdv1.TurnResponse
		note string
		err  error
	)
	if call.stateless {
		var form *sdk.CallToolResult
		resp, form, err = h.statelessRounds(ctx, call, req, in)
		if form != nil {
			return form, "FORM", call
		}
	} else {
		resp, note, err = h.sessionRounds(ctx, call, req, in)
	}
	if err != nil {
		return failure(call.conv, problemFromError(ctx, err)), errorOutcome, call
	}
	return h.turnResult(call, resp, note), actionName(resp.GetAction()), call
}

const errorOutcome = "ERROR"

// sessionRounds plays a call on a protocol version with sessions: the turn
// of its arguments, then, while the client can show forms and the answer
// is a question for the user, a form and the turn of its answer, up to
// MaxRounds forms.
func (h *Handler) sessionRounds(ctx context.Context, call *turnCall, req *sdk.CallToolRequest, in callInput) (*slotdv1.TurnResponse, string, error) {
	var header metadata.MD
	resp, err := h.turn(ctx, call, 0, in.args, in.confirm, grpc.Header(&header))
	// A replay is the same request sent again: its forms were shown, and
	// answered, the first time.
	if err != nil || !canElicit(req) || len(header.Get(api.ReplayedHeader)) > 0 {
		return resp, "", err
	}
	hc := h.call(req.Extra.Header)
	for round := 1; round <= MaxRounds; round++ {
		f := formFor(call.tool.c, resp)
		if f == nil {
			return resp, "", nil
		}
		res, note, shown := h.elicit(ctx, hc, req.Session, f)
		if res == nil {
			if shown {
				h.m.Elicitation(call.tool.c.Name, f.kind, "error")
			}
			return resp, note, nil
		}
		h.m.Elicitation(call.tool.c.Name, f.kind, res.Action)
		a := f.answer(res)
		if a.stop {
			return resp, a.note, nil
		}
		earlier := resp.GetChanges()
		if resp, err = h.turn(ctx, call, round, a.args, a.confirm); err != nil {
			return nil, "", err
		}
		// The model hears of the whole call: what its own arguments did
		// and what the forms did.
		resp.Changes = append(earlier, resp.Changes...)
	}
	return resp, "", nil
}

// elicit shows a form and waits for its answer: until FormTimeout, or until
// the client hangs up or cancels the call, whichever comes first. A form
// past the tenant's or the session's cap of waiting forms is not shown;
// nil and what to tell the model when there is no answer.
func (h *Handler) elicit(ctx context.Context, hc *httpCall, ss *sdk.ServerSession, f *form) (res *sdk.ElicitResult, note string, shown bool) {
	release, why := h.places.form(ss.ID())
	if release == nil {
		h.m.FormRefused(why)
		return nil, "No form was shown: as many as allowed already wait for an answer. Ask the user yourself.", false
	}
	defer release()
	wait := h.cfg.Limits.FormTimeout
	hc.awaitUser(wait)
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if hc.ctx != nil {
		defer context.AfterFunc(hc.ctx, cancel)()
	}
	res, err := ss.Elicit(ctx, f.params)
	if err != nil {
		return nil, "The form could not be shown to the user, or was not answered in time.", true
	}
	return res, "", true
}

// statelessRounds plays a call on the stateless protocol, where a server
// cannot ask the client anything mid-call: a form is the call's result
// (input required), and the client calls again with the user's answer and
// the state slotd gave it. Every round is one turn.
func (h *Handler) statelessRounds(ctx context.Context, call *turnCall, req *sdk.CallToolRequest, in callInput) (*slotdv1.TurnResponse, *sdk.CallToolResult, error) {
	p := req.Params
	round := 0
	var resp *slotdv1.TurnResponse
	var err error
	if p.RequestState != "" || len(p.InputResponses) > 0 {
		st, ok := decodeState(p.RequestState)
		if !ok {
			return nil, nil, problem.InvalidRequest("requestState", "not one this server gave; call again without it")
		}
		call.conv, call.base, round = st.Conv, st.Base, st.Round
		f := &form{kind: st.Kind, fields: st.Fields}
		res, _ := p.InputResponses[elicitKey].(*sdk.ElicitResult)
		result := "error"
		if res != nil {
			result = res.Action
		}
		h.m.Elicitation(call.tool.c.Name, f.kind, result)
		a := f.answer(res)
		if a.stop {
			// The previous round's turn, replayed: what to hand the model.
			resp, err = h.turn(ctx, call, round-1, nil, nil)
			return resp, nil, err
		}
		resp, err = h.turn(ctx, call, round, a.args, a.confirm)
	} else {
		resp, err = h.turn(ctx, call, 0, in.args, in.confirm)
	}
	if err != nil || round >= MaxRounds || !canElicit(req) || req.ProtocolVersion() < StatelessVersion {
		return resp, nil, err
	}
	f := formFor(call.tool.c, resp)
	if f == nil {
		return resp, nil, nil
	}
	st := roundState{V: 1, Conv: call.conv, Base: call.base, Round: round + 1, Kind: f.kind, Fields: f.fields}
	return nil, &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{elicitKey: f.params}, RequestState: st.encode()}, nil
}

// canElicit: the client declared it can show forms (an empty elicitation
// capability means forms, for clients older than form and url modes).
func canElicit(req *sdk.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	return caps.Elicitation.Form != nil || caps.Elicitation.URL == nil
}

// turn sends one turn of the call to SlotService: round 0 is the call's own
// arguments, each later round a form's answer.
func (h *Handler) turn(ctx context.Context, call *turnCall, round int, args map[string]any, confirm *bool, opts ...grpc.CallOption) (*slotdv1.TurnResponse, error) {
	turnID := call.base
	if round > 0 {
		turnID += "/" + strconv.Itoa(round)
	}
	tr := &slotdv1.TurnRequest{ConversationId: call.conv, Tool: call.tool.c.Name, TurnId: turnID,
		Locale: call.locale, TimeZone: call.timeZone}
	if len(args) > 0 {
		s, err := structpb.NewStruct(args)
		if err != nil {
			return nil, problem.InvalidRequest("arguments", "not JSON values")
		}
		tr.Arguments = s
	}
	if confirm != nil {
		tr.Confirmation = &slotdv1.Confirmation{Accept: *confirm}
	}
	ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(ctx, call.md), h.cfg.Limits.CallTimeout)
	defer cancel()
	return h.cfg.Slots.Turn(ctx, tr, opts...)
}

// newCall names the call's conversation and first turn.
//
// The conversation (conversationOf): the one the client names in _meta,
// else the one the model passes back, else with sessions the MCP session,
// else a new one, which the result hands the model.
//
// The turn id, which makes a retry of the same request a replay of its
// stored answer: _meta's when the client names one. With sessions, the
// session and the JSON-RPC id, which the protocol makes unique within a
// session, so a repeated id is the same request sent again. Without, ids
// are unique to nothing, so the request's content joins them: the same id
// with the same tool, arguments and answer in the same conversation is
// taken for a retry.
func (h *Handler) newCall(t *toolDef, req *sdk.CallToolRequest, in callInput) *turnCall {
	call := &turnCall{tool: t}
	meta := req.Params.GetMeta()
	call.locale, call.timeZone = metaString(meta, MetaLocale), metaString(meta, MetaTimeZone)
	sid := ""
	if req.Session != nil {
		sid = req.Session.ID()
	}
	call.stateless = sid == ""
	call.conv = conversationOf(meta, in.conversation, sid)
	var header map[string][]string
	if req.Extra != nil {
		header = req.Extra.Header
	}
	rpcID := h.call(header).id
	switch {
	case metaString(meta, MetaTurn) != "":
		call.base = metaString(meta, MetaTurn)
	case rpcID == "":
		// No id to be idempotent on (not over HTTP): a turn of its own.
		call.base = "mcp/" + rand.Text()
	case !call.stateless:
		// The session, not the conversation: two sessions that name one
		// conversation (the Inspector CLI opens one per call) reuse
		// JSON-RPC ids.
		call.base = "mcp/" + digest("mcp-"+sid, rpcID)
	default:
		args, _ := json.Marshal(in.args)
		confirm := "-"
		if in.confirm != nil {
			confirm = strconv.FormatBool(*in.confirm)
		}
		call.base = "mcp/" + digest(call.conv, rpcID, t.name, string(args), confirm)
	}
	call.md = mdOf(req)
	return call
}

// conversationOf is a call's conversation: the one _meta names, else the
// slotd_conversation_id argument, else the MCP session's (two sessions
// never share slots unless named so), else a new one. A named conversation
// is honoured on both protocols: a client that opens a session per call
// (the Inspector CLI, Python's MultiServerMCPClient) keeps its slots by
// passing the id back. It is bound to the tenant of the call's key, as
// every conversation is, so another tenant's id names a conversation of
// the caller's own.
func conversationOf(meta map[string]any, arg, sid string) string {
	switch {
	case metaString(meta, MetaConversation) != "":
		return metaString(meta, MetaConversation)
	case arg != "":
		return arg
	case sid != "":
		return "mcp-" + sid
	}
	return "mcp-" + rand.Text()
}

// digest is a short, card-free id for parts: base32 letters and the digits
// 2 to 7, never a run a card number detector would take for one.
func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return strings.ToLower(base32.StdEncoding.EncodeToString(h.Sum(nil)[:15]))
}

func newRequestID() string { return uuid.NewString() }

func metaString(meta map[string]any, key string) string {
	s, _ := meta[key].(string)
	return s
}

// readInput splits a call's arguments into the contract's and slotd's own.
func readInput(raw json.RawMessage) (callInput, *problem.Problem) {
	in := callInput{args: map[string]any{}}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &in.args); err != nil || in.args == nil {
			return callInput{}, invalid("arguments", "the arguments are not a JSON object")
		}
	}
	if v, ok := in.args[ConfirmArg]; ok {
		delete(in.args, ConfirmArg)
		switch b := v.(type) {
		case nil:
		case bool:
			in.confirm = &b
		case string:
			// Models write booleans as text now and then.
			if yes, err := strconv.ParseBool(strings.TrimSpace(b)); err == nil {
				in.confirm = &yes
			} else {
				return in, invalid(ConfirmArg, "true for yes, false for no")
			}
		default:
			return in, invalid(ConfirmArg, "true for yes, false for no")
		}
	}
	if v, ok := in.args[ConversationArg]; ok {
		delete(in.args, ConversationArg)
		if s, ok := v.(string); ok {
			in.conversation = strings.TrimSpace(s)
		}
	}
	return in, nil
}

// invalid is a refused argument of a call, with its kind's status as api
// answers it.
func invalid(field, msg string) *problem.Problem {
	p := api.ProblemOfError(context.Background(), problem.InvalidRequest(field, msg))
	return &p
}

// problemFromError is a failed SlotService call's problem, as api answers
// it on gRPC and HTTP: the one in its status details (every error slotd's
// services answer with carries one), api's for the bare code of what never
// reached them, or, for an error of this package's own, its kind's status
// and retry advice from api's table.
func problemFromError(ctx context.Context, err error) *problem.Problem {
	var p problem.Problem
	if st, ok := status.FromError(err); ok {
		p = api.ProblemOfStatus(st)
	} else {
		p = api.ProblemOfError(ctx, err)
	}
	return &p
}

// turnResult is a turn's answer as the tool's result.
func (h *Handler) turnResult(call *turnCall, resp *slotdv1.TurnResponse, note string) *sdk.CallToolResult {
	content := turnContent(resp)
	content["conversation_id"] = call.conv
	text := turnText(call.tool.name, resp)
	if note != "" {
		text = note + "\n" + text
	}
	if call.stateless {
		text += "\nPass " + ConversationArg + ": " + strconv.Quote(call.conv) + " on every later call of slotd's tools in this conversation."
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, StructuredContent: content}
}

// logCall writes a call's line: names, counts and ids, never an argument,
// as the turn lines SlotService writes for each of its turns.
func (h *Handler) logCall(ctx context.Context, tool, outcome string, call *turnCall, d time.Duration) {
	level := slog.LevelInfo
	if outcome == errorOutcome {
		level = slog.LevelWarn
	}
	if !h.cfg.Log.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{slog.String("tool", tool), slog.String("outcome", outcome),
		slog.Float64("latency_ms", float64(d.Microseconds())/1000)}
	if call != nil {
		attrs = append(attrs, slog.String("conversation_id", redact.LoggedID(call.conv)), slog.Bool("stateless", call.stateless))
		if ids := call.md.Get("x-request-id"); len(ids) == 1 {
			attrs = append(attrs, slog.String("request_id", redact.LoggedID(ids[0])))
		}
	}
	h.cfg.Log.LogAttrs(ctx, level, "mcp call", attrs...)
}
