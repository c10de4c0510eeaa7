package contract_test

import (
	"fmt"
	"log"
	"time"

	"github.com/slotd/slotd/contract"
)

// Example loads the shipped contracts and normalizes what a model sent for
// the dispute example: each value is read the way the user wrote it, and
// what cannot be read is refused with what would fit.
func Example() {
	cat, err := contract.LoadDir("../contracts")
	if err != nil {
		log.Fatal(err)
	}
	c := cat.Get("bank.open_dispute")
	env := contract.Env{
		Now:      time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC),
		Location: time.UTC,
		Locale:   "en",
	}
	args, refused := c.NormalizeArgs(map[string]any{
		"amount":         "1 500,50 ₽",
		"operation_date": "вчера",
		"card_last4":     "•• 4417",
		"reason":         "twice",
	}, env)
	fmt.Println(args["amount"], args["operation_date"], args["card_last4"])
	for _, fe := range refused {
		fmt.Println("refused", fe.Pointer, fe.Input, fe.Allowed)
	}
	// Output:
	// 1500.50 2026-03-13 4417
	// refused /reason "twice" [duplicate fraud not_received wrong_amount]
}
