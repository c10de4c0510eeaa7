package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotd/slotd/migrations"
)

func migrate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	url := fs.String("database-url", env("SLOTD_DATABASE_URL", ""), "Postgres connection string (SLOTD_DATABASE_URL)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url == "" {
		return errors.New("SLOTD_DATABASE_URL is required")
	}
	pool, err := pgxpool.New(ctx, *url)
	if err != nil {
		return errors.New("SLOTD_DATABASE_URL is not a valid Postgres connection string")
	}
	defer pool.Close()
	v, err := migrations.Up(ctx, pool)
	if err != nil {
		return err
	}
	slog.Info("schema migrated", "version", v)
	return nil
}
