package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/slotd/slotd/internal/mcp"
	"github.com/slotd/slotd/internal/server"
	"github.com/slotd/slotd/internal/tracing"
)

var serveCommand = &command{
	name:    "serve",
	summary: "run the gRPC server, the HTTP/JSON gateway with /mcp and the console, and /metrics",
	about: `Runs slotd: gRPC on --listen, the HTTP/JSON gateway, MCP (/mcp) and the
ops console (/console/, signed in with an admin key) on --http-listen, /metrics, /healthz and /readyz on --metrics-listen. It applies
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
			tp, err := tracing.FromEnv(ctx)
			if err != nil {
				return fmt.Errorf("tracing (OTEL_* environment): %w", err)
			}
			if tp != nil {
				// The exporter's failures (a collector down) in slotd's log,
				// not the SDK's own plain lines.
				otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { slog.Warn("tracing failed", "err", err.Error()) }))
				cfg.Tracer = tp
				defer shutdownTracing(tp)
			}
			srv, err := server.New(cfg, slog.Default())
			if err != nil {
				return listenError(err, cfg)
			}
			if err := srv.Run(ctx); err != nil {
				slog.Error("slotd serve failed", "err", err.Error())
				return errLogged
			}
			return nil
		}
	},
}

// shutdownTracing sends the spans the provider still holds, for at most a
// few seconds.
func shutdownTracing(tp *sdktrace.TracerProvider) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		slog.Warn("tracing: spans not sent at shutdown", "err", err.Error())
	}
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
	consoleOn := true
	fs.Bool(&consoleOn, "console", "SLOTD_CONSOLE", true, "serve the ops console at /console/ on the HTTP listener (sign-in with an admin key); --console=false turns it off")
	fs.Int(&cfg.MCP.MaxSessions, "mcp-max-sessions", "SLOTD_MCP_MAX_SESSIONS", mcp.DefaultMaxSessions, "MCP sessions held at once, of all tenants; past it a new one gets 503")
	fs.Int(&cfg.MCP.MaxTenantSessions, "mcp-max-tenant-sessions", "SLOTD_MCP_MAX_TENANT_SESSIONS", mcp.DefaultMaxTenantSessions, "MCP sessions of one tenant; past it the tenant's least recently used idle one closes, or a new one gets 429 when none is idle")
	fs.Duration(&cfg.MCP.SessionIdle, "mcp-session-idle", "SLOTD_MCP_SESSION_IDLE", mcp.DefaultSessionIdle, "idle time after which an MCP session closes")
	fs.Int(&cfg.MCP.MaxTenantForms, "mcp-max-tenant-forms", "SLOTD_MCP_MAX_TENANT_FORMS", mcp.DefaultMaxTenantForms, "MCP tool calls of one tenant waiting on a form; past it a call hands its question to the model")
	fs.Int(&cfg.MCP.MaxSessionForms, "mcp-max-session-forms", "SLOTD_MCP_MAX_SESSION_FORMS", mcp.DefaultMaxSessionForms, "MCP tool calls of one session waiting on a form; past it a call hands its question to the model")
	fs.Duration(&cfg.MCP.FormTimeout, "mcp-form-timeout", "SLOTD_MCP_FORM_TIMEOUT", mcp.DefaultFormTimeout, "time a user has to answer one MCP form")
	fs.String(&cfg.Contracts, "contracts", "SLOTD_CONTRACTS", "./contracts", "folder of contract files (*.json)")
	fs.String(&cfg.Store, "store", "SLOTD_STORE", "postgres", "postgres, or memory for a demo that keeps nothing")
	fs.String(&cfg.DatabaseURL, "database-url", "SLOTD_DATABASE_URL", "", "Postgres connection string, e.g. postgres://user@127.0.0.1:5432/slotd")
	fs.Bool(&cfg.CreateDatabase, "create-database", "SLOTD_CREATE_DATABASE", false, "create the database of --database-url when the server does not have it (the role needs CREATEDB); without it slotd stops and says how to create it")
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
	fs.Int(&cfg.Limits.MaxInFlight, "max-inflight", "SLOTD_MAX_INFLIGHT", 256, "SlotService calls in flight at once; more are refused with RESOURCE_EXHAUSTED and a retry advice")
	fs.Int(&cfg.Limits.TenantMaxInFlight, "tenant-max-inflight", "SLOTD_TENANT_MAX_INFLIGHT", 0, "one tenant's share of --max-inflight; its calls past it are refused while other tenants' are served; 0 divides --max-inflight evenly among the tenants of --api-keys")
	fs.String(&cfg.TenantLimits, "tenant-limits", "SLOTD_TENANT_LIMITS", "", "tenants whose share is not --tenant-max-inflight, tenant:n,tenant:n")
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
		cfg.DisableConsole = !consoleOn
		if err := oneOf("client-clock", clientClock, []string{"window", "trust"}); err != nil {
			return err
		}
		cfg.TrustClientClock = clientClock == "trust"
		if err := oneOf("store", cfg.Store, []string{"postgres", "memory"}); err != nil {
			return err
		}
		if cfg.Store == "postgres" && cfg.DatabaseURL == "" {
			// As slotd migrate says it: a command given wrongly, exit 2.
			return usagef("--database-url or SLOTD_DATABASE_URL is required with the postgres store (or --store memory for a demo that keeps nothing)")
		}
		var err error
		if cfg.MemoryLimit, err = parseMemoryLimit(memoryLimit, os.Getenv, machineMemory); err != nil {
			return err
		}
		for _, d := range []struct {
			name string
			v    int
		}{{"max-attempts", cfg.MaxAttempts}, {"max-open-sessions", cfg.MaxOpenSessions}, {"max-inflight", cfg.Limits.MaxInFlight},
			{"mcp-max-sessions", cfg.MCP.MaxSessions}, {"mcp-max-tenant-sessions", cfg.MCP.MaxTenantSessions},
			{"mcp-max-tenant-forms", cfg.MCP.MaxTenantForms}, {"mcp-max-session-forms", cfg.MCP.MaxSessionForms},
			{"http-max-unauth-conns", cfg.HTTPMaxUnauthConns}, {"http-max-unauth-conns-per-source", cfg.HTTPMaxUnauthConnsPerSource}} {
			if d.v < 1 {
				return usagef("--%s must be at least 1", d.name)
			}
		}
		for _, d := range []struct {
			name string
			v    time.Duration
		}{{"mcp-session-idle", cfg.MCP.SessionIdle}, {"mcp-form-timeout", cfg.MCP.FormTimeout}} {
			if d.v <= 0 {
				return usagef("--%s must be more than 0", d.name)
			}
		}
		if cfg.Limits.TenantMaxInFlight < 0 {
			return usagef("--tenant-max-inflight must be at least 0")
		}
		return nil
	}
}

// listenError names the flag and the variable of an address slotd could
// not listen on, which a bare "bind: address already in use" does not.
func listenError(err error, cfg server.Config) error {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "listen" || op.Addr == nil {
		return err
	}
	for _, l := range []struct{ flag, env, addr string }{
		{"--listen", "SLOTD_LISTEN", cfg.Listen},
		{"--http-listen", "SLOTD_HTTP_LISTEN", cfg.HTTPListen},
		{"--metrics-listen", "SLOTD_METRICS_LISTEN", cfg.MetricsListen},
	} {
		if l.addr != "" && sameAddr(l.addr, op.Addr.String()) {
			return fmt.Errorf("cannot listen on %s (%s or %s): %v; choose another address or stop what holds it",
				l.addr, l.flag, l.env, op.Err)
		}
	}
	return err
}

// sameAddr tells whether a configured address is the one a listener
// failed on; a port 0 or a name matches on the port alone.
func sameAddr(configured, failed string) bool {
	if configured == failed {
		return true
	}
	_, p1, err1 := net.SplitHostPort(configured)
	_, p2, err2 := net.SplitHostPort(failed)
	return err1 == nil && err2 == nil && p1 == p2 && p1 != "0"
}

// tuneGC makes the collector run a quarter as often as Go's default, unless
// GOGC says otherwise: every turn allocates, and at GOGC=100 the collector
// takes a sizeable share of slotd's CPU under load. It trades a few
// megabytes of RSS for less CPU per turn; `slotd bench` with GOGC=100 in
// slotd's environment shows both sides (CPU per turn and RSS).
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}
