package api

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/problem"
)

// nested is arguments whose deepest value sits inside levels Structs.
func nested(t *testing.T, levels int) *structpb.Struct {
	t.Helper()
	v := any("4111 is not a card")
	for i := 1; i < levels; i++ {
		v = map[string]any{"k": v}
	}
	s, err := structpb.NewStruct(map[string]any{"top": v})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// viaCodec is the mark the gRPC server's codec gives m as sent.
func viaCodec(t *testing.T, max int, m proto.Message) (string, string) {
	t.Helper()
	b, err := proto.MarshalOptions{}.Marshal(m)
	if err != nil {
		// protobuf-go refuses to send what is not UTF-8; a client in
		// another language sends it as given.
		b = rawMarshal(m.ProtoReflect())
	}
	got := m.ProtoReflect().New().Interface()
	if err := (Codec{MaxBytes: max}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, got); err != nil {
		t.Fatal(err)
	}
	return undecodable(got)
}

// A request decoded in the process is refused for what the codec refuses
// it over gRPC, in the same words: too large, nested too deeply, not
// UTF-8; and one the codec takes is taken.
func TestScreenMarksAsTheCodec(t *testing.T) {
	const max = 4096
	g := NewGuard(Limits{MaxRequestBytes: max}, slog.Default())
	big := strings.Repeat("é", 3000)
	for _, tc := range []struct {
		name   string
		req    func() proto.Message
		marked bool
	}{
		{"ordinary", func() proto.Message {
			return &slotdv1.TurnRequest{ConversationId: "conv-1", Tool: "bank.open_dispute", TurnId: "t1", Arguments: nested(t, 3)}
		}, false},
		{"one byte over", func() proto.Message {
			r := &slotdv1.TurnRequest{ConversationId: "conv-1", Tool: "bank.open_dispute", TurnId: "t1"}
			r.Locale = strings.Repeat("x", max-proto.Size(r)-3+1)
			return r
		}, true},
		{"exactly the limit", func() proto.Message {
			r := &slotdv1.TurnRequest{ConversationId: "conv-1", Tool: "bank.open_dispute", TurnId: "t1"}
			r.Locale = strings.Repeat("x", max-proto.Size(r)-3)
			return r
		}, false},
		{"large arguments", func() proto.Message {
			s, _ := structpb.NewStruct(map[string]any{"description": big})
			return &slotdv1.TurnRequest{ConversationId: "c", Tool: "t", TurnId: "t1", Arguments: s}
		}, true},
		{"shallow enough to skip", func() proto.Message {
			return &slotdv1.TurnRequest{ConversationId: "c", Tool: "t", TurnId: "t1", Arguments: nested(t, shallowStructs)}
		}, false},
		{"nested too deeply", func() proto.Message {
			return &slotdv1.TurnRequest{ConversationId: "c", Tool: "t", TurnId: "t1", Arguments: nested(t, 40)}
		}, true},
		{"a result nested too deeply", func() proto.Message {
			return &slotdv1.CompleteSessionRequest{SessionId: "s",
				Outcome: &slotdv1.CompleteSessionRequest_Result{Result: structpb.NewStructValue(nested(t, 40))}}
		}, true},
		{"built in Go, not UTF-8", func() proto.Message {
			return &slotdv1.TurnRequest{ConversationId: "c", Tool: "bank.open\xffdispute", TurnId: "t1"}
		}, true},
		{"built in Go, arguments not UTF-8", func() proto.Message {
			args := &structpb.Struct{Fields: map[string]*structpb.Value{
				"list": structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{{Kind: &structpb.Value_StringValue{StringValue: "ok"}},
					{Kind: &structpb.Value_StringValue{StringValue: "bad\xc3("}}}})}}
			return &slotdv1.TurnRequest{ConversationId: "c", Tool: "t", TurnId: "t1", Arguments: args}
		}, true},
		{"built in Go, a key not UTF-8", func() proto.Message {
			args := &structpb.Struct{Fields: map[string]*structpb.Value{"k\xff": structpb.NewBoolValue(true)}}
			return &slotdv1.TurnRequest{ConversationId: "c", Tool: "t", TurnId: "t1", Arguments: args}
		}, true},
		{"built in Go, a time zone not UTF-8", func() proto.Message {
			return &slotdv1.TurnRequest{ConversationId: "c", Tool: "t", TurnId: "t1", TimeZone: "Europe/\xe9"}
		}, true},
		{"built in Go, over the limit", func() proto.Message {
			s, _ := structpb.NewStruct(map[string]any{"description": big})
			return &slotdv1.TurnRequest{ConversationId: "c", Tool: "t", TurnId: "t1", Arguments: s}
		}, true},
		{"built in Go, a completion", func() proto.Message {
			return &slotdv1.CompleteSessionRequest{SessionId: "s\xff"}
		}, true},
		{"built in Go, ordinary", func() proto.Message {
			return &slotdv1.TurnRequest{ConversationId: "c", Tool: "t", TurnId: "t1", Arguments: nested(t, 2)}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantField, wantWhy := viaCodec(t, max, tc.req())
			if (wantField != "") != tc.marked {
				t.Fatalf("the codec's mark is %q %q; the case expects marked=%v", wantField, wantWhy, tc.marked)
			}
			req := tc.req()
			g.screen(req)
			field, why := undecodable(req)
			if field != wantField || why != wantWhy {
				t.Errorf("screen marked %q (%q), the codec %q (%q)", field, why, wantField, wantWhy)
			}
		})
	}
}

// Shallow arguments are never marked by the codec for their depth: the
// screen may skip them.
func TestShallowStructsAreWithinMaxRecursion(t *testing.T) {
	r := &slotdv1.TurnRequest{ConversationId: "c", Tool: "t", TurnId: "t1", Arguments: nested(t, shallowStructs)}
	if mayNestDeep(r) {
		t.Fatalf("%d levels count as deep", shallowStructs)
	}
	if field, _ := viaCodec(t, 0, r); field != "" {
		t.Fatalf("the codec refuses %d levels: shallowStructs is too large", shallowStructs)
	}
	r.Arguments = nested(t, shallowStructs+1)
	if !mayNestDeep(r) {
		t.Fatalf("%d levels count as shallow", shallowStructs+1)
	}
}

// turnServer answers a turn with its handler.
type turnServer struct {
	slotdv1.UnimplementedSlotServiceServer
	turn func(context.Context, *slotdv1.TurnRequest) (*slotdv1.TurnResponse, error)
}

func (s turnServer) Turn(ctx context.Context, in *slotdv1.TurnRequest) (*slotdv1.TurnResponse, error) {
	return s.turn(ctx, in)
}

// A local call meets the admission and the interceptors once each, in the
// gRPC server's order, and its refusals are the statuses a gRPC client gets.
func TestLocalCallAdmitsOnceAndRunsTheChain(t *testing.T) {
	g := NewGuard(Limits{MaxStreams: 1, MaxRequestBytes: 1 << 10}, slog.Default())
	var refusedKinds []problem.Kind
	g.OnRefuse(func(k problem.Kind) { refusedKinds = append(refusedKinds, k) })
	var order []string
	trace := func(name string) grpc.UnaryServerInterceptor {
		return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			order = append(order, name+" "+info.FullMethod)
			return h(ctx, req)
		}
	}
	authorized := 0
	authorize := func(ctx context.Context, md metadata.MD, method string) (context.Context, error) {
		authorized++
		if v := md.Get("authorization"); len(v) != 1 || v[0] != "Bearer good" {
			return nil, problem.Unauthenticated("the key is not valid")
		}
		return ctx, nil
	}
	l := g.Local(authorize, g.Recover(), trace("a"), trace("b"), g.Limit(), g.Errors())
	var handler func(context.Context, *slotdv1.TurnRequest) (*slotdv1.TurnResponse, error)
	slotdv1.RegisterSlotServiceServer(l, turnServer{turn: func(ctx context.Context, in *slotdv1.TurnRequest) (*slotdv1.TurnResponse, error) {
		return handler(ctx, in)
	}})
	client := slotdv1.NewSlotServiceClient(l)
	method := slotdv1.SlotService_Turn_FullMethodName
	in := func() *slotdv1.TurnRequest { return &slotdv1.TurnRequest{ConversationId: "c", Tool: "t", TurnId: "t1"} }
	ctx := metadata.NewOutgoingContext(context.Background(), metadata.Pairs("authorization", "Bearer good", "x-request-id", "req-1"))

	var sawDeadline bool
	sent := in()
	handler = func(ctx context.Context, got *slotdv1.TurnRequest) (*slotdv1.TurnResponse, error) {
		_, sawDeadline = ctx.Deadline()
		if got != sent {
			t.Error("the service got a request other than the caller's")
		}
		if RequestID(ctx) != "req-1" {
			t.Errorf("the handler's request id is %q, want the caller's", RequestID(ctx))
		}
		if g.Streams() != 1 {
			t.Errorf("%d streams held during the call, want 1", g.Streams())
		}
		_ = grpc.SetTrailer(ctx, metadata.Pairs("done", "yes"))
		return &slotdv1.TurnResponse{TurnId: "t1", Notice: "ok"}, nil
	}
	var header, trailer metadata.MD
	resp, err := client.Turn(ctx, sent, grpc.Header(&header), grpc.Trailer(&trailer))
	if err != nil || resp.GetTurnId() != "t1" || resp.GetNotice() != "ok" {
		t.Fatalf("the call answered %v, %v", resp, err)
	}
	if got := header.Get(RequestIDHeader); len(got) != 1 || got[0] != "req-1" {
		t.Errorf("the header's request id is %q", got)
	}
	if got := trailer.Get("done"); len(got) != 1 {
		t.Errorf("the trailer is %v", trailer)
	}
	if !sawDeadline {
		t.Error("the handler ran without a deadline")
	}
	if want := []string{"a " + method, "b " + method}; strings.Join(order, ",") != strings.Join(want, ",") {
		t.Errorf("interceptors ran as %q, want %q", order, want)
	}
	if authorized != 1 {
		t.Errorf("authorized %d times, want once", authorized)
	}
	if g.Streams() != 0 {
		t.Errorf("%d streams held after the call, want 0", g.Streams())
	}

	// A bad key is refused before any interceptor, as Tap refuses it.
	order = nil
	handler = func(context.Context, *slotdv1.TurnRequest) (*slotdv1.TurnResponse, error) {
		t.Error("the handler ran")
		return nil, nil
	}
	bad := metadata.NewOutgoingContext(context.Background(), metadata.Pairs("authorization", "Bearer bad"))
	_, err = client.Turn(bad, in())
	if status.Code(err) != codes.Unauthenticated || len(order) != 0 {
		t.Errorf("a bad key: %v, interceptors %q", err, order)
	}
	if len(refusedKinds) != 1 || refusedKinds[0] != problem.KindUnauthenticated {
		t.Errorf("refusals told: %v", refusedKinds)
	}

	// A request over MaxRequestBytes is refused by Limit, with the codec's
	// problem.
	big := in()
	big.Locale = strings.Repeat("x", 2000)
	_, err = client.Turn(ctx, big)
	if p := problemIn(t, err); status.Code(err) != codes.InvalidArgument || !strings.Contains(p.GetDetail()+p.GetTitle(), "request") {
		t.Errorf("an oversized request: %v", err)
	}

	// The stream bound holds for local calls too.
	g.streams <- struct{}{}
	_, err = client.Turn(ctx, in())
	<-g.streams
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("past MaxStreams: %v", err)
	}

	// A method no service registered is unimplemented, as over gRPC.
	if _, err := client.GetSession(ctx, &slotdv1.GetSessionRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("an unimplemented method: %v", err)
	}
	if _, err := slotdv1.NewAdminServiceClient(l).ListSessions(ctx, &slotdv1.ListSessionsRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("an unregistered service: %v", err)
	}
}

// SlotClient hands on the service's own answer, Invoke a copy of it; both
// answer a refusal with the same status.
func TestSlotClientHandsOnTheAnswer(t *testing.T) {
	g := NewGuard(Limits{}, slog.Default())
	l := g.Local(func(ctx context.Context, md metadata.MD, _ string) (context.Context, error) {
		if len(md.Get("authorization")) == 0 {
			return nil, problem.Unauthenticated("send authorization: Bearer <key>")
		}
		return ctx, nil
	}, g.Recover(), g.Limit(), g.Errors())
	var made *slotdv1.TurnResponse
	slotdv1.RegisterSlotServiceServer(l, turnServer{turn: func(context.Context, *slotdv1.TurnRequest) (*slotdv1.TurnResponse, error) {
		made = &slotdv1.TurnResponse{TurnId: "t1", Action: slotdv1.Action_ACTION_READY}
		return made, nil
	}})
	ctx := metadata.NewOutgoingContext(context.Background(), metadata.Pairs("authorization", "Bearer k"))
	in := &slotdv1.TurnRequest{ConversationId: "c", Tool: "t", TurnId: "t1"}
	got, err := l.SlotClient().Turn(ctx, in)
	if err != nil || got != made {
		t.Fatalf("SlotClient answered %p (%v), the service made %p", got, err, made)
	}
	copied, err := slotdv1.NewSlotServiceClient(l).Turn(ctx, in)
	if err != nil || copied == made || !proto.Equal(copied, made) {
		t.Fatalf("Invoke answered %v (%v), want a copy of %v", copied, err, made)
	}
	for name, c := range map[string]slotdv1.SlotServiceClient{"SlotClient": l.SlotClient(), "Invoke": slotdv1.NewSlotServiceClient(l)} {
		if _, err := c.Turn(context.Background(), in); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s without a key: %v", name, err)
		}
	}
}

// allUTF8 looks at every string a turn holds: a field added to
// TurnRequest must be added there too (or the turn checked from its wire
// bytes).
func TestAllUTF8KnowsEveryFieldOfATurn(t *testing.T) {
	known := "conversation_id tool turn_id arguments confirmation locale time_zone now"
	var names []string
	fields := (&slotdv1.TurnRequest{}).ProtoReflect().Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		names = append(names, string(fd.Name()))
		if fd.Kind() != protoreflect.StringKind {
			continue
		}
		r := &slotdv1.TurnRequest{ConversationId: "c", Tool: "t", TurnId: "t1"}
		if !allUTF8(r) {
			t.Fatal("an ordinary turn counts as not UTF-8")
		}
		r.ProtoReflect().Set(fd, protoreflect.ValueOfString("x\xffy"))
		if allUTF8(r) {
			t.Errorf("%s not UTF-8 goes unseen", fd.Name())
		}
	}
	if got := strings.Join(names, " "); got != known {
		t.Errorf("TurnRequest's fields are %q; allUTF8 knows %q", got, known)
	}
}

// rawMarshal encodes m field by field as the protobuf wire format has it,
// without protobuf-go's check that strings are UTF-8.
func rawMarshal(m protoreflect.Message) []byte {
	var b []byte
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for j := 0; j < l.Len(); j++ {
				b = rawValue(b, fd, fd.Number(), l.Get(j))
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				e := rawValue(nil, fd.MapKey(), 1, k.Value())
				e = rawValue(e, fd.MapValue(), 2, mv)
				b = protowire.AppendTag(b, fd.Number(), protowire.BytesType)
				b = protowire.AppendBytes(b, e)
				return true
			})
		default:
			b = rawValue(b, fd, fd.Number(), v)
		}
		return true
	})
	return b
}

func rawValue(b []byte, fd protoreflect.FieldDescriptor, num protowire.Number, v protoreflect.Value) []byte {
	switch fd.Kind() {
	case protoreflect.StringKind:
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendString(b, v.String())
	case protoreflect.BytesKind:
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendBytes(b, v.Bytes())
	case protoreflect.MessageKind:
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendBytes(b, rawMarshal(v.Message()))
	case protoreflect.BoolKind:
		b = protowire.AppendTag(b, num, protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeBool(v.Bool()))
	case protoreflect.EnumKind:
		b = protowire.AppendTag(b, num, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.Enum()))
	case protoreflect.Int32Kind, protoreflect.Int64Kind:
		b = protowire.AppendTag(b, num, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.Int()))
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind:
		b = protowire.AppendTag(b, num, protowire.VarintType)
		return protowire.AppendVarint(b, v.Uint())
	case protoreflect.DoubleKind:
		b = protowire.AppendTag(b, num, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, math.Float64bits(v.Float()))
	}
	panic(fmt.Sprintf("rawMarshal: field kind %v is not in slotd's messages", fd.Kind()))
}
