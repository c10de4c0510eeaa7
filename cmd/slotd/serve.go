package main

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"time"

	"github.com/slotd/slotd/server"
)

// env returns the value of an SLOTD_* variable, or def.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func serve(ctx context.Context, args []string) error {
	var cfg server.Config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&cfg.Listen, "listen", env("SLOTD_LISTEN", "127.0.0.1:50051"), "gRPC address (SLOTD_LISTEN)")
	fs.StringVar(&cfg.Contracts, "contracts", env("SLOTD_CONTRACTS", "./contracts"), "folder of contract files (SLOTD_CONTRACTS)")
	fs.StringVar(&cfg.Store, "store", env("SLOTD_STORE", "postgres"), "postgres, or memory for a demo that keeps nothing (SLOTD_STORE)")
	fs.StringVar(&cfg.DatabaseURL, "database-url", env("SLOTD_DATABASE_URL", ""), "Postgres connection string (SLOTD_DATABASE_URL)")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long in-flight turns may take to finish on SIGTERM")
	if err := fs.Parse(args); err != nil {
		return err
	}
	srv, err := server.New(cfg, slog.Default())
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}
