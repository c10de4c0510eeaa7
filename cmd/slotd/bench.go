package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/slotd/slotd/internal/bench"
)

const benchUsage = `usage: slotd bench [flags]

Drives concurrent multi-turn conversations of the shipped contracts through
a real gRPC client against slotd (one it starts in-process on a throwaway
database, or the one at --addr), and in the same run does each turn's
database work directly through pgx at the same concurrency. Prints turns/s,
latency percentiles, errors and the ratio slotd/direct. Exits non-zero when
a conversation went off script.

flags:`

func benchCommand(ctx context.Context, args []string) error {
	return benchRun(ctx, args, os.Stdout, os.Stderr)
}

func benchRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg bench.Config
	fs := flag.NewFlagSet("slotd bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, benchUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.Addr, "addr", "", "gRPC address of a running slotd; empty starts one in-process on a throwaway database")
	fs.StringVar(&cfg.DatabaseURL, "database-url", env("SLOTD_DATABASE_URL", ""), "Postgres: slotd's database with --addr, else the server the throwaway database is made on (SLOTD_DATABASE_URL)")
	fs.StringVar(&cfg.Contracts, "contracts", env("SLOTD_CONTRACTS", "./contracts"), "the contracts slotd serves (SLOTD_CONTRACTS)")
	fs.StringVar(&cfg.MetricsURL, "metrics-url", "", "with --addr: slotd's /metrics, read for its memory under load, e.g. http://127.0.0.1:9464/metrics")
	fs.StringVar(&cfg.TenantKey, "tenant-key", os.Getenv("SLOTD_TENANT_KEY"), "API key sent as \"authorization: Bearer KEY\" (SLOTD_TENANT_KEY)")
	fs.StringVar(&cfg.Tenant, "tenant", "", "the tenant --tenant-key stands for: the direct side writes as it")
	fs.IntVar(&cfg.Conversations, "conversations", 32, "conversations at once, on each side")
	fs.IntVar(&cfg.Rate, "rate", 0, "pace each side at this many turns/s in all; 0 runs as fast as the conversations go (saturation)")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "measured time of each side")
	fs.IntVar(&cfg.Turns, "turns", 0, "measure this many turns on each side instead of a duration")
	fs.DurationVar(&cfg.Warmup, "warmup", time.Second, "unmeasured time before each side")
	fs.IntVar(&cfg.ConversationTurns, "conversation-turns", 0, "play flight searches of this many turns each instead of the mix (a long conversation)")
	fs.IntVar(&cfg.Preload, "preload", 0, "insert this many finished sessions, with their history, before the run")
	fs.BoolVar(&cfg.KeepDatabase, "keep-database", false, "keep the throwaway database")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of this process during the slotd side's measurement (go tool pprof FILE)")
	serverLog := fs.String("server-log", "", "write the in-process slotd's JSON log here (default: formatted and discarded)")
	asJSON := fs.Bool("json", false, "also print the results as one JSON line")
	quiet := fs.Bool("q", false, "do not say what the bench is doing")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *serverLog != "" {
		f, err := os.Create(*serverLog)
		if err != nil {
			return err
		}
		defer f.Close()
		cfg.ServerLog = f
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		cfg.CPUProfile = f
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	if cfg.Addr == "" {
		tuneGC() // the in-process slotd runs as slotd serve would
	}
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	if *asJSON {
		if err := rep.WriteJSON(stdout); err != nil {
			return err
		}
	}
	if n := rep.Slotd.Errors + rep.Direct.Errors; n > 0 {
		return fmt.Errorf("%d turns went off script", n)
	}
	return nil
}
