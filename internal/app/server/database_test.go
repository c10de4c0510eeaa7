package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"

	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/testkit/dbtest"
)

// missingDatabaseURL names a database the test server does not have, and
// drops it when the test ends in case slotd created it.
func missingDatabaseURL(t *testing.T) (string, string) {
	t.Helper()
	name := dbtest.NewName(t)
	u, err := url.Parse(dbtest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), dbtest.AdminURL())
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		_, _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
	return u.String(), name
}

// A database the server does not have stops slotd with what to do, at
// once, rather than a retry loop no retry can end.
func TestMissingDatabaseStopsSlotd(t *testing.T) {
	t.Parallel()
	dbURL, name := missingDatabaseURL(t)
	srv, err := server.New(server.Config{Listen: "127.0.0.1:0", Contracts: testContracts(t), Store: "postgres",
		DatabaseURL: dbURL, HealthInterval: 100 * time.Millisecond}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = srv.Run(ctx)
	if err == nil || ctx.Err() != nil {
		t.Fatalf("Run on a missing database = %v (context %v); want it to stop by itself with an error", err, ctx.Err())
	}
	for _, want := range []string{`database "` + name + `" does not exist`, "createdb " + name, "--create-database"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// With CreateDatabase slotd creates it, migrates it and serves.
func TestCreateDatabase(t *testing.T) {
	t.Parallel()
	dbURL, _ := missingDatabaseURL(t)
	inst := start(t, dbURL, nil, func(c *server.Config) { c.CreateDatabase = true })
	inst.convo(t, "created", "bank.open_dispute").send(`{"card_last4": "•• 4417"}`, slotdv1.Action_ACTION_ASK)
}
