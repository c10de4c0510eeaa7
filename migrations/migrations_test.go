package migrations_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pressly/goose/v3/lock"

	"github.com/slotd/slotd/internal/testkit/dbtest"
	"github.com/slotd/slotd/migrations"
)

// A schema at the latest version is left alone without the advisory lock,
// which a transaction-mode pooler breaks: Up returns while another session
// holds the lock, as a replica's start behind PgBouncer must.
func TestUpAtLatestTakesNoLock(t *testing.T) {
	t.Parallel()
	url := dbtest.NewDatabase(t)
	holder, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Close(context.Background()) })
	if _, err := holder.Exec(t.Context(), "SELECT pg_advisory_lock($1)", lock.DefaultLockID); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	v, err := migrations.Up(ctx, dbtest.Connect(t, url))
	if err != nil || v != migrations.Latest() {
		t.Errorf("Up on a migrated database while another session holds the migration lock = %d, %v; want %d at once", v, err, migrations.Latest())
	}
}
