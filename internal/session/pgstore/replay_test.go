package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/pgstore"
	"github.com/slotd/slotd/internal/session/sessiontest"
	"github.com/slotd/slotd/internal/testkit/dbtest"
)

// The replay over a history in Postgres finds what it finds in memory,
// on both schemas; a conversation whose turns were purged, and one on a
// version no longer stored, are reported and the rest replayed.
func TestReplayOverStoredHistory(t *testing.T) {
	t.Parallel()
	for schema, newPool := range dbtest.Schemas {
		t.Run(schema, func(t *testing.T) {
			t.Parallel()
			pool, _ := newPool(t)
			ctx := t.Context()
			st := pgstore.New(pool)
			sessiontest.StoreHistory(t, st, "r", 10, 2)
			next := sessiontest.DisputeV2(t, "migrate")
			rep, err := session.NewReplayer(next, st, session.Config{}).Run(ctx, st, session.ReplayFilter{})
			if err != nil {
				t.Fatal(err)
			}
			s := rep.Summary
			if s.Conversations != 10 || s.Differ != 6 || s.ReadyLost != 4 || s.Masked != 4 || s.NewlyRefused != 2 || s.NotReplayed != 0 {
				t.Fatalf("summary %+v", s)
			}
			// The turns of one balance check go (a retention job gone
			// wrong), and the dispute example's version is no longer
			// stored (a version the next catalog holds is read from it).
			if _, err := pool.Exec(ctx, `DELETE FROM turns WHERE conversation_id = $1`, sessiontest.ReplayConversation("r", 4)); err != nil {
				t.Fatal(err)
			}
			if _, err := pool.Exec(ctx, `DELETE FROM contract_versions WHERE tool = 'bank.open_dispute'`); err != nil {
				t.Fatal(err)
			}
			rep, err = session.NewReplayer(next, st, session.Config{}).Run(ctx, st, session.ReplayFilter{Limit: 20})
			if err != nil {
				t.Fatal(err)
			}
			s = rep.Summary
			if s.Conversations != 10 || s.NotReplayed != 9 || s.NotReplayedWhy[session.NotReplayedPurged] != 1 ||
				s.NotReplayedWhy[session.NotReplayedVersionGone] != 8 || s.Replayed != 1 || s.Same != 1 {
				t.Errorf("after the purge: %+v", s)
			}
			rep, err = session.NewReplayer(next, st, session.Config{}).Run(ctx, st,
				session.ReplayFilter{Tool: "bank.open_dispute", Since: sessiontest.Now.Add(3 * time.Minute), Limit: 3})
			if err != nil || rep.Summary.Conversations != 3 || rep.Summary.NotReplayedWhy[session.NotReplayedVersionGone] != 3 {
				t.Fatalf("tool, since and limit: %+v (%v)", rep.Summary, err)
			}
			for _, c := range rep.Conversations {
				if c.Turns != 3 {
					t.Errorf("since the third minute: %s of %d turns", c.ConversationID, c.Turns)
				}
			}
		})
	}
}

// copies makes n copies of every conversation of pool under new ids
// (the conversation id with "-N" added, session ids drawn from the old
// ones), with their sessions and turns: a large history in seconds.
func copies(b *testing.B, pool *pgxpool.Pool, n int) {
	b.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO conversations SELECT (jsonb_populate_record(NULL::conversations,
			to_jsonb(c) || jsonb_build_object('conversation_id', c.conversation_id || '-' || g))).*
			FROM conversations c, generate_series(1, $1) g`,
		`INSERT INTO sessions SELECT (jsonb_populate_record(NULL::sessions,
			to_jsonb(s) || jsonb_build_object('conversation_id', s.conversation_id || '-' || g, 'id', md5(s.id::text || g)::uuid))).*
			FROM sessions s, generate_series(1, $1) g`,
		`INSERT INTO turns SELECT (jsonb_populate_record(NULL::turns,
			to_jsonb(t) || jsonb_build_object('conversation_id', t.conversation_id || '-' || g, 'session_id', md5(t.session_id::text || g)::uuid))).*
			FROM turns t, generate_series(1, $1) g`,
	} {
		if _, err := pool.Exec(ctx, q, n); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReplayContracts replays 10^4 stored conversations of the
// dispute example with its v2, reading them from Postgres; it reports
// conversations per second. The history is 100 conversations taken
// through the engine, each copied 99 times.
func BenchmarkReplayContracts(b *testing.B) {
	const n = 10000
	pool, _ := dbtest.NewPool(b)
	st := pgstore.New(pool)
	sessiontest.StoreHistory(b, st, "r", 100, 4)
	copies(b, pool, n/100-1)
	if _, err := pool.Exec(context.Background(), "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	next := sessiontest.DisputeV2(b, "migrate")
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		rep, err := session.NewReplayer(next, st, session.Config{}).Run(ctx, st, session.ReplayFilter{Limit: n})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Summary.Replayed != n {
			b.Fatalf("replayed %d of %d", rep.Summary.Replayed, n)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "conversations/s")
}
