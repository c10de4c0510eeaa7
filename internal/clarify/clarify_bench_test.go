package clarify_test

import (
	"testing"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/merge"
)

func benchContract(b *testing.B, name string) *contract.Contract {
	b.Helper()
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		b.Fatalf("LoadDir(../contracts): %v", err)
	}
	c := cat.Get(name)
	if c == nil {
		b.Fatalf("contract %s is not shipped; have %v", name, cat.Names())
	}
	return c
}

// BenchmarkDecide is the decision of a turn on the dispute example, one case
// per action a turn of it answers; the contract's check is made once,
// outside the loop, as the engine makes it before Decide.
func BenchmarkDecide(b *testing.B) {
	c := benchContract(b, "bank.open_dispute")
	cases := []struct {
		name    string
		slots   map[string]any
		pending map[string]any
		want    clarify.Action
	}{
		{"ask", dispute(map[string]any{"reason": nil}), nil, clarify.Ask},
		{"reconfirm", dispute(nil), map[string]any{"amount": "1340.00"}, clarify.Reconfirm},
		{"confirm", dispute(nil), nil, clarify.Confirm},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			in := clarify.Input{Contract: c, State: merge.State{Slots: tc.slots, Pending: tc.pending},
				Report: c.Check(tc.slots), Locale: "ru"}
			b.ReportAllocs()
			for b.Loop() {
				if step := clarify.Decide(in); step.Action != tc.want {
					b.Fatalf("Decide = %s, want %s", step.Action, tc.want)
				}
			}
		})
	}
}

func BenchmarkChangeMessage(b *testing.B) {
	c := benchContract(b, "bank.open_dispute")
	ch := merge.Change{Slot: "operation_date", Old: "2026-08-22", New: "2026-08-21", Decision: merge.Overwritten}
	b.ReportAllocs()
	for b.Loop() {
		if clarify.ChangeMessage(c, "ru", ch) == "" {
			b.Fatal("ChangeMessage = \"\", want the change told")
		}
	}
}
