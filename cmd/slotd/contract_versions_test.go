package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/pgstore"
	"github.com/slotd/slotd/internal/session/sessiontest"
	"github.com/slotd/slotd/internal/testkit/dbtest"
)

// Two replicas' versions of the dispute example, sessions on each: the
// list shows both, who loaded them, and the active sessions each holds.
func TestContractVersionsCommand(t *testing.T) {
	t.Parallel()
	pool, url := dbtest.NewPool(t)
	ctx := context.Background()
	st := pgstore.New(pool)
	cat1, cat2 := sessiontest.Catalog(t), sessiontest.DisputeV2(t, "pin")
	for i, cat := range []*struct {
		replica string
		at      time.Time
	}{{"replica-a", sessiontest.Now.Add(-time.Hour)}, {"replica-b", sessiontest.Now}} {
		c := cat1
		if i == 1 {
			c = cat2
		}
		v := session.NewVersions(st, c)
		if _, err := v.Register(ctx, cat.replica, cat.at); err != nil {
			t.Fatal(err)
		}
		e := sessiontest.NewEngine(st, c)
		e.UseVersions(v)
		for n := 0; n <= i; n++ {
			if _, err := e.Turn(ctx, session.TurnRequest{Tenant: "bank", ConversationID: cat.replica + string(rune('a'+n)),
				Tool: "bank.open_dispute", TurnID: "1", Now: sessiontest.Now}); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := runCLI(t, map[string]string{"SLOTD_DATABASE_URL": url}, "contract", "versions", "--tool", "bank.open_dispute", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rows []struct {
		Version string `json:"version"`
		Replica string `json:"replica"`
		Active  int64  `json:"active_sessions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	v1, v2 := cat1.Get("bank.open_dispute").Version, cat2.Get("bank.open_dispute").Version
	if len(rows) != 2 || rows[0].Version != v1 || rows[0].Active != 1 || rows[0].Replica != "replica-a" ||
		rows[1].Version != v2 || rows[1].Active != 2 || rows[1].Replica != "replica-b" {
		t.Errorf("versions %+v, want %s (1 active, replica-a) then %s (2 active, replica-b)", rows, v1, v2)
	}
	r = runCLI(t, map[string]string{"SLOTD_DATABASE_URL": url}, "contract", "versions")
	if r.code != 0 || !strings.Contains(r.stdout, "bank.check_balance") || !strings.Contains(r.stdout, v2) {
		t.Errorf("table (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}
}
