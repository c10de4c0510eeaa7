package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotd/slotd/migrations"
)

// databaseFlag is --database-url of a command that reads or changes the
// database itself.
func databaseFlag(fs *flags, url *string) {
	fs.String(url, "database-url", "SLOTD_DATABASE_URL", "", "Postgres connection string, e.g. postgres://user@127.0.0.1:5432/slotd")
}

// openDatabase is a pool on --database-url; a missing or malformed URL is a
// usage error that never echoes the URL (it may hold a password).
func openDatabase(ctx context.Context, url string) (*pgxpool.Pool, error) {
	if url == "" {
		return nil, usagef("--database-url or SLOTD_DATABASE_URL is required")
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, usagef("--database-url is not a valid Postgres connection string")
	}
	return pool, nil
}

var migrateCommand = &command{
	name:    "migrate",
	summary: "apply the database schema and exit",
	about: `Applies the embedded SQL migrations to the database at --database-url and
prints the schema's version. slotd serve does the same at start, under an
advisory lock, so replicas may start together.`,
	setup: func(fs *flags) runFunc {
		var url string
		databaseFlag(fs, &url)
		return func(ctx context.Context, c *cli, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			pool, err := openDatabase(ctx, url)
			if err != nil {
				return err
			}
			defer pool.Close()
			v, err := migrations.Up(ctx, pool)
			if err != nil {
				return fmt.Errorf("cannot migrate: %w", err)
			}
			_, err = fmt.Fprintf(c.stdout, "schema at version %d\n", v)
			return err
		}
	},
}
