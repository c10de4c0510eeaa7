package api

import (
	"context"
	"fmt"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// Local runs the calls slotd makes of its own services from inside the
// process (the HTTP gateway's routes, MCP's tool calls) through what a
// gRPC call meets, without the gRPC hop: the same admission as Tap (the
// stream bound, authentication, the tenant's share, the deadline), the same
// marks as Codec (too large, nested too deeply, not UTF-8), and the same
// interceptors, in the same order, as the gRPC server's. Each check is
// made once, by the code the gRPC server runs for it.
type Local struct {
	g         *Guard
	authorize Authorizer
	chain     grpc.UnaryServerInterceptor
	// decoded tells how the requests came to be: true when protojson
	// decoded them (UTF-8 by construction), false when Go code built them,
	// which Codec's checks then see as sent.
	decoded bool
}

// Local is the in-process path through g and interceptors, which are the
// gRPC server's unary interceptors in its order. authorize gets the call's
// context and no metadata: it reads what the caller put in the context
// (metadata.ValueFromIncomingContext, or a principal already
// authenticated). fromJSON says that requests are decoded from JSON by
// protojson, so that they need no check of their strings.
func (g *Guard) Local(authorize Authorizer, fromJSON bool, interceptors ...grpc.UnaryServerInterceptor) *Local {
	return &Local{g: g, authorize: authorize, chain: chainUnary(interceptors), decoded: fromJSON}
}

// Call runs handler for req, a request of method (its full gRPC name) to
// srv, with ctx carrying the call's incoming metadata. Its error is a status
// carrying a problem, as a gRPC client would get.
func (l *Local) Call(ctx context.Context, method string, srv any, req proto.Message, handler grpc.UnaryHandler) (any, error) {
	ctx, err := l.g.admit(ctx, nil, method, l.authorize)
	if err != nil {
		return nil, err
	}
	l.g.screen(req, l.decoded)
	return l.chain(ctx, req, &grpc.UnaryServerInfo{Server: srv, FullMethod: method}, handler)
}

// screen gives a request decoded in the process the marks Codec gives one
// as it decodes it from the wire, for Limit to refuse. A request whose
// strings may not be UTF-8 (one Go code built, but a turn whose strings
// are looked at here), one whose values nest deeply enough that it might
// pass MaxRecursion, and one that is not slotd's own go through Codec
// itself, from their wire bytes; any other (one of slotd's, UTF-8 and
// shallow) is only sized, by protobuf-go: it has no unknown fields,
// so its size is the bytes a gRPC client would send.
// slotdPackage is the protobuf package of slotd's own messages.
const slotdPackage = "slotd.v1"

func (g *Guard) screen(req proto.Message, decoded bool) {
	ours := req.ProtoReflect().Descriptor().ParentFile().Package() == slotdPackage
	if ours && (decoded || builtUTF8(req)) && !mayNestDeep(req) {
		if n := proto.Size(req); g.limits.MaxRequestBytes > 0 && n > g.limits.MaxRequestBytes {
			mark(req, "request", sizeWhy(n, g.limits.MaxRequestBytes))
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

// builtUTF8 reports whether a request Go code built is a turn whose strings
// are all UTF-8, as Codec wants them: the request MCP sends on every call
// is looked at here, in place; false for any other, which Codec then
// checks from its wire bytes.
func builtUTF8(req proto.Message) bool {
	r, ok := req.(*slotdv1.TurnRequest)
	if !ok || len(r.ProtoReflect().GetUnknown()) > 0 {
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

// sizeWhy is why a request of n bytes is refused when at most max are
// taken, in Codec's words.
func sizeWhy(n, max int) string { return fmt.Sprintf("%d bytes; at most %d", n, max) }

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
