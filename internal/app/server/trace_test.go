package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/logline"
	"github.com/slotd/slotd/internal/testkit/dbtest"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

// Concurrent turns of an embedding server, each the child of its own
// caller's span: every turn span under its caller's, every Postgres span
// under a turn span of the same trace, and a caller's mistake no error of
// slotd's.
func TestTracedTurnsKeepTheirParents(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	inst := start(t, dbtest.NewDatabase(t), nil, func(c *server.Config) { c.Tracer = tp })

	const turns = 16
	reasonArgs, err := structpb.NewStruct(map[string]any{"reason": "Duplicate"})
	if err != nil {
		t.Fatal(err)
	}
	parents := make([]trace.SpanContext, turns)
	var wg sync.WaitGroup
	for i := range turns {
		parents[i] = trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{byte(i + 1), 0xab}, SpanID: trace.SpanID{byte(i + 1), 0xcd},
			TraceFlags: trace.FlagsSampled})
		wg.Go(func() {
			tp := fmt.Sprintf("00-%s-%s-01", parents[i].TraceID(), parents[i].SpanID())
			ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "traceparent", tp), 10*time.Second)
			defer cancel()
			tool := "bank.open_dispute"
			if i == 0 {
				tool = "bank.open_dispute_v9" // unknown: the caller's mistake
			}
			_, err := inst.client.Turn(ctx, &slotdv1.TurnRequest{ConversationId: fmt.Sprintf("c-%d", i), Tool: tool, TurnId: "t-1",
				Arguments: reasonArgs, Now: timestamppb.New(seedNow)})
			if (err != nil) != (i == 0) {
				t.Errorf("turn %d: %v", i, err)
			}
		})
	}
	wg.Wait()

	spans := rec.Ended()
	turnOf := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, sp := range spans {
		if sp.Name() == "slotd.v1.SlotService/Turn" {
			turnOf[sp.SpanContext().SpanID()] = sp
		}
	}
	for i, p := range parents {
		var turn sdktrace.ReadOnlySpan
		for _, sp := range turnOf {
			if sp.Parent().SpanID() == p.SpanID() && sp.SpanContext().TraceID() == p.TraceID() {
				turn = sp
			}
		}
		if turn == nil {
			t.Errorf("turn %d: no turn span with its caller's span as parent", i)
			continue
		}
		if i == 0 && turn.Status().Code == codes.Error {
			t.Errorf("an unknown tool's turn span has status %v: the caller's mistake is not slotd's error", turn.Status())
		}
		if i > 0 && !hasAttr(turn.Attributes(), attribute.String("slotd.action", "ASK")) {
			t.Errorf("turn %d: span attributes %v, want slotd.action ASK", i, turn.Attributes())
		}
	}
	var postgres int
	for _, sp := range spans {
		if !strings.Contains(sp.InstrumentationScope().Name, "otelpgx") {
			continue
		}
		postgres++
		// Up to the turn span, within the same trace.
		byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
		for _, s := range spans {
			byID[s.SpanContext().SpanID()] = s
		}
		p := sp
		for p != nil && turnOf[p.SpanContext().SpanID()] == nil {
			p = byID[p.Parent().SpanID()]
		}
		if p == nil || p.SpanContext().TraceID() != sp.SpanContext().TraceID() {
			t.Errorf("Postgres span %q (trace %s) is under no turn span of its trace", sp.Name(), sp.SpanContext().TraceID())
		}
	}
	if postgres < 2*(turns-1) {
		t.Errorf("%d Postgres spans for %d turns, want at least the two round trips of each", postgres, turns-1)
	}
}

// With tracing off, a caller's traceparent changes nothing: no trace id in
// the turn's line.
func TestUntracedTurnLogsNoTraceID(t *testing.T) {
	t.Parallel()
	var buf servertest.LogBuffer
	inst := start(t, "", slog.New(logline.NewJSON(&buf, nil)))
	ctx := metadata.AppendToOutgoingContext(context.Background(), "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if _, err := inst.client.Turn(ctx, &slotdv1.TurnRequest{ConversationId: "c", Tool: "bank.open_dispute", TurnId: "t-1",
		Now: timestamppb.New(seedNow)}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"msg":"turn"`) || strings.Contains(buf.String(), "trace_id") {
		t.Errorf("log of an untraced server:\n%s\nwant a turn line without trace_id", buf.String())
	}
}

func hasAttr(attrs []attribute.KeyValue, want attribute.KeyValue) bool {
	for _, a := range attrs {
		if a == want {
			return true
		}
	}
	return false
}
