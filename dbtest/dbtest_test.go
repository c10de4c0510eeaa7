package dbtest

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestNewDatabaseIsItsOwn(t *testing.T) {
	t.Parallel()
	a, b := NewDatabase(t), NewDatabase(t)
	if a == b {
		t.Fatalf("two tests got the same database %s", a)
	}
	for _, u := range []string{a, b} {
		conn, err := pgx.Connect(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		var name string
		if err := conn.QueryRow(context.Background(), "select current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		conn.Close(context.Background())
		if !strings.HasPrefix(name, "slotd_test_") || !strings.Contains(u, name) {
			t.Errorf("connected to %q through %s, want a fresh slotd_test_ database", name, u)
		}
	}
}

func TestWithDatabaseKeepsTheRest(t *testing.T) {
	t.Parallel()
	got, err := withDatabase("postgres://postgres@127.0.0.1:55432/postgres?sslmode=disable", "x1")
	if err != nil || got != "postgres://postgres@127.0.0.1:55432/x1?sslmode=disable" {
		t.Errorf("withDatabase = %q, %v", got, err)
	}
	if _, err := withDatabase("host=localhost dbname=postgres", "x"); err == nil {
		t.Error("a keyword/value string was accepted")
	}
}
