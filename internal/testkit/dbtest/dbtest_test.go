package dbtest

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/slotd/slotd/migrations"
)

func TestNewDatabaseIsItsOwn(t *testing.T) {
	t.Parallel()
	a, b := NewDatabase(t), NewDatabase(t)
	if a == b {
		t.Fatalf("two tests got the same database %s", a)
	}
	for _, u := range []string{a, b} {
		conn, err := pgx.Connect(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		var name string
		if err := conn.QueryRow(context.Background(), "select current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		conn.Close(context.Background())
		if p, _ := Prefix(); !strings.HasPrefix(name, p) || strings.HasPrefix(name, templatePrefix()) || !strings.Contains(u, name) {
			t.Errorf("connected to %q through %s, want a fresh %s database", name, u, p)
		}
	}
}

// A clone is migrated, an ordinary database (not a template, open to
// connections), and shares no rows with another clone.
func TestNewPoolIsMigrated(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, url := NewPool(t)
	if v, err := migrations.Current(ctx, pool); err != nil || v != migrations.Latest() {
		t.Fatalf("schema version of a new database = %d, %v; want %d", v, err, migrations.Latest())
	}
	if v, err := migrations.Up(ctx, pool); err != nil || v != migrations.Latest() {
		t.Errorf("migrating a new database again = %d, %v; want %d and nothing to do", v, err, migrations.Latest())
	}
	var isTemplate, allowConn bool
	if err := pool.QueryRow(ctx, "SELECT datistemplate, datallowconn FROM pg_database WHERE datname = current_database()").
		Scan(&isTemplate, &allowConn); err != nil {
		t.Fatal(err)
	}
	if isTemplate || !allowConn {
		t.Errorf("%s: template %v, allows connections %v; want an ordinary database", url, isTemplate, allowConn)
	}
	if _, err := pool.Exec(ctx, "INSERT INTO conversations (tenant, conversation_id) VALUES ('t', 'c')"); err != nil {
		t.Fatal(err)
	}
	other, _ := NewPool(t)
	var n int
	if err := other.QueryRow(ctx, "SELECT count(*) FROM conversations").Scan(&n); err != nil || n != 0 {
		t.Errorf("another new database holds %d conversations (%v), want 0", n, err)
	}
}

func TestNewEmptyDatabaseIsEmpty(t *testing.T) {
	t.Parallel()
	pool := Connect(t, NewEmptyDatabase(t))
	var tables int
	if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("an empty database has %d tables, want none", tables)
	}
}

// testTemplate returns a template name of this test's own, dropped when
// the test ends, and a connection to the maintenance database.
func testTemplate(t *testing.T) (string, *pgx.Conn) {
	t.Helper()
	admin := connectAdmin(t.Context(), t)
	name := templatePrefix() + "test_" + randomHex()
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = admin.Exec(ctx, "ALTER DATABASE "+ident(name)+" WITH IS_TEMPLATE false")
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(name)+" WITH (FORCE)"); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
		admin.Close(ctx)
	})
	return name, admin
}

// countingLog counts the templates a run of ensureTemplate made.
type countingLog struct{ made atomic.Int64 }

func (c *countingLog) logf(t *testing.T) func(string, ...any) {
	return func(format string, args ...any) {
		if strings.HasPrefix(format, "dbtest: made the template") {
			c.made.Add(1)
		}
		t.Logf(format, args...)
	}
}

// Test binaries that start together each find the template missing: one
// makes it, the others wait for it, and then all clone it at once (as the
// tests of several packages do).
func TestTemplateMadeOnceForConcurrentStarts(t *testing.T) {
	t.Parallel()
	name, _ := testTemplate(t)
	const starts = 4
	var log countingLog
	var wg sync.WaitGroup
	errs := make([]error, starts)
	begin := make(chan struct{})
	for i := range starts {
		// Each its own session, as each test binary is.
		admin := connectAdmin(t.Context(), t)
		t.Cleanup(func() { admin.Close(context.Background()) })
		wg.Go(func() {
			<-begin
			if errs[i] = ensureTemplate(t.Context(), admin, name, log.logf(t)); errs[i] != nil {
				return
			}
			clone := newName()
			if _, errs[i] = admin.Exec(t.Context(), "CREATE DATABASE "+ident(clone)+" TEMPLATE "+ident(name)); errs[i] != nil {
				return
			}
			u := created(t, clone)
			conn, err := pgx.Connect(t.Context(), u)
			if err != nil {
				errs[i] = err
				return
			}
			defer conn.Close(context.Background())
			var v int64
			if err := conn.QueryRow(t.Context(), "SELECT max(version_id) FROM slotd_schema_version").Scan(&v); err != nil || v != migrations.Latest() {
				errs[i] = fmt.Errorf("clone at version %d (%v), want %d", v, err, migrations.Latest())
			}
		})
	}
	close(begin)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("start %d: %v", i, err)
		}
	}
	if n := log.made.Load(); n != 1 {
		t.Errorf("the template was made %d times by %d concurrent starts, want once", n, starts)
	}
}

// A template whose maker died before marking it is made again.
func TestHalfMadeTemplateIsMadeAgain(t *testing.T) {
	t.Parallel()
	name, admin := testTemplate(t)
	if _, err := admin.Exec(t.Context(), "CREATE DATABASE "+ident(name)); err != nil {
		t.Fatal(err)
	}
	var log countingLog
	if err := ensureTemplate(t.Context(), admin, name, log.logf(t)); err != nil {
		t.Fatal(err)
	}
	exists, ready, err := templateState(t.Context(), admin, name)
	if err != nil || !exists || !ready || log.made.Load() != 1 {
		t.Fatalf("after ensureTemplate on a half made one: exists %v, ready %v, made %d, %v; want it made again",
			exists, ready, log.made.Load(), err)
	}
	clone := newName()
	if _, err := admin.Exec(t.Context(), "CREATE DATABASE "+ident(clone)+" TEMPLATE "+ident(name)); err != nil {
		t.Fatal(err)
	}
	pool := Connect(t, created(t, clone))
	if v, err := migrations.Current(t.Context(), pool); err != nil || v != migrations.Latest() {
		t.Errorf("clone at version %d, %v; want %d", v, err, migrations.Latest())
	}
}

// A process that found the template keeps working when another checkout
// drops it as unused: the next clone makes it again.
func TestCloneOutlivesTheTemplateBeingDropped(t *testing.T) {
	t.Parallel()
	name, admin := testTemplate(t)
	c := &templateCache{name: name}
	for i := range 2 {
		clone := newName()
		if err := c.clone(t.Context(), t, admin, clone); err != nil {
			t.Fatalf("clone %d: %v", i, err)
		}
		pool := Connect(t, created(t, clone))
		if v, err := migrations.Current(t.Context(), pool); err != nil || v != migrations.Latest() {
			t.Errorf("clone %d at version %d, %v; want %d", i, v, err, migrations.Latest())
		}
		// What dropStale does to a template of other migration files.
		for _, sql := range []string{"ALTER DATABASE " + ident(name) + " WITH IS_TEMPLATE false", "DROP DATABASE " + ident(name)} {
			if _, err := admin.Exec(t.Context(), sql); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Only templates of dbtest, unused for staleAfter, go.
func TestDropStaleKeepsWhatMayBeInUse(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	stale, admin := testTemplate(t)
	recent, _ := testTemplate(t)
	undated, _ := testTemplate(t)
	for name, comment := range map[string]string{
		stale:   usedLiteral(time.Now().Add(-staleAfter - time.Hour)),
		recent:  usedLiteral(time.Now().Add(-staleAfter + time.Hour)),
		undated: "'made by hand'",
	} {
		for _, sql := range []string{
			"CREATE DATABASE " + ident(name),
			"COMMENT ON DATABASE " + ident(name) + " IS " + comment,
			"ALTER DATABASE " + ident(name) + " WITH ALLOW_CONNECTIONS false IS_TEMPLATE true",
		} {
			if _, err := admin.Exec(ctx, sql); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock($1)", templateLockID); err != nil {
		t.Fatal(err)
	}
	dropStale(ctx, admin, "none", t.Logf)
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_unlock($1)", templateLockID); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{stale: false, recent: true, undated: true} {
		if exists, _, err := templateState(ctx, admin, name); err != nil || exists != want {
			t.Errorf("after dropStale, %s exists = %v (%v), want %v", name, exists, err, want)
		}
	}
}

func TestTemplateNameFollowsTheFiles(t *testing.T) {
	t.Parallel()
	base := fstest.MapFS{
		"001_sessions.sql": {Data: []byte("CREATE TABLE a ();")},
	}
	name := func(fsys fstest.MapFS, table ...string) string {
		t.Helper()
		n, err := templateName(fsys, append(table, "slotd_schema_version")[0])
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	with := func(file, data string) fstest.MapFS {
		m := fstest.MapFS{}
		for k, v := range base {
			m[k] = v
		}
		m[file] = &fstest.MapFile{Data: []byte(data)}
		return m
	}
	got := name(base)
	if !strings.HasPrefix(got, templatePrefix()) || len(got) > 63 {
		t.Errorf("template name %q: want %s and a hash, within Postgres's 63 bytes", got, templatePrefix())
	}
	if again := name(with("001_sessions.sql", "CREATE TABLE a ();")); again != got {
		t.Errorf("the same files gave %q and %q", got, again)
	}
	if name(with("README.md", "notes")) != got {
		t.Error("a file that is no migration changed the template's name")
	}
	for what, fsys := range map[string]fstest.MapFS{
		"a new migration":     with("002_more.sql", "CREATE TABLE b ();"),
		"an edited migration": with("001_sessions.sql", "CREATE TABLE a (x int);"),
	} {
		if name(fsys) == got {
			t.Errorf("%s kept the template's name %q", what, got)
		}
	}
	if name(base, "other_version_table") == got {
		t.Error("another version table kept the template's name")
	}
	if _, err := templateName(fstest.MapFS{"README.md": {}}, "t"); err == nil {
		t.Error("no migration files gave a template name")
	}
	if _, err := templateName(migrations.Files(), migrations.VersionTable); err != nil {
		t.Errorf("the embedded migrations name no template: %v", err)
	}
}

// fatalRecorder keeps the message of a Fatalf instead of failing the test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// Without Postgres a test fails, saying where Postgres was looked for and
// how to run the tests; it does not skip.
func TestUnreachablePostgresFails(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	t.Setenv("SLOTD_TEST_DATABASE_URL", "postgres://postgres@"+addr+"/postgres?sslmode=disable&connect_timeout=2")
	for what, create := range map[string]func(testing.TB) string{"NewDatabase": NewDatabase, "NewEmptyDatabase": NewEmptyDatabase} {
		r := &fatalRecorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			create(r)
		}()
		<-done
		want := "dbtest: Postgres is needed for this test and cannot be reached at " + addr + "/postgres: "
		if !strings.HasPrefix(r.msg, want) || !strings.Contains(r.msg, "Run the tests with `make test`") {
			t.Errorf("%s without Postgres failed with %q, want %q...", what, r.msg, want)
		}
	}
}

func TestWithDatabaseKeepsTheRest(t *testing.T) {
	t.Parallel()
	got, err := withDatabase("postgres://postgres@127.0.0.1:55432/postgres?sslmode=disable", "x1")
	if err != nil || got != "postgres://postgres@127.0.0.1:55432/x1?sslmode=disable" {
		t.Errorf("withDatabase = %q, %v", got, err)
	}
	if _, err := withDatabase("host=localhost dbname=postgres", "x"); err == nil {
		t.Error("a keyword/value string was accepted")
	}
}
