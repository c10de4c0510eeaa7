package main

import (
	"context"
	"log/slog"
	"os"
	"runtime/debug"
	"time"

	"github.com/slotd/slotd/internal/server"
)

var serveCommand = &command{
	name:    "serve",
	summary: "run the gRPC server, the HTTP/JSON gateway with /mcp, and /metrics",
	about: `Runs slotd: gRPC on --listen, the HTTP/JSON gateway and MCP (/mcp) on
--http-listen, /metrics, /healthz and /readyz on --metrics-listen. It applies
the database schema at start (as slotd migrate does) and stops gracefully on
SIGTERM or Ctrl-C. Its log is JSON on stderr.

Without keys it listens on loopback only and every caller is the default
tenant. Keys: --api-keys tenant:key,tenant:key for tenants (a turn needs
one), --admin-keys key,key (or name:key) for AdminService; every key has at
least 16 characters.`,
	setup: func(fs *flags) runFunc {
		var cfg server.Config
		parse := serveFlags(fs, &cfg)
		return func(ctx context.Context, c *cli, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			if err := parse(); err != nil {
				return err
			}
			tuneGC()
			limitMemory(cfg.MemoryLimit)
			srv, err := server.New(cfg, slog.Default())
			if err != nil {
				return err
			}
			if err := srv.Run(ctx); err != nil {
				slog.Error("slotd serve failed", "err", err.Error())
				return errLogged
			}
			return nil
		}
	},
}

// serveFlags declares serve's flags, filling cfg; finish checks what the
// flags cannot. Secrets (the database URL, keys) have no default, so that
// --help never prints one: their variables are read like any other twin,
// without becoming the flag's default.
func serveFlags(fs *flags, cfg *server.Config) (finish func() error) {
	fs.String(&cfg.Listen, "listen", "SLOTD_LISTEN", "127.0.0.1:50051", "gRPC address")
	fs.String(&cfg.HTTPListen, "http-listen", "SLOTD_HTTP_LISTEN", "127.0.0.1:8080", "HTTP/JSON gateway and /mcp address; empty serves none")
	mcpOn := true
	fs.Bool(&mcpOn, "mcp", "SLOTD_MCP", true, "serve MCP (Streamable HTTP) at /mcp on the HTTP listener; --mcp=false turns it off")
	fs.String(&cfg.Contracts, "contracts", "SLOTD_CONTRACTS", "./contracts", "folder of contract files (*.json)")
	fs.String(&cfg.Store, "store", "SLOTD_STORE", "postgres", "postgres, or memory for a demo that keeps nothing")
	fs.String(&cfg.DatabaseURL, "database-url", "SLOTD_DATABASE_URL", "", "Postgres connection string, e.g. postgres://user@127.0.0.1:5432/slotd")
	fs.Int(&cfg.HTTPMaxUnauthConns, "http-max-unauth-conns", "SLOTD_HTTP_MAX_UNAUTH_CONNS", 512, "HTTP connections that have not authenticated a request yet, in all; more are closed as they come")
	fs.Int(&cfg.HTTPMaxUnauthConnsPerSource, "http-max-unauth-conns-per-source", "SLOTD_HTTP_MAX_UNAUTH_CONNS_PER_SOURCE", 128, "HTTP connections that have not authenticated a request yet, per client IP address; more are closed as they come")
	memoryLimit := "auto"
	fs.String(&memoryLimit, "memory-limit", "SLOTD_MEMORY_LIMIT", "auto", "soft limit of the Go heap (as GOMEMLIMIT: 512MiB, 2GiB); auto: GOMEMLIMIT when set, else 3/4 of the memory the cgroup or the machine gives; off: none")
	fs.String(&cfg.APIKeys, "api-keys", "SLOTD_API_KEYS", "", "tenant keys, tenant:key,tenant:key, each key at least 16 characters; without keys slotd listens on loopback only")
	fs.String(&cfg.AdminKeys, "admin-keys", "SLOTD_ADMIN_KEYS", "", "AdminService keys, key,key or name:key,name:key, each at least 16 characters; turns still need a tenant key")
	fs.Duration(&cfg.StaleAfter, "stale-after", "SLOTD_STALE_AFTER", 30*time.Minute, "idle time before a turn asks whether to resume, for contracts without x-slotd.stale_after")
	fs.Duration(&cfg.TTL, "ttl", "SLOTD_TTL", 24*time.Hour, "idle time after which a session expires, for contracts without x-slotd.ttl")
	fs.Int(&cfg.MaxAttempts, "max-attempts", "SLOTD_MAX_ATTEMPTS", 3, "failed attempts per slot before the conversation is handed to a person, for slots without x-slotd.max_attempts")
	fs.Int(&cfg.MaxOpenSessions, "max-open-sessions", "SLOTD_MAX_OPEN_SESSIONS", 8, "open sessions a conversation may hold, one per tool; past it the least recently used ends")
	fs.Duration(&cfg.Retention, "retention", "SLOTD_RETENTION", 30*24*time.Hour, "how long ended sessions and their history are kept; 0 keeps them")
	fs.Duration(&cfg.JanitorInterval, "janitor-interval", "SLOTD_JANITOR_INTERVAL", time.Minute, "how often expired sessions are ended and old ones purged; 0 turns it off")
	fs.Duration(&cfg.ShutdownTimeout, "shutdown-timeout", "SLOTD_SHUTDOWN_TIMEOUT", 15*time.Second, "how long in-flight calls may take to finish on SIGTERM or Ctrl-C")
	fs.String(&cfg.MetricsListen, "metrics-listen", "SLOTD_METRICS_LISTEN", "127.0.0.1:9464", "address of /metrics, /healthz and /readyz; empty serves none")
	fs.Bool(&cfg.Pprof, "pprof", "SLOTD_PPROF", false, "serve net/http/pprof under /debug/pprof/ on the metrics listener")
	fs.String(&cfg.TLS.Cert, "tls-cert", "SLOTD_TLS_CERT", "", "PEM certificate (chain) of every listener; with it they speak TLS 1.2+")
	fs.String(&cfg.TLS.Key, "tls-key", "SLOTD_TLS_KEY", "", "PEM private key of --tls-cert")
	fs.String(&cfg.TLS.ClientCA, "tls-client-ca", "SLOTD_TLS_CLIENT_CA", "", "PEM CA certificates; clients must present a certificate one of them signed (mutual TLS)")
	fs.Bool(&cfg.AllowPlaintext, "allow-plaintext", "SLOTD_ALLOW_PLAINTEXT", false, "allow plaintext listeners beyond loopback, when TLS ends in front of slotd")
	clientClock := "window"
	fs.String(&clientClock, "client-clock", "SLOTD_CLIENT_CLOCK", "window", "window: a turn's now must be within 5m of the server's clock; trust: any now (replays, scripts, tests)")
	return func() error {
		cfg.DisableMCP = !mcpOn
		if err := oneOf("client-clock", clientClock, []string{"window", "trust"}); err != nil {
			return err
		}
		cfg.TrustClientClock = clientClock == "trust"
		if err := oneOf("store", cfg.Store, []string{"postgres", "memory"}); err != nil {
			return err
		}
		var err error
		if cfg.MemoryLimit, err = parseMemoryLimit(memoryLimit, os.Getenv, machineMemory); err != nil {
			return err
		}
		for _, d := range []struct {
			name string
			v    int
		}{{"max-attempts", cfg.MaxAttempts}, {"max-open-sessions", cfg.MaxOpenSessions},
			{"http-max-unauth-conns", cfg.HTTPMaxUnauthConns}, {"http-max-unauth-conns-per-source", cfg.HTTPMaxUnauthConnsPerSource}} {
			if d.v < 1 {
				return usagef("--%s must be at least 1", d.name)
			}
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
