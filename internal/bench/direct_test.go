package bench

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotd/slotd/internal/dbtest"
	"github.com/slotd/slotd/internal/server"
)

// TestDirectSideRunsInSlotdsSessions: the direct side's connections carry
// the settings slotd's own carry (timeouts Postgres arms and disarms as
// statements run and a transaction idles), so that the two sides' database
// work differs in nothing but who sends it.
func TestDirectSideRunsInSlotdsSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.NewDatabase(t)
	ds, err := openDirect(ctx, Config{}, url, "", &Report{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.pool.Close()
	slotds, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	server.ConfigurePool(slotds)
	for _, setting := range []string{"statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout"} {
		want, ok := slotds.ConnConfig.RuntimeParams[setting]
		if !ok {
			t.Fatalf("slotd's pool sets no %s", setting)
		}
		var got string
		if err := ds.pool.QueryRow(ctx, "SELECT current_setting($1)", setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("the direct side's %s = %s, want slotd's %s", setting, got, want)
		}
	}
}
