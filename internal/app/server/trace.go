package server

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/metrics"
	"github.com/slotd/slotd/internal/redact"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/tracing"
)

// trace gives each call of slotd's own services a server span, the child
// of the caller's span when the call's metadata carries a W3C traceparent
// (the gateway passes the HTTP header on, /mcp the _meta key). It sits
// inside the recovery interceptor and outside everything else, so that a
// refused call is traced too and the engine's Postgres spans are its
// children. With tracing off it only calls the handler.
func (o *observer) trace() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if o.tracer == nil || !strings.HasPrefix(info.FullMethod, "/slotd.") {
			return handler(ctx, req)
		}
		md, _ := metadata.FromIncomingContext(ctx)
		ctx = tracing.Propagator.Extract(ctx, mdCarrier(md))
		service, method, _ := strings.Cut(info.FullMethod[1:], "/")
		ctx, span := o.tracer.Start(ctx, info.FullMethod[1:], trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("rpc.system", "grpc"), attribute.String("rpc.service", service),
				attribute.String("rpc.method", method)))
		defer span.End()
		resp, err := handler(ctx, req)
		code := status.Code(err)
		span.SetAttributes(attribute.Int("rpc.grpc.status_code", int(code)))
		// The code, not the message: a problem's detail echoes the
		// caller's input, masked for the caller, not meant for traces.
		if serverFault(code) {
			span.SetStatus(otelcodes.Error, code.String())
		}
		return resp, err
	}
}

// serverFault reports whether a code is slotd's failure rather than the
// caller's, as OpenTelemetry's gRPC conventions mark a server span's error.
func serverFault(c codes.Code) bool {
	switch c {
	case codes.Unknown, codes.DeadlineExceeded, codes.Unimplemented, codes.Internal, codes.Unavailable, codes.DataLoss:
		return true
	}
	return false
}

// annotateTurn adds to a traced turn's span what its log line says: names,
// counts and ids as the log masks them, never a slot value.
func (o *observer) annotateTurn(ctx context.Context, r api.TurnReport, t metrics.Turn) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	in := r.Request
	span.SetAttributes(attribute.String("slotd.tenant", in.Tenant), attribute.String("slotd.tool", o.m.Tool(in.Tool)),
		attribute.String("slotd.conversation_id", redact.LoggedID(in.ConversationID)),
		attribute.String("slotd.turn_id", redact.LoggedID(in.TurnID)),
		attribute.String("slotd.code", r.Code.String()))
	res := r.Result
	if res == nil {
		return
	}
	attrs := []attribute.KeyValue{attribute.String("slotd.action", t.Action), attribute.Bool("slotd.replayed", res.Replayed),
		attribute.String("slotd.session_id", res.Session.ID), attribute.Int64("slotd.version", res.Session.Version),
		attribute.Int("slotd.changes", len(res.Changes))}
	attrs = appendDecisions(attrs, res)
	if q := res.Question; q != nil && q.Slot != "" {
		attrs = append(attrs, attribute.String("slotd.slot", q.Slot))
	}
	if p := res.Problem; p != nil {
		attrs = append(attrs, attribute.String("slotd.problem", p.Type), attribute.Int("slotd.problem_errors", len(p.Errors)))
	}
	span.SetAttributes(attrs...)
}

// appendDecisions appends, per decision the turn's changes got, how many
// got it: slotd.decisions.<decision>.
func appendDecisions(attrs []attribute.KeyValue, res *session.Result) []attribute.KeyValue {
	first := len(attrs)
next:
	for _, ch := range res.Changes {
		key := attribute.Key("slotd.decisions." + string(ch.Decision))
		for i := first; i < len(attrs); i++ {
			if attrs[i].Key == key {
				attrs[i] = key.Int64(attrs[i].Value.AsInt64() + 1)
				continue next
			}
		}
		attrs = append(attrs, key.Int64(1))
	}
	return attrs
}

// mdCarrier reads gRPC metadata as a propagation.TextMapCarrier.
type mdCarrier metadata.MD

func (c mdCarrier) Get(key string) string {
	if v := metadata.MD(c).Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

func (c mdCarrier) Set(key, value string) { metadata.MD(c).Set(key, value) }

func (c mdCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}
