package server

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// errNoDatabase is a database the URL names and the server does not have.
type errNoDatabase struct{ name string }

func (e *errNoDatabase) Error() string {
	arg := e.name
	if !plainName.MatchString(arg) {
		arg = "'" + strings.ReplaceAll(arg, "'", `'\''`) + "'" // as a shell reads it
	}
	return fmt.Sprintf("database %q does not exist: create it with createdb %s or let slotd create it with --create-database (SLOTD_CREATE_DATABASE=true)",
		e.name, arg)
}

var plainName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// missingDatabase tells whether err is the server saying the URL's
// database does not exist, and which.
func missingDatabase(err error, cfg *pgx.ConnConfig) (string, bool) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.InvalidCatalogName {
		return cfg.Database, true
	}
	return "", false
}

// databaseExists tells whether the server that the URL's hosts and
// target_session_attrs lead to has the URL's database, asked in its
// maintenance database (postgres). A 3D000 can come from a host listed
// before it, such as a standby that has not replayed the database's
// creation yet, and pgx tries no further host after a 3D000: that is no
// missing database, only one to wait for. False when it cannot tell.
func databaseExists(ctx context.Context, cfg *pgx.ConnConfig) bool {
	if len(cfg.Fallbacks) == 0 {
		return false
	}
	admin := cfg.Copy()
	admin.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, admin)
	if err != nil {
		return false
	}
	defer conn.Close(context.Background())
	var exists bool
	err = conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, cfg.Database).Scan(&exists)
	return err == nil && exists
}

// createDatabase creates the URL's database, connecting as the URL's role
// to the server's maintenance database (postgres). A database created
// meanwhile by another replica is no error.
func createDatabase(ctx context.Context, cfg *pgx.ConnConfig) error {
	admin := cfg.Copy()
	admin.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, admin)
	if err != nil {
		return fmt.Errorf("create database %q: %s", cfg.Database, safeErr(err))
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{cfg.Database}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.DuplicateDatabase {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create database %q: %s", cfg.Database, safeErr(err))
	}
	return nil
}
