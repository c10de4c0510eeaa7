package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/proto"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/redact"
	"github.com/slotd/slotd/internal/setting"
	"github.com/slotd/slotd/problem"
)

// Limits bound what one call may cost before any work is done.
type Limits struct {
	// MaxRequestBytes bounds a request's bytes as sent (Guard.Codec counts
	// them as it decodes).
	MaxRequestBytes int
	// MaxInFlight bounds concurrent SlotService calls; more are shed with
	// RESOURCE_EXHAUSTED and a retry_after instead of queueing.
	MaxInFlight int
	// TenantMaxInFlight is each tenant's share of MaxInFlight: a tenant's
	// calls past it are shed as those past MaxInFlight are, so that one
	// tenant's flood leaves the other tenants their places. MaxInFlight
	// when 0 (slotd serve divides MaxInFlight among its tenants).
	TenantMaxInFlight int
	// TenantLimits overrides TenantMaxInFlight for the tenants it names.
	TenantLimits map[string]int
	// MaxRunning bounds the SlotService calls in flight that run at once;
	// the others wait, and a place that frees goes to the tenants in turn.
	// 4 per core when 0: as many as the Postgres pool's connections, so
	// that a turn's waits on Postgres overlap.
	MaxRunning int
	// TenantMaxRunning is each tenant's part of MaxRunning. MaxRunning when
	// 0 (slotd serve divides MaxRunning among its tenants).
	TenantMaxRunning int
	// DefaultDeadline applies to calls that bring none, so nothing hangs:
	// a stream that never sends its request ends when it passes.
	DefaultDeadline time.Duration
	// MaxDeadline caps the deadline a caller asks for.
	MaxDeadline time.Duration
	// MaxStreams bounds the streams admitted and not yet answered over all
	// connections (a stream's place is given back when its handler
	// returns, while its answer may still be written: what a client that
	// stops reading holds then is bounded by the streams per connection and
	// the flow-control windows); more are refused with RESOURCE_EXHAUSTED
	// before anything is read.
	MaxStreams int
}

// The defaults of Limits.
const (
	DefaultMaxRequestBytes = 1 << 20
	DefaultMaxInFlight     = 256
	DefaultDeadline        = 10 * time.Second
	DefaultMaxDeadline     = 30 * time.Second
	DefaultMaxStreams      = 8192
)

// WithDefaults is a copy of l with its zero fields set to the defaults;
// MaxRunning is 4 per core. TenantMaxInFlight, TenantMaxRunning and
// TenantLimits stay as they are: 0 (none) is a tenant's share of all.
func (l Limits) WithDefaults() Limits {
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	set(&l.MaxRequestBytes, DefaultMaxRequestBytes)
	set(&l.MaxInFlight, DefaultMaxInFlight)
	set(&l.MaxRunning, 4*runtime.GOMAXPROCS(0))
	set(&l.MaxStreams, DefaultMaxStreams)
	if l.DefaultDeadline == 0 {
		l.DefaultDeadline = DefaultDeadline
	}
	if l.MaxDeadline == 0 {
		l.MaxDeadline = DefaultMaxDeadline
	}
	return l
}

// Validate says which limit, after WithDefaults, is out of range (a
// *setting.Error), or nil.
func (l Limits) Validate() error {
	if err := setting.First(
		setting.AtLeast("MaxRequestBytes", l.MaxRequestBytes, 1),
		setting.AtLeast("MaxInFlight", l.MaxInFlight, 1),
		setting.AtLeast("TenantMaxInFlight", l.TenantMaxInFlight, 0),
		setting.AtLeast("MaxRunning", l.MaxRunning, 1),
		setting.AtLeast("TenantMaxRunning", l.TenantMaxRunning, 0),
		setting.Positive("DefaultDeadline", l.DefaultDeadline),
		setting.Positive("MaxDeadline", l.MaxDeadline),
		setting.AtLeast("MaxStreams", l.MaxStreams, 1),
	); err != nil {
		return err
	}
	for tenant, n := range l.TenantLimits {
		if n < 1 {
			return setting.Invalid("TenantLimits", "of tenant %q must be at least 1, not %d", tenant, n)
		}
	}
	return nil
}

// Reasons a call is shed by Limit, as OnShed tells them.
const (
	// ShedOverloaded: MaxInFlight calls were in flight.
	ShedOverloaded = "overloaded"
	// ShedTenantShare: the call's tenant had its share in flight.
	ShedTenantShare = "tenant_share"
)

// slotServicePrefix begins the names of the SlotService's methods, the
// calls that Limit sheds.
const slotServicePrefix = "/slotd.v1.SlotService/"

// streamDeadline bounds the long-lived streams anyone may open: health
// watches and reflection. Their clients reconnect.
const streamDeadline = 5 * time.Minute

// RequestIDHeader carries a call's request id, in and out.
const RequestIDHeader = "x-request-id"

type requestIDKey struct{}

// RequestID is the call's request id; "" outside a call.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// withRequestID takes the caller's x-request-id (when it is short and
// printable) or makes one, and sends it back as a response header. An id
// that holds a card number is refused: ids are logged as they are.
func withRequestID(ctx context.Context) (context.Context, error) {
	var id string
	var err error
	// The one header is read without a copy of the whole metadata, and
	// set under its (lower-case) name as it is.
	if v := metadata.ValueFromIncomingContext(ctx, RequestIDHeader); len(v) == 1 && len(v[0]) <= 128 && printable(v[0]) {
		id = v[0]
		if redact.HasCard(id) {
			id, err = "", problem.InvalidRequest(RequestIDHeader, "holds what looks like a full card number; ids must never carry one")
		}
	}
	if id == "" {
		id = uuid.NewString()
	}
	_ = grpc.SetHeader(ctx, metadata.MD{RequestIDHeader: {id}})
	return context.WithValue(ctx, requestIDKey{}, id), err
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
	shares   *shares
	streams  chan struct{}
	onRefuse func(problem.Kind)
	onShed   func(reason string)
	turns    Observer
}

// NewGuard builds the guard; zero fields of limits take their defaults
// (Limits.WithDefaults), and a tenant's share is all when not set.
func NewGuard(limits Limits, log *slog.Logger) *Guard {
	limits = limits.WithDefaults()
	if limits.TenantMaxInFlight <= 0 {
		limits.TenantMaxInFlight = limits.MaxInFlight
	}
	if limits.TenantMaxRunning <= 0 {
		limits.TenantMaxRunning = limits.MaxRunning
	}
	return &Guard{limits: limits, log: log, inFlight: make(chan struct{}, limits.MaxInFlight), shares: newShares(limits),
		streams: make(chan struct{}, limits.MaxStreams), turns: ignore{}, onShed: func(string) {}}
}

// Authorizer decides a call from its method and request headers alone.
type Authorizer func(ctx context.Context, md metadata.MD, method string) (context.Context, error)

// Tap admits a stream when its headers arrive, before a byte of its request
// is read: it bounds the streams not yet answered, authenticates the call (a
// refused one costs no decoding), and gives the stream a deadline, so that
// one that never sends its request is ended.
func (g *Guard) Tap(authorize Authorizer) tap.ServerInHandle {
	return func(ctx context.Context, info *tap.Info) (context.Context, error) {
		return g.admit(ctx, info.Header, info.FullMethodName, authorize)
	}
}

// admit is what every call meets before its request is read, over gRPC
// (Tap) and in the process (Local) alike: it takes the call's place among
// MaxStreams, authenticates it, sheds a tenant at its share, and gives the
// call its deadline. An error is the status the call answers with.
func (g *Guard) admit(ctx context.Context, md metadata.MD, method string, authorize Authorizer) (context.Context, error) {
	select {
	case g.streams <- struct{}{}:
	default:
		g.refused(problem.Overloaded(1))
		return nil, Status(ctx, g.log, problem.Overloaded(1))
	}
	ctx, err := authorize(ctx, md, method)
	if err != nil {
		<-g.streams
		g.refused(err)
		return nil, Status(ctx, g.log, err)
	}
	// A tenant at its share is shed here already, which spares a flood's
	// retries the decoding, the handler and the log line of each; Limit
	// holds the share, this only saves the work.
	if strings.HasPrefix(method, slotServicePrefix) && g.shares.full(TenantFrom(ctx)) {
		<-g.streams
		g.onShed(ShedTenantShare)
		return nil, Status(ctx, g.log, problem.Overloaded(1))
	}
	ctx, cancel := context.WithTimeout(ctx, g.deadline(ctx, method))
	slot := &streamSlot{g: g}
	slot.stop = context.AfterFunc(ctx, func() {
		cancel()
		slot.free()
	})
	return context.WithValue(ctx, streamSlotKey{}, slot), nil
}

// streamSlot is a stream's place among MaxStreams, which Tap takes. A
// stream gives it back when its handler returns (Recover and RecoverStream
// see to it, on the handler's goroutine), or, when no handler ran (the
// request never came, or was refused before it), when the stream ends:
// then a goroutine of context.AfterFunc does. Giving it back on the
// handler's goroutine spares each call that goroutine and the thread it
// wakes.
type streamSlot struct {
	g    *Guard
	stop func() bool
}

type streamSlotKey struct{}

func (s *streamSlot) free() { <-s.g.streams }

// freeStreamSlot gives back the place the stream of ctx holds, unless it
// was given back already.
func freeStreamSlot(ctx context.Context) {
	if s, ok := ctx.Value(streamSlotKey{}).(*streamSlot); ok && s.stop() {
		s.free()
	}
}

// OnRefuse sets what is told of each call the Tap refuses: its problem's
// kind (unauthenticated, permission denied, overloaded). Set it before the
// server serves.
func (g *Guard) OnRefuse(f func(problem.Kind)) { g.onRefuse = f }

func (g *Guard) refused(err error) {
	var pe *problem.Error
	if g.onRefuse != nil && errors.As(err, &pe) {
		g.onRefuse(pe.Kind)
	}
}

// OnShed sets what is told of each SlotService call Limit sheds: its
// reason, ShedOverloaded or ShedTenantShare. Set it before the server
// serves.
func (g *Guard) OnShed(f func(reason string)) {
	if f != nil {
		g.onShed = f
	}
}

// ObserveTurns has Limit tell o of each turn it refuses (undecodable,
// too large, shed): those never reach the SlotService, which tells o of
// the others, and would go unseen. Set it before the server serves.
func (g *Guard) ObserveTurns(o Observer) {
	if o != nil {
		g.turns = o
	}
}

// deadline is how long a stream may run: the caller's deadline within
// MaxDeadline, else DefaultDeadline; long-lived public streams get
// streamDeadline.
func (g *Guard) deadline(ctx context.Context, method string) time.Duration {
	if !strings.HasPrefix(method, "/slotd.v1.") {
		return streamDeadline
	}
	d := g.limits.DefaultDeadline
	if dl, ok := ctx.Deadline(); ok {
		d = time.Until(dl)
	}
	return min(d, g.limits.MaxDeadline)
}

// Codec is the codec of the server the guard guards: it marks requests
// over MaxRequestBytes as sent, which Limit refuses.
func (g *Guard) Codec() Codec { return Codec{MaxBytes: g.limits.MaxRequestBytes} }

// Streams is the number of streams admitted and not yet answered.
func (g *Guard) Streams() int { return len(g.streams) }

// InFlight is the number of SlotService calls being served.
func (g *Guard) InFlight() int { return len(g.inFlight) }

// Recover is the outermost interceptor: a panic becomes an INTERNAL problem
// without details, logged with the request id and stack, and the process
// keeps serving.
func (g *Guard) Recover() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer freeStreamSlot(ctx)
		ctx, err = withRequestID(ctx)
		if err != nil {
			return nil, Status(ctx, g.log, err)
		}
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
		defer freeStreamSlot(ss.Context())
		defer func() {
			if r := recover(); r != nil {
				g.log.Error("panic in a stream", "method", info.FullMethod, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = Status(ss.Context(), g.log, problem.Internal())
			}
		}()
		return handler(srv, ss)
	}
}

// Limit refuses the requests the codec marked (undecodable, or over
// MaxRequestBytes: the server decodes with Guard.Codec), applies the
// default deadline, and sheds SlotService load: calls past MaxInFlight,
// and a tenant's calls past its share while the others' are admitted.
func (g *Guard) Limit() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		refuse := func(pe *problem.Error) (any, error) {
			if in, ok := req.(*slotdv1.TurnRequest); ok && info.FullMethod == slotdv1.SlotService_Turn_FullMethodName {
				g.turns.TurnStarted(ctx)
				g.turns.TurnDone(ctx, TurnReport{Request: turnHeader(ctx, in), Err: pe, Code: codeOf(ctx, pe),
					Elapsed: time.Since(start)})
			}
			return nil, Status(ctx, g.log, pe)
		}
		if m, ok := req.(proto.Message); ok {
			if field, why := undecodable(m); field != "" {
				return refuse(problem.InvalidRequest(field, why))
			}
		}
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, g.limits.DefaultDeadline)
			defer cancel()
		}
		if strings.HasPrefix(info.FullMethod, slotServicePrefix) {
			select {
			case g.inFlight <- struct{}{}:
				defer func() { <-g.inFlight }()
			default:
				g.onShed(ShedOverloaded)
				return refuse(problem.Overloaded(1))
			}
			tenant, ok := g.shares.take(TenantFrom(ctx))
			if !ok {
				g.onShed(ShedTenantShare)
				return refuse(problem.Overloaded(1))
			}
			defer g.shares.put(tenant)
			if err := g.shares.run(ctx, tenant); err != nil {
				if errors.Is(err, context.DeadlineExceeded) {
					return refuse(problem.DeadlinePassed())
				}
				return refuse(problem.Cancelled())
			}
			defer g.shares.done(tenant)
		}
		return handler(ctx, req)
	}
}
