package api

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/slotd/slotd/problem"
)

// Limits bound what one call may cost before any work is done.
type Limits struct {
	// MaxRequestBytes bounds the encoded request.
	MaxRequestBytes int
	// MaxInFlight bounds concurrent SlotService calls; more are shed with
	// RESOURCE_EXHAUSTED and a retry_after instead of queueing.
	MaxInFlight int
	// DefaultDeadline applies to calls that bring none, so nothing hangs.
	DefaultDeadline time.Duration
}

// DefaultLimits are the limits of a server that sets none.
var DefaultLimits = Limits{MaxRequestBytes: 1 << 20, MaxInFlight: 256, DefaultDeadline: 10 * time.Second}

// RequestIDHeader carries a call's request id, in and out.
const RequestIDHeader = "x-request-id"

type requestIDKey struct{}

// RequestID is the call's request id; "" outside a call.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// withRequestID takes the caller's x-request-id (when it is short and
// printable) or makes one, and sends it back as a response header.
func withRequestID(ctx context.Context) context.Context {
	var id string
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get(RequestIDHeader); len(v) == 1 && len(v[0]) <= 128 && printable(v[0]) {
			id = v[0]
		}
	}
	if id == "" {
		id = uuid.NewString()
	}
	_ = grpc.SetHeader(ctx, metadata.Pairs(RequestIDHeader, id))
	return context.WithValue(ctx, requestIDKey{}, id)
}

func printable(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 0x21 || r > 0x7e }) < 0
}

// Guard holds the interceptors that keep one call from hurting the process:
// request ids, panic recovery, size limits, deadlines and load shedding.
type Guard struct {
	limits   Limits
	log      *slog.Logger
	inFlight chan struct{}
}

// NewGuard builds the guard; zero fields of limits take DefaultLimits.
func NewGuard(limits Limits, log *slog.Logger) *Guard {
	if limits.MaxRequestBytes <= 0 {
		limits.MaxRequestBytes = DefaultLimits.MaxRequestBytes
	}
	if limits.MaxInFlight <= 0 {
		limits.MaxInFlight = DefaultLimits.MaxInFlight
	}
	if limits.DefaultDeadline <= 0 {
		limits.DefaultDeadline = DefaultLimits.DefaultDeadline
	}
	return &Guard{limits: limits, log: log, inFlight: make(chan struct{}, limits.MaxInFlight)}
}

// InFlight is the number of SlotService calls being served.
func (g *Guard) InFlight() int { return len(g.inFlight) }

// Recover is the outermost interceptor: a panic becomes an INTERNAL problem
// without details, logged with the request id and stack, and the process
// keeps serving.
func (g *Guard) Recover() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		ctx = withRequestID(ctx)
		defer func() {
			if r := recover(); r != nil {
				g.log.ErrorContext(ctx, "panic in a call", "request_id", RequestID(ctx), "method", info.FullMethod,
					"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				resp, err = nil, Status(ctx, g.log, problem.Internal())
			}
		}()
		return handler(ctx, req)
	}
}

// RecoverStream is Recover for streaming calls.
func (g *Guard) RecoverStream() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if r := recover(); r != nil {
				g.log.Error("panic in a stream", "method", info.FullMethod, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = Status(ss.Context(), g.log, problem.Internal())
			}
		}()
		return handler(srv, ss)
	}
}

// Limit refuses oversized or undecodable requests, applies the default
// deadline, and sheds SlotService load past MaxInFlight.
func (g *Guard) Limit() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if m, ok := req.(proto.Message); ok {
			if field, why := undecodable(m); field != "" {
				return nil, Status(ctx, g.log, problem.InvalidRequest(field, why))
			}
			if n := proto.Size(m); n > g.limits.MaxRequestBytes {
				return nil, Status(ctx, g.log, problem.InvalidRequest("request",
					fmt.Sprintf("%d bytes; at most %d", n, g.limits.MaxRequestBytes)))
			}
		}
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, g.limits.DefaultDeadline)
			defer cancel()
		}
		if strings.HasPrefix(info.FullMethod, "/slotd.v1.SlotService/") {
			select {
			case g.inFlight <- struct{}{}:
				defer func() { <-g.inFlight }()
			default:
				return nil, Status(ctx, g.log, problem.Overloaded(1))
			}
		}
		return handler(ctx, req)
	}
}
