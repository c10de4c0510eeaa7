package bench

import (
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// TestClientCodecSendsTheWholeRequest: what the bench's client sends
// decodes, as slotd decodes it, to the request with the turn's ids.
func TestClientCodecSendsTheWholeRequest(t *testing.T) {
	t.Parallel()
	ds := Mix()
	if err := prepare(ds); err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		for i := range d.Steps {
			conv, turnID := "conv «ü» "+d.Name, d.Name+"/7"
			data, err := clientCodec{}.Marshal(&wireRequest{base: d.Steps[i].wire, conversation: conv, turnID: turnID})
			if err != nil {
				t.Fatal(err)
			}
			var got slotdv1.TurnRequest
			if err := proto.Unmarshal(data.Materialize(), &got); err != nil {
				t.Fatalf("%s step %d: %v", d.Name, i+1, err)
			}
			want := d.request(i)
			want.ConversationId, want.TurnId = conv, turnID
			if !proto.Equal(&got, want) {
				t.Errorf("%s step %d: sent %v, want %v", d.Name, i+1, &got, want)
			}
		}
	}
	if _, err := (clientCodec{}).Marshal(&slotdv1.TurnRequest{}); err == nil {
		t.Error("the codec sent a message that is no encoded step")
	}
}

// TestClientCodecReadsTheAction: of a full answer the client reads the
// action; a cut or malformed answer is an error, not ACTION_UNSPECIFIED.
func TestClientCodecReadsTheAction(t *testing.T) {
	t.Parallel()
	args, err := structpb.NewStruct(map[string]any{"amount": "1200.50", "nested": map[string]any{"a": []any{1.0, "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	resp := &slotdv1.TurnResponse{Session: &slotdv1.Session{Id: "s-1", Missing: []string{"reason", "original_operation_id"}},
		Action: slotdv1.Action_ACTION_RECONFIRM, Arguments: args, TurnId: "t-9",
		Question: &slotdv1.Question{Slot: "amount", Text: "Сумма меняется с 1200.50 на 1340. Верно?"}}
	b, err := proto.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var got actionOnly
	if err := (clientCodec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &got); err != nil {
		t.Fatal(err)
	}
	if got.action != slotdv1.Action_ACTION_RECONFIRM {
		t.Errorf("action %s, want ACTION_RECONFIRM", got.action)
	}
	for _, bad := range [][]byte{b[:len(b)-3], {0xff, 0xff, 0xff}, append([]byte{0x0a, 0x7f}, "short"...)} {
		if err := (clientCodec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(bad)}, &got); err == nil {
			t.Errorf("answer % x read without an error", bad)
		}
	}
}
