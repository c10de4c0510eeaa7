// Package dbtest gives each test a Postgres database of its own, dropped
// when the test ends. A test's database is a clone (CREATE DATABASE ...
// TEMPLATE) of a template the migrations were applied to once, so no test
// waits for migrations; tests of the migrations themselves take an empty
// one. It finds Postgres at SLOTD_TEST_DATABASE_URL, else at
// 127.0.0.1:5432; when neither answers the test fails saying so. It never
// skips.
//
// Every database it makes, templates included, is named with Prefix
// (SLOTD_TEST_DB_PREFIX, "slotd_test_" when unset), so that runs sharing a
// server keep apart, and Sweep can drop what a run leaves and say what that
// was.
//
// The template is named after a hash of the migration files, so a new
// migration makes a new template, and checkouts with different migrations
// can share one server. Test binaries run at once: a template is created
// under an advisory lock on the maintenance database, and is marked as one
// (IS_TEMPLATE) only once it is migrated, which is what the others wait for.
package dbtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotd/slotd/migrations"
)

// DefaultURL is where tests look for Postgres when SLOTD_TEST_DATABASE_URL
// is not set.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// AdminURL is the server tests create their databases on.
func AdminURL() string {
	if u := os.Getenv("SLOTD_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// NewDatabase creates a database migrated to the latest version and returns
// its URL; it is dropped when t ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, &templates, "database")
}

// NewPartitionedDatabase creates a database migrated to the latest version
// and then rebuilt with every slotd table PARTITION BY HASH on its
// conversation's key (see Partition), and returns its URL; it is dropped
// when t ends. Postgres refuses a primary key or unique index of a
// partitioned table that lacks the partition key, as Citus does for a
// distributed table that lacks the distribution column, so a store that
// passes its tests here keeps to the keys a distributed schema needs.
func NewPartitionedDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, &partitionedTemplates, "partitioned database")
}

// newDatabase clones a database from the template of c.
func newDatabase(t testing.TB, c *templateCache, what string) string {
	t.Helper()
	return createDatabase(t, 2*time.Minute, what, func(ctx context.Context, admin *pgx.Conn, name string) error {
		return c.clone(ctx, t, admin, name)
	})
}

// createDatabase creates a database of a new name by create, within
// timeout, and returns its URL; it is dropped when t ends.
func createDatabase(t testing.TB, timeout time.Duration, what string, create func(context.Context, *pgx.Conn, string) error) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	mustPrefix(t)
	admin := connectAdmin(ctx, t)
	defer admin.Close(ctx)
	name := newName()
	if err := create(ctx, admin, name); err != nil {
		t.Fatalf("dbtest: create %s: %v", what, err)
	}
	return created(t, name)
}

// NewPartitionedPool creates a partitioned database (NewPartitionedDatabase)
// and a pool on it, both closed and dropped when t ends.
func NewPartitionedPool(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	url := NewPartitionedDatabase(t)
	return Connect(t, url), url
}

// NewEmptyDatabase creates a database nobody migrated, for the tests of
// migrating, and returns its URL; it is dropped when t ends.
func NewEmptyDatabase(t testing.TB) string {
	t.Helper()
	return createDatabase(t, 30*time.Second, "database", func(ctx context.Context, admin *pgx.Conn, name string) error {
		_, err := admin.Exec(ctx, "CREATE DATABASE "+ident(name))
		return err
	})
}

// Schemas are the two schemas the store must work on, by name: the
// migrated one, and the same hash-partitioned by conversation.
var Schemas = map[string]func(testing.TB) (*pgxpool.Pool, string){
	"plain": NewPool, "partitioned": NewPartitionedPool,
}

// NewPool creates a migrated database and a pool on it, both closed and
// dropped when t ends.
func NewPool(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	url := NewDatabase(t)
	return Connect(t, url), url
}

// Connect opens a pool on url, closed when t ends.
func Connect(t testing.TB, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// connectAdmin connects to the maintenance database, or fails t saying
// where Postgres was looked for.
func connectAdmin(ctx context.Context, t testing.TB) *pgx.Conn {
	t.Helper()
	admin, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		t.Fatalf("dbtest: Postgres is needed for this test and cannot be reached at %s: %v\n"+
			"Run the tests with `make test` (it finds or starts Postgres), or set SLOTD_TEST_DATABASE_URL.",
			redactURL(AdminURL()), err)
	}
	return admin
}

// DefaultPrefix names the databases of tests when SLOTD_TEST_DB_PREFIX is
// not set.
const DefaultPrefix = "slotd_test_"

// maxPrefix keeps the longest name made (a template's: the prefix,
// "template_" and a hash) within Postgres's 63 bytes.
const maxPrefix = 30

// Prefix starts the name of every database dbtest makes: SLOTD_TEST_DB_PREFIX,
// or DefaultPrefix. One that is not a lower-case identifier of at most 30
// bytes would be folded, quoted or cut by Postgres, so it is refused.
func Prefix() (string, error) {
	p := os.Getenv("SLOTD_TEST_DB_PREFIX")
	if p == "" {
		return DefaultPrefix, nil
	}
	if err := checkPrefix(p); err != nil {
		return "", err
	}
	return p, nil
}

func checkPrefix(p string) error {
	ok := len(p) > 0 && len(p) <= maxPrefix && !(p[0] >= '0' && p[0] <= '9')
	for i := 0; ok && i < len(p); i++ {
		c := p[i]
		ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
	}
	if !ok {
		return fmt.Errorf("SLOTD_TEST_DB_PREFIX %q: want lower-case letters, digits and _, not starting with a digit, at most %d bytes", p, maxPrefix)
	}
	return nil
}

// mustPrefix is Prefix, failing t when SLOTD_TEST_DB_PREFIX is refused.
func mustPrefix(t testing.TB) string {
	t.Helper()
	p, err := Prefix()
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	return p
}

// NewName returns a new database name under Prefix, for a test that has
// something other than dbtest create the database (and drops it itself).
func NewName(t testing.TB) string {
	t.Helper()
	return mustPrefix(t) + randomHex()
}

func newName() string {
	p, err := Prefix()
	if err != nil {
		p = DefaultPrefix // unreachable: the callers checked it first
	}
	return p + randomHex()
}

func randomHex() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// created arranges for the database to be dropped when t ends and returns
// its URL.
func created(t testing.TB, name string) string {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		admin, err := pgx.Connect(ctx, AdminURL())
		if err != nil {
			t.Errorf("dbtest: drop database %s: %v", name, err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(name)+" WITH (FORCE)"); err != nil {
			t.Errorf("dbtest: drop database %s: %v", name, err)
		}
	})
	u, err := withDatabase(AdminURL(), name)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	return u
}

// withDatabase returns the URL with its database replaced.
func withDatabase(raw, name string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("SLOTD_TEST_DATABASE_URL must be a postgres:// URL")
	}
	u.Path = "/" + name
	return u.String(), nil
}

// templates is the template this process clones, found or made by its
// first test; partitionedTemplates the partitioned one.
var (
	templates            templateCache
	partitionedTemplates = templateCache{variant: "partitioned " + strconv.Itoa(partitionVersion), shape: Partition}
)

// templateCache remembers a template this process has found ready.
type templateCache struct {
	sync.Mutex
	name  string // found from the migration files when empty
	ready bool
	// variant is hashed into the name of a template that shape rebuilds
	// once it is migrated; "" and nil for the plain one.
	variant string
	shape   func(context.Context, *pgxpool.Pool) error
}

// clone creates the database name as a clone of the template, making the
// template first when this process has not yet.
func (c *templateCache) clone(ctx context.Context, t testing.TB, admin *pgx.Conn, name string) error {
	for attempt := 0; ; attempt++ {
		tmpl, err := c.get(ctx, t, admin)
		if err != nil {
			return err
		}
		_, err = admin.Exec(ctx, "CREATE DATABASE "+ident(name)+" TEMPLATE "+ident(tmpl))
		var pgErr *pgconn.PgError
		if attempt == 0 && errors.As(err, &pgErr) && pgErr.Code == "3D000" {
			// The template is gone: another checkout dropped it as unused
			// (see dropStale) after this process found it. Make it again.
			c.Lock()
			c.ready = false
			c.Unlock()
			continue
		}
		return err
	}
}

// get returns the name of a migrated template of the current migration
// files, creating it when no process has.
func (c *templateCache) get(ctx context.Context, t testing.TB, admin *pgx.Conn) (string, error) {
	c.Lock()
	defer c.Unlock()
	if c.ready {
		return c.name, nil
	}
	if c.name == "" {
		table := migrations.VersionTable
		if c.variant != "" {
			table += "\x00" + c.variant
		}
		name, err := templateName(migrations.Files(), table)
		if err != nil {
			return "", err
		}
		c.name = name
	}
	if err := ensureShapedTemplate(ctx, admin, c.name, c.shape, t.Logf); err != nil {
		return "", fmt.Errorf("template %s: %w", c.name, err)
	}
	c.ready = true
	return c.name, nil
}

// templatePrefix starts the name of every template database dbtest makes
// (Prefix, then "template_"); the rest is a hash of the migration files.
func templatePrefix() string {
	p, err := Prefix()
	if err != nil {
		p = DefaultPrefix // unreachable: createDatabase checked it first
	}
	return p + "template_"
}

// templateLockID is the advisory lock (on the maintenance database) held
// while a template is created or dropped, by any test binary of any
// checkout using the server: "slotdtmp" in ASCII.
const templateLockID int64 = 0x736c6f7464746d70

// staleAfter is how long a template of other migration files may go
// unused before the creation of a new template drops it.
const staleAfter = 14 * 24 * time.Hour

// usedComment prefixes the comment on a template that says when a test
// binary last began cloning it.
const usedComment = "slotd dbtest template, last used "

// templateName hashes the migration files and the name of the table that
// records them: a new or edited migration, or another way of applying
// them, makes a new template.
func templateName(fsys fs.FS, versionTable string) (string, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(n, ".sql") {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "", errors.New("no migration files (*.sql) found")
	}
	sort.Strings(names)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", versionTable)
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(b))
		h.Write(b)
	}
	return templatePrefix() + hex.EncodeToString(h.Sum(nil)[:8]), nil
}

// ensureTemplate makes sure the database name is a template migrated to
// the latest version, and notes that it is in use.
func ensureTemplate(ctx context.Context, admin *pgx.Conn, name string, logf func(string, ...any)) error {
	return ensureShapedTemplate(ctx, admin, name, nil, logf)
}

// ensureShapedTemplate is ensureTemplate for a template that shape, when
// not nil, rebuilds once it is migrated.
func ensureShapedTemplate(ctx context.Context, admin *pgx.Conn, name string, shape func(context.Context, *pgxpool.Pool) error, logf func(string, ...any)) error {
	_, ready, err := templateState(ctx, admin, name)
	if err != nil {
		return err
	}
	if ready {
		touch(ctx, admin, name, logf)
		return nil
	}
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock($1)", templateLockID); err != nil {
		return err
	}
	defer func() {
		// Closing the connection would release it too; a broken one is
		// closed by the caller.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, _ = admin.Exec(uctx, "SELECT pg_advisory_unlock($1)", templateLockID)
	}()
	// Another process may have made it while this one waited.
	var exists bool
	if exists, ready, err = templateState(ctx, admin, name); err != nil || ready {
		return err
	}
	if exists {
		// Not marked: its maker died before it was migrated, and with it
		// the lock. Nobody clones a database that is not marked.
		logf("dbtest: dropping %s, a template left half made", name)
		if _, err := admin.Exec(ctx, "DROP DATABASE "+ident(name)+" WITH (FORCE)"); err != nil {
			return err
		}
	}
	start := time.Now()
	if err := createTemplate(ctx, admin, name, shape); err != nil {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if _, derr := admin.Exec(dctx, "DROP DATABASE IF EXISTS "+ident(name)+" WITH (FORCE)"); derr != nil {
			logf("dbtest: dropping the half made template %s: %v", name, derr)
		}
		return err
	}
	logf("dbtest: made the template %s in %s", name, time.Since(start).Round(time.Millisecond))
	dropStale(ctx, admin, name, logf)
	return nil
}

// templateState reports whether the database exists and whether it is
// marked as a template, which it is only once migrated.
func templateState(ctx context.Context, admin *pgx.Conn, name string) (exists, ready bool, err error) {
	err = admin.QueryRow(ctx, "SELECT datistemplate FROM pg_database WHERE datname = $1", name).Scan(&ready)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, false, nil
	}
	return err == nil, ready, err
}

// createTemplate creates and migrates the database, closes every
// connection to it (a clone fails while anyone is connected to the
// template), and marks it a template nobody may connect to.
func createTemplate(ctx context.Context, admin *pgx.Conn, name string, shape func(context.Context, *pgxpool.Pool) error) error {
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+ident(name)); err != nil {
		return err
	}
	u, err := withDatabase(AdminURL(), name)
	if err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		return err
	}
	v, err := migrations.Up(ctx, pool)
	if err == nil && shape != nil {
		err = shape(ctx, pool)
	}
	if err == nil {
		// Frozen, as template0 is: once nobody may connect, only an
		// anti-wraparound autovacuum would, and a clone under way would
		// have to wait for it to go.
		_, err = pool.Exec(ctx, "VACUUM (FREEZE)")
	}
	pool.Close()
	if err != nil {
		return err
	}
	if v != migrations.Latest() {
		return fmt.Errorf("migrated to version %d, want %d", v, migrations.Latest())
	}
	if _, err := admin.Exec(ctx, "COMMENT ON DATABASE "+ident(name)+" IS "+usedLiteral(time.Now())); err != nil {
		return err
	}
	_, err = admin.Exec(ctx, "ALTER DATABASE "+ident(name)+" WITH ALLOW_CONNECTIONS false IS_TEMPLATE true")
	return err
}

// touch records that a test binary began cloning the template, which
// keeps it from other checkouts' dropStale. A failure only leaves the
// template older-looking, so it is logged and not fatal.
func touch(ctx context.Context, admin *pgx.Conn, name string, logf func(string, ...any)) {
	if _, err := admin.Exec(ctx, "COMMENT ON DATABASE "+ident(name)+" IS "+usedLiteral(time.Now())); err != nil {
		logf("dbtest: noting the use of template %s: %v", name, err)
	}
}

func usedLiteral(at time.Time) string {
	return "'" + usedComment + at.UTC().Format(time.RFC3339) + "'"
}

// dropStale drops the templates of other migration files that no test
// binary has begun cloning for staleAfter. It runs only when a new template
// was just made, under the template lock, so it never races a template's
// creation. A test binary of another checkout that found such a template
// before it went makes it again (see templateCache.clone). A template whose last
// use cannot be read is kept.
func dropStale(ctx context.Context, admin *pgx.Conn, keep string, logf func(string, ...any)) {
	rows, err := admin.Query(ctx, `SELECT datname, coalesce(shobj_description(oid, 'pg_database'), '')
		FROM pg_database WHERE datistemplate AND starts_with(datname, $1) AND datname <> $2`, templatePrefix(), keep)
	if err != nil {
		logf("dbtest: listing old templates: %v", err)
		return
	}
	type old struct{ name, comment string }
	var olds []old
	var o old
	_, err = pgx.ForEachRow(rows, []any{&o.name, &o.comment}, func() error {
		olds = append(olds, o)
		return nil
	})
	if err != nil {
		logf("dbtest: listing old templates: %v", err)
		return
	}
	for _, o := range olds {
		used, ok := lastUsed(o.comment)
		if !ok || time.Since(used) < staleAfter {
			continue
		}
		// A template cannot be dropped; a clone under way holds a lock
		// that DROP DATABASE waits for.
		if _, err := admin.Exec(ctx, "ALTER DATABASE "+ident(o.name)+" WITH IS_TEMPLATE false"); err != nil {
			logf("dbtest: dropping the unused template %s: %v", o.name, err)
			continue
		}
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(o.name)); err != nil {
			logf("dbtest: dropping the unused template %s: %v", o.name, err)
			continue
		}
		logf("dbtest: dropped the template %s, unused since %s", o.name, used.Format(time.RFC3339))
	}
}

func lastUsed(comment string) (time.Time, bool) {
	s, ok := strings.CutPrefix(comment, usedComment)
	if !ok {
		return time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339, s)
	return at, err == nil
}

func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

func redactURL(u string) string {
	cfg, err := pgx.ParseConfig(u)
	if err != nil {
		return "(unparseable URL)"
	}
	return cfg.Host + ":" + strconv.Itoa(int(cfg.Port)) + "/" + cfg.Database
}
