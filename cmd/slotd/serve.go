package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/slotd/slotd/internal/server"
)

// env returns the value of an SLOTD_* variable, or def.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// envDuration reads a duration from the environment, or def.
func envDuration(name string, def time.Duration) time.Duration {
	if v, ok := os.LookupEnv(name); ok {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
		fmt.Fprintf(os.Stderr, "slotd: %s is not a duration such as 30m or 24h\n", name)
		os.Exit(2)
	}
	return def
}

// envInt reads a whole number from the environment, or def.
func envInt(name string, def int) int {
	if v, ok := os.LookupEnv(name); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "slotd: %s is not a whole number\n", name)
			os.Exit(2)
		}
		return n
	}
	return def
}

func serve(ctx context.Context, args []string) error {
	var cfg server.Config
	_, parse := serveFlags(&cfg)
	if err := parse(args); err != nil {
		return err
	}
	tuneGC()
	srv, err := server.New(cfg, slog.Default())
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}

// serveFlags are serve's flags, filling cfg when parse is called. Secrets
// (the database URL, keys) have no flag default: -h would print them.
func serveFlags(cfg *server.Config) (*flag.FlagSet, func(args []string) error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&cfg.Listen, "listen", env("SLOTD_LISTEN", "127.0.0.1:50051"), "gRPC address (SLOTD_LISTEN)")
	fs.StringVar(&cfg.HTTPListen, "http-listen", env("SLOTD_HTTP_LISTEN", "127.0.0.1:8080"), "HTTP/JSON gateway address; empty serves none (SLOTD_HTTP_LISTEN)")
	mcpOn := fs.Bool("mcp", env("SLOTD_MCP", "true") != "false", "serve MCP (Streamable HTTP) at /mcp on the HTTP listener (SLOTD_MCP=false turns it off)")
	fs.StringVar(&cfg.Contracts, "contracts", env("SLOTD_CONTRACTS", "./contracts"), "folder of contract files (SLOTD_CONTRACTS)")
	fs.StringVar(&cfg.Store, "store", env("SLOTD_STORE", "postgres"), "postgres, or memory for a demo that keeps nothing (SLOTD_STORE)")
	// Secrets come from the environment unless given: a flag default would
	// print them in -h.
	fs.StringVar(&cfg.DatabaseURL, "database-url", "", "Postgres connection string (SLOTD_DATABASE_URL)")
	fs.StringVar(&cfg.APIKeys, "api-keys", "", "tenant:key,... ; without keys slotd listens on loopback only (SLOTD_API_KEYS)")
	fs.StringVar(&cfg.AdminKeys, "admin-keys", "", "keys for AdminService (SLOTD_ADMIN_KEYS)")
	fs.DurationVar(&cfg.StaleAfter, "stale-after", envDuration("SLOTD_STALE_AFTER", 30*time.Minute), "idle time before a turn asks whether to resume, for contracts without x-slotd.stale_after (SLOTD_STALE_AFTER)")
	fs.DurationVar(&cfg.TTL, "ttl", envDuration("SLOTD_TTL", 24*time.Hour), "idle time after which a session expires, for contracts without x-slotd.ttl (SLOTD_TTL)")
	fs.IntVar(&cfg.MaxAttempts, "max-attempts", envInt("SLOTD_MAX_ATTEMPTS", 3), "failed attempts per slot before the conversation is handed to a person, for slots without x-slotd.max_attempts (SLOTD_MAX_ATTEMPTS)")
	fs.IntVar(&cfg.MaxOpenSessions, "max-open-sessions", envInt("SLOTD_MAX_OPEN_SESSIONS", 8), "open sessions a conversation may hold, one per tool; past it the least recently used ends (SLOTD_MAX_OPEN_SESSIONS)")
	fs.DurationVar(&cfg.Retention, "retention", envDuration("SLOTD_RETENTION", 30*24*time.Hour), "how long ended sessions and their history are kept; 0 keeps them (SLOTD_RETENTION)")
	fs.DurationVar(&cfg.JanitorInterval, "janitor-interval", envDuration("SLOTD_JANITOR_INTERVAL", time.Minute), "how often expired sessions are ended and old ones purged; 0 turns it off (SLOTD_JANITOR_INTERVAL)")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", envDuration("SLOTD_SHUTDOWN_TIMEOUT", 15*time.Second), "how long in-flight turns may take to finish on SIGTERM (SLOTD_SHUTDOWN_TIMEOUT)")
	fs.StringVar(&cfg.MetricsListen, "metrics-listen", env("SLOTD_METRICS_LISTEN", "127.0.0.1:9464"), "address of /metrics, /healthz and /readyz; empty serves none (SLOTD_METRICS_LISTEN)")
	fs.BoolVar(&cfg.Pprof, "pprof", os.Getenv("SLOTD_PPROF") == "true", "serve net/http/pprof under /debug/pprof/ on the metrics listener (SLOTD_PPROF=true)")
	fs.StringVar(&cfg.TLS.Cert, "tls-cert", env("SLOTD_TLS_CERT", ""), "PEM certificate (chain) of every listener; with it they speak TLS 1.2+ (SLOTD_TLS_CERT)")
	fs.StringVar(&cfg.TLS.Key, "tls-key", env("SLOTD_TLS_KEY", ""), "PEM private key of --tls-cert (SLOTD_TLS_KEY)")
	fs.StringVar(&cfg.TLS.ClientCA, "tls-client-ca", env("SLOTD_TLS_CLIENT_CA", ""), "PEM CA certificates; clients must present a certificate one of them signed (mutual TLS) (SLOTD_TLS_CLIENT_CA)")
	fs.BoolVar(&cfg.AllowPlaintext, "allow-plaintext", os.Getenv("SLOTD_ALLOW_PLAINTEXT") == "true", "allow plaintext listeners beyond loopback, when TLS ends in front of slotd (SLOTD_ALLOW_PLAINTEXT=true)")
	clientClock := fs.String("client-clock", env("SLOTD_CLIENT_CLOCK", "window"), "window: a turn's now must be within 5m of the server's clock; trust: any now (replays, scripts, tests) (SLOTD_CLIENT_CLOCK)")
	return fs, func(args []string) error {
		if err := fs.Parse(args); err != nil {
			return err
		}
		cfg.DisableMCP = !*mcpOn
		switch *clientClock {
		case "window":
		case "trust":
			cfg.TrustClientClock = true
		default:
			return fmt.Errorf("--client-clock %q: window or trust", *clientClock)
		}
		if cfg.DatabaseURL == "" {
			cfg.DatabaseURL = os.Getenv("SLOTD_DATABASE_URL")
		}
		if cfg.APIKeys == "" {
			cfg.APIKeys = os.Getenv("SLOTD_API_KEYS")
		}
		if cfg.AdminKeys == "" {
			cfg.AdminKeys = os.Getenv("SLOTD_ADMIN_KEYS")
		}
		return nil
	}
}

// tuneGC makes the collector run a quarter as often as Go's default, unless
// GOGC says otherwise: a turn allocates some 15 KB, and at GOGC=100 the
// collector took a tenth of slotd's CPU under load. slotd bench: about 10%
// less CPU per turn for about 15 MB more RSS (some 50 MB in all).
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}
