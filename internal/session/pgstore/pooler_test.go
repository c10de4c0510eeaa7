package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/pgstore"
	"github.com/slotd/slotd/internal/session/sessiontest"
	"github.com/slotd/slotd/internal/testkit/dbtest"
)

// slotdTimeouts are the timeouts slotd serve sets unless the URL does.
var slotdTimeouts = map[string]string{
	"lock_timeout": "3s", "statement_timeout": "5s", "idle_in_transaction_session_timeout": "15s",
}

// withParams is raw with the query parameters of kv (name, value, ...) set.
func withParams(t *testing.T, raw string, kv ...string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for i := 0; i < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// configured is a pool on raw configured as slotd configures its own.
func configured(t *testing.T, raw string, maxConns int32) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	pgstore.Configure(cfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// The exec modes that work behind a transaction-mode pooler: none keeps a
// prepared statement on a server connection past one transaction.
var poolerSafeModes = []string{"cache_describe", "exec", "simple_protocol"}

// The whole conformance suite (concurrency, one writer per conversation,
// idempotent retries included) through PgBouncer in transaction pooling
// mode, with slotd's timeouts in the URL as the docs give it, in each exec
// mode that works behind it.
func TestThroughPgBouncer(t *testing.T) {
	t.Parallel()
	bouncer := dbtest.StartPgBouncer(t)
	// The whole suite in the mode the docs recommend; exec and
	// simple_protocol, which differ only in how values travel, are held to
	// the fifty concurrent turns (TestFiftyConcurrentTurnsThroughPgBouncer),
	// which keeps the package's run time in bounds.
	for _, mode := range poolerSafeModes[:1] {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			sessiontest.Run(t, func(t *testing.T) session.Store {
				raw := withParams(t, bouncer.URL(t, dbtest.NewDatabase(t)), "default_query_exec_mode", mode,
					"lock_timeout", slotdTimeouts["lock_timeout"], "statement_timeout", slotdTimeouts["statement_timeout"],
					"idle_in_transaction_session_timeout", slotdTimeouts["idle_in_transaction_session_timeout"])
				return pgstore.New(configured(t, raw, 4))
			})
		})
	}
}

// The timeouts of the URL hold behind the pooler: a turn that waits on a
// conversation another transaction holds gives up after the URL's
// lock_timeout, not when its caller's deadline passes. PgBouncer would
// refuse them as startup parameters, or drop them when told to ignore them.
func TestURLTimeoutsThroughPgBouncer(t *testing.T) {
	t.Parallel()
	bouncer := dbtest.StartPgBouncer(t)
	direct := dbtest.NewDatabase(t)
	ctx := t.Context()
	e := sessiontest.NewEngine(pgstore.New(configured(t,
		withParams(t, bouncer.URL(t, direct), "default_query_exec_mode", "cache_describe", "lock_timeout", "200ms"), 2)),
		sessiontest.Catalog(t))
	req := session.TurnRequest{Tenant: "acme-bank", ConversationID: "conv-held", Tool: sessiontest.Twenty,
		TurnID: "turn-1", Arguments: map[string]any{sessiontest.TwentySlots[0]: "v"}, Now: sessiontest.Now}
	if _, err := e.Turn(ctx, req); err != nil {
		t.Fatal(err)
	}
	holder, err := dbtest.Connect(t, direct).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(context.WithoutCancel(ctx))
	if _, err := holder.Exec(ctx, `SELECT 1 FROM conversations WHERE conversation_id = 'conv-held' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	req.TurnID, req.Arguments = "turn-2", map[string]any{sessiontest.TwentySlots[1]: "v"}
	_, err = e.Turn(tctx, req)
	took := time.Since(start)
	if !errors.Is(err, session.ErrBusy) || !strings.Contains(err.Error(), "55P03") || took > 3*time.Second {
		t.Errorf("a turn on a held conversation with lock_timeout=200ms in the URL = %v after %s; "+
			"want busy (SQLSTATE 55P03, lock_not_available) well before 3s", err, took.Round(time.Millisecond))
	}
}

// pgx's default exec mode keeps prepared statements on a connection;
// behind a transaction-mode pooler, a transaction lands on a server
// connection where they are missing (26000) or made by another client
// (42P05). Such a turn is a retryable unavailability that names the fix,
// never an internal error, and the retry in a safe mode is applied once.
func TestPreparedStatementsLostToPooler(t *testing.T) {
	t.Parallel()
	bouncer := dbtest.StartPgBouncer(t)
	direct := dbtest.NewDatabase(t)
	via := withParams(t, bouncer.URL(t, direct), "default_query_exec_mode", "cache_statement")
	cat := sessiontest.Catalog(t)
	engines := []*session.Engine{
		sessiontest.NewEngine(pgstore.New(configured(t, via, 2)), cat),
		sessiontest.NewEngine(pgstore.New(configured(t, via, 2)), cat),
	}
	ctx := t.Context()
	var mu sync.Mutex
	var failed []session.TurnRequest
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Go(func() {
			for i := range 5 {
				req := session.TurnRequest{Tenant: "acme-bank", ConversationID: fmt.Sprintf("conv-%d", c), Tool: sessiontest.Twenty,
					TurnID: fmt.Sprintf("turn-%d", i), Arguments: map[string]any{sessiontest.TwentySlots[i]: "v"}, Now: sessiontest.Now}
				_, err := engines[(c+i)%2].Turn(ctx, req)
				if err == nil {
					continue
				}
				var u *session.UnavailableError
				if !errors.As(err, &u) || !errors.Is(err, session.ErrUnavailable) || !strings.Contains(u.Fix, "cache_describe") {
					t.Errorf("turn %s/%s failed with %v; want a retryable unavailability that names the exec mode to use", req.ConversationID, req.TurnID, err)
					return
				}
				mu.Lock()
				failed = append(failed, req)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(failed) == 0 {
		t.Fatal("no turn lost a prepared statement to the pooler in cache_statement mode; the test shows nothing")
	}
	safe := sessiontest.NewEngine(pgstore.New(configured(t, withParams(t, via, "default_query_exec_mode", "cache_describe"), 2)), cat)
	for _, req := range failed {
		res, err := safe.Turn(ctx, req)
		if err != nil || res.Replayed {
			t.Errorf("the retry of %s/%s in cache_describe mode = %+v, %v; want it applied now", req.ConversationID, req.TurnID, res, err)
		}
	}
	t.Logf("%d of 40 turns lost a prepared statement to the pooler", len(failed))
}

// PgBouncer refuses a startup parameter it does not know. A turn then fails
// as a retryable unavailability that says which parameter, and what to do.
func TestStartupParameterRefusedByPooler(t *testing.T) {
	t.Parallel()
	bouncer := dbtest.StartPgBouncer(t)
	via := withParams(t, bouncer.URL(t, dbtest.NewDatabase(t)), "search_path", "public", "lock_timeout", "3s")
	e := sessiontest.NewEngine(pgstore.New(configured(t, via, 1)), sessiontest.Catalog(t))
	_, err := e.Turn(t.Context(), session.TurnRequest{Tenant: "acme-bank", ConversationID: "conv-1", Tool: sessiontest.Twenty,
		TurnID: "turn-1", Arguments: map[string]any{sessiontest.TwentySlots[0]: "v"}, Now: sessiontest.Now})
	var u *session.UnavailableError
	if !errors.As(err, &u) || !errors.Is(err, session.ErrUnavailable) {
		t.Fatalf("a turn through a pooler that refuses search_path = %v; want a named unavailability", err)
	}
	if !strings.Contains(u.Cause, "search_path") || !strings.Contains(u.Fix, "ignore_startup_parameters") {
		t.Errorf("cause %q, fix %q; want them to name search_path and ignore_startup_parameters", u.Cause, u.Fix)
	}
	if d := pgstore.Describe(err); !strings.Contains(d, "unsupported startup parameter") {
		t.Errorf("the log line %q lacks the pooler's own message", d)
	}
}

// Fifty turns at once behind the pooler, on five conversations, each
// turn delivered twice at once as an orchestrator's retry would: each is
// applied once, and each conversation holds its ten turns in order.
func TestFiftyConcurrentTurnsThroughPgBouncer(t *testing.T) {
	t.Parallel()
	bouncer := dbtest.StartPgBouncer(t)
	for _, mode := range poolerSafeModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			raw := withParams(t, bouncer.URL(t, dbtest.NewDatabase(t)), "default_query_exec_mode", mode, "lock_timeout", "10s")
			e := sessiontest.NewEngine(pgstore.New(configured(t, raw, 8)), sessiontest.Catalog(t))
			ctx := t.Context()
			const conversations, turns = 5, 10
			start := make(chan struct{})
			var wg sync.WaitGroup
			for c := range conversations {
				for i := range turns {
					req := session.TurnRequest{Tenant: "acme-bank", ConversationID: fmt.Sprintf("conv-%d", c), Tool: sessiontest.Twenty,
						TurnID: fmt.Sprintf("turn-%d", i), Arguments: map[string]any{sessiontest.TwentySlots[i]: fmt.Sprintf("v%d", i)}, Now: sessiontest.Now}
					for range 2 {
						wg.Go(func() {
							<-start
							if _, err := e.Turn(ctx, req); err != nil {
								t.Errorf("%s/%s: %v", req.ConversationID, req.TurnID, err)
							}
						})
					}
				}
			}
			close(start)
			wg.Wait()
			for c := range conversations {
				l := session.Lookup{Tenant: "acme-bank", ConversationID: fmt.Sprintf("conv-%d", c)}
				h, err := e.History(ctx, l)
				if err != nil {
					t.Fatal(err)
				}
				if len(h.Turns) != turns || len(h.Changes) != turns {
					t.Errorf("%s holds %d turns and %d changes, want %d of each", l.ConversationID, len(h.Turns), len(h.Changes), turns)
				}
				for i, tr := range h.Turns {
					if tr.Version != int64(i+1) {
						t.Errorf("%s: turn %d at version %d, want %d", l.ConversationID, i, tr.Version, i+1)
					}
				}
			}
		})
	}
}

// A database missing on the server (one host of a multi-host URL, or a
// pooler without the entry) is a retryable unavailability that says so,
// not an internal error.
func TestMissingDatabaseIsUnavailable(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(dbtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/slotd_no_such_database"
	e := sessiontest.NewEngine(pgstore.New(configured(t, u.String(), 1)), sessiontest.Catalog(t))
	_, err = e.Turn(t.Context(), session.TurnRequest{Tenant: "acme-bank", ConversationID: "conv-1", Tool: sessiontest.Twenty,
		TurnID: "turn-1", Arguments: map[string]any{sessiontest.TwentySlots[0]: "v"}, Now: sessiontest.Now})
	var ue *session.UnavailableError
	if !errors.As(err, &ue) || !strings.Contains(ue.Cause, "does not exist") || !strings.Contains(pgstore.Describe(err), "3D000") {
		t.Errorf("a turn on a database that does not exist = %v; want a named unavailability (3D000)", err)
	}
}
