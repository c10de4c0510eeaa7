package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/slotd/slotd/internal/app/bench"
)

var benchCommand = &command{
	name:    "bench",
	summary: "measure turns/s and latency against the same SQL done directly",
	about: `Drives concurrent multi-turn conversations of the shipped contracts through
a real client against slotd (one it starts in-process on a throwaway
database, or the one at --addr), over gRPC, HTTP/JSON or MCP (--transport),
and in the same run does each turn's database work directly through pgx at
the same concurrency, in rounds that alternate which side goes first. Prints turns/s, latency percentiles, errors
and the ratio slotd/direct, overall and per round. Exits 1 when a
conversation went off script.`,
	setup: func(fs *flags) runFunc {
		var cfg bench.Config
		var o benchOptions
		fs.String(&cfg.Addr, "addr", "SLOTD_BENCH_ADDR", "", "gRPC address of a running slotd; empty starts one in-process on a throwaway database")
		fs.String(&cfg.Transport, "transport", "SLOTD_BENCH_TRANSPORT", "grpc", "the path of the slotd side's turns: grpc, http (POST /v1/turn with JSON) or mcp (tools/call over Streamable HTTP, a session per conversation)")
		fs.String(&cfg.HTTPAddr, "http-addr", "SLOTD_BENCH_HTTP_ADDR", "", "with --addr: the HTTP address (host:port) of the same slotd, for --transport http and mcp")
		fs.String(&cfg.DatabaseURL, "database-url", "SLOTD_DATABASE_URL", "", "Postgres: slotd's database with --addr, else the server the throwaway database is made on")
		fs.String(&cfg.Via, "via", "SLOTD_BENCH_VIA", "", "without --addr: the in-process slotd connects through this connection pooler's URL (PgBouncer in transaction mode; give its default_query_exec_mode), the direct side straight to --database-url")
		fs.String(&cfg.Contracts, "contracts", "SLOTD_CONTRACTS", "./contracts", "the contracts slotd serves")
		fs.String(&cfg.MetricsURL, "metrics-url", "SLOTD_BENCH_METRICS_URL", "", "with --addr: slotd's /metrics, read for its memory under load, e.g. http://127.0.0.1:9464/metrics")
		fs.String(&cfg.TenantKey, "tenant-key", "SLOTD_TENANT_KEY", "", "API key sent as \"authorization: Bearer KEY\"")
		fs.String(&cfg.Tenant, "tenant", "SLOTD_BENCH_TENANT", "", "the tenant --tenant-key stands for: the direct side writes as it")
		fs.Int(&cfg.Conversations, "conversations", "SLOTD_BENCH_CONVERSATIONS", 32, "conversations at once, on each side")
		fs.Int(&cfg.Rate, "rate", "SLOTD_BENCH_RATE", 0, "pace each side at this many turns/s in all; 0 runs as fast as the conversations go (saturation)")
		fs.Duration(&cfg.Duration, "duration", "SLOTD_BENCH_DURATION", 10*time.Second, "measured time of each side, split over the rounds")
		fs.Int(&cfg.Turns, "turns", "SLOTD_BENCH_TURNS", 0, "measure this many turns on each side instead of a duration, split over the rounds")
		fs.Int(&cfg.Rounds, "rounds", "SLOTD_BENCH_ROUNDS", 0, "measure each side in this many rounds, alternating which goes first (slotd then direct, direct then slotd, ...) so that drift falls on both alike; 0: 3, or 1 with --conversation-turns")
		fs.Duration(&cfg.Warmup, "warmup", "SLOTD_BENCH_WARMUP", time.Second, "unmeasured time before each side's first round")
		fs.Int(&cfg.ConversationTurns, "conversation-turns", "SLOTD_BENCH_CONVERSATION_TURNS", 0, "play flight searches of this many turns each instead of the mix (a long conversation)")
		fs.Int(&cfg.Preload, "preload", "SLOTD_BENCH_PRELOAD", 0, "insert this many finished sessions, with their history, before the run")
		fs.Bool(&cfg.KeepDatabase, "keep-database", "SLOTD_BENCH_KEEP_DATABASE", false, "keep the throwaway database")
		fs.String(&o.cpuProfile, "cpuprofile", "SLOTD_BENCH_CPUPROFILE", "", "write a CPU profile of this process during the slotd side's first measured round, the only one a profile can cover (go tool pprof FILE)")
		fs.String(&o.serverLog, "server-log", "SLOTD_BENCH_SERVER_LOG", "", "write the in-process slotd's JSON log here (default: formatted and discarded)")
		fs.Bool(&o.json, "json", "SLOTD_BENCH_JSON", false, "also print the results as one JSON line")
		fs.Bool(&o.quiet, "q", "SLOTD_BENCH_QUIET", false, "do not say what the bench is doing")
		return func(ctx context.Context, c *cli, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			return benchRun(ctx, cfg, o, c.stdout, c.stderr)
		}
	},
}

// benchOptions are bench's flags that are not the bench's own Config.
type benchOptions struct {
	cpuProfile, serverLog string
	json, quiet           bool
}

func benchRun(ctx context.Context, cfg bench.Config, o benchOptions, stdout, stderr io.Writer) error {
	if o.serverLog != "" {
		f, err := os.Create(o.serverLog)
		if err != nil {
			return err
		}
		defer f.Close()
		cfg.ServerLog = f
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		cfg.CPUProfile = f
	}
	if !o.quiet {
		cfg.Progress = stderr
	}
	if cfg.Addr == "" {
		tuneGC() // the in-process slotd runs as slotd serve would
	}
	rep, err := bench.Run(ctx, cfg)
	var ce *bench.ConfigError
	if errors.As(err, &ce) {
		return usagef("%s", ce.Usage())
	}
	if err != nil {
		return err
	}
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	if o.json {
		if err := rep.WriteJSON(stdout); err != nil {
			return err
		}
	}
	if n := rep.Slotd.Errors + rep.Direct.Errors; n > 0 {
		return fmt.Errorf("%d turns went off script", n)
	}
	return nil
}
