package bench

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/session/pgstore"
	"github.com/slotd/slotd/internal/testkit/dbtest"
)

// TestDirectSideRunsInSlotdsSessions: the direct side's transactions carry
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
	pool, err := pgxpool.NewWithConfig(ctx, slotds)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	settings := func(p *pgxpool.Pool) map[string]string {
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		return pgstore.Settings(c.Conn())
	}
	want, got := settings(pool), settings(ds.pool)
	for _, setting := range pgstore.TxSettings {
		if want[setting] == "" {
			t.Fatalf("slotd's transactions set no %s", setting)
		}
		if got[setting] != want[setting] {
			t.Errorf("the direct side's %s = %q, want slotd's %q", setting, got[setting], want[setting])
		}
	}
}
