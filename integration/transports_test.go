package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/app/mcp"
	"github.com/slotd/slotd/internal/app/mcpload"
	"github.com/slotd/slotd/internal/script"
	"github.com/slotd/slotd/internal/testkit/dbtest"
	"github.com/slotd/slotd/problem"
)

// TestScriptsOverEveryTransport plays every shipped script over gRPC, over
// the HTTP gateway and over MCP, and holds the three to the same answers:
// actions, questions, slots, arguments, changes and problems, ids and
// timestamps aside.
//
// HTTP carries everything a script sends (its clock included), and its
// answers are compared with gRPC's whole. MCP carries no clock, no reset
// and no completion: its turns are compared with gRPC turns sent without a
// clock (both at the server's), in what an MCP result holds (no slots: the
// model is told what is missing); a script's reset and complete steps go
// over gRPC in the MCP run too, so that its later turns are still compared.
func TestScriptsOverEveryTransport(t *testing.T) {
	t.Parallel()
	scripts, err := script.Load("scripts")
	if err != nil {
		t.Fatalf("scripts/: %v", err)
	}
	url := dbtest.NewDatabase(t)
	inst := startServer(t, url, contractsDir(t), withHTTP)
	base := "http://" + inst.srv.HTTPAddr()
	grpcDirect := invokerOf(inst.conn)
	grpcNoClock := func(ctx context.Context, method string, args, reply any) error {
		return inst.conn.Invoke(ctx, method, withoutClock(args), reply)
	}
	httpCall := httpInvoker(base)
	mcpCall := mcpInvoker(base, grpcNoClock)

	runner := &script.Runner{Timeout: 30 * time.Second, KeepGoing: true}
	play := func(s *script.Script, call invoker, forMCP bool) *recording {
		rec := &recording{call: call, forMCP: forMCP, answers: map[string]any{}, seen: map[string]int{}}
		r := *runner
		r.Conn = rec
		r.Run(context.Background(), s)
		return rec
	}
	for _, s := range scripts {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			g, h := play(s, grpcDirect, false), play(s, httpCall, false)
			compare(t, "HTTP", g, h)
			gm, m := play(s, grpcNoClock, true), play(s, mcpCall, true)
			compare(t, "MCP", gm, m)
		})
	}
}

// invoker is one unary call over some transport.
type invoker func(ctx context.Context, method string, args, reply any) error

func invokerOf(conn grpc.ClientConnInterface) invoker {
	return func(ctx context.Context, method string, args, reply any) error {
		return conn.Invoke(ctx, method, args, reply)
	}
}

// withoutClock is a request without the client's clock, for comparison
// with MCP, which has no way to send one.
func withoutClock(args any) any {
	switch r := args.(type) {
	case *slotdv1.TurnRequest:
		c := proto.Clone(r).(*slotdv1.TurnRequest)
		c.Now = nil
		return c
	case *slotdv1.CompleteSessionRequest:
		c := proto.Clone(r).(*slotdv1.CompleteSessionRequest)
		c.Now = nil
		return c
	}
	return args
}

// recording is a grpc.ClientConnInterface for the script runner that sends
// each call over its transport and keeps the answer, normalised, by the
// call's turn id (or method) and its occurrence (a replayed turn id comes
// twice). The calls of a parallel step are sent one by one in the order of
// their turn ids: which comes first decides what the second is told (a
// carried slot, the other open session), and the transports are compared
// on the same order.
type recording struct {
	call    invoker
	forMCP  bool
	mu      sync.Mutex
	batch   []*pendingCall // calls that came together, not yet sent
	answers map[string]any
	seen    map[string]int
	order   []string
}

type pendingCall struct {
	ctx         context.Context
	method, key string
	args, reply any
	err         error
	done        chan struct{}
}

// together is how long the calls that came at once are gathered.
const together = 50 * time.Millisecond

func (r *recording) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	key := method[strings.LastIndex(method, "/")+1:]
	if tr, ok := args.(*slotdv1.TurnRequest); ok {
		key += " " + tr.GetTurnId()
	}
	p := &pendingCall{ctx: ctx, method: method, key: key, args: args, reply: reply, done: make(chan struct{})}
	r.mu.Lock()
	if len(r.batch) == 0 {
		time.AfterFunc(together, r.flush)
	}
	r.batch = append(r.batch, p)
	r.mu.Unlock()
	<-p.done
	return p.err
}

// flush sends the calls gathered, in the order of their keys.
func (r *recording) flush() {
	r.mu.Lock()
	batch := r.batch
	r.batch = nil
	r.mu.Unlock()
	slices.SortFunc(batch, func(a, b *pendingCall) int { return strings.Compare(a.key, b.key) })
	for _, p := range batch {
		p.err = r.call(p.ctx, p.method, p.args, p.reply)
		conv := ""
		if m, ok := p.args.(interface{ GetConversationId() string }); ok {
			conv = m.GetConversationId()
		}
		ans := answerOf(p.reply.(proto.Message), p.err, r.forMCP && strings.HasSuffix(p.method, "/Turn"), conv)
		r.mu.Lock()
		r.seen[p.key]++
		key := fmt.Sprintf("%s #%d", p.key, r.seen[p.key])
		r.answers[key] = ans
		r.order = append(r.order, key)
		r.mu.Unlock()
		close(p.done)
	}
}

func (r *recording) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(codes.Unimplemented, "the scripts make unary calls only")
}

func compare(t *testing.T, transport string, grpcRec, other *recording) {
	t.Helper()
	if len(grpcRec.order) == 0 {
		t.Fatalf("gRPC answered nothing")
	}
	if len(other.order) != len(grpcRec.order) {
		t.Errorf("%s made %d calls (%v), gRPC %d (%v)", transport, len(other.order), other.order, len(grpcRec.order), grpcRec.order)
	}
	for _, key := range grpcRec.order {
		want, got := grpcRec.answers[key], other.answers[key]
		if !reflect.DeepEqual(want, got) {
			w, _ := json.Marshal(want)
			g, _ := json.Marshal(got)
			t.Errorf("%s: %s answered\n  %s\nwhere gRPC answered\n  %s", key, transport, g, w)
		}
	}
}

// answerOf is what a call answered, as plain JSON values with the ids and
// timestamps of the run left out: the whole response, or (mcpShape) the
// members an MCP tool result has; or the problem of a failed call.
func answerOf(reply proto.Message, err error, mcpShape bool, conv string) any {
	if err != nil {
		var p *problem.Problem
		if pe, ok := err.(*problemError); ok {
			p = pe.p
		} else {
			for _, d := range status.Convert(err).Details() {
				if pb, ok := d.(*slotdv1.Problem); ok {
					p = api.ProblemOf(pb)
				}
			}
		}
		if p == nil {
			return map[string]any{"error": status.Code(err).String()}
		}
		return normalise(map[string]any{"problem": p}, conv)
	}
	if tr, ok := reply.(*slotdv1.TurnResponse); ok && mcpShape {
		return normalise(mcpView(tr), conv)
	}
	b, merr := protojson.Marshal(reply)
	if merr != nil {
		return merr.Error()
	}
	var v any
	_ = json.Unmarshal(b, &v)
	return normalise(v, conv)
}

// mcpView is a turn's response in the members of an MCP tool result.
func mcpView(r *slotdv1.TurnResponse) map[string]any {
	q := r.GetQuestion()
	var changes []any
	for _, c := range r.GetChanges() {
		m := map[string]any{"slot": c.GetSlot(), "decision": strings.TrimPrefix(c.GetDecision().String(), "DECISION_"), "message": c.GetMessage()}
		if c.GetOld() != nil {
			m["old"] = c.GetOld().AsInterface()
		}
		if c.GetNew() != nil {
			m["new"] = c.GetNew().AsInterface()
		}
		changes = append(changes, m)
	}
	var open []any
	for _, o := range r.GetOpenSessions() {
		open = append(open, map[string]any{"tool": o.GetTool(), "missing": o.GetMissing(),
			"last_action": strings.TrimPrefix(o.GetLastAction().String(), "ACTION_")})
	}
	out := map[string]any{
		"action": strings.TrimPrefix(r.GetAction().String(), "ACTION_"), "question": q.GetText(), "slot": q.GetSlot(),
		"allowed_values": q.GetAllowedValues(), "format": q.GetFormat(), "missing": r.GetSession().GetMissing(),
		"changes": changes, "idempotency_key": r.GetIdempotencyKey(), "notice": r.GetNotice(),
		"turn_id": r.GetTurnId(), "open_sessions": open, "resumed": r.GetResumed(),
	}
	if q.GetOld() != nil {
		out["old"] = q.GetOld().AsInterface()
	}
	if q.GetNew() != nil {
		out["new"] = q.GetNew().AsInterface()
	}
	if r.GetArguments() != nil {
		out["arguments"] = r.GetArguments().AsMap()
	}
	if p := api.ProblemOf(r.GetProblem()); p != nil {
		out["problem"] = p
	}
	return out
}

// normalise turns v into plain JSON values, leaves out what differs from
// run to run (ids, timestamps, a problem's instance) and what is empty, and
// writes the run's conversation id as CONV.
func normalise(v any, conv string) any {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return clean(out, conv)
}

var runIDs = map[string]bool{
	"id": true, "conversation_id": true, "conversationId": true, "session_id": true, "sessionId": true, "instance": true,
	"created_at": true, "createdAt": true, "updated_at": true, "updatedAt": true, "ended_at": true, "endedAt": true,
	"expires_at": true, "expiresAt": true,
}

func clean(v any, conv string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if runIDs[k] {
				continue
			}
			if k == "idempotency_key" || k == "idempotencyKey" {
				if s, _ := e.(string); s != "" {
					e = "KEY"
				}
			}
			if c := clean(e, conv); !empty(c) {
				out[k] = c
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clean(e, conv)
		}
		return out
	case string:
		if conv != "" {
			return strings.ReplaceAll(x, conv, "CONV")
		}
	}
	return v
}

func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// problemError is a call refused over HTTP or MCP: the problem document it
// answered, and a status code for the runner.
type problemError struct {
	code codes.Code
	p    *problem.Problem
}

func (e *problemError) Error() string { return e.p.Title + ": " + e.p.Detail }

// GRPCStatus lets the runner read the failure as it reads gRPC's.
func (e *problemError) GRPCStatus() *status.Status { return status.New(e.code, e.Error()) }

// httpPaths are the gateway's routes of the calls the scripts make.
var httpPaths = map[string]string{
	slotdv1.SlotService_Turn_FullMethodName:            "/v1/turn",
	slotdv1.SlotService_ResetSession_FullMethodName:    "/v1/session/reset",
	slotdv1.SlotService_CompleteSession_FullMethodName: "/v1/session/complete",
}

// httpInvoker sends a call as the gateway's JSON, as an HTTP client of
// slotd does, and decodes the JSON answer into the reply.
func httpInvoker(base string) invoker {
	client := &http.Client{Timeout: 30 * time.Second}
	return func(ctx context.Context, method string, args, reply any) error {
		path, ok := httpPaths[method]
		if !ok {
			return status.Errorf(codes.Unimplemented, "no HTTP route for %s in this test", method)
		}
		body, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(args.(proto.Message))
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if md, ok := metadata.FromOutgoingContext(ctx); ok && len(md.Get("authorization")) > 0 {
			req.Header.Set("Authorization", md.Get("authorization")[0])
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			var p problem.Problem
			if err := json.Unmarshal(b, &p); err != nil {
				return fmt.Errorf("HTTP %d, not a problem document: %.200s", resp.StatusCode, b)
			}
			return &problemError{code: codeOfHTTP(resp.StatusCode), p: &p}
		}
		return protojson.Unmarshal(b, reply.(proto.Message))
	}
}

// codeOfHTTP is the gRPC code the gateway sends as the HTTP status.
func codeOfHTTP(httpStatus int) codes.Code {
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if runtime.HTTPStatusFromCode(c) == httpStatus {
			return c
		}
	}
	return codes.Unknown
}

// mcpInvoker sends a turn as an MCP tools/call, one MCP session per
// conversation; the calls MCP has no form for go to other.
func mcpInvoker(base string, other invoker) invoker {
	c := &mcpload.Client{URL: base + "/mcp", HTTP: &http.Client{Timeout: 30 * time.Second}}
	var mu sync.Mutex
	sessions := map[string]string{}
	var ids int
	return func(ctx context.Context, method string, args, reply any) error {
		tr, ok := args.(*slotdv1.TurnRequest)
		if !ok {
			return other(ctx, method, args, reply)
		}
		mu.Lock()
		sid, open := sessions[tr.GetConversationId()]
		if !open {
			var err error
			if sid, err = c.Open(ctx, false); err != nil {
				mu.Unlock()
				return err
			}
			sessions[tr.GetConversationId()] = sid
		}
		ids++
		id := ids
		mu.Unlock()
		arguments := tr.GetArguments().AsMap()
		if tr.GetConfirmation() != nil {
			arguments[mcp.ConfirmArg] = tr.GetConfirmation().GetAccept()
		}
		call, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{
			"name": contract.ProviderName(tr.GetTool()), "arguments": arguments,
			"_meta": map[string]any{mcp.MetaConversation: tr.GetConversationId(), mcp.MetaTurn: tr.GetTurnId(),
				mcp.MetaLocale: tr.GetLocale(), mcp.MetaTimeZone: tr.GetTimeZone()},
		}})
		if err != nil {
			return err
		}
		r, err := c.Post(ctx, sid, mcpload.Version, string(call))
		if err != nil {
			return err
		}
		content, isError, err := mcpResult(r.Body)
		if err != nil {
			return fmt.Errorf("HTTP %d: %w", r.Status, err)
		}
		return fromMCP(content, isError, reply.(*slotdv1.TurnResponse))
	}
}

// mcpResult is the structured content of a tools/call's result, sent as
// JSON or as an event stream.
func mcpResult(body []byte) (map[string]any, bool, error) {
	msg := body
	if i := bytes.Index(body, []byte("data: ")); i >= 0 && !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		msg, _, _ = bytes.Cut(body[i+len("data: "):], []byte("\n"))
	}
	var got struct {
		Result *struct {
			IsError    bool           `json:"isError"`
			Structured map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &got); err != nil || got.Result == nil {
		return nil, false, fmt.Errorf("no tools/call result in %.300s", body)
	}
	return got.Result.Structured, got.Result.IsError, nil
}

// fromMCP fills a TurnResponse with what an MCP result holds, so that the
// runner reads it as a turn; a failed call is its problem.
func fromMCP(content map[string]any, isError bool, out *slotdv1.TurnResponse) error {
	if isError {
		var p problem.Problem
		b, _ := json.Marshal(content["problem"])
		if err := json.Unmarshal(b, &p); err != nil || p.Type == "" {
			return fmt.Errorf("a failed call without a problem: %v", content)
		}
		return &problemError{code: codeOfHTTP(p.Status), p: &p}
	}
	// The members an MCP result shares with a TurnResponse have the same
	// JSON names; the rest are put back in their places.
	shared := map[string]any{}
	for _, k := range []string{"arguments", "idempotency_key", "notice", "turn_id", "resumed", "problem"} {
		if v, ok := content[k]; ok {
			shared[k] = v
		}
	}
	if a, ok := content["action"].(string); ok {
		shared["action"] = "ACTION_" + a
	}
	q := map[string]any{}
	for mk, qk := range map[string]string{"question": "text", "slot": "slot", "allowed_values": "allowed_values", "format": "format", "old": "old", "new": "new"} {
		if v, ok := content[mk]; ok {
			q[qk] = v
		}
	}
	if len(q) > 0 {
		shared["question"] = q
	}
	if m, ok := content["missing"]; ok {
		shared["session"] = map[string]any{"missing": m}
	}
	if cs, ok := content["changes"].([]any); ok {
		for _, c := range cs {
			if m, ok := c.(map[string]any); ok {
				m["decision"] = "DECISION_" + fmt.Sprint(m["decision"])
			}
		}
		shared["changes"] = cs
	}
	if os, ok := content["open_sessions"].([]any); ok {
		for _, o := range os {
			if m, ok := o.(map[string]any); ok && m["last_action"] != nil {
				m["last_action"] = "ACTION_" + fmt.Sprint(m["last_action"])
			}
		}
		shared["open_sessions"] = os
	}
	b, err := json.Marshal(shared)
	if err != nil {
		return err
	}
	return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(b, out)
}
