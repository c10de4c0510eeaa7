package bench

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// The bench's gRPC client does what a client must and no more: each step's
// request is encoded once, and only the turn's own ids are appended per
// turn; of each answer it reads the action. With slotd in-process the
// client shares the processors with the slotd it measures, and decoding
// every answer in full (its maps of Structs) would be charged to slotd's
// rate. The bytes on the wire are an ordinary TurnRequest and
// TurnResponse: slotd does all of its work on them.

// Field numbers of TurnRequest and TurnResponse, from the descriptors.
var (
	reqFields          = (&slotdv1.TurnRequest{}).ProtoReflect().Descriptor().Fields()
	conversationField  = reqFields.ByName("conversation_id").Number()
	turnIDField        = reqFields.ByName("turn_id").Number()
	actionField        = (&slotdv1.TurnResponse{}).ProtoReflect().Descriptor().Fields().ByName("action").Number()
	errNotWireRequest  = errors.New("bench: the client codec sends only encoded requests")
	errNotActionHolder = errors.New("bench: the client codec decodes only into an action")
)

// wireRequest is a TurnRequest encoded but for its conversation and turn
// ids, which are appended when it is sent (protobuf fields may come in any
// order).
type wireRequest struct {
	base         []byte
	conversation string
	turnID       string
}

// encodeStep encodes the fields of a request that every conversation
// sends alike.
func encodeStep(req *slotdv1.TurnRequest) ([]byte, error) {
	if req.ConversationId != "" || req.TurnId != "" {
		return nil, errors.New("bench: a step's request carries no ids")
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(req)
}

// actionOnly receives the action of a TurnResponse.
type actionOnly struct{ action slotdv1.Action }

// clientCodec is the bench client's codec. It names itself "proto", so the
// content type on the wire is the one every gRPC client sends.
type clientCodec struct{}

func (clientCodec) Name() string { return "proto" }

func (clientCodec) Marshal(v any) (mem.BufferSlice, error) {
	r, ok := v.(*wireRequest)
	if !ok {
		return nil, errNotWireRequest
	}
	b := make([]byte, 0, len(r.base)+len(r.conversation)+len(r.turnID)+8)
	b = append(b, r.base...)
	b = protowire.AppendTag(b, conversationField, protowire.BytesType)
	b = protowire.AppendString(b, r.conversation)
	b = protowire.AppendTag(b, turnIDField, protowire.BytesType)
	b = protowire.AppendString(b, r.turnID)
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

// Unmarshal reads the top-level fields of a TurnResponse and keeps the
// last action among them, as protobuf decoding does; a malformed answer
// is an error.
func (clientCodec) Unmarshal(data mem.BufferSlice, v any) error {
	out, ok := v.(*actionOnly)
	if !ok {
		return errNotActionHolder
	}
	b := data.Materialize()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("bench: a malformed answer: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if num == actionField && typ == protowire.VarintType {
			x, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return fmt.Errorf("bench: a malformed answer: %w", protowire.ParseError(m))
			}
			out.action, b = slotdv1.Action(x), b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return fmt.Errorf("bench: a malformed answer: %w", protowire.ParseError(m))
		}
		b = b[m:]
	}
	return nil
}

var _ encoding.CodecV2 = clientCodec{}
