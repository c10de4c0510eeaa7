package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/testkit/servertest"
	"github.com/slotd/slotd/problem"
)

// serve runs srv on a port of its own until the test ends and returns a
// client connection to it.
func serve(t *testing.T, srv *grpc.Server) *grpc.ClientConn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	return servertest.Dial(t, ln.Addr().String())
}

// testService is a one-method service whose handler the test chooses.
func testService(handler func(ctx context.Context) error) grpc.ServiceDesc {
	return grpc.ServiceDesc{
		ServiceName: "slotd.v1.SlotService", // shed like SlotService calls
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "Poke",
			Handler: func(srv any, ctx context.Context, dec func(any) error, icp grpc.UnaryServerInterceptor) (any, error) {
				in := new(emptypb.Empty)
				if err := dec(in); err != nil {
					return nil, err
				}
				h := func(ctx context.Context, req any) (any, error) { return &emptypb.Empty{}, handler(ctx) }
				return icp(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/slotd.v1.SlotService/Poke"}, h)
			},
		}},
	}
}

func serveTest(t *testing.T, g *Guard, handler func(ctx context.Context) error) *grpc.ClientConn {
	t.Helper()
	srv := grpc.NewServer(grpc.ForceServerCodecV2(g.Codec()), grpc.ChainUnaryInterceptor(g.Recover(), g.Limit(), g.Errors()))
	desc := testService(handler)
	srv.RegisterService(&desc, struct{}{})
	return serve(t, srv)
}

func poke(ctx context.Context, conn *grpc.ClientConn, opts ...grpc.CallOption) error {
	return conn.Invoke(ctx, "/slotd.v1.SlotService/Poke", &emptypb.Empty{}, &emptypb.Empty{}, opts...)
}

func problemIn(t *testing.T, err error) *slotdv1.Problem {
	t.Helper()
	for _, d := range status.Convert(err).Details() {
		if p, ok := d.(*slotdv1.Problem); ok {
			return p
		}
	}
	t.Fatalf("no problem in %v", err)
	return nil
}

func TestPanicBecomesInternalAndTheServerGoesOn(t *testing.T) {
	t.Parallel()
	var logs servertest.LogBuffer
	g := NewGuard(Limits{}, slog.New(slog.NewJSONHandler(&logs, nil)))
	conn := serveTest(t, g, func(context.Context) error {
		var m map[string]int
		//lint:ignore SA5000 the handler must panic, with a secret in the panic's value
		m["postgres://user:secret@db/slotd"]++ // a nil map: panics
		return nil
	})
	for i := 0; i < 3; i++ {
		var header metadata.MD
		ctx := metadata.AppendToOutgoingContext(context.Background(), RequestIDHeader, "req-42")
		err := poke(ctx, conn, grpc.Header(&header))
		st := status.Convert(err)
		if st.Code() != codes.Internal {
			t.Fatalf("call %d: %v, want Internal", i, err)
		}
		p := problemIn(t, err)
		if p.Detail != "" || len(p.Errors) != 0 || p.Type == "" {
			t.Errorf("the client learns details of the panic: %v", p)
		}
		if strings.Contains(st.Message(), "nil map") || strings.Contains(st.Message(), "goroutine") {
			t.Errorf("the status message leaks the panic: %q", st.Message())
		}
		if got := header.Get(RequestIDHeader); len(got) != 1 || got[0] != "req-42" {
			t.Errorf("request id header = %v", got)
		}
	}
	out := logs.String()
	if !strings.Contains(out, "req-42") || !strings.Contains(out, "nil map") {
		t.Errorf("the panic is not logged with its request id:\n%s", out)
	}
}

func TestLoadIsShedNotQueued(t *testing.T) {
	t.Parallel()
	g := NewGuard(Limits{MaxInFlight: 2}, slog.New(slog.DiscardHandler))
	var shed atomic.Value
	g.OnShed(func(reason string) { shed.Store(reason) })
	release := make(chan struct{})
	entered := make(chan struct{}, 2)
	conn := serveTest(t, g, func(context.Context) error {
		entered <- struct{}{}
		<-release
		return nil
	})
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); _ = poke(context.Background(), conn) }()
	}
	<-entered
	<-entered
	if g.InFlight() != 2 {
		t.Errorf("in flight = %d, want 2", g.InFlight())
	}
	start := time.Now()
	err := poke(context.Background(), conn)
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("third call: %v, want ResourceExhausted", err)
	}
	if time.Since(start) > time.Second {
		t.Errorf("the shed call waited %v instead of failing at once", time.Since(start))
	}
	if p := problemIn(t, err); !p.Retryable || p.RetryAfterSeconds < 1 {
		t.Errorf("shed problem = %v, want retryable with retry_after", p)
	}
	if got := shed.Load(); got != ShedOverloaded {
		t.Errorf("the shed call was told as %v, want %s", got, ShedOverloaded)
	}
	close(release)
	wg.Wait()
	if err := poke(context.Background(), conn); err != nil {
		t.Errorf("after the load passed: %v", err)
	}
}

func TestDefaultDeadlineBoundsACallWithoutOne(t *testing.T) {
	t.Parallel()
	g := NewGuard(Limits{DefaultDeadline: 100 * time.Millisecond}, slog.New(slog.DiscardHandler))
	var got time.Duration
	conn := serveTest(t, g, func(ctx context.Context) error {
		d, ok := ctx.Deadline()
		if !ok {
			return errors.New("no deadline")
		}
		got = time.Until(d)
		return nil
	})
	if err := poke(context.Background(), conn); err != nil {
		t.Fatal(err)
	}
	if got <= 0 || got > 100*time.Millisecond {
		t.Errorf("deadline in %v, want within 100ms", got)
	}
	// A client's own deadline is honoured as it is.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := poke(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if got < time.Second {
		t.Errorf("the client's 5s deadline was cut to %v", got)
	}
}

// A handler returns domain errors and raw ones, never statuses: the Errors
// interceptor answers each with a status and a problem, and passes a status
// on as it is.
func TestHandlerErrorsBecomeStatuses(t *testing.T) {
	t.Parallel()
	leaky := errors.New("pgstore: dial tcp 10.0.0.5:5432: postgres://slotd:hunter2@db")
	for _, tc := range []struct {
		name   string
		err    error
		code   codes.Code
		typ    string
		status int32
	}{
		{"a raw error", leaky, codes.Internal, problem.TypeInternal, 500},
		{"a domain error", fmt.Errorf("pgstore: %w", session.ErrNotActive), codes.FailedPrecondition, problem.TypeConflict, 409},
		{"a problem", problem.Overloaded(1), codes.ResourceExhausted, problem.TypeOverloaded, 429},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var logs servertest.LogBuffer
			g := NewGuard(Limits{}, slog.New(slog.NewJSONHandler(&logs, nil)))
			err := poke(context.Background(), serveTest(t, g, func(context.Context) error { return tc.err }))
			st := status.Convert(err)
			p := problemIn(t, err)
			if st.Code() != tc.code || p.Type != tc.typ || p.Status != tc.status {
				t.Errorf("%v with problem %v, want %v, type %s, status %d", st.Code(), p, tc.code, tc.typ, tc.status)
			}
			if strings.Contains(st.Message()+p.Detail, "hunter2") {
				t.Errorf("the error's text reached the client: %v", err)
			}
			if tc.code == codes.Internal && !strings.Contains(logs.String(), "hunter2") {
				t.Errorf("the internal error is not in the log:\n%s", logs.String())
			}
		})
	}
	g := NewGuard(Limits{}, slog.New(slog.DiscardHandler))
	own := status.Error(codes.Unimplemented, "not here")
	if err := poke(context.Background(), serveTest(t, g, func(context.Context) error { return own })); status.Code(err) != codes.Unimplemented || status.Convert(err).Message() != "not here" {
		t.Errorf("a status a handler returns: %v, want it as it is", err)
	}
}

// TestStreamHandlerErrorsBecomeStatuses is TestHandlerErrorsBecomeStatuses
// for a streaming call.
func TestStreamHandlerErrorsBecomeStatuses(t *testing.T) {
	t.Parallel()
	g := NewGuard(Limits{}, slog.New(slog.DiscardHandler))
	srv := grpc.NewServer(grpc.ForceServerCodecV2(Codec{}), grpc.ChainStreamInterceptor(g.RecoverStream(), g.ErrorsStream()))
	srv.RegisterService(&grpc.ServiceDesc{
		ServiceName: "slotd.v1.Test",
		HandlerType: (*any)(nil),
		Streams: []grpc.StreamDesc{{StreamName: "Watch", ServerStreams: true, Handler: func(any, grpc.ServerStream) error {
			return errors.New("postgres://slotd:hunter2@db")
		}}},
	}, struct{}{})
	conn := serve(t, srv)
	s, err := conn.NewStream(context.Background(), &grpc.StreamDesc{ServerStreams: true}, "/slotd.v1.Test/Watch")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SendMsg(&emptypb.Empty{}); err != nil {
		t.Fatal(err)
	}
	_ = s.CloseSend()
	err = s.RecvMsg(&emptypb.Empty{})
	if p := problemIn(t, err); status.Code(err) != codes.Internal || p.Type != problem.TypeInternal || strings.Contains(status.Convert(err).Message(), "hunter2") {
		t.Errorf("a stream's raw error: %v, want INTERNAL with a problem and without the text", err)
	}
}

// serveTapped is serveTest with the Tap in front: authorize decides each
// stream from its headers.
func serveTapped(t *testing.T, g *Guard, authorize Authorizer, decoded *int32) *grpc.ClientConn {
	t.Helper()
	srv := grpc.NewServer(grpc.ForceServerCodecV2(countingCodec{decoded}), grpc.InTapHandle(g.Tap(authorize)),
		grpc.ChainUnaryInterceptor(g.Recover(), g.Limit(), g.Errors()))
	desc := testService(func(context.Context) error { return nil })
	srv.RegisterService(&desc, struct{}{})
	return serve(t, srv)
}

// countingCodec is Codec, counting the requests it decodes.
type countingCodec struct{ n *int32 }

func (c countingCodec) Name() string                           { return "proto" }
func (c countingCodec) Marshal(v any) (mem.BufferSlice, error) { return Codec{}.Marshal(v) }
func (c countingCodec) Unmarshal(d mem.BufferSlice, v any) error {
	atomic.AddInt32(c.n, 1)
	return Codec{}.Unmarshal(d, v)
}

func allow(ctx context.Context, md metadata.MD, _ string) (context.Context, error) {
	if v := md.Get("authorization"); len(v) != 1 || v[0] != "Bearer good" {
		return nil, &problem.Error{Kind: problem.KindUnauthenticated, Problem: problem.Problem{Type: problem.TypeUnauthenticated, Title: "Not authenticated"}}
	}
	return ctx, nil
}

// A call refused by the tap is refused before its request is read: the
// codec never sees it.
func TestTapAuthenticatesBeforeDecoding(t *testing.T) {
	t.Parallel()
	var decoded int32
	conn := serveTapped(t, NewGuard(Limits{}, slog.New(slog.DiscardHandler)), allow, &decoded)
	err := poke(context.Background(), conn)
	if status.Code(err) != codes.Unauthenticated || problemIn(t, err).Type != problem.TypeUnauthenticated {
		t.Fatalf("a call without a key: %v, want UNAUTHENTICATED with a problem", err)
	}
	if n := atomic.LoadInt32(&decoded); n != 0 {
		t.Errorf("the refused call was decoded %d times, want 0", n)
	}
	if err := poke(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer good"), conn); err != nil {
		t.Fatalf("a call with the key: %v", err)
	}
	if n := atomic.LoadInt32(&decoded); n != 1 {
		t.Errorf("the call was decoded %d times, want 1", n)
	}
}

// A stream that sends its headers and never its request ends at the
// default deadline, and frees its place among MaxStreams.
func TestTapEndsStreamsWithoutABody(t *testing.T) {
	t.Parallel()
	var decoded int32
	g := NewGuard(Limits{DefaultDeadline: 300 * time.Millisecond, MaxStreams: 2}, slog.New(slog.DiscardHandler))
	conn := serveTapped(t, g, func(ctx context.Context, _ metadata.MD, _ string) (context.Context, error) { return ctx, nil }, &decoded)
	desc := &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}
	var streams []grpc.ClientStream
	for i := 0; i < 2; i++ {
		s, err := conn.NewStream(context.Background(), desc, "/slotd.v1.SlotService/Poke")
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, s)
	}
	// The first header frames reach the server before the next call.
	waitFor(t, func() bool { return g.Streams() == 2 })
	if err := poke(context.Background(), conn); status.Code(err) != codes.ResourceExhausted || !problemIn(t, err).Retryable {
		t.Errorf("a third stream while two wait for their bodies: %v, want RESOURCE_EXHAUSTED, retryable", err)
	}
	start := time.Now()
	for _, s := range streams {
		if err := s.RecvMsg(&emptypb.Empty{}); status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("a stream without a body: %v, want DEADLINE_EXCEEDED", err)
		}
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("streams without a body ended after %v, want about 300ms", d)
	}
	waitFor(t, func() bool { return g.Streams() == 0 })
	if err := poke(context.Background(), conn); err != nil {
		t.Errorf("a call after the streams ended: %v", err)
	}
}

// A caller's deadline is capped at MaxDeadline.
func TestTapCapsDeadlines(t *testing.T) {
	t.Parallel()
	g := NewGuard(Limits{DefaultDeadline: time.Second, MaxDeadline: 2 * time.Second}, slog.New(slog.DiscardHandler))
	for _, tc := range []struct {
		method string
		asked  time.Duration // 0: none
		want   time.Duration
	}{
		{"/slotd.v1.SlotService/Turn", 0, time.Second},
		{"/slotd.v1.SlotService/Turn", 500 * time.Millisecond, 500 * time.Millisecond},
		{"/slotd.v1.SlotService/Turn", time.Hour, 2 * time.Second},
		{"/slotd.v1.AdminService/PurgeSessions", time.Hour, 2 * time.Second},
		{"/grpc.health.v1.Health/Watch", 0, streamDeadline},
	} {
		ctx := context.Background()
		if tc.asked > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, tc.asked)
			defer cancel()
		}
		if got := g.deadline(ctx, tc.method); got > tc.want || got < tc.want-100*time.Millisecond {
			t.Errorf("%s asking %v: deadline %v, want %v", tc.method, tc.asked, got, tc.want)
		}
	}
}

// An x-request-id holding a card number is refused: ids are logged as
// they are.
func TestRequestIDWithACardNumberIsRefused(t *testing.T) {
	t.Parallel()
	g := NewGuard(Limits{}, slog.New(slog.DiscardHandler))
	conn := serveTest(t, g, func(context.Context) error { return nil })
	var header metadata.MD
	ctx := metadata.AppendToOutgoingContext(context.Background(), RequestIDHeader, "req-4111-1111-1111-1111")
	err := poke(ctx, conn, grpc.Header(&header))
	if status.Code(err) != codes.InvalidArgument || problemIn(t, err).Errors[0].Pointer != "/x-request-id" {
		t.Fatalf("a card number in x-request-id: %v, want INVALID_ARGUMENT naming it", err)
	}
	if got := header.Get(RequestIDHeader); len(got) != 1 || strings.Contains(got[0], "4111") {
		t.Errorf("response request id = %v, want a new one", got)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			t.Fatal("gave up waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fakeStream is a server stream that only has a context.
type fakeStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s fakeStream) Context() context.Context { return s.ctx }

// A call gives its place among MaxStreams back when its handler returns,
// on the handler's goroutine, before its stream's context ends; the place
// is given back once, not again when the stream then ends.
func TestStreamPlaceIsGivenBackWhenTheHandlerReturns(t *testing.T) {
	t.Parallel()
	g := NewGuard(Limits{DefaultDeadline: time.Minute, MaxStreams: 4}, slog.New(slog.DiscardHandler))
	open := func(method string) (context.Context, context.CancelFunc) {
		t.Helper()
		parent, cancel := context.WithCancel(context.Background())
		ctx, err := g.Tap(func(ctx context.Context, _ metadata.MD, _ string) (context.Context, error) { return ctx, nil })(parent, &tap.Info{FullMethodName: method})
		if err != nil {
			t.Fatal(err)
		}
		return ctx, cancel
	}
	unary, endUnary := open(slotdv1.SlotService_Turn_FullMethodName)
	stream, endStream := open("/grpc.health.v1.Health/Watch")
	if n := g.Streams(); n != 2 {
		t.Fatalf("%d places taken after two taps, want 2", n)
	}
	_, err := g.Recover()(unary, nil, &grpc.UnaryServerInfo{FullMethod: slotdv1.SlotService_Turn_FullMethodName},
		func(context.Context, any) (any, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	if n := g.Streams(); n != 1 || unary.Err() != nil {
		t.Fatalf("after the unary handler returned: %d places taken (want 1), its context %v (want live)", n, unary.Err())
	}
	err = g.RecoverStream()(nil, fakeStream{ctx: stream}, &grpc.StreamServerInfo{FullMethod: "/grpc.health.v1.Health/Watch"},
		func(any, grpc.ServerStream) error { panic("a handler's bug") })
	if status.Code(err) != codes.Internal {
		t.Fatalf("a panicking stream handler: %v, want INTERNAL", err)
	}
	if n := g.Streams(); n != 0 {
		t.Fatalf("after the stream handler panicked: %d places taken, want 0", n)
	}
	// A third call holds a place; the first two streams ending must not
	// give back theirs a second time, which would free the third's.
	_, endThird := open(slotdv1.SlotService_Turn_FullMethodName)
	defer endThird()
	endUnary()
	endStream()
	time.Sleep(50 * time.Millisecond) // for AfterFunc's goroutines, had they run
	if n := g.Streams(); n != 1 {
		t.Fatalf("after the first streams ended: %d places taken, want 1 (the third call's)", n)
	}
	// A call whose stream ends while its handler runs (the client gave up,
	// the deadline passed) has its place given back as the stream ends,
	// and not again when the handler returns.
	cancelled, endCancelled := open(slotdv1.SlotService_Turn_FullMethodName)
	givenBack := false
	_, err = g.Recover()(cancelled, nil, &grpc.UnaryServerInfo{FullMethod: slotdv1.SlotService_Turn_FullMethodName},
		func(ctx context.Context, _ any) (any, error) {
			endCancelled()
			for deadline := time.Now().Add(5 * time.Second); !givenBack && time.Now().Before(deadline); {
				givenBack = g.Streams() == 1
				time.Sleep(5 * time.Millisecond)
			}
			return nil, ctx.Err()
		})
	if !givenBack || !errors.Is(err, context.Canceled) {
		t.Fatalf("a call cancelled in its handler: place given back as its stream ended %v, answered %v; want true and its context's error", givenBack, err)
	}
	if n := g.Streams(); n != 1 {
		t.Fatalf("after a call cancelled in its handler returned: %d places taken, want 1 (the third call's)", n)
	}
}

// A request is bounded by its bytes as sent, everything it carries
// counted: unknown fields hidden inside its arguments' Struct or Values
// too. The server's
// codec marks it, its fields still decoded for the refusal's report, and
// Limit refuses it; a request of exactly the limit passes.
func TestLimitCountsUnknownFieldsInsideStructs(t *testing.T) {
	t.Parallel()
	g := NewGuard(Limits{MaxRequestBytes: 4096}, slog.New(slog.DiscardHandler))
	hidden := protowire.AppendBytes(protowire.AppendTag(nil, 99, protowire.BytesType), bytes.Repeat([]byte("x"), 8192))
	args, err := structpb.NewStruct(map[string]any{"reason": "duplicate", "amount": "1200.50"})
	if err != nil {
		t.Fatal(err)
	}
	inStruct := &slotdv1.TurnRequest{ConversationId: "c", Tool: "bank.open_dispute", TurnId: "t", Arguments: args}
	inStruct.Arguments.ProtoReflect().SetUnknown(hidden)
	inValue := &slotdv1.TurnRequest{ConversationId: "c", Tool: "bank.open_dispute", TurnId: "t", Arguments: proto.Clone(args).(*structpb.Struct)}
	inValue.Arguments.Fields["reason"].ProtoReflect().SetUnknown(hidden)
	// A note padded until the request is exactly 4096 bytes, and one more.
	padded := func(size int) *slotdv1.TurnRequest {
		note := "Двічі списали"
		for {
			a, err := structpb.NewStruct(map[string]any{"reason": "duplicate", "note": note})
			if err != nil {
				t.Fatal(err)
			}
			req := &slotdv1.TurnRequest{ConversationId: "c", Tool: "bank.open_dispute", TurnId: "t", Arguments: a}
			if proto.Size(req) >= size {
				if proto.Size(req) != size {
					t.Fatalf("padded to %d bytes, want %d", proto.Size(req), size)
				}
				return req
			}
			note += "x"
		}
	}
	exactly, over := padded(4096), padded(4097)
	for _, c := range []struct {
		name    string
		req     *slotdv1.TurnRequest
		refused bool
	}{
		{"8 KiB hidden in the Struct", inStruct, true},
		{"8 KiB hidden in a Value", inValue, true},
		{"exactly 4096 bytes", exactly, false},
		{"4097 bytes", over, true},
	} {
		wire, err := proto.Marshal(c.req)
		if err != nil {
			t.Fatal(err)
		}
		var req slotdv1.TurnRequest
		if err := g.Codec().Unmarshal(mem.BufferSlice{mem.SliceBuffer(wire)}, &req); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if req.Tool != "bank.open_dispute" {
			t.Errorf("%s (%d bytes): decoded tool %q, want the request's, for the refusal's report", c.name, len(wire), req.Tool)
		}
		called := false
		_, err = g.Limit()(context.Background(), &req, &grpc.UnaryServerInfo{FullMethod: slotdv1.SlotService_Turn_FullMethodName},
			func(context.Context, any) (any, error) { called = true; return nil, nil })
		if !c.refused {
			if !called || err != nil {
				t.Errorf("%s (%d bytes) of a request limited to 4096: handler called %v, %v; want it served", c.name, len(wire), called, err)
			}
			continue
		}
		want := fmt.Sprintf("%d bytes; at most 4096", len(wire))
		if called || status.Code(err) != codes.InvalidArgument || !strings.Contains(problemIn(t, err).String(), want) {
			t.Errorf("%s (%d bytes) of a request limited to 4 KiB: handler called %v, %v; want INVALID_ARGUMENT saying %q", c.name, len(wire), called, err, want)
		}
	}
}
