package pgstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/sessiontest"
	"github.com/slotd/slotd/internal/testkit/dbtest"
)

// The race of the janitor with a turn: the turn's insert finds the
// conversation's row (left without a session by a purge), the janitor
// locks and deletes it before the turn's lock, which then locks nothing.
// The turn must make the row again and hold it, not go on unlocked: after
// it the conversation has its row and the turn's session.
func TestTurnMakesAgainTheRowAPurgeDeleted(t *testing.T) {
	t.Parallel()
	for name, newPool := range dbtest.Schemas {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pool, _ := newPool(t)
			ctx := t.Context()
			key := session.Key{Tenant: "acme-bank", ConversationID: "conv-emptied"}
			if _, err := pool.Exec(ctx, ensureConversation, key.Tenant, key.ConversationID); err != nil {
				t.Fatal(err)
			}
			janitor, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = janitor.Rollback(ctx) })
			keys := func() ([]string, []string) { return []string{key.Tenant}, []string{key.ConversationID} }
			tenants, convs := keys()
			tag, err := janitor.Exec(ctx, lockEmptied, tenants, convs)
			if err != nil || tag.RowsAffected() != 1 {
				t.Fatalf("the janitor's lock = %v, %v; want the row", tag, err)
			}
			e := sessiontest.NewEngine(New(pool), sessiontest.Catalog(t))
			turned := make(chan error, 1)
			go func() {
				_, err := e.Turn(ctx, session.TurnRequest{Tenant: key.Tenant, ConversationID: key.ConversationID,
					Tool: sessiontest.Flights, TurnID: "turn-1", Arguments: map[string]any{"from": "mad"}, Now: sessiontest.Now})
				turned <- err
			}()
			// The turn's insert found the row and its lock waits for the janitor.
			awaitLockWait(t, pool, turned, "the turn")
			if tag, err := janitor.Exec(ctx, deleteEmptied, tenants, convs); err != nil || tag.RowsAffected() != 1 {
				t.Fatalf("the janitor's delete = %v, %v; want the row", tag, err)
			}
			if err := janitor.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-turned; err != nil {
				t.Fatalf("the turn: %v", err)
			}
			var rows, sessions int
			if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM conversations WHERE tenant = $1 AND conversation_id = $2),
				(SELECT count(*) FROM sessions WHERE tenant = $1 AND conversation_id = $2)`, key.Tenant, key.ConversationID).Scan(&rows, &sessions); err != nil {
				t.Fatal(err)
			}
			if rows != 1 || sessions != 1 {
				t.Errorf("after the race: %d conversation rows and %d sessions; want 1 and 1 (the turn locked its row)", rows, sessions)
			}
		})
	}
}

// A purge deletes the row of a conversation it left without a session, and
// keeps that of one that still has one.
func TestPurgeDeletesEmptiedConversations(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.NewPool(t)
	ctx := t.Context()
	e := sessiontest.NewEngine(New(pool), sessiontest.Catalog(t))
	for i, conv := range []string{"conv-emptied", "conv-kept", "conv-kept"} {
		tool := sessiontest.Flights
		if i == 2 {
			tool = sessiontest.Dispute
		}
		if _, err := e.Turn(ctx, session.TurnRequest{Tenant: "acme-bank", ConversationID: conv, Tool: tool,
			TurnID: fmt.Sprint("turn-", i), Arguments: map[string]any{"from": "mad"}, Now: sessiontest.Now}); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			if _, _, err := e.Reset(ctx, session.Lookup{Tenant: "acme-bank", ConversationID: conv, Tool: tool}, sessiontest.Now); err != nil {
				t.Fatal(err)
			}
		}
	}
	ids, err := e.Purge(ctx, session.Filter{AnyTenant: true, EndedBefore: sessiontest.Now.Add(time.Hour)}, false)
	if err != nil || len(ids) != 2 {
		t.Fatalf("Purge = %v, %v; want the two ended sessions", ids, err)
	}
	rows, err := pool.Query(ctx, `SELECT conversation_id FROM conversations ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	left, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(left) != 1 || left[0] != "conv-kept" {
		t.Errorf("conversations after the purge = %v, %v; want only conv-kept, which has a session left", left, err)
	}
}

// An erasure and the janitor's purge take their locks in one order: the
// sessions, then their history. With a purge holding a session of the
// conversation (its statement then deletes the history by cascade), the
// erasure waits at the sessions and has locked none of the history yet;
// else the two would deadlock, each waiting for rows the other holds.
func TestEraseLocksSessionsBeforeTheirHistory(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.NewPool(t)
	ctx := t.Context()
	st, _, key := withSession(t, pool, "conv-erased-while-purged")
	janitor, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = janitor.Rollback(ctx) })
	if _, err := janitor.Exec(ctx, `SELECT 1 FROM sessions WHERE tenant = $1 AND conversation_id = $2 FOR UPDATE`,
		key.Tenant, key.ConversationID); err != nil {
		t.Fatal(err)
	}
	erased := make(chan error, 1)
	go func() {
		_, err := st.Erase(ctx, key, session.Erasure{Tenant: key.Tenant, ConversationHash: session.ConversationHash(key),
			At: sessiontest.Now, By: "ops-oncall"})
		erased <- err
	}()
	awaitLockWait(t, pool, erased, "the erasure")
	probe, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"turns", "slot_changes"} {
		if _, err := probe.Exec(ctx, fmt.Sprintf(`SELECT 1 FROM %s WHERE tenant = $1 AND conversation_id = $2 FOR UPDATE NOWAIT`, table),
			key.Tenant, key.ConversationID); err != nil {
			t.Errorf("%s: %v; want none of the history locked while the erasure waits for the sessions", table, err)
			break
		}
	}
	_ = probe.Rollback(ctx)
	if err := janitor.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-erased; err != nil {
		t.Fatalf("the erasure: %v", err)
	}
}

// withSession is a store over pool, an engine over it, and the key of a
// conversation whose first turn opened a session.
func withSession(t *testing.T, pool *pgxpool.Pool, conv string) (*Store, *session.Engine, session.Key) {
	t.Helper()
	st := New(pool)
	e := sessiontest.NewEngine(st, sessiontest.Catalog(t))
	key := session.Key{Tenant: "acme-bank", ConversationID: conv}
	if _, err := e.Turn(t.Context(), session.TurnRequest{Tenant: key.Tenant, ConversationID: key.ConversationID,
		Tool: sessiontest.Flights, TurnID: "turn-1", Arguments: map[string]any{"from": "mad"}, Now: sessiontest.Now}); err != nil {
		t.Fatal(err)
	}
	return st, e, key
}

// awaitLockWait returns once a backend of the test's database waits for a
// lock, and fails the test if what (whose end done reports) ends first.
func awaitLockWait(t *testing.T, pool *pgxpool.Pool, done <-chan error, what string) {
	t.Helper()
	for waiting := 0; waiting == 0; {
		if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("%s ended (%v) without waiting for the lock held", what, err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// The purge skips the ended sessions of a conversation a turn holds: the
// turn may have read one (to say it ended) and write it back, which would
// bring back a row the purge deleted. Once the turn is over, they go.
func TestPurgeSkipsAConversationATurnHolds(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.NewPool(t)
	ctx := t.Context()
	st, e, key := withSession(t, pool, "conv-purged-while-held")
	if _, _, err := e.Reset(ctx, session.Lookup{Tenant: key.Tenant, ConversationID: key.ConversationID}, sessiontest.Now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	turn, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = turn.Rollback(ctx) })
	if _, err := turn.Exec(ctx, lockConversation, key.Tenant, key.ConversationID); err != nil {
		t.Fatal(err)
	}
	f := session.Filter{AnyTenant: true, EndedBefore: sessiontest.Now.Add(time.Hour)}
	if ids, err := st.Purge(ctx, f, false); err != nil || len(ids) != 0 {
		t.Fatalf("purge while a turn holds the conversation = %v, %v; want nothing purged", ids, err)
	}
	if err := turn.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if ids, err := st.Purge(ctx, f, false); err != nil || len(ids) != 1 {
		t.Fatalf("purge after the turn = %v, %v; want the ended session", ids, err)
	}
}
