package server

import (
	"context"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/auth"
)

// The HTTP gateway's routes and MCP's tool calls reach slotd's services in
// the process (api.Local): no gRPC hop, no second encoding of the request
// and the answer, and the same admission, limits, deadlines, metrics, logs,
// request ids and problems as a gRPC call, made once by the code the gRPC
// server runs for them.

// unaryInterceptors are what every unary call meets, in order, over gRPC
// and in the process alike. Errors comes last, so that every handler's
// error becomes a status with a problem before the gRPC metrics read its
// code.
func (s *Server) unaryInterceptors() []grpc.UnaryServerInterceptor {
	return []grpc.UnaryServerInterceptor{s.guard.Recover(), s.obs.trace(), s.obs.unary(), s.guard.Limit(), s.guard.Errors()}
}

// locals are the in-process paths to slotd's services: the gateway's,
// whose requests protojson decoded and whose callers the edge
// authenticated, and MCP's, whose requests Go code built and whose
// metadata carries the caller's key.
type locals struct {
	slots  slotdv1.SlotServiceServer
	admin  slotdv1.AdminServiceServer
	health healthpb.HealthServer
	http   *api.Local
	mcp    *api.Local
}

func (s *Server) newLocals(keys *auth.Keys) *locals {
	return &locals{
		slots:  api.NewSlotService(s.engine, api.WithObserver(s.obs)),
		admin:  api.NewAdminService(s.engine, s.log, s.cfg.Session.Clock),
		health: s.health,
		http:   s.guard.Local(edgeAuthorizer(keys), true, s.unaryInterceptors()...),
		mcp:    s.guard.Local(metadataAuthorizer(keys), false, s.unaryInterceptors()...),
	}
}

// edgePrincipalKey carries the principal the HTTP edge authenticated.
type edgePrincipalKey struct{}

// withEdgePrincipal is ctx carrying the principal the edge found.
func withEdgePrincipal(ctx context.Context, who auth.Principal) context.Context {
	return context.WithValue(ctx, edgePrincipalKey{}, who)
}

// edgeAuthorizer admits a gateway call: the edge authenticated its key, so
// only the method is checked against the principal it found. A call
// without one (a public route) is decided from its metadata.
func edgeAuthorizer(keys *auth.Keys) api.Authorizer {
	return func(ctx context.Context, _ metadata.MD, method string) (context.Context, error) {
		if who, ok := ctx.Value(edgePrincipalKey{}).(auth.Principal); ok {
			return keys.Allow(ctx, who, method)
		}
		return metadataAuthorizer(keys)(ctx, nil, method)
	}
}

// metadataAuthorizer admits a call by the key its incoming metadata
// carries, as the gRPC server's Tap does.
func metadataAuthorizer(keys *auth.Keys) api.Authorizer {
	return func(ctx context.Context, _ metadata.MD, method string) (context.Context, error) {
		md := metadata.MD{}
		if v := metadata.ValueFromIncomingContext(ctx, "authorization"); v != nil {
			md["authorization"] = v
		}
		return keys.Authorize(ctx, md, method)
	}
}

// localCall runs f for in as a call of method through l.
func localCall[Req proto.Message, Resp any](ctx context.Context, l *api.Local, method string, srv any, in Req, f func(context.Context, Req) (Resp, error)) (Resp, error) {
	resp, err := l.Call(ctx, method, srv, in, func(ctx context.Context, req any) (any, error) { return f(ctx, req.(Req)) })
	r, _ := resp.(Resp)
	return r, err
}

// clientCall is localCall for a caller that holds a gRPC client: its
// outgoing metadata is the call's incoming metadata, and the headers and
// trailers the call sets are given to its grpc.Header and grpc.Trailer
// options.
func clientCall[Req proto.Message, Resp any](ctx context.Context, l *api.Local, method string, srv any, in Req, f func(context.Context, Req) (Resp, error), opts []grpc.CallOption) (Resp, error) {
	md, _ := metadata.FromOutgoingContext(ctx)
	ctx = metadata.NewIncomingContext(ctx, md)
	var st runtime.ServerTransportStream
	ctx = grpc.NewContextWithServerTransportStream(ctx, &st)
	resp, err := localCall(ctx, l, method, srv, in, f)
	for _, o := range opts {
		switch o := o.(type) {
		case grpc.HeaderCallOption:
			*o.HeaderAddr = st.Header()
		case grpc.TrailerCallOption:
			*o.TrailerAddr = st.Trailer()
		}
	}
	return resp, err
}

// gatewaySlots serves the gateway's SlotService routes through the
// gateway's local path.
type gatewaySlots struct {
	slotdv1.UnimplementedSlotServiceServer
	*locals
}

func (g gatewaySlots) Turn(ctx context.Context, in *slotdv1.TurnRequest) (*slotdv1.TurnResponse, error) {
	return localCall(ctx, g.http, slotdv1.SlotService_Turn_FullMethodName, g.slots, in, g.slots.Turn)
}

func (g gatewaySlots) GetSession(ctx context.Context, in *slotdv1.GetSessionRequest) (*slotdv1.GetSessionResponse, error) {
	return localCall(ctx, g.http, slotdv1.SlotService_GetSession_FullMethodName, g.slots, in, g.slots.GetSession)
}

func (g gatewaySlots) ResetSession(ctx context.Context, in *slotdv1.ResetSessionRequest) (*slotdv1.ResetSessionResponse, error) {
	return localCall(ctx, g.http, slotdv1.SlotService_ResetSession_FullMethodName, g.slots, in, g.slots.ResetSession)
}

func (g gatewaySlots) CompleteSession(ctx context.Context, in *slotdv1.CompleteSessionRequest) (*slotdv1.CompleteSessionResponse, error) {
	return localCall(ctx, g.http, slotdv1.SlotService_CompleteSession_FullMethodName, g.slots, in, g.slots.CompleteSession)
}

func (g gatewaySlots) ListContracts(ctx context.Context, in *slotdv1.ListContractsRequest) (*slotdv1.ListContractsResponse, error) {
	return localCall(ctx, g.http, slotdv1.SlotService_ListContracts_FullMethodName, g.slots, in, g.slots.ListContracts)
}

func (g gatewaySlots) GetToolSchema(ctx context.Context, in *slotdv1.GetToolSchemaRequest) (*slotdv1.GetToolSchemaResponse, error) {
	return localCall(ctx, g.http, slotdv1.SlotService_GetToolSchema_FullMethodName, g.slots, in, g.slots.GetToolSchema)
}

// gatewayAdmin serves the gateway's AdminService routes through the
// gateway's local path.
type gatewayAdmin struct {
	slotdv1.UnimplementedAdminServiceServer
	*locals
}

func (g gatewayAdmin) ListSessions(ctx context.Context, in *slotdv1.ListSessionsRequest) (*slotdv1.ListSessionsResponse, error) {
	return localCall(ctx, g.http, slotdv1.AdminService_ListSessions_FullMethodName, g.admin, in, g.admin.ListSessions)
}

func (g gatewayAdmin) ResetStaleSessions(ctx context.Context, in *slotdv1.ResetStaleSessionsRequest) (*slotdv1.ResetStaleSessionsResponse, error) {
	return localCall(ctx, g.http, slotdv1.AdminService_ResetStaleSessions_FullMethodName, g.admin, in, g.admin.ResetStaleSessions)
}

func (g gatewayAdmin) GetSessionHistory(ctx context.Context, in *slotdv1.GetSessionHistoryRequest) (*slotdv1.GetSessionHistoryResponse, error) {
	return localCall(ctx, g.http, slotdv1.AdminService_GetSessionHistory_FullMethodName, g.admin, in, g.admin.GetSessionHistory)
}

func (g gatewayAdmin) PurgeSessions(ctx context.Context, in *slotdv1.PurgeSessionsRequest) (*slotdv1.PurgeSessionsResponse, error) {
	return localCall(ctx, g.http, slotdv1.AdminService_PurgeSessions_FullMethodName, g.admin, in, g.admin.PurgeSessions)
}

func (g gatewayAdmin) EraseConversation(ctx context.Context, in *slotdv1.EraseConversationRequest) (*slotdv1.EraseConversationResponse, error) {
	return localCall(ctx, g.http, slotdv1.AdminService_EraseConversation_FullMethodName, g.admin, in, g.admin.EraseConversation)
}

// gatewayHealth answers the gateway's /healthz through its local path.
type gatewayHealth struct {
	healthpb.HealthClient // nil: only Check is called
	*locals
}

func (g gatewayHealth) Check(ctx context.Context, in *healthpb.HealthCheckRequest, opts ...grpc.CallOption) (*healthpb.HealthCheckResponse, error) {
	return clientCall(ctx, g.http, healthpb.Health_Check_FullMethodName, g.health, in, g.health.Check, opts)
}

// mcpSlots is the SlotService client MCP's tool calls use: the service
// through MCP's local path.
type mcpSlots struct{ *locals }

var _ slotdv1.SlotServiceClient = mcpSlots{}

func (m mcpSlots) Turn(ctx context.Context, in *slotdv1.TurnRequest, opts ...grpc.CallOption) (*slotdv1.TurnResponse, error) {
	return clientCall(ctx, m.mcp, slotdv1.SlotService_Turn_FullMethodName, m.slots, in, m.slots.Turn, opts)
}

func (m mcpSlots) GetSession(ctx context.Context, in *slotdv1.GetSessionRequest, opts ...grpc.CallOption) (*slotdv1.GetSessionResponse, error) {
	return clientCall(ctx, m.mcp, slotdv1.SlotService_GetSession_FullMethodName, m.slots, in, m.slots.GetSession, opts)
}

func (m mcpSlots) ResetSession(ctx context.Context, in *slotdv1.ResetSessionRequest, opts ...grpc.CallOption) (*slotdv1.ResetSessionResponse, error) {
	return clientCall(ctx, m.mcp, slotdv1.SlotService_ResetSession_FullMethodName, m.slots, in, m.slots.ResetSession, opts)
}

func (m mcpSlots) CompleteSession(ctx context.Context, in *slotdv1.CompleteSessionRequest, opts ...grpc.CallOption) (*slotdv1.CompleteSessionResponse, error) {
	return clientCall(ctx, m.mcp, slotdv1.SlotService_CompleteSession_FullMethodName, m.slots, in, m.slots.CompleteSession, opts)
}

func (m mcpSlots) ListContracts(ctx context.Context, in *slotdv1.ListContractsRequest, opts ...grpc.CallOption) (*slotdv1.ListContractsResponse, error) {
	return clientCall(ctx, m.mcp, slotdv1.SlotService_ListContracts_FullMethodName, m.slots, in, m.slots.ListContracts, opts)
}

func (m mcpSlots) GetToolSchema(ctx context.Context, in *slotdv1.GetToolSchemaRequest, opts ...grpc.CallOption) (*slotdv1.GetToolSchemaResponse, error) {
	return clientCall(ctx, m.mcp, slotdv1.SlotService_GetToolSchema_FullMethodName, m.slots, in, m.slots.GetToolSchema, opts)
}
