package bench

import (
	"context"
	"testing"

	"github.com/slotd/slotd/internal/dbtest"
)

// TestDirectSideRunsInSlotdsSessions: the direct side's connections carry
// the settings slotd's own carry (timeouts Postgres arms and disarms as
// statements run and a transaction idles), so that the two sides' database
// work differs in nothing but who sends it.
func TestDirectSideRunsInSlotdsSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ds, err := openDirect(ctx, Config{}, dbtest.NewDatabase(t), "", &Report{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.pool.Close()
	for setting, want := range map[string]string{
		"statement_timeout": "5s", "lock_timeout": "3s", "idle_in_transaction_session_timeout": "15s",
	} {
		var got string
		if err := ds.pool.QueryRow(ctx, "SELECT current_setting($1)", setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("the direct side's %s = %s, want slotd's %s", setting, got, want)
		}
	}
}
