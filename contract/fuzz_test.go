package contract_test

import (
	"testing"
	"unicode/utf8"
)

// FuzzNormalizeArgsAndCheck runs a whole call of the shipped dispute
// contract: normalize every argument, then check the object. Whatever a
// model sends, nothing panics, every refusal is valid UTF-8 and none carries
// a card number. The parsers' own fuzz targets are in package normalizer.
func FuzzNormalizeArgsAndCheck(f *testing.F) {
	c := shipped(f, "bank.open_dispute")
	env := moscowEnv(f)
	f.Add("•• 4417", "вчера", "1 200,50 ₽", "дубль", "OP-1")
	f.Add("4276 1234 5678 4417", "31.02", "$5", "chargeback", "")
	f.Fuzz(func(t *testing.T, card, day, amount, reason, op string) {
		args := map[string]any{"card_last4": card, "operation_date": day, "amount": amount, "reason": reason, "original_operation_id": op}
		for _, locale := range []string{"en", "ru", "uk"} {
			env.Locale = locale
			vals, errs := c.NormalizeArgs(args, env)
			for _, e := range errs {
				if !utf8.ValidString(e.Message + e.Input + e.Format) {
					t.Fatalf("refusal is not valid UTF-8: %+v", e)
				}
				assertNoCard(t, e)
			}
			r := c.CheckIn(vals, locale)
			for _, v := range r.Violations {
				assertNoCard(t, v)
			}
		}
	})
}
