// Package dbtest gives each test a fresh, migrated Postgres database of its
// own, dropped when the test ends. It finds Postgres at
// SLOTD_TEST_DATABASE_URL, else at 127.0.0.1:5432; when neither answers the
// test fails saying so. It never skips.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotd/slotd/migrations"
)

// DefaultURL is where tests look for Postgres when SLOTD_TEST_DATABASE_URL
// is not set.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// AdminURL is the server tests create their databases on.
func AdminURL() string {
	if u := os.Getenv("SLOTD_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// NewDatabase creates an empty database and returns its URL; it is dropped
// when t ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		t.Fatalf("dbtest: Postgres is needed for this test and cannot be reached at %s: %v\n"+
			"Run the tests with `make test` (it finds or starts Postgres), or set SLOTD_TEST_DATABASE_URL.",
			redactURL(AdminURL()), err)
	}
	defer admin.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "slotd_test_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("dbtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		admin, err := pgx.Connect(ctx, AdminURL())
		if err != nil {
			t.Errorf("dbtest: drop database %s: %v", name, err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("dbtest: drop database %s: %v", name, err)
		}
	})
	u, err := withDatabase(AdminURL(), name)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	return u
}

// withDatabase returns the URL with its database replaced.
func withDatabase(raw, name string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("SLOTD_TEST_DATABASE_URL must be a postgres:// URL")
	}
	u.Path = "/" + name
	return u.String(), nil
}

// NewPool creates a fresh migrated database and a pool on it, both closed
// and dropped when t ends.
func NewPool(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	url := NewDatabase(t)
	pool := Connect(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := migrations.Up(ctx, pool); err != nil {
		t.Fatalf("dbtest: migrate: %v", err)
	}
	return pool, url
}

// Connect opens a pool on url, closed when t ends.
func Connect(t testing.TB, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func redactURL(u string) string {
	cfg, err := pgx.ParseConfig(u)
	if err != nil {
		return "(unparseable URL)"
	}
	return cfg.Host + ":" + strconv.Itoa(int(cfg.Port)) + "/" + cfg.Database
}
