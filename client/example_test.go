package client_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"

	"github.com/slotd/slotd/client"
	"github.com/slotd/slotd/internal/app/server"
)

// Example plays the start of the dispute example against a slotd started in
// this process on the memory store; an orchestrator dials its slotd the same
// way, by address.
func Example() {
	addr, stop := startSlotd()
	defer stop()

	c, err := client.New(addr, client.WithLocale("en"), client.WithTimeZone("Europe/Moscow"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	// The model extracted an amount and a reason from the user's first message.
	res, err := c.Turn(ctx, "chat-42", "bank.open_dispute", map[string]any{
		"amount": "1 500,50 ₽",
		"reason": "списали дважды",
	})
	if err != nil {
		log.Fatal(err) // transport or server failure after the client's retries
	}
	fmt.Println(res.Action, res.Question.Slot+":", res.Question.Text)

	// The next turn: the card, and a date that is not a date.
	res, err = c.Turn(ctx, "chat-42", "bank.open_dispute", map[string]any{
		"card_last4":     "карта на 4417",
		"operation_date": "when I was on holiday",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Action, res.Question.Slot+":", res.Question.Text)
	if p := res.Problem; p != nil {
		for _, fe := range p.Errors {
			fmt.Println("refused", fe.Pointer, fe.Input+":", fe.Message)
		}
	}
	fmt.Println("slots so far:", res.Session.Slots["amount"], res.Session.Slots["card_last4"], res.Session.Slots["reason"])
	// Output:
	// ASK card_last4: Which card was charged? Please tell me its last four digits.
	// ASK operation_date: When did the operation on the card •• 4417 happen?
	// refused /operation_date "when I was on holiday": not a date slotd can read
	// slots so far: 1500.50 4417 duplicate
}

// startSlotd starts slotd with the shipped contracts and the memory store on
// a free loopback port, and returns its gRPC address and how to stop it.
func startSlotd() (string, func()) {
	srv, err := server.New(server.Config{Listen: "127.0.0.1:0", Contracts: "../contracts", Store: "memory"},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	return srv.Addr(), func() { cancel(); <-done }
}
