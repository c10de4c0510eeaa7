package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/testkit/dbtest"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

// cluster is a throwaway Postgres of one test, so that it can be stopped,
// killed or promoted without touching the server other tests share.
type cluster struct {
	bindir, dir string
	port        int
	run         []string // the command prefix that runs a binary as the cluster's owner
	settings    []string // name=value, given to the server at every start
}

func (c *cluster) url() string { return c.databaseURL("postgres") }

func (c *cluster) databaseURL(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, name)
}

// startCluster initdbs and starts a cluster from the installed Postgres
// binaries on a free port, with the server settings given (name=value). It
// fails (never skips) when there are none.
func startCluster(t *testing.T, settings ...string) *cluster {
	t.Helper()
	c := newCluster(t, settings)
	c.must(t, "initdb", "-D", c.data(), "-U", "postgres", "-A", "trust", "--no-sync", "--no-instructions")
	c.start(t)
	return c
}

// startStandby makes a streaming standby of c with pg_basebackup -R, on a
// free port of its own, and starts it. name is both its physical
// replication slot on c and the application_name it connects with, which
// is what c's synchronous_standby_names names.
func (c *cluster) startStandby(t *testing.T, name string, settings ...string) *cluster {
	t.Helper()
	s := newCluster(t, settings)
	// -R writes standby.signal, primary_conninfo (with the application_name
	// of -d) and primary_slot_name; -C -S creates the slot on the primary, so
	// that it keeps the WAL the standby has not received yet.
	s.must(t, "pg_basebackup", "-D", s.data(), "-d",
		fmt.Sprintf("host=127.0.0.1 port=%d user=postgres application_name=%s", c.port, name),
		"-R", "-X", "stream", "-C", "-S", name, "-c", "fast", "--no-sync")
	s.start(t)
	return s
}

// newCluster picks the binaries, a temporary directory owned by the
// cluster's user and a free port; the cluster is killed and its directory
// removed when the test ends.
func newCluster(t *testing.T, settings []string) *cluster {
	t.Helper()
	bindir := postgresBindir()
	if bindir == "" {
		t.Fatal("this test starts a Postgres cluster of its own and needs initdb, pg_ctl and pg_basebackup: none under " +
			"/usr/lib/postgresql/*/bin or on PATH. Install them: apt-get install postgresql")
	}
	dir, err := os.MkdirTemp("", "slotd-test-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{bindir: bindir, dir: dir, settings: settings}
	if os.Geteuid() == 0 {
		// initdb refuses to run as root: the cluster belongs to postgres.
		if _, err := user.Lookup("postgres"); err != nil {
			if out, err := exec.Command("useradd", "--system", "--no-create-home", "postgres").CombinedOutput(); err != nil {
				t.Fatalf("useradd postgres: %v\n%s", err, out)
			}
		}
		if out, err := exec.Command("chown", "postgres", dir).CombinedOutput(); err != nil {
			t.Fatalf("chown %s: %v\n%s", dir, err, out)
		}
		c.run = []string{"runuser", "-u", "postgres", "--"}
	}
	t.Cleanup(func() {
		_ = c.command("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop").Run()
		os.RemoveAll(dir)
	})
	_, portText, _ := net.SplitHostPort(servertest.FreeAddr(t))
	c.port, _ = strconv.Atoi(portText)
	return c
}

func (c *cluster) data() string { return filepath.Join(c.dir, "data") }

func (c *cluster) command(bin string, args ...string) *exec.Cmd {
	argv := append(append(append([]string{}, c.run...), filepath.Join(c.bindir, bin)), args...)
	return exec.Command(argv[0], argv[1:]...)
}

func (c *cluster) must(t *testing.T, bin string, args ...string) {
	t.Helper()
	if out, err := c.command(bin, args...).CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		t.Fatalf("%s %s: %v\n%s\nserver log:\n%s", bin, strings.Join(args, " "), err, out, log)
	}
}

// start starts the server. fsync is off for speed: no test here outlives
// a crash of the machine's kernel, only the death of Postgres processes,
// and what a process wrote before it died is in the kernel's page cache.
func (c *cluster) start(t *testing.T) {
	t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", c.port, c.dir)
	for _, s := range c.settings {
		opts += " -c " + s
	}
	c.must(t, "pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-w", "-o", opts, "start")
}

func (c *cluster) stop(t *testing.T) {
	t.Helper()
	c.must(t, "pg_ctl", "-D", c.data(), "-m", "fast", "-w", "stop")
}

// kill stops the server the way a crash does: every process quits at once,
// without a checkpoint, and open connections are cut.
func (c *cluster) kill(t *testing.T) {
	t.Helper()
	c.must(t, "pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop")
}

// promote turns a standby into a primary and waits until it takes writes.
func (c *cluster) promote(t *testing.T) {
	t.Helper()
	c.must(t, "pg_ctl", "-D", c.data(), "-w", "-t", "20", "promote")
}

// waitSyncStandby waits until c streams to the standby called name as its
// synchronous standby, and fails when it does not within ctx.
func (c *cluster) waitSyncStandby(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	pool := dbtest.Connect(t, c.url())
	defer pool.Close()
	var state, sync string
	for {
		err := pool.QueryRow(ctx, `SELECT state, sync_state FROM pg_stat_replication WHERE application_name = $1`, name).Scan(&state, &sync)
		if err == nil && state == "streaming" && sync == "sync" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("standby %s: state %q, sync_state %q (%v); want streaming and sync", name, state, sync, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// postgresBindir is the newest /usr/lib/postgresql/*/bin with initdb and
// pg_ctl, else the directory of initdb on PATH; "" when there is none.
func postgresBindir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
	for _, d := range dirs {
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "pg_ctl")) {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

func pgVersion(bindir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(bindir)))
	return v
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&0o111 != 0
}
