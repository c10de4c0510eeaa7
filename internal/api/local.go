package api

import (
	"context"
	"fmt"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// Local is a connection to slotd's services from inside the process (the
// HTTP gateway's routes, MCP's tool calls) that runs each call through what
// a gRPC call meets, without the gRPC hop: no second encoding of the
// request and the answer, no transport. Services are registered on it as
// on a grpc.Server (it is a grpc.ServiceRegistrar), and clients made of it
// (it is a grpc.ClientConnInterface) call their handlers through the same
// admission as Tap (the stream bound, authentication, the tenant's share,
// the deadline), the same marks as Codec (too large, nested too deeply,
// not UTF-8), and the same unary interceptors, in the same order, as the
// gRPC server's. Each check is made once, by the code the gRPC server runs
// for it. Streaming calls are not served.
type Local struct {
	g         *Guard
	authorize Authorizer
	chain     grpc.UnaryServerInterceptor
	methods   map[string]localMethod
}

type localMethod struct {
	impl    any
	handler grpc.MethodHandler
}

var (
	_ grpc.ClientConnInterface = (*Local)(nil)
	_ grpc.ServiceRegistrar    = (*Local)(nil)
)

// Local is the in-process path through g and interceptors, which are the
// gRPC server's unary interceptors in its order. authorize gets the call's
// context and its metadata (the caller's outgoing metadata, which a call
// over gRPC would send), as Tap's gets the stream's headers.
func (g *Guard) Local(authorize Authorizer, interceptors ...grpc.UnaryServerInterceptor) *Local {
	return &Local{g: g, authorize: authorize, chain: chainUnary(interceptors), methods: map[string]localMethod{}}
}

// RegisterService implements grpc.ServiceRegistrar: the unary methods of
// sd are served by impl. Register services before the first call.
func (l *Local) RegisterService(sd *grpc.ServiceDesc, impl any) {
	for _, m := range sd.Methods {
		l.methods["/"+sd.ServiceName+"/"+m.MethodName] = localMethod{impl: impl, handler: m.Handler}
	}
}

// Invoke implements grpc.ClientConnInterface: it runs the handler of
// method for args and puts a copy of its answer in reply (SlotClient hands
// the answer on without one).
func (l *Local) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	resp, err := l.call(ctx, method, args, opts)
	if err != nil {
		return err
	}
	out, ok := reply.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "%s: the reply is not a protobuf message", method)
	}
	answer, ok := resp.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "%s: the answer is not a protobuf message", method)
	}
	proto.Merge(out, answer)
	return nil
}

// call runs the handler of method for args and returns its answer as the
// service made it. The caller's outgoing metadata is the call's incoming
// metadata; the headers and trailers the call sets go to its grpc.Header
// and grpc.Trailer options. An error is a status carrying a problem, as a
// gRPC client would get it.
func (l *Local) call(ctx context.Context, method string, args any, opts []grpc.CallOption) (any, error) {
	m, ok := l.methods[method]
	if !ok {
		return nil, status.Errorf(codes.Unimplemented, "unknown method %s", method)
	}
	req, ok := args.(proto.Message)
	if !ok {
		return nil, status.Errorf(codes.Internal, "%s: the request is not a protobuf message", method)
	}
	md, _ := metadata.FromOutgoingContext(ctx)
	ctx = metadata.NewIncomingContext(ctx, md)
	ctx, err := l.g.admit(ctx, md, method, l.authorize)
	if err != nil {
		return nil, err
	}
	defer freeStreamSlot(ctx)
	st := localStream{method: method}
	ctx = grpc.NewContextWithServerTransportStream(ctx, &st)
	l.g.screen(req)
	// The generated handler decodes into a request of its own, which is
	// left empty: the interceptors and the service get the caller's
	// request as it is.
	resp, err := m.handler(m.impl, ctx, func(any) error { return nil },
		func(ctx context.Context, _ any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			return l.chain(ctx, req, info, handler)
		})
	for _, o := range opts {
		switch o := o.(type) {
		case grpc.HeaderCallOption:
			*o.HeaderAddr = st.header
		case grpc.TrailerCallOption:
			*o.TrailerAddr = st.trailer
		}
	}
	return resp, err
}

// SlotClient is the SlotService through l, for the callers of every turn
// (the gateway's routes, MCP's tool calls): each answer is handed on as
// the service made it, where Invoke copies it into the caller's reply.
func (l *Local) SlotClient() slotdv1.SlotServiceClient { return localSlots{l} }

type localSlots struct{ l *Local }

// localCall is l's call of method for in, answered with a Resp.
func localCall[Resp proto.Message](ctx context.Context, l *Local, method string, in proto.Message, opts []grpc.CallOption) (Resp, error) {
	resp, err := l.call(ctx, method, in, opts)
	out, _ := resp.(Resp)
	if err == nil && resp == nil {
		return out, status.Errorf(codes.Internal, "%s: no answer", method)
	}
	return out, err
}

func (c localSlots) Turn(ctx context.Context, in *slotdv1.TurnRequest, opts ...grpc.CallOption) (*slotdv1.TurnResponse, error) {
	return localCall[*slotdv1.TurnResponse](ctx, c.l, slotdv1.SlotService_Turn_FullMethodName, in, opts)
}

func (c localSlots) GetSession(ctx context.Context, in *slotdv1.GetSessionRequest, opts ...grpc.CallOption) (*slotdv1.GetSessionResponse, error) {
	return localCall[*slotdv1.GetSessionResponse](ctx, c.l, slotdv1.SlotService_GetSession_FullMethodName, in, opts)
}

func (c localSlots) ResetSession(ctx context.Context, in *slotdv1.ResetSessionRequest, opts ...grpc.CallOption) (*slotdv1.ResetSessionResponse, error) {
	return localCall[*slotdv1.ResetSessionResponse](ctx, c.l, slotdv1.SlotService_ResetSession_FullMethodName, in, opts)
}

func (c localSlots) CompleteSession(ctx context.Context, in *slotdv1.CompleteSessionRequest, opts ...grpc.CallOption) (*slotdv1.CompleteSessionResponse, error) {
	return localCall[*slotdv1.CompleteSessionResponse](ctx, c.l, slotdv1.SlotService_CompleteSession_FullMethodName, in, opts)
}

func (c localSlots) ListContracts(ctx context.Context, in *slotdv1.ListContractsRequest, opts ...grpc.CallOption) (*slotdv1.ListContractsResponse, error) {
	return localCall[*slotdv1.ListContractsResponse](ctx, c.l, slotdv1.SlotService_ListContracts_FullMethodName, in, opts)
}

func (c localSlots) GetToolSchema(ctx context.Context, in *slotdv1.GetToolSchemaRequest, opts ...grpc.CallOption) (*slotdv1.GetToolSchemaResponse, error) {
	return localCall[*slotdv1.GetToolSchemaResponse](ctx, c.l, slotdv1.SlotService_GetToolSchema_FullMethodName, in, opts)
}

// NewStream implements grpc.ClientConnInterface: streaming calls are only
// served over gRPC.
func (l *Local) NewStream(_ context.Context, _ *grpc.StreamDesc, method string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Errorf(codes.Unimplemented, "%s is served over gRPC only", method)
}

// localStream is what grpc.SetHeader, grpc.SendHeader and grpc.SetTrailer
// write to inside a Local call.
type localStream struct {
	method          string
	header, trailer metadata.MD
}

func (s *localStream) Method() string { return s.method }

func (s *localStream) SetHeader(md metadata.MD) error {
	s.header = metadata.Join(s.header, md)
	return nil
}

func (s *localStream) SendHeader(md metadata.MD) error { return s.SetHeader(md) }

func (s *localStream) SetTrailer(md metadata.MD) error {
	s.trailer = metadata.Join(s.trailer, md)
	return nil
}

// slotdPackage is the protobuf package of slotd's own messages.
const slotdPackage = "slotd.v1"

// screen gives a request made in the process the marks Codec gives one as
// it decodes it from the wire, for Limit to refuse. One of slotd's own
// messages whose strings are all UTF-8 and whose values do not nest deeply
// enough to pass MaxRecursion is only sized (proto.Size): it is
// the bytes a gRPC client would send. Any other goes through Codec itself,
// from its wire bytes.
func (g *Guard) screen(req proto.Message) {
	ours := req.ProtoReflect().Descriptor().ParentFile().Package() == slotdPackage
	if ours && allUTF8(req) && !mayNestDeep(req) {
		if n := proto.Size(req); g.limits.MaxRequestBytes > 0 && n > g.limits.MaxRequestBytes {
			mark(req, "request", fmt.Sprintf("%d bytes; at most %d", n, g.limits.MaxRequestBytes))
		}
		return
	}
	b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(req)
	if err != nil {
		// protobuf-go refuses to send a string that is not UTF-8, which
		// the codec would have found on the wire: named the codec's way.
		field := notUTF8(req.ProtoReflect(), "")
		proto.Reset(req)
		if field != "" {
			mark(req, field, "not valid UTF-8")
		} else {
			mark(req, "request", "not a valid protobuf message of this method")
		}
		return
	}
	proto.Reset(req)
	_ = g.Codec().Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, req)
}

// allUTF8 reports whether every string of req is UTF-8, as Codec wants
// them: a turn's are looked at in place, any other request's through
// protobuf reflection.
func allUTF8(req proto.Message) bool {
	r, ok := req.(*slotdv1.TurnRequest)
	if !ok {
		return notUTF8(req.ProtoReflect(), "") == ""
	}
	if len(r.ProtoReflect().GetUnknown()) > 0 {
		return false
	}
	return utf8.ValidString(r.ConversationId) && utf8.ValidString(r.Tool) && utf8.ValidString(r.TurnId) &&
		utf8.ValidString(r.Locale) && utf8.ValidString(r.TimeZone) && (r.Arguments == nil || structUTF8(r.Arguments))
}

func structUTF8(s *structpb.Struct) bool {
	if len(s.ProtoReflect().GetUnknown()) > 0 {
		return false
	}
	for k, v := range s.GetFields() {
		if !utf8.ValidString(k) || !valueUTF8(v) {
			return false
		}
	}
	return true
}

func valueUTF8(v *structpb.Value) bool {
	if v == nil {
		return true
	}
	if len(v.ProtoReflect().GetUnknown()) > 0 {
		return false
	}
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		return utf8.ValidString(k.StringValue)
	case *structpb.Value_StructValue:
		return k.StructValue == nil || structUTF8(k.StructValue)
	case *structpb.Value_ListValue:
		if k.ListValue == nil {
			return true
		}
		if len(k.ListValue.ProtoReflect().GetUnknown()) > 0 {
			return false
		}
		for _, e := range k.ListValue.GetValues() {
			if !valueUTF8(e) {
				return false
			}
		}
	}
	return true
}

// shallowStructs is how many Structs and lists a request's values may nest
// inside each other and still be far within MaxRecursion: each level is at
// most three messages (a Struct, its map entry, a Value), with a few more
// for the request around them.
const shallowStructs = (MaxRecursion - 8) / 3

// mayNestDeep reports whether a request holds a value nested more than
// shallowStructs levels deep.
func mayNestDeep(req proto.Message) bool {
	switch r := req.(type) {
	case *slotdv1.TurnRequest:
		return r.Arguments != nil && structDeeper(r.Arguments, shallowStructs)
	case *slotdv1.CompleteSessionRequest:
		return valueDeeper(r.GetResult(), shallowStructs)
	}
	return false
}

func structDeeper(s *structpb.Struct, n int) bool {
	if n <= 0 {
		return true
	}
	for _, v := range s.GetFields() {
		if valueDeeper(v, n-1) {
			return true
		}
	}
	return false
}

func valueDeeper(v *structpb.Value, n int) bool {
	switch k := v.GetKind().(type) {
	case *structpb.Value_StructValue:
		return structDeeper(k.StructValue, n)
	case *structpb.Value_ListValue:
		if n <= 0 {
			return true
		}
		for _, e := range k.ListValue.GetValues() {
			if valueDeeper(e, n-1) {
				return true
			}
		}
	}
	return false
}

// chainUnary is interceptors as one, the first outermost, as
// grpc.ChainUnaryInterceptor makes them for a server.
func chainUnary(interceptors []grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	if len(interceptors) == 0 {
		return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			return handler(ctx, req)
		}
	}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return interceptors[0](ctx, req, info, nextHandler(interceptors, 1, info, handler))
	}
}

func nextHandler(interceptors []grpc.UnaryServerInterceptor, i int, info *grpc.UnaryServerInfo, final grpc.UnaryHandler) grpc.UnaryHandler {
	if i == len(interceptors) {
		return final
	}
	return func(ctx context.Context, req any) (any, error) {
		return interceptors[i](ctx, req, info, nextHandler(interceptors, i+1, info, final))
	}
}

// notUTF8 names the first string of m that is not UTF-8 by the path the
// codec's fault gives it (field names joined by "/", a map's entries by
// key and value); "" when every string is UTF-8.
func notUTF8(m protoreflect.Message, path string) string {
	var found string
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := string(fd.Name())
		if path != "" {
			name = path + "/" + name
		}
		switch {
		case fd.IsList():
			l := v.List()
			for j := 0; j < l.Len() && found == ""; j++ {
				found = valueNotUTF8(fd, l.Get(j), name)
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if found = valueNotUTF8(fd.MapKey(), k.Value(), name+"/key"); found == "" {
					found = valueNotUTF8(fd.MapValue(), mv, name+"/value")
				}
				return found == ""
			})
		default:
			found = valueNotUTF8(fd, v, name)
		}
		return found == ""
	})
	return found
}

func valueNotUTF8(fd protoreflect.FieldDescriptor, v protoreflect.Value, name string) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		if !utf8.ValidString(v.String()) {
			return name
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return notUTF8(v.Message(), name)
	}
	return ""
}
