package contract_test

import "testing"

// dirtyDispute is a whole open_dispute call as a model sends it.
var dirtyDispute = map[string]any{
	"card_last4":            "**** **** **** 4417",
	"operation_date":        "Вчера ",
	"amount":                "1 200,50 ₽",
	"reason":                "двойное\u00a0списание",
	"original_operation_id": "\u200bOP-2026-08-23-001 ",
}

// BenchmarkNormalizeAndCheck is the contract's share of one turn: the before
// phase over every argument, then the whole-object check.
func BenchmarkNormalizeAndCheck(b *testing.B) {
	c := shipped(b, "bank.open_dispute")
	env := moscowEnv(b)
	order := c.InOrder([]string{"card_last4", "operation_date", "amount", "reason", "original_operation_id"})
	slots := make(map[string]any, len(order))
	b.ReportAllocs()
	for b.Loop() {
		for _, slot := range order {
			v, fe := c.Normalize(slot, dirtyDispute[slot], env)
			if fe != nil {
				b.Fatalf("Normalize(%s, %q): %v", slot, dirtyDispute[slot], fe)
			}
			slots[slot] = v
		}
		if r := c.Check(slots); !r.Valid() {
			b.Fatalf("Check(%v) = %+v, want valid", slots, r)
		}
	}
}

func TestDirtyDisputeNormalizesToTheBenchmarkedArguments(t *testing.T) {
	t.Parallel()
	// The benchmark must measure the success path; this pins what it produces.
	c := shipped(t, "bank.open_dispute")
	want := map[string]any{
		"card_last4":            "4417",
		"operation_date":        "2026-08-23",
		"amount":                "1200.50",
		"reason":                "duplicate",
		"original_operation_id": "OP-2026-08-23-001",
	}
	got := map[string]any{}
	for slot, raw := range dirtyDispute {
		v, fe := c.Normalize(slot, raw, moscowEnv(t))
		if fe != nil {
			t.Fatalf("Normalize(%s, %q): %v", slot, raw, fe)
		}
		got[slot] = v
	}
	for slot, w := range want {
		if got[slot] != w {
			t.Errorf("%s = %#v, want %#v", slot, got[slot], w)
		}
	}
	if r := c.Check(got); !r.Valid() {
		t.Errorf("Check(%v) = %+v, want valid", got, r)
	}
}

// BenchmarkNormalizeArgsAndCheck is the same call through NormalizeArgs,
// with refusals worded in Russian.
func BenchmarkNormalizeArgsAndCheck(b *testing.B) {
	c := shipped(b, "bank.open_dispute")
	env := moscowEnv(b)
	env.Locale = "ru"
	b.ReportAllocs()
	for b.Loop() {
		vals, errs := c.NormalizeArgs(dirtyDispute, env)
		if len(errs) > 0 {
			b.Fatalf("NormalizeArgs: %v", errs)
		}
		if r := c.CheckIn(vals, "ru"); !r.Valid() {
			b.Fatalf("CheckIn(%v) = %+v, want valid", vals, r)
		}
	}
}

// BenchmarkRefusal is a call whose every argument is refused, with the
// repair hints worded in Russian: the slow path.
func BenchmarkRefusal(b *testing.B) {
	c := shipped(b, "bank.open_dispute")
	env := moscowEnv(b)
	env.Locale = "ru"
	bad := map[string]any{"card_last4": "44", "operation_date": "31.02", "amount": "$1,200", "reason": "chargeback", "original_operation_id": "1"}
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := c.NormalizeArgs(bad, env); len(errs) != 5 {
			b.Fatalf("NormalizeArgs refused %d arguments, want 5", len(errs))
		}
	}
}
