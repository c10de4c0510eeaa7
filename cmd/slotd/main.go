// Command slotd is the slot-filling service for LLM agents.
//
//	slotd serve      run the gRPC server (and the HTTP gateway, metrics)
//	slotd migrate    apply the database schema and exit
//	slotd sessions   list, reset-stale, show, purge sessions of a running slotd
//	slotd contract   export, lint, list contracts
//	slotd script     run conversation scripts
//	slotd bench      measure turns/s against the direct-SQL limit
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

var commands = map[string]func(ctx context.Context, args []string) error{
	"serve":    serve,
	"migrate":  migrate,
	"sessions": sessions,
	"contract": contractCommand,
	"script":   scriptCommand,
	"bench":    benchCommand,
}

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	slog.SetDefault(log)
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: slotd serve|migrate|sessions|contract|script|bench [flags]  (slotd COMMAND -h for flags)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := commands[os.Args[1]](ctx, os.Args[2:]); err != nil {
		log.Error("slotd "+os.Args[1]+" failed", "err", err.Error())
		os.Exit(1)
	}
}
