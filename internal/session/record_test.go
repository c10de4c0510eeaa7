package session

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/slotd/slotd/internal/clarify"
)

// TestRecordEncodesAsEncodingJSON holds the history's encoder to
// encoding/json's bytes, turn by turn, over dialogues that fill, refuse,
// re-confirm, approve, digress and hold a sensitive value: what the
// history stores and a replay decodes does not depend on the encoder.
func TestRecordEncodesAsEncodingJSON(t *testing.T) {
	encoded := 0
	was := encodeJSON
	encodeJSON = func(v any) ([]byte, error) {
		got, err := was(v)
		want, werr := json.Marshal(v)
		if err != nil || werr != nil || !bytes.Equal(got, want) {
			t.Errorf("%T encoded as\n%s (%v)\nencoding/json:\n%s (%v)", v, got, err, want, werr)
		}
		encoded++
		return got, err
	}
	defer func() { encodeJSON = was }()

	c := newConvo(t)
	seen := map[clarify.Action]bool{}
	for _, step := range []struct {
		tool    string
		args    map[string]any
		confirm *bool
	}{
		{tool: dispute, args: map[string]any{"card_last4": "карта •• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽"}},
		{tool: dispute, args: map[string]any{"reason": "Duplicate", "amount": float64(-3), "bogus": []any{"x", 1.5, nil}}},
		{tool: dispute, args: map[string]any{"amount": "1340", "original_operation_id": "op-<20260822>&0117"}},
		{tool: dispute, confirm: new(true)},
		{tool: "test.carry", args: map[string]any{"note": "a secret note \u2028 with \"quotes\""}},
		{tool: dispute, args: map[string]any{"card_last4": "5521"}},
		{tool: dispute, confirm: new(false)},
		{tool: dispute, confirm: new(true)},
	} {
		var res *Result
		if step.confirm != nil {
			res = c.answer(step.tool, *step.confirm)
		} else {
			res = c.send(step.tool, step.args)
		}
		seen[res.Action] = true
	}
	if len(seen) < 4 {
		t.Errorf("the dialogue showed only %v: too few kinds of answer to hold the encoder to", seen)
	}
	if encoded < 16 {
		t.Fatalf("%d values encoded over 8 turns, want a response and a request for each", encoded)
	}
}
