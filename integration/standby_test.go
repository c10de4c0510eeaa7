package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/testkit/dbtest"
)

// TestServeWaitsForAStandbyToHaveTheDatabase starts slotd on a URL whose
// first host is a standby that has not replayed its database's creation
// yet, as after `CREATE DATABASE` on a running cluster (a synchronous
// commit waits for the standby's write, not its replay). The standby
// answers 3D000, and pgx tries no further host after that. slotd must not
// take it for a missing database and exit: the primary has it. It waits,
// and serves once the standby has caught up.
func TestServeWaitsForAStandbyToHaveTheDatabase(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	t.Cleanup(cancel)
	primary := startCluster(t, "wal_level=replica", "max_wal_senders=4", "max_replication_slots=4")
	standby := primary.startStandby(t, standbyName)
	replica := dbtest.Connect(t, standby.url())
	if _, err := replica.Exec(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	admin := dbtest.Connect(t, primary.url())
	if _, err := admin.Exec(ctx, "CREATE DATABASE slotd"); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/slotd?sslmode=disable&target_session_attrs=read-write",
		standby.port, primary.port)
	resumed := make(chan error, 1)
	go func() {
		time.Sleep(3 * time.Second)
		_, err := replica.Exec(ctx, "SELECT pg_wal_replay_resume()")
		resumed <- err
	}()
	inst := startServer(t, url, contractsDir(t))
	if err := <-resumed; err != nil {
		t.Fatal(err)
	}
	if _, ok := landTurn(t, func() slotdv1.SlotServiceClient { return inst.client }, manySlotsTurn(t, "standby-lags", 1),
		time.Now().Add(20*time.Second), nil); !ok {
		t.Fatal("no turn landed")
	}
}
