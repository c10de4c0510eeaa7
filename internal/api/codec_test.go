package api

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// runes are what text draws from: every kind a string of slotd's API may
// hold, NUL and a card's digits included.
var runes = []string{"a", "Я", "ї", "€", "\u200b", "\U0001F600", "\x00", " ", "4417"}

// text is a random string of runes; large makes it long.
func text(rnd *rand.Rand, large bool) string {
	n := rnd.IntN(6)
	if large {
		n = 500 + rnd.IntN(500)
	}
	var b strings.Builder
	for range n {
		b.WriteString(runes[rnd.IntN(len(runes))])
	}
	return b.String()
}

// recordingPool is a buffer pool that keeps what is given back to it.
type recordingPool struct{ put []*[]byte }

func (p *recordingPool) Get(n int) *[]byte { b := make([]byte, n); return &b }
func (p *recordingPool) Put(b *[]byte)     { p.put = append(p.put, b) }

// TestCodecKeepsNothingOfTheRequestBuffer: the codec decodes a request out
// of the transport's pooled buffer and gives it back; once the buffer is
// reused (here: scribbled over), the decoded request, its arguments, its
// unknown fields and a mark of an undecodable one are still as sent. A
// request in two buffers is decoded from a copy, and both are given back.
func TestCodecKeepsNothingOfTheRequestBuffer(t *testing.T) {
	t.Parallel()
	// Long enough for the transport's buffers to come from its pool.
	args, err := structpb.NewStruct(map[string]any{"reason": "повторне списання", "amount": "1 200,50",
		"nested": map[string]any{"card": "•• 4417"}, "details": strings.Repeat("Списали двічі за одну покупку. ", 80)})
	if err != nil {
		t.Fatal(err)
	}
	sent := &slotdv1.TurnRequest{ConversationId: "conv-7781", Tool: "bank.open_dispute", TurnId: "call_8812", Arguments: args}
	sent.ProtoReflect().SetUnknown(protoreflect.RawFields{0xa0, 0x1f, 0x01}) // field 500, varint 1
	good, err := proto.Marshal(sent)
	if err != nil {
		t.Fatal(err)
	}
	bad := append(append([]byte{}, good...), 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f)
	for _, tc := range []struct {
		name  string
		wire  []byte
		check func(*slotdv1.TurnRequest) bool
	}{
		{"a request", good, func(got *slotdv1.TurnRequest) bool { return proto.Equal(got, sent) }},
		{"an undecodable one", bad, func(got *slotdv1.TurnRequest) bool {
			field, why := undecodable(got)
			return field == "request" && why != ""
		}},
	} {
		for _, split := range []bool{false, true} {
			pool := &recordingPool{}
			var data mem.BufferSlice
			if split { // two buffers, as a request spread over frames comes
				half := len(tc.wire) / 2
				a, b := append([]byte{}, tc.wire[:half]...), append([]byte{}, tc.wire[half:]...)
				data = mem.BufferSlice{mem.NewBuffer(&a, pool), mem.NewBuffer(&b, pool)}
			} else {
				w := append([]byte{}, tc.wire...)
				data = mem.BufferSlice{mem.NewBuffer(&w, pool)}
			}
			for _, b := range data {
				if _, ok := b.(mem.SliceBuffer); ok {
					t.Fatalf("%s (split %v): a buffer of %d bytes is not pooled; make the request longer", tc.name, split, b.Len())
				}
			}
			var got slotdv1.TurnRequest
			if err := (Codec{}).Unmarshal(data, &got); err != nil {
				t.Fatal(err)
			}
			data.Free() // the transport's own reference
			if len(pool.put) != len(data) {
				t.Fatalf("%s (split %v): %d of %d buffers given back", tc.name, split, len(pool.put), len(data))
			}
			// One buffer is decoded in place; two are first copied into
			// one of the shared pool, which this test cannot reach, so
			// for them only the giving back is checked.
			for _, b := range pool.put {
				for i := range *b {
					(*b)[i] = 'X'
				}
			}
			if !tc.check(&got) {
				t.Errorf("%s (split %v): after its buffers were reused the request reads %v", tc.name, split, &got)
			}
		}
	}
}

// TestNewStructIsStructpbs: newStruct makes what structpb.NewStruct makes
// of the maps answers carry (strings of every kind, numbers, booleans,
// null, nested objects and lists, json.Number), and refuses what it
// refuses: invalid UTF-8 in a key or a string value, a type JSON lacks.
func TestNewStructIsStructpbs(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(16, 2026))
	leaf := func() any {
		switch rnd.IntN(8) {
		case 0, 1, 2:
			return text(rnd, false)
		case 3:
			return []float64{0, -0.5, 1200.5, 1e21, math.MaxFloat64}[rnd.IntN(5)]
		case 4:
			return rnd.IntN(2) == 0
		case 5:
			return nil
		case 6:
			return json.Number("1200.50")
		default:
			return map[string]any{"a": text(rnd, false), "b": []any{1.0, "x", nil, map[string]any{}}}
		}
	}
	for i := range 3000 {
		m := map[string]any{}
		for range rnd.IntN(12) {
			m[text(rnd, false)] = leaf()
		}
		switch i % 50 {
		case 1:
			m["bad\xff"] = "key"
		case 2:
			m["value"] = "bad\xfe"
		case 3:
			m["type"] = struct{}{}
		case 4:
			m = nil
		}
		got, gotErr := newStruct(m)
		want, wantErr := structpb.NewStruct(m)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("%#v: newStruct error %v, structpb's %v", m, gotErr, wantErr)
		}
		if wantErr == nil && !proto.Equal(got, want) {
			t.Fatalf("%#v: newStruct\n%v\nstructpb\n%v", m, got, want)
		}
	}
}

// BenchmarkNewStruct: a session's slots as an answer carries them.
func BenchmarkNewStruct(b *testing.B) {
	slots := map[string]any{"card_last4": "4417", "transaction_date": "2026-08-22", "amount": 1200.5,
		"currency": "UAH", "reason": "duplicate", "original_transaction": "op-20260822-0117", "notify": true}
	for _, f := range []struct {
		name string
		make func(map[string]any) (*structpb.Struct, error)
	}{{"newStruct", newStruct}, {"structpb", structpb.NewStruct}} {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.make(slots); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCodecDropsACallersMark: a request carrying the field number of the
// codec's mark is not taken as undecodable with the caller's own words;
// that field is dropped, every other unknown field kept.
func TestCodecDropsACallersMark(t *testing.T) {
	t.Parallel()
	sent := &slotdv1.TurnRequest{ConversationId: "conv-7781", Tool: "bank.open_dispute", TurnId: "call_1"}
	b, err := proto.Marshal(sent)
	if err != nil {
		t.Fatal(err)
	}
	other := protowire.AppendVarint(protowire.AppendTag(nil, 500, protowire.VarintType), 7)
	forged := protowire.AppendString(protowire.AppendTag(nil, markField, protowire.BytesType), "tool\nсм. карту 4111 1111 1111 1111")
	for name, wire := range map[string][]byte{
		"mark alone":           append(append([]byte{}, b...), forged...),
		"mark among unknowns":  append(append(append(append([]byte{}, b...), other...), forged...), other...),
		"mark twice, varint":   append(append(append([]byte{}, b...), forged...), protowire.AppendVarint(protowire.AppendTag(nil, markField, protowire.VarintType), 1)...),
		"no mark, one unknown": append(append([]byte{}, b...), other...),
	} {
		var got slotdv1.TurnRequest
		if err := (Codec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(wire)}, &got); err != nil {
			t.Fatal(err)
		}
		if field, why := undecodable(&got); field != "" || why != "" {
			t.Errorf("%s: taken as undecodable (%q, %q)", name, field, why)
		}
		if got.GetTool() != "bank.open_dispute" || got.GetTurnId() != "call_1" {
			t.Errorf("%s: decoded %v", name, &got)
		}
		unknown := got.ProtoReflect().GetUnknown()
		if want := bytes.Count(wire, other) * len(other); len(unknown) != want || (want > 0 && !bytes.Contains(unknown, other)) {
			t.Errorf("%s: unknown fields %x, want the %d bytes of field 500", name, unknown, want)
		}
	}
}
