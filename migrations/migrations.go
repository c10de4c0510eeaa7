// Package migrations holds slotd's schema as embedded SQL files, applied in
// order by goose, each in its own transaction, under a Postgres advisory lock
// so that several replicas can start together. Released files are never
// edited; a change is a new file.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed *.sql
var files embed.FS

// VersionTable is the table that records which migrations were applied.
const VersionTable = "slotd_schema_version"

// Files are the embedded migration files.
func Files() fs.FS { return files }

// Up applies every migration not applied yet and returns the schema version.
// A schema already at the latest version is left alone without taking the
// advisory lock: a session lock means nothing behind a transaction-mode
// pooler (the unlock may reach another server connection than the lock),
// and every replica's start but the first finds the schema migrated.
func Up(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	if v, err := Current(ctx, pool); err == nil && v == Latest() {
		return v, nil
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	return up(ctx, db)
}

func up(ctx context.Context, db *sql.DB) (int64, error) {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, files,
		goose.WithSessionLocker(locker),
		goose.WithTableName(VersionTable),
	)
	if err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	return v, nil
}

// Latest is the version the embedded files bring the schema to: the number
// that prefixes the last file's name.
func Latest() int64 {
	entries, _ := files.ReadDir(".")
	var latest int64
	for _, e := range entries {
		var v int64
		if _, err := fmt.Sscanf(e.Name(), "%d_", &v); err == nil && v > latest {
			latest = v
		}
	}
	return latest
}

// Current reads the schema version applied to the database, 0 when none.
func Current(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	var v int64
	err := pool.QueryRow(ctx, `SELECT coalesce(max(version_id), 0) FROM slotd_schema_version WHERE is_applied`).Scan(&v)
	return v, err
}
