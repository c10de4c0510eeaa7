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

	"github.com/slotd/slotd/internal/app/server"
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
		var sc serveConfig
		parse := serveFlags(fs, &sc)
		var printConfig bool
		fs.Bool(&printConfig, "print-config", "SLOTD_PRINT_CONFIG", false, "print the effective settings (flags, environment, defaults; secrets redacted) and exit without serving")
		return func(ctx context.Context, c *cli, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			if err := parse(); err != nil {
				return err
			}
			if printConfig {
				sc.printConfig(c.stdout)
				return nil
			}
			cfg := sc.Config
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

// serveFlags declares serve's flags (serveSettings), filling c; finish
// checks what the flags cannot. Secrets (the database URL, keys) have no
// default, so that --help never prints one: their variables are read like
// any other twin, without becoming the flag's default.
func serveFlags(fs *flags, c *serveConfig) (finish func() error) {
	declareServe(fs, c)
	return func() error { return c.finish(os.Getenv, machineMemory) }
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
