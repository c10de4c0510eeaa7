package api

import (
	"errors"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Codec is the server's protobuf codec. It differs from grpc's in one way: a
// request that does not decode is not refused by the transport with a bare
// INTERNAL. One with invalid UTF-8 in a string field is decoded with the bad
// strings made valid; any other is left empty; either is marked, and the
// Limit interceptor answers INVALID_ARGUMENT with a problem naming the
// field.
type Codec struct{}

var _ encoding.CodecV2 = Codec{}

// Name implements encoding.CodecV2: it replaces the default "proto" codec.
func (Codec) Name() string { return "proto" }

// Marshal implements encoding.CodecV2.
func (Codec) Marshal(v any) (mem.BufferSlice, error) {
	return encoding.GetCodecV2("proto").Marshal(v)
}

// Unmarshal implements encoding.CodecV2.
func (Codec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return errors.New("slotd codec: not a protobuf message")
	}
	buf := data.Materialize()
	err := proto.Unmarshal(buf, m)
	if err == nil {
		return nil
	}
	fixed, field, changed := sanitize(buf, m.ProtoReflect().Descriptor(), "")
	proto.Reset(m)
	if changed && proto.Unmarshal(fixed, m) == nil {
		mark(m, field, "not valid UTF-8")
		return nil
	}
	proto.Reset(m)
	mark(m, "request", "not a valid protobuf message of this method")
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

// invalidUTF8Field is the field Codec marked, or "".
func invalidUTF8Field(m proto.Message) string {
	field, _ := undecodable(m)
	return field
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

// sanitize rewrites the wire bytes of a message, replacing invalid UTF-8 in
// string fields (at any depth) with U+FFFD. It returns the first bad field's
// path.
func sanitize(b []byte, md protoreflect.MessageDescriptor, path string) ([]byte, string, bool) {
	out := make([]byte, 0, len(b))
	first, changed := "", false
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, "", false
		}
		tag := b[:n]
		b = b[n:]
		vn := protowire.ConsumeFieldValue(num, typ, b)
		if vn < 0 {
			return nil, "", false
		}
		val := b[:vn]
		b = b[vn:]
		fd := md.Fields().ByNumber(num)
		if fd == nil || typ != protowire.BytesType {
			out = append(out, tag...)
			out = append(out, val...)
			continue
		}
		name := string(fd.Name())
		if path != "" {
			name = path + "/" + name
		}
		payload, _ := protowire.ConsumeBytes(val)
		switch {
		case fd.Kind() == protoreflect.StringKind && !utf8.Valid(payload):
			payload = []byte(toValid(payload))
			changed = true
			if first == "" {
				first = name
			}
		case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
			if fixed, f, ok := sanitize(payload, fd.Message(), name); ok {
				payload = fixed
				changed = true
				if first == "" {
					first = f
				}
			}
		default:
			out = append(out, tag...)
			out = append(out, val...)
			continue
		}
		out = append(out, tag...)
		out = protowire.AppendBytes(out, payload)
	}
	return out, first, changed
}

func toValid(b []byte) string {
	s := make([]rune, 0, len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		s = append(s, r)
		b = b[n:]
	}
	return string(s)
}
