package problem

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRedactMasksCardNumbersHoweverWritten(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"4276123456784417",
		"4276 1234 5678 4417",
		"4276-1234-5678-4417",
		"4276\u00a01234\u00a05678\u00a04417",
		"4276\u202f1234\u202f5678\u202f4417", // narrow no-break space, the Russian digit-group separator
		"4276  1234  5678  4417",
		"4276\t1234\t5678\t4417",
		"4276.1234.5678.4417",
		"4276–1234–5678–4417",
		"4276_1234_5678_4417",
		"４２７６１２３４５６７８４４１７", // fullwidth digits
		"карта 4276 1234 5678 4417, спасибо",
		"card: 4276 1234 5678 4417 exp 12/29",
		"3782 822463 10005", // 15-digit Amex grouping
	} {
		got := Redact(in)
		if strings.Contains(strings.NewReplacer(" ", "", "-", "", ".", "", "_", "", "\t", "").Replace(got), "42761234") ||
			strings.Contains(got, "1234 5678") || strings.Contains(got, "822463") {
			t.Errorf("Redact(%q) = %q: the number survives", in, got)
		}
		if !strings.Contains(got, "4417") && !strings.Contains(got, "0005") {
			t.Errorf("Redact(%q) = %q: the last four digits are lost", in, got)
		}
	}
}

func TestRedactLeavesOrdinaryTextAlone(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"1 200,50 ₽", "op-20260822-0117", "2026-08-22", "+7 999 123-45-67", "•• 4417", "order 12345678901",
		"", "вчера дважды списали",
	} {
		if got := Redact(in); got != in {
			t.Errorf("Redact(%q) = %q, want it unchanged", in, got)
		}
	}
}

func TestRedactValueWalksEverything(t *testing.T) {
	t.Parallel()
	v := RedactValue(map[string]any{
		"pan":    "4276 1234 5678 4417",
		"nested": []any{map[string]any{"n": 4276123456784417.0}},
		"amount": 1200.5,
	})
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); strings.Contains(s, "42761234") || strings.Contains(s, "4.276") || !strings.Contains(s, "1200.5") {
		t.Errorf("RedactValue = %s", s)
	}
}
