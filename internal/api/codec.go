package api

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Codec is the server's protobuf codec. It differs from grpc's in three
// ways, all on the way in. Messages nest at most MaxRecursion deep
// (protobuf's own default is 10 000, which lets one small request cost the
// server a thousand times its size). A request that does not decode is not
// refused by the transport with a bare INTERNAL: it is left empty and
// marked with the field at fault (the first string with invalid UTF-8) or
// the reason, and the Limit interceptor answers INVALID_ARGUMENT with a
// problem naming it. Decoding costs time and memory linear in the
// request's size, whatever it holds. And a request of more than MaxBytes as
// sent is marked too large, its fields decoded (for the refusal's log line
// and metrics). Answers are marshalled by grpc's own codec.
type Codec struct {
	// MaxBytes bounds a request's bytes as sent; 0 bounds none. The
	// server's codec is its Guard's (Guard.Codec), with MaxRequestBytes.
	MaxBytes int
}

var _ encoding.CodecV2 = Codec{}

// MaxRecursion bounds how deeply a request's messages nest. A turn's
// arguments nested as deep as slotd accepts (eight levels, each a Struct, a
// map entry and a Value) need about 30.
const MaxRecursion = 64

var unmarshal = proto.UnmarshalOptions{RecursionLimit: MaxRecursion}

// Name implements encoding.CodecV2: it replaces the default "proto" codec.
func (Codec) Name() string { return "proto" }

// Marshal implements encoding.CodecV2: grpc's own.
func (Codec) Marshal(v any) (mem.BufferSlice, error) {
	return encoding.GetCodecV2("proto").Marshal(v)
}

// Unmarshal implements encoding.CodecV2.
func (c Codec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return errors.New("slotd codec: not a protobuf message")
	}
	// As grpc's own codec does: the request is read out of a pooled buffer,
	// which protobuf-go does not alias (it copies what it keeps).
	pooled := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer pooled.Free()
	buf := pooled.ReadOnlyData()
	err := unmarshal.Unmarshal(buf, m)
	if err == nil {
		// The mark is the codec's alone: a caller sending that field
		// itself would have Limit refuse its request with the caller's
		// own words.
		if r := m.ProtoReflect(); len(r.GetUnknown()) > 0 {
			r.SetUnknown(withoutMark(r.GetUnknown()))
		}
		// The bytes as sent, every field counted (unknown ones inside
		// well-known types too), without sizing the decoded message again.
		if n := len(buf); c.MaxBytes > 0 && n > c.MaxBytes {
			mark(m, "request", fmt.Sprintf("%d bytes; at most %d", n, c.MaxBytes))
		}
		return nil
	}
	proto.Reset(m)
	// protobuf-go's errors have no types to tell them apart; their texts
	// are stable.
	switch msg := err.Error(); {
	case strings.Contains(msg, "invalid UTF-8"):
		field := badUTF8(buf, m.ProtoReflect().Descriptor(), "", 0)
		if field == "" {
			field = "request"
		}
		mark(m, field, "not valid UTF-8")
	case strings.Contains(msg, "recursion depth"):
		mark(m, "request", fmt.Sprintf("nested deeper than %d levels", MaxRecursion))
	default:
		mark(m, "request", "not a valid protobuf message of this method")
	}
	return nil
}

// markField is the unknown field number that carries "this request could
// not be decoded as sent: <field>\n<why>"; the largest legal field number,
// never used by a message.
const markField = protowire.Number(536870911)

func mark(m proto.Message, field, why string) {
	r := m.ProtoReflect()
	b := protowire.AppendTag(nil, markField, protowire.BytesType)
	b = protowire.AppendString(b, field+"\n"+why)
	r.SetUnknown(append(r.GetUnknown(), b...))
}

// undecodable is the field Codec marked and why, or "" when it marked none.
func undecodable(m proto.Message) (field, why string) {
	v := markOf(m)
	if v == "" {
		return "", ""
	}
	field, why, _ = strings.Cut(v, "\n")
	if field == "" {
		field = "request"
	}
	return field, why
}

// withoutMark is b, unknown fields as protobuf-go keeps them (each well
// formed), without any field of the mark's number.
func withoutMark(b []byte) []byte {
	var out []byte
	for rest := b; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return b
		}
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if m < 0 {
			return b
		}
		if num == markField {
			if out == nil {
				out = append([]byte{}, b[:len(b)-len(rest)]...)
			}
		} else if out != nil {
			out = append(out, rest[:n+m]...)
		}
		rest = rest[n+m:]
	}
	if out == nil {
		return b
	}
	return out
}

func markOf(m proto.Message) string {
	b := m.ProtoReflect().GetUnknown()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		if num == markField && typ == protowire.BytesType {
			v, n := protowire.ConsumeString(b)
			if n < 0 {
				return ""
			}
			return v
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return ""
		}
		b = b[n:]
	}
	return ""
}

// badUTF8 is the path of the first string field with invalid UTF-8 in the
// wire bytes of a message, or "". It reads the bytes in place, descending
// at most MaxRecursion levels: a level skips over a nested message by its
// length and leaves it to the level below, so every byte is read once and
// nothing is copied.
func badUTF8(b []byte, md protoreflect.MessageDescriptor, path string, depth int) string {
	if depth > MaxRecursion {
		return ""
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		vn := protowire.ConsumeFieldValue(num, typ, b)
		if vn < 0 {
			return ""
		}
		val := b[:vn]
		b = b[vn:]
		fd := md.Fields().ByNumber(num)
		if fd == nil || typ != protowire.BytesType {
			continue
		}
		name := string(fd.Name())
		if path != "" {
			name = path + "/" + name
		}
		payload, _ := protowire.ConsumeBytes(val)
		switch fd.Kind() {
		case protoreflect.StringKind:
			if !utf8.Valid(payload) {
				return name
			}
		case protoreflect.MessageKind, protoreflect.GroupKind:
			if f := badUTF8(payload, fd.Message(), name, depth+1); f != "" {
				return f
			}
		}
	}
	return ""
}
