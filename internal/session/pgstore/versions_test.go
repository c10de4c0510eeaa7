package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/pgstore"
	"github.com/slotd/slotd/internal/session/sessiontest"
	"github.com/slotd/slotd/internal/testkit/dbtest"
)

// Two replicas on one database, one with the dispute example and one with
// its v2 (migrate): the versions both loaded are in contract_versions, a
// session moves to v2 once, and the history keeps the move with both
// versions named.
func TestContractVersionsAcrossReplicas(t *testing.T) {
	t.Parallel()
	for schema, newPool := range dbtest.Schemas {
		t.Run(schema, func(t *testing.T) {
			t.Parallel()
			pool, url := newPool(t)
			ctx := t.Context()
			cat1, cat2 := sessiontest.Catalog(t), sessiontest.DisputeV2(t, "migrate")
			stA, stB := pgstore.New(pool), pgstore.New(dbtest.Connect(t, url))
			a, b := sessiontest.NewEngine(stA, cat1), sessiontest.NewEngine(stB, cat2)
			va, vb := session.NewVersions(stA, cat1), session.NewVersions(stB, cat2)
			if _, err := va.Register(ctx, "replica-a", sessiontest.Now.Add(-time.Hour)); err != nil {
				t.Fatal(err)
			}
			if _, err := vb.Register(ctx, "replica-b", sessiontest.Now); err != nil {
				t.Fatal(err)
			}
			// A's restart keeps the first sighting.
			again, err := va.Register(ctx, "replica-a2", sessiontest.Now.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range again {
				if !v.FirstSeen.Equal(sessiontest.Now.Add(-time.Hour)) || v.Replica != "replica-a" || v.LastReplica != "replica-a2" {
					t.Errorf("%s %s re-registered: first %s by %s, last by %s", v.Tool, v.Version, v.FirstSeen, v.Replica, v.LastReplica)
				}
			}
			a.UseVersions(va)
			b.UseVersions(vb)
			ver1, ver2 := cat1.Get("bank.open_dispute").Version, cat2.Get("bank.open_dispute").Version
			req := func(id string, args map[string]any) session.TurnRequest {
				return session.TurnRequest{Tenant: "bank", ConversationID: "conv-v", Tool: "bank.open_dispute", TurnID: id,
					Arguments: args, Now: sessiontest.Now, Locale: "en"}
			}
			r, err := a.Turn(ctx, req("1", map[string]any{"card_last4": "4417", "reason": "wrong_amount", "original_operation_id": "OP-1"}))
			if err != nil || r.Session.ContractVersion != ver1 {
				t.Fatalf("first turn: %v, %+v", err, r)
			}
			r, err = b.Turn(ctx, req("2", map[string]any{"amount": "10"}))
			if err != nil || r.Migration == nil || r.Session.ContractVersion != ver2 {
				t.Fatalf("second turn: %v, %+v", err, r)
			}
			r, err = a.Turn(ctx, req("3", map[string]any{"reason": "fraud"}))
			if err != nil || r.Migration != nil || r.Session.ContractVersion != ver2 || r.Action != clarify.Ask {
				t.Fatalf("third turn on the v1 replica: %v, %+v", err, r)
			}
			got, err := stA.Session(ctx, session.Lookup{Tenant: "bank", SessionID: r.Session.ID})
			if err != nil || got.ContractVersion != ver2 {
				t.Fatalf("stored session on %q (%v)", got.ContractVersion, err)
			}
			h, err := stA.History(ctx, session.Lookup{Tenant: "bank", SessionID: r.Session.ID})
			if err != nil {
				t.Fatal(err)
			}
			var versions []string
			for _, tr := range h.Turns {
				versions = append(versions, tr.ContractVersion)
			}
			if strings.Join(versions, " ") != ver1+" "+ver2+" "+ver2 {
				t.Errorf("turns ran on %v", versions)
			}
			notes := 0
			for _, ch := range h.Changes {
				if ch.Note != "" {
					notes++
					if !strings.Contains(ch.Note, ver1+" -> "+ver2) {
						t.Errorf("note %q", ch.Note)
					}
				}
			}
			if notes != 3 { // card kept, reason refused, original_operation_id dropped
				t.Errorf("%d changes of the move, want 3", notes)
			}
			vs, err := stA.ContractVersions(ctx, "bank.open_dispute")
			if err != nil || len(vs) != 2 || vs[0].Version != ver1 || vs[0].Active != 0 || vs[1].Version != ver2 || vs[1].Active != 1 {
				t.Errorf("versions %+v (%v)", vs, err)
			}
			if _, err := stA.ContractVersion(ctx, "bank.open_dispute", "0123456789abcdef"); !errors.Is(err, session.ErrNotFound) {
				t.Errorf("an unknown version: %v", err)
			}
			// Purged: a replica that never served v2 refuses the session
			// with a problem, never a guess.
			if _, err := pool.Exec(context.Background(), `DELETE FROM contract_versions WHERE version = $1`, ver2); err != nil {
				t.Fatal(err)
			}
			c := sessiontest.NewEngine(pgstore.New(pool), cat1)
			c.UseVersions(session.NewVersions(pgstore.New(pool), cat1))
			if _, err := c.Turn(ctx, req("4", map[string]any{"amount": "11"})); err == nil || !strings.Contains(err.Error(), "version is gone") {
				t.Errorf("a purged version: %v", err)
			}
		})
	}
}

// A replica's first turns on sessions of a version it has not loaded read
// that version from the store outside their unit of work: read inside it,
// each turn would hold a connection while it waits for another, and a
// burst as large as the pool (here a pool of one) would wait until its
// deadline. Pinned and migrating sessions alike, several at once.
func TestUnloadedVersionIsReadOutsideTheTurn(t *testing.T) {
	t.Parallel()
	for _, upgrade := range []string{"pin", "migrate"} {
		t.Run(upgrade, func(t *testing.T) {
			t.Parallel()
			pool, url := dbtest.NewPool(t)
			cfg, err := pgxpool.ParseConfig(url)
			if err != nil {
				t.Fatal(err)
			}
			cfg.MaxConns = 1
			one, err := pgxpool.NewWithConfig(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(one.Close)
			cat1, cat2 := sessiontest.Catalog(t), sessiontest.DisputeV2(t, upgrade)
			stA, stB := pgstore.New(pool), pgstore.New(one)
			a, b := sessiontest.NewEngine(stA, cat1), sessiontest.NewEngine(stB, cat2)
			va, vb := session.NewVersions(stA, cat1), session.NewVersions(stB, cat2)
			if _, err := va.Register(t.Context(), "replica-a", sessiontest.Now.Add(-time.Hour)); err != nil {
				t.Fatal(err)
			}
			if _, err := vb.Register(t.Context(), "replica-b", sessiontest.Now); err != nil {
				t.Fatal(err)
			}
			a.UseVersions(va)
			b.UseVersions(vb)
			ver1, ver2 := cat1.Get("bank.open_dispute").Version, cat2.Get("bank.open_dispute").Version
			want := map[string]string{"pin": ver1, "migrate": ver2}[upgrade]
			req := func(conv, id string, args map[string]any) session.TurnRequest {
				return session.TurnRequest{Tenant: "bank", ConversationID: conv, Tool: "bank.open_dispute", TurnID: id,
					Arguments: args, Now: sessiontest.Now, Locale: "en"}
			}
			const n = 4
			for i := range n {
				if _, err := a.Turn(t.Context(), req(fmt.Sprintf("c%d", i), "1", map[string]any{"card_last4": "4417"})); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			errs := make(chan error, n)
			for i := range n {
				go func() {
					r, err := b.Turn(ctx, req(fmt.Sprintf("c%d", i), "2", map[string]any{"amount": "1 200,50"}))
					if err == nil && r.Session.ContractVersion != want {
						err = fmt.Errorf("c%d goes on on version %s, want %s", i, r.Session.ContractVersion, want)
					}
					errs <- err
				}()
			}
			for range n {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
		})
	}
}
