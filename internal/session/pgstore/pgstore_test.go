package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/pgstore"
	"github.com/slotd/slotd/internal/session/sessiontest"
	"github.com/slotd/slotd/internal/testkit/dbtest"
)

func TestConformance(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) session.Store {
		pool, _ := dbtest.NewPool(t)
		return pgstore.New(pool)
	})
}

// The suite again on a schema where every table is PARTITION BY HASH of
// its conversation's key, which keeps the store to the key rules Citus
// imposes on co-located distributed tables: every primary key and unique
// index carries (tenant, conversation_id). See docs/scaling.md.
func TestConformancePartitioned(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) session.Store {
		pool, _ := dbtest.NewPartitionedPool(t)
		return pgstore.New(pool)
	})
}

// A database nobody migrated is not ready, and says so as a retryable
// unavailability rather than a driver error.
func TestReadyUnmigrated(t *testing.T) {
	t.Parallel()
	st := pgstore.New(dbtest.Connect(t, dbtest.NewEmptyDatabase(t)))
	err := st.Ready(t.Context())
	if !errors.Is(err, session.ErrUnavailable) {
		t.Errorf("Ready() on an unmigrated database = %v, want %v", err, session.ErrUnavailable)
	}
}

// Two slotd processes on one database are two pools: the conversation's row
// lock, not anything in process memory, keeps one writer per conversation.
func TestTwoReplicas(t *testing.T) {
	t.Parallel()
	pool, url := dbtest.NewPool(t)
	cat := sessiontest.Catalog(t)
	engines := []*session.Engine{
		sessiontest.NewEngine(pgstore.New(pool), cat),
		sessiontest.NewEngine(pgstore.New(dbtest.Connect(t, url)), cat),
	}
	ctx := t.Context()
	n := len(sessiontest.TwentySlots)
	errs := make([]error, 2*n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, slot := range sessiontest.TwentySlots {
		req := session.TurnRequest{
			Tenant: "acme-bank", ConversationID: "conv-replicas", Tool: sessiontest.Twenty,
			TurnID: fmt.Sprintf("turn-%02d", i), Arguments: map[string]any{slot: "v" + slot}, Now: sessiontest.Now,
		}
		// Each turn reaches both replicas, as a retry behind a load balancer.
		for r, e := range engines {
			wg.Go(func() {
				<-start
				_, errs[2*i+r] = e.Turn(ctx, req)
			})
		}
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("delivery %d: unexpected error: %v", i, err)
		}
	}
	l := session.Lookup{Tenant: "acme-bank", ConversationID: "conv-replicas"}
	s, err := engines[0].Get(ctx, l)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if s.Version != int64(n) || len(s.State.Slots) != n {
		t.Errorf("after %d turns delivered to two replicas each: version %d with %d slots, want %d and %d",
			n, s.Version, len(s.State.Slots), n, n)
	}
	h, err := engines[1].History(ctx, l)
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	if len(h.Turns) != n || len(h.Changes) != n {
		t.Errorf("history holds %d turns and %d changes, want %d of each", len(h.Turns), len(h.Changes), n)
	}
}

// A COMMIT that Postgres answers with a warning (what it says when a wait
// for a synchronous standby is cancelled) is not acknowledged, and the
// retry of the same turn_id is answered from what was stored. A warning
// before the COMMIT is no such sign. The warnings come from triggers here;
// integration/failover_test.go has the real thing.
func TestWarnedCommitIsNotAcknowledged(t *testing.T) {
	t.Parallel()
	_, url := dbtest.NewPool(t)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	pgstore.Configure(cfg)
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	ctx := t.Context()
	for _, sql := range []string{
		`CREATE FUNCTION warn() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE WARNING 'a warning from %', TG_NAME; RETURN NULL; END $$`,
		`CREATE TRIGGER warn_early AFTER INSERT ON conversations FOR EACH ROW EXECUTE FUNCTION warn()`,
		`CREATE CONSTRAINT TRIGGER warn_at_commit AFTER INSERT ON turns DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION warn()`,
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	e := sessiontest.NewEngine(pgstore.New(pool), sessiontest.Catalog(t))
	req := session.TurnRequest{Tenant: "acme-bank", ConversationID: "conv-warned", Tool: sessiontest.Twenty,
		TurnID: "turn-1", Arguments: map[string]any{sessiontest.TwentySlots[0]: "v"}, Now: sessiontest.Now}
	if res, err := e.Turn(ctx, req); !errors.Is(err, session.ErrUnavailable) {
		t.Fatalf("a turn whose COMMIT warned = %+v, %v; want %v", res, err, session.ErrUnavailable)
	}
	if _, err := pool.Exec(ctx, `DROP TRIGGER warn_at_commit ON turns`); err != nil {
		t.Fatal(err)
	}
	res, err := e.Turn(ctx, req)
	if err != nil || !res.Replayed || res.Session.Version != 1 {
		t.Fatalf("the retry = %+v, %v; want the stored response of version 1", res, err)
	}
	// warn_early warns on the first turn of a conversation, before COMMIT.
	req.ConversationID, req.TurnID = "conv-warned-early", "turn-1"
	if res, err := e.Turn(ctx, req); err != nil || res.Replayed || res.Session.Version != 1 {
		t.Errorf("a turn with a warning before COMMIT = %+v, %v; want it applied", res, err)
	}
}

// A turn's update of its session writes no index (a HOT update): no index
// of sessions covers a column that every turn changes, and the table
// leaves room on its pages for the row's next version.
func TestTurnUpdatesAreHOT(t *testing.T) {
	t.Parallel()
	// One backend does every turn, so that its statistics can be flushed.
	pool, url := onePool(t, nil)
	ctx := t.Context()
	e := sessiontest.NewEngine(pgstore.New(pool), sessiontest.Catalog(t))
	for c := range 3 {
		for i, slot := range sessiontest.TwentySlots {
			req := session.TurnRequest{Tenant: "acme-bank", ConversationID: fmt.Sprintf("conv-hot-%d", c), Tool: sessiontest.Twenty,
				TurnID: fmt.Sprintf("turn-%02d", i), Arguments: map[string]any{slot: "v" + slot}, Now: sessiontest.Now.Add(time.Duration(i) * time.Second)}
			if _, err := e.Turn(ctx, req); err != nil {
				t.Fatalf("turn %d: %v", i, err)
			}
		}
	}
	if _, err := pool.Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
	other := dbtest.Connect(t, url)
	var upd, hot int64
	for range 50 {
		err := other.QueryRow(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'sessions'`).Scan(&upd, &hot)
		if err != nil {
			t.Fatal(err)
		}
		if upd > 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	want := int64(3 * (len(sessiontest.TwentySlots) - 1))
	if upd < want || float64(hot) < 0.9*float64(upd) {
		t.Errorf("%d of %d updates of sessions were HOT, want at least %d updates and 90%% of them HOT", hot, upd, want)
	}
}

// onePool is a pool of one connection to a new database, configured as
// slotd configures its own, with tracer on it when not nil.
func onePool(t *testing.T, tracer pgx.QueryTracer) (*pgxpool.Pool, string) {
	t.Helper()
	_, url := dbtest.NewPool(t)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	// slotd's timeouts: the store sets them in each transaction.
	for name, v := range slotdTimeouts {
		cfg.ConnConfig.RuntimeParams[name] = v
	}
	if tracer != nil {
		cfg.ConnConfig.Tracer = tracer
	}
	pgstore.Configure(cfg)
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool, url
}

// roundTrips counts the statements and batches a pool sends: each is one
// round trip once its statements are prepared.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// A turn talks to Postgres twice: BEGIN rides with the lock and the reads,
// COMMIT with the writes. A replayed turn_id costs the same.
func TestTurnRoundTrips(t *testing.T) {
	t.Parallel()
	// One connection, so that the warm-up turn prepares every statement
	// on the connection the counted turns use.
	counter := &roundTrips{}
	pool, _ := onePool(t, counter)
	ctx := t.Context()
	e := sessiontest.NewEngine(pgstore.New(pool), sessiontest.Catalog(t))
	turn := func(conv string, i int) session.TurnRequest {
		slot := sessiontest.TwentySlots[i]
		return session.TurnRequest{Tenant: "acme-bank", ConversationID: conv, Tool: sessiontest.Twenty,
			TurnID: fmt.Sprintf("turn-%02d", i), Arguments: map[string]any{slot: "v" + slot}, Now: sessiontest.Now}
	}
	for i := range 2 {
		if _, err := e.Turn(ctx, turn("conv-warm", i)); err != nil {
			t.Fatal(err)
		}
	}
	const turns = 5
	start := counter.n.Load()
	for i := range turns {
		if _, err := e.Turn(ctx, turn("conv-counted", i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := counter.n.Load() - start; got != 2*turns {
		t.Errorf("%d turns took %d round trips, want %d", turns, got, 2*turns)
	}
	start = counter.n.Load()
	if res, err := e.Turn(ctx, turn("conv-counted", 0)); err != nil || !res.Replayed {
		t.Fatalf("the replay = %+v, %v; want the stored response", res, err)
	}
	if got := counter.n.Load() - start; got != 2 {
		t.Errorf("a replayed turn took %d round trips, want 2", got)
	}
}

// A write that would not advance its session's version by one fails the
// unit of work before the COMMIT that rides in its batch: nothing of it is
// stored, and the connection is usable afterwards.
func TestStaleWriteIsNotCommitted(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.NewPool(t)
	st := pgstore.New(pool)
	ctx := t.Context()
	e := sessiontest.NewEngine(st, sessiontest.Catalog(t))
	slot := sessiontest.TwentySlots[0]
	req := session.TurnRequest{Tenant: "acme-bank", ConversationID: "conv-stale", Tool: sessiontest.Twenty,
		TurnID: "turn-1", Arguments: map[string]any{slot: "v"}, Now: sessiontest.Now}
	if _, err := e.Turn(ctx, req); err != nil {
		t.Fatal(err)
	}
	key := session.Key{Tenant: "acme-bank", ConversationID: "conv-stale"}
	_, err := st.Turn(ctx, key, "turn-stale", func(cv session.Conversation) (*session.Commit, error) {
		s := cv.Open[0].Clone()
		s.State.Slots[slot] = "stale" // the version stays where it was
		return &session.Commit{Session: s, Turn: &session.TurnRecord{ID: "turn-stale", SessionID: s.ID,
			Version: s.Version, Action: "ASK", Request: []byte(`{}`), Response: []byte(`{}`), At: sessiontest.Now}}, nil
	})
	if err == nil {
		t.Fatal("a write that does not advance the version: no error")
	}
	s, err := st.Session(ctx, session.Lookup{Tenant: key.Tenant, ConversationID: key.ConversationID})
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 1 || s.State.Slots[slot] != "v" {
		t.Errorf("after the stale write: version %d, %s = %v; want version 1 and the value of turn-1", s.Version, slot, s.State.Slots[slot])
	}
	req.TurnID = "turn-stale"
	if res, err := e.Turn(ctx, req); err != nil || res.Replayed || res.Session.Version != 2 {
		t.Errorf("turn-stale played for real = %+v, %v; want it applied as version 2", res, err)
	}
}

// After an erasure no row of any table of the schema holds the
// conversation's id, in any column, while another conversation's rows are
// all there; the erasure's record holds a hash of the id and the admin's
// name. On the plain schema and on the partitioned one.
func TestEraseLeavesNoRow(t *testing.T) {
	for name, newPool := range dbtest.Schemas {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pool, _ := newPool(t)
			ctx := t.Context()
			e := sessiontest.NewEngine(pgstore.New(pool), sessiontest.Catalog(t))
			const erased, kept = "conv-erase-me-9f2c", "conv-keep-me-1b7d"
			for i, conv := range []string{erased, kept, erased, kept} {
				for _, tool := range []string{sessiontest.Dispute, sessiontest.Flights} {
					req := session.TurnRequest{Tenant: "acme-bank", ConversationID: conv, Tool: tool,
						TurnID: fmt.Sprintf("%s-%s-%d", conv, tool, i), Arguments: map[string]any{"amount": "1 200,50 ₽", "from": "mad", "note": conv},
						Now: sessiontest.Now}
					if _, err := e.Turn(ctx, req); err != nil {
						t.Fatalf("turn %s: %v", req.TurnID, err)
					}
				}
			}
			key := session.Key{Tenant: "acme-bank", ConversationID: erased}
			rec, got, err := e.Erase(ctx, key, "ops-oncall", sessiontest.Now)
			if err != nil || !got.Found || got.Sessions != 2 {
				t.Fatalf("Erase = %+v, %+v, %v; want 2 sessions found", rec, got, err)
			}
			rows, err := pool.Query(ctx, `SELECT table_name FROM information_schema.tables
				WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`)
			if err != nil {
				t.Fatal(err)
			}
			tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			for _, table := range tables {
				q := fmt.Sprintf(`SELECT count(*) FILTER (WHERE strpos(x::text, $1) > 0), count(*) FILTER (WHERE strpos(x::text, $2) > 0) FROM %s x`,
					pgx.Identifier{table}.Sanitize())
				var left, others int
				if err := pool.QueryRow(ctx, q, erased, kept).Scan(&left, &others); err != nil {
					t.Fatal(err)
				}
				if left != 0 {
					t.Errorf("table %s: %d rows hold the erased conversation's id", table, left)
				}
				var holds bool
				if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM information_schema.columns
					WHERE table_schema = current_schema() AND table_name = $1 AND column_name = 'conversation_id')`, table).Scan(&holds); err != nil {
					t.Fatal(err)
				}
				if holds && others == 0 && !strings.Contains(table, "_p") {
					t.Errorf("table %s: the other conversation's rows went too", table)
				}
			}
			var hash, by string
			var sessions int
			if err := pool.QueryRow(ctx, `SELECT conversation_hash, erased_by, sessions FROM erasures WHERE tenant = 'acme-bank'`).
				Scan(&hash, &by, &sessions); err != nil {
				t.Fatalf("the erasure's record: %v", err)
			}
			if hash != session.ConversationHash(key) || hash != rec.ConversationHash || by != "ops-oncall" || sessions != 2 {
				t.Errorf("erasure record = %s by %q, %d sessions; want %s by ops-oncall, 2", hash, by, sessions, session.ConversationHash(key))
			}
		})
	}
}
