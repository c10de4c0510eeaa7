package merge_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/slotd/slotd/internal/merge"
)

// irreversibleSlots are the bank.open_dispute slots that need re-confirmation.
func irreversibleSlots(slot string) bool { return slot == "card_last4" || slot == "amount" }

// dispute is a half-filled bank.open_dispute session. It is a function so
// that every case gets its own maps and a second, untouched copy to compare
// the input with after the call.
func dispute() merge.State {
	return merge.State{Slots: map[string]any{
		"card_last4":     "4417",
		"operation_date": "2026-08-22",
		"amount":         "1200.50",
	}}
}

// waiting is dispute with a changed card waiting for re-confirmation.
func waiting() merge.State {
	s := dispute()
	s.Pending = map[string]any{"card_last4": "5521"}
	return s
}

func TestApply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		state       func() merge.State
		args        []merge.Arg
		wantSlots   map[string]any
		wantPending map[string]any
		wantChanges []merge.Change
	}{
		{
			name:  "first value fills an empty session",
			state: func() merge.State { return merge.State{} },
			args:  []merge.Arg{{Slot: "card_last4", Value: "4417"}},
			wantSlots: map[string]any{
				"card_last4": "4417",
			},
			wantChanges: []merge.Change{{Slot: "card_last4", New: "4417", Decision: merge.Filled}},
		},
		{
			name:      "first value of an irreversible slot is filled, not held",
			state:     dispute,
			args:      []merge.Arg{{Slot: "reason", Value: "duplicate"}},
			wantSlots: withSlot(dispute().Slots, "reason", "duplicate"),
			wantChanges: []merge.Change{
				{Slot: "reason", New: "duplicate", Decision: merge.Filled},
			},
		},
		{
			name:  "null never overwrites",
			state: dispute,
			args: []merge.Arg{
				{Slot: "amount", Value: nil, Empty: true},
				{Slot: "operation_date", Value: "", Empty: true},
			},
			wantSlots: dispute().Slots,
			wantChanges: []merge.Change{
				{Slot: "amount", Old: "1200.50", Decision: merge.IgnoredNull},
				{Slot: "operation_date", Old: "2026-08-22", Decision: merge.IgnoredNull},
			},
		},
		{
			name:  "an empty arg is ignored even when it carries a value",
			state: dispute,
			// Empty is what the caller decided; a leftover value must not leak in.
			args:      []merge.Arg{{Slot: "operation_date", Value: "2026-08-23", Empty: true}},
			wantSlots: dispute().Slots,
			wantChanges: []merge.Change{
				{Slot: "operation_date", Old: "2026-08-22", Decision: merge.IgnoredNull},
			},
		},
		{
			name:        "null for a slot never filled stays unfilled",
			state:       dispute,
			args:        []merge.Arg{{Slot: "reason", Empty: true}},
			wantSlots:   dispute().Slots,
			wantChanges: []merge.Change{{Slot: "reason", Decision: merge.IgnoredNull}},
		},
		{
			name:        "null keeps a pending change waiting",
			state:       waiting,
			args:        []merge.Arg{{Slot: "card_last4", Empty: true}},
			wantSlots:   dispute().Slots,
			wantPending: map[string]any{"card_last4": "5521"},
			wantChanges: []merge.Change{{Slot: "card_last4", Old: "4417", Decision: merge.IgnoredNull}},
		},
		{
			name:        "the same string is a no-op",
			state:       dispute,
			args:        []merge.Arg{{Slot: "card_last4", Value: "4417"}},
			wantSlots:   dispute().Slots,
			wantChanges: []merge.Change{{Slot: "card_last4", Old: "4417", New: "4417", Decision: merge.Unchanged}},
		},
		{
			name:        "2 and 2.0 are the same value",
			state:       func() merge.State { return merge.State{Slots: map[string]any{"passengers": 2}} },
			args:        []merge.Arg{{Slot: "passengers", Value: 2.0}},
			wantSlots:   map[string]any{"passengers": 2},
			wantChanges: []merge.Change{{Slot: "passengers", Old: 2, New: 2.0, Decision: merge.Unchanged}},
		},
		{
			name: "a map with its keys in another order is the same value",
			state: func() merge.State {
				return merge.State{Slots: map[string]any{"route": map[string]any{"from": "MAD", "to": "KBP", "stops": 0}}}
			},
			args: []merge.Arg{{Slot: "route", Value: mustJSON(`{"stops": 0.0, "to": "KBP", "from": "MAD"}`)}},
			wantSlots: map[string]any{
				"route": map[string]any{"from": "MAD", "to": "KBP", "stops": 0},
			},
			wantChanges: []merge.Change{{
				Slot:     "route",
				Old:      map[string]any{"from": "MAD", "to": "KBP", "stops": 0},
				New:      mustJSON(`{"stops": 0.0, "to": "KBP", "from": "MAD"}`),
				Decision: merge.Unchanged,
			}},
		},
		{
			name:      "a changed reversible value is overwritten",
			state:     dispute,
			args:      []merge.Arg{{Slot: "operation_date", Value: "2026-08-21"}},
			wantSlots: withSlot(dispute().Slots, "operation_date", "2026-08-21"),
			wantChanges: []merge.Change{
				{Slot: "operation_date", Old: "2026-08-22", New: "2026-08-21", Decision: merge.Overwritten},
			},
		},
		{
			name:        "a changed irreversible value waits and is not applied",
			state:       dispute,
			args:        []merge.Arg{{Slot: "amount", Value: "1340.00"}},
			wantSlots:   dispute().Slots,
			wantPending: map[string]any{"amount": "1340.00"},
			wantChanges: []merge.Change{
				{Slot: "amount", Old: "1200.50", New: "1340.00", Decision: merge.Pending},
			},
		},
		{
			name:        "the stored value while a change waits discards the change",
			state:       waiting,
			args:        []merge.Arg{{Slot: "card_last4", Value: "4417"}},
			wantSlots:   dispute().Slots,
			wantPending: nil,
			wantChanges: []merge.Change{
				{Slot: "card_last4", Old: "4417", New: "5521", Decision: merge.Discarded},
			},
		},
		{
			name:        "the pending value again stays pending",
			state:       waiting,
			args:        []merge.Arg{{Slot: "card_last4", Value: "5521"}},
			wantSlots:   dispute().Slots,
			wantPending: map[string]any{"card_last4": "5521"},
			wantChanges: []merge.Change{
				{Slot: "card_last4", Old: "4417", New: "5521", Decision: merge.Pending},
			},
		},
		{
			name:        "a third value replaces the pending one and still waits",
			state:       waiting,
			args:        []merge.Arg{{Slot: "card_last4", Value: "0042"}},
			wantSlots:   dispute().Slots,
			wantPending: map[string]any{"card_last4": "0042"},
			wantChanges: []merge.Change{
				{Slot: "card_last4", Old: "4417", New: "0042", Decision: merge.Pending},
			},
		},
		{
			name: "discarding one pending change keeps the other",
			state: func() merge.State {
				s := waiting()
				s.Pending["amount"] = "99.00"
				return s
			},
			args:        []merge.Arg{{Slot: "amount", Value: "1200.50"}},
			wantSlots:   dispute().Slots,
			wantPending: map[string]any{"card_last4": "5521"},
			wantChanges: []merge.Change{
				{Slot: "amount", Old: "1200.50", New: "99.00", Decision: merge.Discarded},
			},
		},
		{
			name:  "a whole dirty turn: every argument yields a change, in the order given",
			state: dispute,
			args: []merge.Arg{
				{Slot: "card_last4", Value: "5521"},
				{Slot: "operation_date", Value: "2026-08-20"},
				{Slot: "amount", Empty: true},
				{Slot: "reason", Value: "fraud"},
			},
			wantSlots: map[string]any{
				"card_last4":     "4417",
				"operation_date": "2026-08-20",
				"amount":         "1200.50",
				"reason":         "fraud",
			},
			wantPending: map[string]any{"card_last4": "5521"},
			wantChanges: []merge.Change{
				{Slot: "card_last4", Old: "4417", New: "5521", Decision: merge.Pending},
				{Slot: "operation_date", Old: "2026-08-22", New: "2026-08-20", Decision: merge.Overwritten},
				{Slot: "amount", Old: "1200.50", Decision: merge.IgnoredNull},
				{Slot: "reason", New: "fraud", Decision: merge.Filled},
			},
		},
		{
			name:  "a change and its retraction in one turn leave nothing pending",
			state: dispute,
			args: []merge.Arg{
				{Slot: "amount", Value: "1340.00"},
				{Slot: "amount", Value: "1200.50"},
			},
			wantSlots: dispute().Slots,
			wantChanges: []merge.Change{
				{Slot: "amount", Old: "1200.50", New: "1340.00", Decision: merge.Pending},
				{Slot: "amount", Old: "1200.50", New: "1340.00", Decision: merge.Discarded},
			},
		},
		{
			name:        "no arguments change nothing",
			state:       waiting,
			args:        nil,
			wantSlots:   dispute().Slots,
			wantPending: map[string]any{"card_last4": "5521"},
			wantChanges: []merge.Change{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in, untouched := tt.state(), tt.state()
			got, changes := merge.Apply(in, tt.args, irreversibleSlots)

			if !reflect.DeepEqual(got.Slots, tt.wantSlots) {
				t.Errorf("slots:\n got %v\nwant %v", got.Slots, tt.wantSlots)
			}
			if !reflect.DeepEqual(got.Pending, tt.wantPending) {
				t.Errorf("pending:\n got %#v\nwant %#v", got.Pending, tt.wantPending)
			}
			if !reflect.DeepEqual(changes, tt.wantChanges) {
				t.Errorf("changes:\n got %+v\nwant %+v", changes, tt.wantChanges)
			}
			if !reflect.DeepEqual(in, untouched) {
				t.Errorf("Apply mutated its input:\n got %+v\nwant %+v", in, untouched)
			}
			assertNoSharedMaps(t, in, got)
		})
	}
}

func TestApplyNeverAsksIrreversibleForSameOrNewValues(t *testing.T) {
	t.Parallel()
	// irreversible must only be consulted for a change of a stored value;
	// asking it about anything else would mean a decision was taken wrongly.
	asked := map[string]int{}
	spy := func(slot string) bool { asked[slot]++; return true }
	_, changes := merge.Apply(dispute(), []merge.Arg{
		{Slot: "card_last4", Value: "4417"},
		{Slot: "reason", Value: "duplicate"},
		{Slot: "amount", Empty: true},
		{Slot: "operation_date", Value: "2026-08-23"},
	}, spy)
	if want := map[string]int{"operation_date": 1}; !reflect.DeepEqual(asked, want) {
		t.Errorf("irreversible was asked about %v, want %v", asked, want)
	}
	if got := changes[3].Decision; got != merge.Pending {
		t.Errorf("operation_date under an all-irreversible contract: got %s, want %s", got, merge.Pending)
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	twoWaiting := func() merge.State {
		s := waiting()
		s.Pending["amount"] = "1340.00"
		return s
	}
	tests := []struct {
		name        string
		state       func() merge.State
		slot        string
		accept      bool
		wantSlots   map[string]any
		wantPending map[string]any
		wantChanges []merge.Change
	}{
		{
			name:        "accept applies the pending value",
			state:       waiting,
			slot:        "card_last4",
			accept:      true,
			wantSlots:   withSlot(dispute().Slots, "card_last4", "5521"),
			wantChanges: []merge.Change{{Slot: "card_last4", Old: "4417", New: "5521", Decision: merge.Confirmed}},
		},
		{
			name:        "decline keeps the old value",
			state:       waiting,
			slot:        "card_last4",
			accept:      false,
			wantSlots:   dispute().Slots,
			wantChanges: []merge.Change{{Slot: "card_last4", Old: "4417", New: "5521", Decision: merge.Discarded}},
		},
		{
			name:        "accept resolves only the slot asked about",
			state:       twoWaiting,
			slot:        "amount",
			accept:      true,
			wantSlots:   withSlot(dispute().Slots, "amount", "1340.00"),
			wantPending: map[string]any{"card_last4": "5521"},
			wantChanges: []merge.Change{{Slot: "amount", Old: "1200.50", New: "1340.00", Decision: merge.Confirmed}},
		},
		{
			name:        "decline resolves only the slot asked about",
			state:       twoWaiting,
			slot:        "card_last4",
			accept:      false,
			wantSlots:   dispute().Slots,
			wantPending: map[string]any{"amount": "1340.00"},
			wantChanges: []merge.Change{{Slot: "card_last4", Old: "4417", New: "5521", Decision: merge.Discarded}},
		},
		{
			name:        "nothing pending for the slot is a no-op",
			state:       waiting,
			slot:        "amount",
			accept:      true,
			wantSlots:   dispute().Slots,
			wantPending: map[string]any{"card_last4": "5521"},
			wantChanges: nil,
		},
		{
			name:        "nothing pending at all is a no-op",
			state:       dispute,
			slot:        "card_last4",
			accept:      true,
			wantSlots:   dispute().Slots,
			wantChanges: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in, untouched := tt.state(), tt.state()
			got, changes := merge.Resolve(in, tt.slot, tt.accept)

			if !reflect.DeepEqual(got.Slots, tt.wantSlots) {
				t.Errorf("slots:\n got %v\nwant %v", got.Slots, tt.wantSlots)
			}
			if !reflect.DeepEqual(got.Pending, tt.wantPending) {
				t.Errorf("pending:\n got %#v\nwant %#v", got.Pending, tt.wantPending)
			}
			if !reflect.DeepEqual(changes, tt.wantChanges) {
				t.Errorf("changes:\n got %+v\nwant %+v", changes, tt.wantChanges)
			}
			if !reflect.DeepEqual(in, untouched) {
				t.Errorf("Resolve mutated its input:\n got %+v\nwant %+v", in, untouched)
			}
			if len(changes) > 0 {
				assertNoSharedMaps(t, in, got)
			}
		})
	}
}

func TestEqual(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b any
		want bool
	}{
		{2, 2.0, true},
		{int64(2), float64(2), true},
		{json.Number("2"), 2.0, true},
		{"1200.50", "1200.50", true},
		{"1200.50", "1200.5", false}, // amounts are normalized before merge; strings compare as strings
		{"2", 2, false},
		{true, "true", false},
		{nil, nil, true},
		{nil, "", false},
		{map[string]any{"a": 1, "b": []any{"x", 2.0}}, mustJSON(`{"b": ["x", 2], "a": 1.0}`), true},
		{map[string]any{"a": 1}, map[string]any{"a": 1, "b": nil}, false},
		{[]any{1, 2}, []any{2, 1}, false},
		{"MAD", "mad", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%#v~%#v", tt.a, tt.b), func(t *testing.T) {
			t.Parallel()
			if got := merge.Equal(tt.a, tt.b); got != tt.want {
				t.Errorf("Equal(%#v, %#v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := merge.Equal(tt.b, tt.a); got != tt.want {
				t.Errorf("Equal(%#v, %#v) = %v, want %v (not symmetric)", tt.b, tt.a, got, tt.want)
			}
		})
	}
}

func TestCloneSharesNoMaps(t *testing.T) {
	t.Parallel()
	s := waiting()
	c := s.Clone()
	c.Slots["card_last4"] = "0000"
	c.Pending["card_last4"] = "0000"
	if s.Slots["card_last4"] != "4417" || s.Pending["card_last4"] != "5521" {
		t.Errorf("writing to the clone changed the original: slots %v, pending %v", s.Slots, s.Pending)
	}
	if got := (merge.State{}).Clone(); got.Slots == nil || got.Pending != nil {
		t.Errorf("clone of a zero state: got slots %#v, pending %#v; want an empty writable slots map and nil pending", got.Slots, got.Pending)
	}
}

// assertNoSharedMaps fails when writing to the output would change the input.
func assertNoSharedMaps(t *testing.T, in, out merge.State) {
	t.Helper()
	if in.Slots != nil && out.Slots != nil && reflect.ValueOf(in.Slots).Pointer() == reflect.ValueOf(out.Slots).Pointer() {
		t.Errorf("the result shares its slots map with the input")
	}
	if in.Pending != nil && out.Pending != nil && reflect.ValueOf(in.Pending).Pointer() == reflect.ValueOf(out.Pending).Pointer() {
		t.Errorf("the result shares its pending map with the input")
	}
}

func withSlot(m map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for mk, mv := range m {
		out[mk] = mv
	}
	out[k] = v
	return out
}

func mustJSON(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(err)
	}
	return v
}
