package server

import (
	"context"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

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

// register adds the services that both the gRPC server and local serve.
func (s *Server) register(r grpc.ServiceRegistrar) {
	s.slots.Register(r)
	s.admin.Register(r)
	healthpb.RegisterHealthServer(r, s.health)
}

// newLocal is the in-process path to the services.
func (s *Server) newLocal(keys *auth.Keys) *api.Local {
	l := s.guard.Local(localAuthorizer(keys), s.unaryInterceptors()...)
	s.register(l)
	return l
}

// edgePrincipalKey carries the principal the HTTP edge authenticated.
type edgePrincipalKey struct{}

// withEdgePrincipal is ctx carrying the principal the edge found.
func withEdgePrincipal(ctx context.Context, who auth.Principal) context.Context {
	return context.WithValue(ctx, edgePrincipalKey{}, who)
}

// localAuthorizer admits an in-process call. A gateway call, whose key the
// edge checked, is only checked against the method (the principal the edge
// found is in its context); any other (MCP's tool calls, and the public
// routes) is decided by the key its metadata carries, as Tap decides a
// gRPC call.
func localAuthorizer(keys *auth.Keys) api.Authorizer {
	return func(ctx context.Context, md metadata.MD, method string) (context.Context, error) {
		if who, ok := ctx.Value(edgePrincipalKey{}).(auth.Principal); ok {
			return keys.Allow(ctx, who, method)
		}
		return keys.Authorize(ctx, md, method)
	}
}
