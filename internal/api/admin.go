package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/auth"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/problem"
)

// AdminService implements slotd.v1.AdminService. The auth interceptor lets
// only admin keys (or anyone on a keyless loopback server) reach it.
type AdminService struct {
	slotdv1.UnimplementedAdminServiceServer
	engine *session.Engine
	log    *slog.Logger
	clock  func() time.Time
}

// NewAdminService builds the service over an engine.
func NewAdminService(engine *session.Engine, log *slog.Logger, clock func() time.Time) *AdminService {
	if log == nil {
		log = slog.Default()
	}
	if clock == nil {
		clock = time.Now
	}
	return &AdminService{engine: engine, log: log, clock: clock}
}

// Register adds the service to a gRPC server, or to api.Local.
func (a *AdminService) Register(srv grpc.ServiceRegistrar) {
	slotdv1.RegisterAdminServiceServer(srv, a)
}

var statusNames = func() map[slotdv1.SessionStatus]session.Status {
	m := map[slotdv1.SessionStatus]session.Status{}
	for k, v := range statuses {
		m[v] = k
	}
	return m
}()

// ListSessions implements slotd.v1.AdminService.
func (a *AdminService) ListSessions(ctx context.Context, req *slotdv1.ListSessionsRequest) (*slotdv1.ListSessionsResponse, error) {
	f := session.Filter{Tenant: req.GetTenant(), AnyTenant: req.GetTenant() == "", Tool: req.GetTool(),
		ConversationPrefix: req.GetConversationPrefix(), After: req.GetPageToken(), Limit: int(req.GetPageSize())}
	if req.Status != slotdv1.SessionStatus_SESSION_STATUS_UNSPECIFIED {
		f.Status = statusNames[req.Status]
	}
	if d := req.GetIdleLongerThan(); d != nil {
		if err := d.CheckValid(); err != nil || d.AsDuration() <= 0 {
			return nil, problem.InvalidRequest("idle_longer_than", "a positive duration")
		}
		f.IdleBefore = a.clock().Add(-d.AsDuration())
	}
	if f.After != "" && uuid.Validate(f.After) != nil {
		return nil, problem.InvalidRequest("page_token", "not a page token from this listing")
	}
	list, next, err := a.engine.ListSessions(ctx, f)
	if err != nil {
		return nil, err
	}
	out := &slotdv1.ListSessionsResponse{NextPageToken: next}
	for _, s := range list {
		pb, err := sessionMessage(a.engine.View(s))
		if err != nil {
			return nil, err
		}
		out.Sessions = append(out.Sessions, &slotdv1.SessionSummary{Session: pb, Tenant: s.Key.Tenant})
	}
	return out, nil
}

// ResetStaleSessions implements slotd.v1.AdminService.
func (a *AdminService) ResetStaleSessions(ctx context.Context, req *slotdv1.ResetStaleSessionsRequest) (*slotdv1.ResetStaleSessionsResponse, error) {
	d := req.GetIdleLongerThan()
	if d == nil || d.CheckValid() != nil || d.AsDuration() <= 0 {
		return nil, problem.InvalidRequest("idle_longer_than", "required: a positive duration")
	}
	now := a.clock()
	ids, err := a.engine.ResetStale(ctx, session.Filter{AnyTenant: true, Tool: req.GetTool(),
		IdleBefore: now.Add(-d.AsDuration()), Limit: int(req.GetLimit())}, req.GetDryRun(), now)
	if err != nil {
		return nil, err
	}
	a.log.InfoContext(ctx, "reset stale sessions", "count", len(ids), "dry_run", req.GetDryRun(), "tool", req.GetTool())
	return &slotdv1.ResetStaleSessionsResponse{SessionIds: ids, DryRun: req.GetDryRun()}, nil
}

// PurgeSessions implements slotd.v1.AdminService.
func (a *AdminService) PurgeSessions(ctx context.Context, req *slotdv1.PurgeSessionsRequest) (*slotdv1.PurgeSessionsResponse, error) {
	d := req.GetEndedLongerThan()
	if d == nil || d.CheckValid() != nil || d.AsDuration() <= 0 {
		return nil, problem.InvalidRequest("ended_longer_than", "required: a positive duration")
	}
	ids, err := a.engine.Purge(ctx, session.Filter{AnyTenant: true, EndedBefore: a.clock().Add(-d.AsDuration()),
		Limit: int(req.GetLimit())}, req.GetDryRun())
	if err != nil {
		return nil, err
	}
	a.log.InfoContext(ctx, "purged sessions", "count", len(ids), "dry_run", req.GetDryRun())
	return &slotdv1.PurgeSessionsResponse{SessionIds: ids, DryRun: req.GetDryRun()}, nil
}

// EraseConversation implements slotd.v1.AdminService. The erasure is
// recorded, and logged, by a hash of the conversation's id, never the id.
func (a *AdminService) EraseConversation(ctx context.Context, req *slotdv1.EraseConversationRequest) (*slotdv1.EraseConversationResponse, error) {
	key := session.Key{Tenant: req.GetTenant(), ConversationID: req.GetConversationId()}
	rec, got, err := a.engine.Erase(ctx, key, by(ctx), a.clock())
	if err != nil {
		return nil, err
	}
	a.log.InfoContext(ctx, "erased conversation", "tenant", rec.Tenant, "conversation_hash", rec.ConversationHash,
		"found", got.Found, "sessions", got.Sessions, "by", rec.By)
	return &slotdv1.EraseConversationResponse{Found: got.Found, SessionsErased: int32(got.Sessions),
		ConversationHash: rec.ConversationHash, ErasedAt: timestamppb.New(rec.At), ErasedBy: rec.By}, nil
}

// GetSessionHistory implements slotd.v1.AdminService.
func (a *AdminService) GetSessionHistory(ctx context.Context, req *slotdv1.GetSessionHistoryRequest) (*slotdv1.GetSessionHistoryResponse, error) {
	l := session.Lookup{Tenant: req.GetTenant(), ConversationID: req.GetConversationId(), SessionID: req.GetSessionId(), Tool: req.GetTool()}
	s, err := a.engine.Find(ctx, l, req.GetTenant() == "")
	if err != nil {
		return nil, err
	}
	h, err := a.engine.History(ctx, session.Lookup{Tenant: s.Key.Tenant, SessionID: s.ID})
	if err != nil {
		return nil, err
	}
	return historyResponse(a.engine.View(s), h)
}

func historyResponse(v session.View, h *session.History) (*slotdv1.GetSessionHistoryResponse, error) {
	pb, err := sessionMessage(v)
	if err != nil {
		return nil, err
	}
	out := &slotdv1.GetSessionHistoryResponse{Session: pb}
	for _, t := range h.Turns {
		ht := &slotdv1.HistoryTurn{TurnId: t.ID, Version: t.Version, Action: actionOf(clarify.Action(t.Action)), At: timestamppb.New(t.At),
			ContractVersion: t.ContractVersion, Replays: int32(t.Replays)}
		for _, at := range t.ReplayedAt {
			ht.ReplayedAt = append(ht.ReplayedAt, timestamppb.New(at))
		}
		ht.Answer = answerOf(t.Response)
		var req map[string]any
		if json.Unmarshal(t.Request, &req) == nil {
			if ht.Request, err = structpb.NewStruct(req); err != nil {
				return nil, err
			}
		}
		out.Turns = append(out.Turns, ht)
	}
	for _, ch := range h.Changes {
		hc := &slotdv1.HistoryChange{Slot: ch.Slot, Decision: decisionOf(ch.Decision), TurnId: ch.TurnID,
			Version: ch.Version, At: timestamppb.New(ch.At), Note: ch.Note}
		if hc.Old, err = value(ch.Old); err != nil {
			return nil, err
		}
		if hc.New, err = value(ch.New); err != nil {
			return nil, err
		}
		out.Changes = append(out.Changes, hc)
	}
	return out, nil
}

// ResetSession ends one session of a tenant, as SlotService.ResetSession
// does for the tenant's own key, for an operator in slotd's process (the
// console): AdminService has no call that names one session. It is logged
// with the admin key's name, as an erasure is recorded.
func (a *AdminService) ResetSession(ctx context.Context, tenant, sessionID string) (*slotdv1.Session, error) {
	if uuid.Validate(sessionID) != nil {
		return nil, problem.InvalidRequest("session_id", "not a session id")
	}
	ended, _, err := a.engine.Reset(ctx, session.Lookup{Tenant: tenant, SessionID: sessionID}, a.clock())
	if err != nil {
		return nil, err
	}
	if len(ended) == 0 {
		return nil, session.ErrNotFound
	}
	a.log.InfoContext(ctx, "reset session", "tenant", tenant, "session_id", sessionID, "by", by(ctx))
	return sessionMessage(a.engine.View(ended[0]))
}

// by names the admin principal of ctx in the records of what it did.
func by(ctx context.Context) string {
	if name := auth.From(ctx).Name; name != "" {
		return name
	}
	// An embedder's context without a principal from the interceptor.
	return "unnamed"
}

// storedAnswer is the part of a stored response (a session.Result, or a
// completion's) that the history shows.
type storedAnswer struct {
	Action         clarify.Action        `json:"action"`
	Question       *clarify.Question     `json:"question"`
	IdempotencyKey string                `json:"idempotency_key"`
	Problem        *problem.Problem      `json:"problem"`
	Notice         string                `json:"notice"`
	OpenSessions   []session.OpenSession `json:"open_sessions"`
	Resumed        bool                  `json:"resumed"`
}

// answerOf is what a turn answered, from its stored response, without the
// arguments and sessions; nil when the response cannot be read.
func answerOf(response []byte) *slotdv1.TurnResponse {
	var a storedAnswer
	if len(response) == 0 || json.Unmarshal(response, &a) != nil {
		return nil
	}
	out := &slotdv1.TurnResponse{Action: actionOf(a.Action), IdempotencyKey: a.IdempotencyKey,
		Problem: responseProblem(a.Problem), Notice: a.Notice, Resumed: a.Resumed}
	if q := a.Question; q != nil {
		out.Question = &slotdv1.Question{Slot: q.Slot, Text: q.Text, AllowedValues: q.Allowed, Format: q.Format}
	}
	for _, o := range a.OpenSessions {
		out.OpenSessions = append(out.OpenSessions, &slotdv1.OpenSession{Tool: o.Tool, SessionId: o.SessionID,
			Missing: o.Missing, LastAction: actionOf(o.LastAction), UpdatedAt: timestamppb.New(o.UpdatedAt)})
	}
	return out
}
