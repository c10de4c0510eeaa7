// Command slotd is the slot-filling service for LLM agents.
//
//	slotd serve      run the gRPC server (and the HTTP gateway, metrics)
//	slotd migrate    apply the database schema and exit
//	slotd sessions   list, reset-stale, show, purge sessions of a running slotd
//	slotd contract   export, lint, list contracts
//	slotd script     run conversation scripts
//	slotd bench      measure turns/s against the direct-SQL limit
//	slotd version    print the version, commit and Go version (also --version)
//
// Every flag has an environment twin (slotd COMMAND --help names it);
// usage goes to stdout, errors are one line on stderr: exit 2 for a command
// given wrongly, 1 for one that failed.
package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/slotd/slotd/internal/logline"
)

// slotd is the command tree; cli.go runs it.
var slotd = &command{
	name: "slotd",
	about: `slotd keeps the slots of LLM agents' tool calls in Postgres: an orchestrator
calls it on every turn with the arguments the model extracted, and it answers
with the one next step (ask, re-confirm, confirm, repair, or the arguments,
ready). docs/ and README.md tell more.`,
	subs: []*command{serveCommand, migrateCommand, sessionsCommand, contractCommand, scriptCommand, benchCommand, versionCommand},
}

func main() {
	// serve's log is JSON on stderr; every other command speaks in lines.
	slog.SetDefault(slog.New(logline.NewJSON(os.Stderr, nil)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := (&cli{stdout: os.Stdout, stderr: os.Stderr, lookupEnv: os.LookupEnv}).execute(ctx, slotd, os.Args[1:])
	stop()
	os.Exit(code)
}
