package dbtest

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	osexec "os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PgBouncer is a pgbouncer in transaction pooling mode in front of the
// test Postgres, as a bank's estate puts one in front of slotd's database.
type PgBouncer struct {
	// Addr is where it listens: 127.0.0.1 and a free port.
	Addr string
	log  *syncBuffer
}

// Log is what pgbouncer logged so far: a client's login names its
// database ("login attempt: db=NAME ...").
func (b *PgBouncer) Log() string { return b.log.String() }

// URL is url (a test database's) through the pooler: the same database,
// user and parameters at the pooler's address.
func (b *PgBouncer) URL(t testing.TB, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	u.Host = b.Addr
	return u.String()
}

// StartPgBouncer starts a throwaway pgbouncer (transaction pooling, every
// database of the test server by its own name) on a free port, stopped
// when t ends. The test fails when pgbouncer is not installed:
// scripts/with-postgres.sh installs it.
func StartPgBouncer(t testing.TB) *PgBouncer {
	t.Helper()
	bin, err := osexec.LookPath("pgbouncer")
	if err != nil {
		for _, p := range []string{"/usr/sbin/pgbouncer", "/usr/local/sbin/pgbouncer"} {
			if _, serr := os.Stat(p); serr == nil {
				bin, err = p, nil
				break
			}
		}
	}
	if err != nil {
		t.Fatalf("dbtest: pgbouncer is needed for this test and is not installed; " +
			"run the tests with scripts/with-postgres.sh (it installs it), or apt-get install pgbouncer")
	}
	cfg, err := pgx.ParseConfig(AdminURL())
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	dir := t.TempDir()
	users := filepath.Join(dir, "users.txt")
	write(t, users, fmt.Sprintf("%s %s\n", quoteBouncer(cfg.User), quoteBouncer(cfg.Password)))
	host := cfg.Host
	var last error
	for range 5 {
		port, err := freePort()
		if err != nil {
			t.Fatalf("dbtest: %v", err)
		}
		ini := filepath.Join(dir, "pgbouncer.ini")
		write(t, ini, fmt.Sprintf(`[databases]
* = host=%s port=%d

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = 8
max_client_conn = 400
server_login_retry = 1
`, host, cfg.Port, port, users))
		b, err := startBouncer(t, bin, ini, dir, port)
		if err == nil {
			return b
		}
		last = err
	}
	t.Fatalf("dbtest: starting pgbouncer: %v", last)
	return nil
}

// startBouncer starts pgbouncer on port and waits until it accepts connections.
func startBouncer(t testing.TB, bin, ini, dir string, port int) (*PgBouncer, error) {
	args := []string{ini}
	if os.Geteuid() == 0 {
		// pgbouncer refuses to run as root.
		u, err := user.Lookup("postgres")
		if err != nil {
			u, err = user.Lookup("nobody")
		}
		if err != nil {
			return nil, fmt.Errorf("pgbouncer will not run as root, and there is no postgres or nobody user to run it as")
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			return nil, err
		}
		args = append([]string{"-u", u.Username}, args...)
	}
	cmd := osexec.Command(bin, args...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-done:
			return nil, fmt.Errorf("pgbouncer exited: %s", out.String())
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			return nil, fmt.Errorf("pgbouncer did not listen on %s within 10s: %s", addr, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("pgbouncer's log:\n%s", out.String())
		}
	})
	return &PgBouncer{Addr: addr, log: out}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func write(t testing.TB, name, text string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatalf("dbtest: %v", err)
	}
}

// quoteBouncer quotes s for pgbouncer's auth_file.
func quoteBouncer(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// syncBuffer is a bytes.Buffer the process and the test may use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
