package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/metrics"
)

var failureKinds = map[string]slotdv1.FailureKind{
	"timeout":      slotdv1.FailureKind_FAILURE_KIND_TIMEOUT,
	"unavailable":  slotdv1.FailureKind_FAILURE_KIND_UNAVAILABLE,
	"rate_limited": slotdv1.FailureKind_FAILURE_KIND_RATE_LIMITED,
	"unauthorized": slotdv1.FailureKind_FAILURE_KIND_UNAUTHORIZED,
	"internal":     slotdv1.FailureKind_FAILURE_KIND_INTERNAL,
}

// completeTool records the outcome of the backend call a READY result
// asked for (SlotService.CompleteSession).
func completeTool(stateless bool) *sdk.Tool {
	input := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"idempotency_key": map[string]any{"type": "string", "description": "The idempotency_key of the READY result the backend was called with."},
			"result":          map[string]any{"type": "object", "description": "The backend's answer, as it came. Leave out when the call failed."},
			"failure": map[string]any{"type": "string", "enum": []any{"timeout", "unavailable", "rate_limited", "unauthorized", "internal"},
				"description": "How the backend call failed, when it did not answer. Leave out when it answered."},
			"http_status":         map[string]any{"type": "integer", "description": "The backend's HTTP status, when it failed with one."},
			"retry_after_seconds": map[string]any{"type": "integer", "minimum": 0, "description": "The backend's Retry-After, when it gave one."},
		},
		"required":             []any{"idempotency_key"},
		"additionalProperties": false,
	}
	if stateless {
		input = withConversation(input)
	}
	no := false
	return &sdk.Tool{
		Name:  metrics.CompleteTool,
		Title: "Record the backend call's outcome",
		Description: "After calling the backend with the arguments and idempotency key of a READY result, report what it answered (result) or how it failed (failure). " +
			"The result is what to tell the user; a failure says whether the backend call may be retried.",
		InputSchema: input,
		OutputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"conversation_id": strSchema("The conversation the call belonged to."),
			"status":          strSchema("The session's status: COMPLETED, FAILED, or ACTIVE while a retry is safe."),
			"action":          enumSchema("READY: calling the backend again with the same arguments and key is safe; HANDOFF: a person must take over.", "READY", "HANDOFF"),
			"output":          objSchema("What to tell the user, valid against the tool's output contract."),
			"problem":         problemSchema,
		}},
		// A retried report gets the stored answer.
		Annotations: &sdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: &no, OpenWorldHint: &no, ReadOnlyHint: false},
	}
}

type completeInput struct {
	IdempotencyKey    string         `json:"idempotency_key"`
	Result            map[string]any `json:"result"`
	Failure           string         `json:"failure"`
	HTTPStatus        int32          `json:"http_status"`
	RetryAfterSeconds int32          `json:"retry_after_seconds"`
	Conversation      string         `json:"slotd_conversation_id"`
}

func (h *Handler) completeHandler(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	start := time.Now()
	md := mdOf(req)
	res, outcome, conv := h.complete(ctx, req, md)
	h.m.Call(metrics.CompleteTool, outcome, time.Since(start))
	h.logCall(ctx, metrics.CompleteTool, outcome, &turnCall{conv: conv, md: md, stateless: req.Session == nil || req.Session.ID() == ""}, time.Since(start))
	return res, nil
}

// complete reports a backend call's outcome to SlotService with the
// metadata md.
func (h *Handler) complete(ctx context.Context, req *sdk.CallToolRequest, md metadata.MD) (*sdk.CallToolResult, string, string) {
	var in completeInput
	sid := ""
	if req.Session != nil {
		sid = req.Session.ID()
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		conv := ""
		if sid != "" {
			conv = "mcp-" + sid
		}
		return failure(conv, invalid("arguments", "idempotency_key, and result or failure")), errorOutcome, conv
	}
	// Named as a turn names it (conversationOf), but never a new one.
	conv := ""
	if meta := req.Params.GetMeta(); sid != "" || metaString(meta, MetaConversation) != "" || strings.TrimSpace(in.Conversation) != "" {
		conv = conversationOf(meta, strings.TrimSpace(in.Conversation), sid)
	}
	cr := &slotdv1.CompleteSessionRequest{ConversationId: conv, IdempotencyKey: in.IdempotencyKey}
	switch {
	case in.Result != nil && in.Failure != "":
		return failure(conv, invalid("failure", "either result or failure, not both")), errorOutcome, conv
	case in.Result != nil:
		s, err := structpb.NewStruct(in.Result)
		if err != nil {
			return failure(conv, invalid("result", "any JSON object")), errorOutcome, conv
		}
		cr.Outcome = &slotdv1.CompleteSessionRequest_Result{Result: structpb.NewStructValue(s)}
	case in.Failure != "":
		kind, ok := failureKinds[in.Failure]
		if !ok {
			return failure(conv, invalid("failure", "one of timeout, unavailable, rate_limited, unauthorized, internal")), errorOutcome, conv
		}
		cr.Outcome = &slotdv1.CompleteSessionRequest_Failure{Failure: &slotdv1.BackendFailure{
			Kind: kind, HttpStatus: in.HTTPStatus, RetryAfterSeconds: in.RetryAfterSeconds}}
	default:
		return failure(conv, invalid("result", "the backend's result, or failure when it failed")), errorOutcome, conv
	}
	cctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(ctx, md), h.cfg.Limits.CallTimeout)
	defer cancel()
	out, err := h.cfg.Slots.CompleteSession(cctx, cr)
	if err != nil {
		return failure(conv, problemFromError(ctx, err)), errorOutcome, conv
	}
	if conv == "" {
		conv = out.GetSession().GetConversationId()
	}
	content := map[string]any{
		"conversation_id": conv,
		"status":          strings.TrimPrefix(out.GetSession().GetStatus().String(), "SESSION_STATUS_"),
		"output":          structOf(out.GetOutput()),
	}
	if a := actionName(out.GetAction()); a != "" {
		content["action"] = a
	}
	if p := api.ProblemOf(out.GetProblem()); p != nil {
		content["problem"] = p
	}
	text, outcome := completeText(out)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, StructuredContent: content}, outcome, conv
}

func completeText(out *slotdv1.CompleteSessionResponse) (string, string) {
	output, _ := json.Marshal(structOf(out.GetOutput()))
	switch out.GetAction() {
	case slotdv1.Action_ACTION_READY:
		wait := "now"
		if s := out.GetProblem().GetRetryAfterSeconds(); s > 0 {
			wait = fmt.Sprintf("after %d seconds", s)
		}
		return "The backend call failed, and calling it again is safe: " + wait + ", with the same arguments and idempotency key; " +
			"then call slotd_complete again.\noutput: " + string(output), "RETRY"
	case slotdv1.Action_ACTION_HANDOFF:
		return "Hand the conversation to a person: the request could not be completed (" + titleOf(out.GetProblem()) +
			"). Tell the user a person will take it over.\noutput: " + string(output), "HANDOFF"
	}
	return "Recorded. Tell the user the outcome, from this object:\noutput: " + string(output), "COMPLETED"
}

func titleOf(p *slotdv1.Problem) string {
	if p == nil {
		return "the backend failed"
	}
	return p.GetTitle()
}

// mdOf carries the caller's key and request id to SlotService.
func mdOf(req *sdk.CallToolRequest) metadata.MD {
	md := metadata.MD{}
	if req.Extra != nil {
		if a := req.Extra.Header.Get("Authorization"); a != "" {
			md.Set("authorization", a)
		}
		if id := req.Extra.Header.Get("X-Request-Id"); id != "" {
			md.Set("x-request-id", id)
		}
	}
	if len(md.Get("x-request-id")) == 0 {
		md.Set("x-request-id", newRequestID())
	}
	// The caller's W3C trace context, where MCP puts it: in _meta.
	meta := req.Params.GetMeta()
	for _, key := range []string{MetaTraceparent, MetaTracestate} {
		if v := metaString(meta, key); v != "" && len(v) <= maxTraceContext && printable(v) {
			md.Set(key, v)
		}
	}
	return md
}

// maxTraceContext bounds a traceparent or tracestate passed on: a
// traceparent has 55 characters, a tracestate at most 32 members.
const maxTraceContext = 512

// printable reports whether s is visible ASCII and spaces, all that a
// trace context holds, and all that gRPC metadata may carry without failing
// the call.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
