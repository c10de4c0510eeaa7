package merge_test

import (
	"testing"

	"github.com/slotd/slotd/internal/merge"
)

// A turn's worth of merging on a half-filled dispute: a new slot, a repeated
// value, an overwrite, a changed irreversible value and a null.
var benchArgs = []merge.Arg{
	{Slot: "reason", Value: "duplicate"},
	{Slot: "card_last4", Value: "4417"},
	{Slot: "operation_date", Value: "2026-08-21"},
	{Slot: "amount", Value: "1340.00"},
	{Slot: "original_operation_id", Empty: true},
}

func BenchmarkApply(b *testing.B) {
	s := dispute()
	b.ReportAllocs()
	for b.Loop() {
		out, changes := merge.Apply(s, benchArgs, irreversibleSlots)
		if len(changes) != len(benchArgs) || out.Pending["amount"] != "1340.00" {
			b.Fatalf("Apply = %v, %v; want a change per argument and amount pending", out, changes)
		}
	}
}

func BenchmarkResolve(b *testing.B) {
	s := waiting()
	b.ReportAllocs()
	for b.Loop() {
		out, changes := merge.Resolve(s, "card_last4", true)
		if len(changes) != 1 || out.Slots["card_last4"] != "5521" {
			b.Fatalf("Resolve = %v, %v; want the card confirmed", out, changes)
		}
	}
}

func BenchmarkEqual(b *testing.B) {
	x := map[string]any{"from": "MAD", "to": "KBP", "stops": 0}
	y := map[string]any{"stops": 0.0, "to": "KBP", "from": "MAD"}
	b.ReportAllocs()
	for b.Loop() {
		if !merge.Equal(x, y) {
			b.Fatal("Equal = false, want true")
		}
	}
}
