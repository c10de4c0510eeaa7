// Package api is slotd's gRPC adapter: it turns requests into calls of the
// session engine and the engine's results and errors into slotd.v1 messages.
// It alone knows gRPC codes and HTTP statuses: one table (errors.go) says
// what each problem.Kind answers with, and exactly one function, Status,
// turns an error into a gRPC status. Handlers return domain errors; the
// Errors interceptor passes each through Status.
package api

import (
	"context"
	"encoding/json"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/merge"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/problem"
)

// ReplayedHeader is set to "true" on a response to a turn_id seen before;
// the body is the stored response, unchanged.
const ReplayedHeader = "slotd-replayed"

// SlotService implements slotd.v1.SlotService. Its handlers return domain
// and problem errors; the Errors interceptor turns them into statuses.
type SlotService struct {
	slotdv1.UnimplementedSlotServiceServer
	engine   *session.Engine
	observer Observer
}

// NewSlotService builds the service over an engine. It logs nothing itself:
// its errors are logged where they become statuses, its turns by its
// Observer.
func NewSlotService(engine *session.Engine, opts ...Option) *SlotService {
	s := &SlotService{engine: engine, observer: ignore{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Register adds the service to a gRPC server, or to api.Local.
func (s *SlotService) Register(srv grpc.ServiceRegistrar) { slotdv1.RegisterSlotServiceServer(srv, s) }

// Turn implements slotd.v1.SlotService.
func (s *SlotService) Turn(ctx context.Context, req *slotdv1.TurnRequest) (*slotdv1.TurnResponse, error) {
	start := time.Now()
	s.observer.TurnStarted(ctx)
	report := TurnReport{Request: turnRequest(ctx, req), Err: errPanicked}
	// Deferred so that a turn whose handler panics is reported too, as the
	// INTERNAL Recover answers it, and never stays in flight.
	defer func() {
		report.Code, report.Elapsed = codeOf(ctx, report.Err), time.Since(start)
		s.observer.TurnDone(ctx, report)
	}()
	resp, res, err := s.turn(ctx, req, report.Request)
	report.Err = err
	if err == nil {
		report.Request, report.Result = res.Request, res
	}
	return resp, err
}

func (s *SlotService) turn(ctx context.Context, req *slotdv1.TurnRequest, tr session.TurnRequest) (*slotdv1.TurnResponse, *session.Result, error) {
	if req.Now != nil && req.Now.CheckValid() != nil {
		return nil, nil, problem.InvalidRequest("now", "not a valid timestamp")
	}
	res, err := s.engine.Turn(ctx, tr)
	if err != nil {
		return nil, nil, err
	}
	if res.Replayed {
		_ = grpc.SetHeader(ctx, metadata.Pairs(ReplayedHeader, "true"))
	}
	resp, err := turnResponse(res)
	if err != nil {
		return nil, nil, err
	}
	return resp, res, nil
}

// turnRequest is the turn a call asks for; a `now` that is not a valid
// timestamp is left out (Turn refuses it).
func turnRequest(ctx context.Context, req *slotdv1.TurnRequest) session.TurnRequest {
	tr := turnHeader(ctx, req)
	if req.GetArguments() != nil {
		tr.Arguments = req.Arguments.AsMap()
	}
	if req.GetConfirmation() != nil {
		accept := req.Confirmation.GetAccept()
		tr.Confirmation = &accept
	}
	if req.GetNow() != nil && req.Now.CheckValid() == nil {
		tr.Now = req.Now.AsTime()
	}
	return tr
}

// turnHeader is the turn a call asks for without its arguments, answer or
// clock: what a refusal reports, at a cost that does not grow with the
// request, since refusals come most when slotd is overloaded.
func turnHeader(ctx context.Context, req *slotdv1.TurnRequest) session.TurnRequest {
	return session.TurnRequest{
		Tenant:         TenantFrom(ctx),
		ConversationID: req.GetConversationId(),
		Tool:           req.GetTool(),
		TurnID:         req.GetTurnId(),
		Locale:         req.GetLocale(),
		TimeZone:       req.GetTimeZone(),
	}
}

// GetSession implements slotd.v1.SlotService.
func (s *SlotService) GetSession(ctx context.Context, req *slotdv1.GetSessionRequest) (*slotdv1.GetSessionResponse, error) {
	sess, err := s.engine.Get(ctx, session.Lookup{
		Tenant: TenantFrom(ctx), ConversationID: req.GetConversationId(), SessionID: req.GetSessionId(), Tool: req.GetTool(),
	})
	if err != nil {
		return nil, err
	}
	pb, err := sessionMessage(s.engine.View(sess))
	if err != nil {
		return nil, err
	}
	return &slotdv1.GetSessionResponse{Session: pb}, nil
}

// ResetSession implements slotd.v1.SlotService.
func (s *SlotService) ResetSession(ctx context.Context, req *slotdv1.ResetSessionRequest) (*slotdv1.ResetSessionResponse, error) {
	ended, changes, err := s.engine.Reset(ctx, session.Lookup{
		Tenant: TenantFrom(ctx), ConversationID: req.GetConversationId(), SessionID: req.GetSessionId(), Tool: req.GetTool(),
	}, time.Time{})
	if err != nil {
		return nil, err
	}
	out := &slotdv1.ResetSessionResponse{}
	for _, e := range ended {
		pb, err := sessionMessage(s.engine.View(e))
		if err != nil {
			return nil, err
		}
		out.Sessions = append(out.Sessions, pb)
	}
	out.Session = out.Sessions[0]
	for _, ch := range changes {
		c, err := changeMessage(session.Change{Change: ch})
		if err != nil {
			return nil, err
		}
		out.Changes = append(out.Changes, c)
	}
	return out, nil
}

// ListContracts implements slotd.v1.SlotService.
func (s *SlotService) ListContracts(context.Context, *slotdv1.ListContractsRequest) (*slotdv1.ListContractsResponse, error) {
	out := &slotdv1.ListContractsResponse{}
	for _, c := range s.engine.Contracts().All() {
		out.Contracts = append(out.Contracts, &slotdv1.ContractInfo{
			Name: c.Name, Version: c.Version, Description: c.Description, RequiresApproval: c.Confirm,
		})
	}
	return out, nil
}

func turnResponse(r *session.Result) (*slotdv1.TurnResponse, error) {
	sess, err := sessionMessage(r.Session)
	if err != nil {
		return nil, err
	}
	out := &slotdv1.TurnResponse{
		Session:        sess,
		Action:         actionOf(r.Action),
		IdempotencyKey: r.IdempotencyKey,
		Problem:        responseProblem(r.Problem),
		TurnId:         r.TurnID,
		Notice:         r.Notice,
		Resumed:        r.Resumed,
	}
	if m := r.Migration; m != nil {
		out.Migration = &slotdv1.Migration{FromVersion: m.From, ToVersion: m.To, Dropped: m.Dropped, Refused: m.Refused, Reconfirm: m.Reconfirm}
	}
	if r.Previous != nil {
		if out.PreviousSession, err = sessionMessage(*r.Previous); err != nil {
			return nil, err
		}
	}
	for _, e := range r.Ended {
		pb, err := sessionMessage(e)
		if err != nil {
			return nil, err
		}
		out.EndedSessions = append(out.EndedSessions, pb)
	}
	for _, o := range r.OpenSessions {
		out.OpenSessions = append(out.OpenSessions, &slotdv1.OpenSession{Tool: o.Tool, SessionId: o.SessionID,
			Missing: o.Missing, LastAction: actionOf(o.LastAction), UpdatedAt: timestamppb.New(o.UpdatedAt)})
	}
	if q := r.Question; q != nil {
		out.Question = &slotdv1.Question{Slot: q.Slot, Text: q.Text, AllowedValues: q.Allowed, Format: q.Format}
		if out.Question.Old, err = value(q.Old); err != nil {
			return nil, err
		}
		if out.Question.New, err = value(q.New); err != nil {
			return nil, err
		}
	}
	for _, ch := range r.Changes {
		c, err := changeMessage(ch)
		if err != nil {
			return nil, err
		}
		out.Changes = append(out.Changes, c)
	}
	if r.Arguments != nil {
		if out.Arguments, err = newStruct(r.Arguments); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func sessionMessage(v session.View) (*slotdv1.Session, error) {
	slots, err := newStruct(v.Slots)
	if err != nil {
		return nil, err
	}
	out := &slotdv1.Session{
		Id: v.ID, ConversationId: v.ConversationID, Tool: v.Tool, Status: statusOf(v.Status),
		Version: v.Version, Slots: slots, Missing: v.Missing, Locale: v.Locale, TimeZone: v.TimeZone,
		CreatedAt: timestamppb.New(v.CreatedAt), UpdatedAt: timestamppb.New(v.UpdatedAt),
		ContractVersion: v.ContractVersion,
	}
	if !v.EndedAt.IsZero() {
		out.EndedAt = timestamppb.New(v.EndedAt)
	}
	if len(v.Attempts) > 0 {
		out.Attempts = make(map[string]int32, len(v.Attempts))
		for k, n := range v.Attempts {
			out.Attempts[k] = int32(n)
		}
	}
	for _, p := range v.Pending {
		pc := &slotdv1.PendingChange{Slot: p.Slot}
		if pc.Old, err = value(p.Old); err != nil {
			return nil, err
		}
		if pc.New, err = value(p.New); err != nil {
			return nil, err
		}
		out.Pending = append(out.Pending, pc)
	}
	return out, nil
}

func changeMessage(ch session.Change) (*slotdv1.Change, error) {
	out := &slotdv1.Change{Slot: ch.Slot, Decision: decisionOf(ch.Decision), Message: ch.Message}
	var err error
	if out.Old, err = value(ch.Old); err != nil {
		return nil, err
	}
	if out.New, err = value(ch.New); err != nil {
		return nil, err
	}
	return out, nil
}

// value converts a JSON value; nil stays nil (absent), not a null Value.
func value(v any) (*structpb.Value, error) {
	if v == nil {
		return nil, nil
	}
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		if err != nil {
			return structpb.NewStringValue(n.String()), nil
		}
		return structpb.NewNumberValue(f), nil
	}
	return structpb.NewValue(v)
}

// responseProblem is a problem a response carries as it leaves the process:
// its status member is the HTTP status of its kind. nil stays nil.
func responseProblem(p *problem.Problem) *slotdv1.Problem {
	if p == nil {
		return nil
	}
	out := *p
	out.Status = HTTPStatus(problem.ResponseKind(p.Type))
	return problemMessage(&out)
}

// problemMessage converts a problem as it is; nil stays nil.
func problemMessage(p *problem.Problem) *slotdv1.Problem {
	if p == nil {
		return nil
	}
	out := &slotdv1.Problem{
		Type: p.Type, Title: p.Title, Status: int32(p.Status), Detail: p.Detail, Instance: p.Instance,
		Retryable: p.Retryable, RetryAfterSeconds: int32(p.RetryAfterSeconds), OwnerActionRequired: p.OwnerActionRequired,
	}
	for _, e := range p.Errors {
		out.Errors = append(out.Errors, &slotdv1.FieldError{
			Pointer: e.Pointer, Input: e.Input, Message: e.Message, AllowedValues: e.Allowed, Format: e.Format,
		})
	}
	return out
}

// ProblemOf is the problem a slotd.v1.Problem message carries, the inverse
// of the conversion a response's problem leaves the process by; nil stays nil.
func ProblemOf(pb *slotdv1.Problem) *problem.Problem {
	if pb == nil {
		return nil
	}
	p := &problem.Problem{
		Type: pb.GetType(), Title: pb.GetTitle(), Status: int(pb.GetStatus()), Detail: pb.GetDetail(),
		Instance: pb.GetInstance(), Retryable: pb.GetRetryable(), RetryAfterSeconds: int(pb.GetRetryAfterSeconds()),
		OwnerActionRequired: pb.GetOwnerActionRequired(),
	}
	for _, e := range pb.GetErrors() {
		p.Errors = append(p.Errors, problem.FieldError{Pointer: e.GetPointer(), Input: e.GetInput(),
			Message: e.GetMessage(), Allowed: e.GetAllowedValues(), Format: e.GetFormat()})
	}
	return p
}

var actions = map[clarify.Action]slotdv1.Action{
	clarify.Ask:       slotdv1.Action_ACTION_ASK,
	clarify.Reconfirm: slotdv1.Action_ACTION_RECONFIRM,
	clarify.Confirm:   slotdv1.Action_ACTION_CONFIRM,
	clarify.Ready:     slotdv1.Action_ACTION_READY,
	clarify.Repair:    slotdv1.Action_ACTION_REPAIR,
	clarify.Resume:    slotdv1.Action_ACTION_RESUME,
	clarify.Handoff:   slotdv1.Action_ACTION_HANDOFF,
	clarify.Cancelled: slotdv1.Action_ACTION_CANCELLED,
}

func actionOf(a clarify.Action) slotdv1.Action { return actions[a] }

var decisions = map[merge.Decision]slotdv1.Decision{
	merge.Filled:      slotdv1.Decision_DECISION_FILLED,
	merge.Unchanged:   slotdv1.Decision_DECISION_UNCHANGED,
	merge.Overwritten: slotdv1.Decision_DECISION_OVERWRITTEN,
	merge.Pending:     slotdv1.Decision_DECISION_PENDING,
	merge.IgnoredNull: slotdv1.Decision_DECISION_IGNORED_NULL,
	merge.Rejected:    slotdv1.Decision_DECISION_REJECTED,
	merge.Carried:     slotdv1.Decision_DECISION_CARRIED,
	merge.Confirmed:   slotdv1.Decision_DECISION_CONFIRMED,
	merge.Discarded:   slotdv1.Decision_DECISION_DISCARDED,
	merge.Cleared:     slotdv1.Decision_DECISION_CLEARED,
	merge.Migrated:    slotdv1.Decision_DECISION_MIGRATED,
}

func decisionOf(d merge.Decision) slotdv1.Decision { return decisions[d] }

var statuses = map[session.Status]slotdv1.SessionStatus{
	session.Active:    slotdv1.SessionStatus_SESSION_STATUS_ACTIVE,
	session.Completed: slotdv1.SessionStatus_SESSION_STATUS_COMPLETED,
	session.Abandoned: slotdv1.SessionStatus_SESSION_STATUS_ABANDONED,
	session.Expired:   slotdv1.SessionStatus_SESSION_STATUS_EXPIRED,
	session.Reset:     slotdv1.SessionStatus_SESSION_STATUS_RESET,
	session.Cancelled: slotdv1.SessionStatus_SESSION_STATUS_CANCELLED,
	session.Failed:    slotdv1.SessionStatus_SESSION_STATUS_FAILED,
}

func statusOf(s session.Status) slotdv1.SessionStatus { return statuses[s] }

var failureKinds = map[slotdv1.FailureKind]session.FailureKind{
	slotdv1.FailureKind_FAILURE_KIND_TIMEOUT:      session.FailureTimeout,
	slotdv1.FailureKind_FAILURE_KIND_UNAVAILABLE:  session.FailureUnavailable,
	slotdv1.FailureKind_FAILURE_KIND_RATE_LIMITED: session.FailureRateLimited,
	slotdv1.FailureKind_FAILURE_KIND_UNAUTHORIZED: session.FailureUnauthorized,
	slotdv1.FailureKind_FAILURE_KIND_INTERNAL:     session.FailureInternal,
}

// CompleteSession implements slotd.v1.SlotService.
func (s *SlotService) CompleteSession(ctx context.Context, req *slotdv1.CompleteSessionRequest) (*slotdv1.CompleteSessionResponse, error) {
	var out *slotdv1.CompleteSessionResponse
	var c *session.Completion
	cr, err := completeRequest(ctx, req)
	if err == nil {
		out, c, err = s.complete(ctx, cr)
	}
	s.observer.CompletionDone(ctx, CompletionReport{Request: cr, Completion: c, Err: err, Code: codeOf(ctx, err)})
	return out, err
}

func completeRequest(ctx context.Context, req *slotdv1.CompleteSessionRequest) (session.CompleteRequest, error) {
	cr := session.CompleteRequest{
		Lookup:         session.Lookup{Tenant: TenantFrom(ctx), ConversationID: req.GetConversationId(), SessionID: req.GetSessionId(), Tool: req.GetTool()},
		IdempotencyKey: req.GetIdempotencyKey(),
	}
	switch o := req.Outcome.(type) {
	case *slotdv1.CompleteSessionRequest_Result:
		cr.Result = o.Result.AsInterface()
		if cr.Result == nil {
			return cr, problem.InvalidRequest("result", "the backend's result, any JSON but null")
		}
	case *slotdv1.CompleteSessionRequest_Failure:
		kind, ok := failureKinds[o.Failure.GetKind()]
		if !ok {
			return cr, problem.InvalidRequest("failure.kind", "one of FAILURE_KIND_TIMEOUT, _UNAVAILABLE, _RATE_LIMITED, _UNAUTHORIZED, _INTERNAL")
		}
		cr.Failure = &session.Failure{Kind: kind, HTTPStatus: int(o.Failure.GetHttpStatus()), RetryAfterSeconds: int(o.Failure.GetRetryAfterSeconds())}
	default:
		return cr, problem.InvalidRequest("outcome", "either result or failure is required")
	}
	if req.Now != nil {
		if err := req.Now.CheckValid(); err != nil {
			return cr, problem.InvalidRequest("now", "not a valid timestamp")
		}
		cr.Now = req.Now.AsTime()
	}
	return cr, nil
}

func (s *SlotService) complete(ctx context.Context, cr session.CompleteRequest) (*slotdv1.CompleteSessionResponse, *session.Completion, error) {
	c, err := s.engine.Complete(ctx, cr)
	if err != nil {
		return nil, nil, err
	}
	sess, err := sessionMessage(c.Session)
	if err != nil {
		return nil, nil, err
	}
	out := &slotdv1.CompleteSessionResponse{Session: sess, Action: actionOf(c.Action), Problem: responseProblem(c.Problem)}
	if out.Output, err = structpb.NewStruct(c.Output); err != nil {
		return nil, nil, err
	}
	return out, c, nil
}
