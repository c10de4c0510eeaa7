package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/testkit/dbtest"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

// The tests of this file run slotd on a Postgres cluster that Patroni
// manages, as a bank runs it: etcd holds the leader lock, Patroni fails
// over and switches over, and slotd only knows both hosts' addresses. They
// need patroni and etcd, which scripts/test-ha.sh installs, and take a
// minute or two: they run under `make test-ha` (SLOTD_TEST_PATRONI=1), not
// `make test`.

// patroniTiming is the DCS settings the cluster is bootstrapped with: the
// ones docs/scaling.md recommends ("Under Patroni"). SLOTD_TEST_PATRONI_DCS
// (YAML lines, e.g. "loop_wait: 10") is appended, to measure others.
const patroniTiming = `ttl: 10
    loop_wait: 1
    retry_timeout: 3
    primary_start_timeout: 0`

// TestPatroniLosesNoAcknowledgedTurn puts slotd under load through three
// disruptions, each once the old leader is back as the synchronous
// standby: a crash of the leader's postmaster (kill -9), a planned
// switchover, and the loss of the leader's machine (its Patroni killed
// too). Throughout, orchestrators retry the same turn_id until it lands:
// no turn answered OK may be lost or applied twice, and every answer must
// be what was stored.
func TestPatroniLosesNoAcknowledgedTurn(t *testing.T) {
	if os.Getenv("SLOTD_TEST_PATRONI") != "1" {
		t.Skip("needs patroni and etcd: run by make test-ha (SLOTD_TEST_PATRONI=1)")
	}
	deadline := time.Now().Add(200 * time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	t.Cleanup(cancel)

	pc := startPatroni(ctx, t)
	inst := startServer(t, pc.url("slotd")+"&connect_timeout=2", contractsDir(t))

	for _, disruption := range []string{"crash", "switchover", "machine loss"} {
		leader, replica := pc.roles(ctx, t)
		convs := make([]string, 16)
		for i := range convs {
			convs[i] = fmt.Sprintf("patroni-%s-%02d", strings.ReplaceAll(disruption, " ", "-"), i)
		}
		r, turns := loadThrough(t, inst, convs, deadline, func() time.Time {
			switch disruption {
			case "crash":
				// The new primary is whichever server takes writes
				// first: the standby, or with primary_start_timeout
				// above 0 the crashed primary, restarted.
				leader.killPostmaster(t)
				return pc.waitWrites(ctx, t, pc.url("postgres"))
			case "switchover":
				pc.switchover(t, leader, replica)
				return pc.waitWrites(ctx, t, pc.nodeURL(replica, "postgres"))
			}
			// The leader's machine dies, its Patroni with it: the
			// standby's Patroni waits for the leader lock to expire
			// (ttl). The machine then comes back.
			if err := leader.patroni.Kill(); err != nil {
				t.Fatal(err)
			}
			leader.killPostmaster(t)
			at := pc.waitWrites(ctx, t, pc.url("postgres"))
			leader.start()
			return at
		})
		if t.Failed() {
			return
		}
		t.Logf("%s of %s: %s", disruption, leader.name, r.summary())
		// The old leader comes back as the synchronous standby; until it
		// does, commits wait for no one (synchronous_mode_strict is off).
		pc.waitHealthy(ctx, t)
		leader, _ = pc.roles(ctx, t)
		assertAppliedOnce(ctx, t, pc.nodeURL(leader, "slotd"), convs, turns, r.acked)
		assertAnswersStored(ctx, t, pc.nodeURL(leader, "slotd"), r.acked)
	}
}

// loadResult is what orchestrators saw through one disruption.
type loadResult struct {
	acked      map[string]*slotdv1.TurnResponse // turn_id → the OK answer
	ackedEarly int                              // of them, answered before the disruption
	disrupted  time.Time                        // when the disruption began
	promoted   time.Time                        // when the new primary took writes
	answers    []time.Time                      // every OK answer, in order
	failed     map[codes.Code]int               // failed calls since the disruption, by code
	replayed   int                              // OK answers that were a stored response
}

// summary is the recovery time and the failures, for the test's log.
func (r *loadResult) summary() string {
	var gap time.Duration
	var firstAfter time.Time
	for i, a := range r.answers {
		if i > 0 && a.After(r.disrupted) && a.Sub(r.answers[i-1]) > gap {
			gap = a.Sub(r.answers[i-1])
		}
		if firstAfter.IsZero() && a.After(r.promoted) {
			firstAfter = a
		}
	}
	nFailed := 0
	for _, n := range r.failed {
		nFailed += n
	}
	return fmt.Sprintf("no turn acknowledged for %s (the longest gap); the new primary took writes %s after the disruption began, "+
		"slotd's first answer after that came %s later; %d turns acknowledged before, %d after; %d calls failed (%s), all retryable; %d replays",
		gap.Round(time.Millisecond), r.promoted.Sub(r.disrupted).Round(time.Millisecond), firstAfter.Sub(r.promoted).Round(time.Millisecond),
		r.ackedEarly, len(r.acked)-r.ackedEarly, nFailed, codeCounts(r.failed), r.replayed)
}

// loadThrough drives the conversations, one worker each, with turns of
// manySlotsTurn, retrying each turn_id until it lands. Once ten turns of
// each are in, it runs disrupt, which returns when the new primary took
// writes; the load goes on until five turns a conversation more have
// landed after that, and ends with every conversation at the same number
// of turns, which it returns.
func loadThrough(t *testing.T, inst *instance, convs []string, deadline time.Time, disrupt func() time.Time) (*loadResult, int) {
	t.Helper()
	r := &loadResult{acked: map[string]*slotdv1.TurnResponse{}, failed: map[codes.Code]int{}}
	var mu sync.Mutex
	observe := func(turnID string, a attempt) {
		mu.Lock()
		defer mu.Unlock()
		if a.err != nil {
			if !r.disrupted.IsZero() {
				r.failed[status.Code(a.err)]++
			}
			return
		}
		r.acked[turnID] = a.resp
		r.answers = append(r.answers, a.answered)
		if r.disrupted.IsZero() {
			r.ackedEarly++
		}
		if a.replayed {
			r.replayed++
		}
	}
	var done, last, stopAt atomic.Int64 // turns landed; the highest turn number landed; the turn to stop at (0: go on)
	var wg sync.WaitGroup
	for _, conv := range convs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 1; stopAt.Load() == 0 || j <= int(stopAt.Load()); j++ {
				req := manySlotsTurn(t, conv, j)
				if _, ok := landTurn(t, func() slotdv1.SlotServiceClient { return inst.client }, req, deadline,
					func(a attempt) { observe(req.TurnId, a) }); !ok {
					return
				}
				done.Add(1)
				for l := last.Load(); int64(j) > l && !last.CompareAndSwap(l, int64(j)); l = last.Load() {
				}
			}
		}()
	}
	stop := func() int {
		stopAt.Store(last.Load() + 1)
		wg.Wait()
		return int(stopAt.Load())
	}
	waitTurns := func(n int64, what string) bool {
		for done.Load() < n {
			if time.Now().After(deadline) || t.Failed() {
				stop()
				t.Errorf("only %d turns landed by the deadline, waiting for %d (%s)", done.Load(), n, what)
				return false
			}
			time.Sleep(time.Millisecond)
		}
		return true
	}
	if !waitTurns(int64(10*len(convs)), "before the disruption") {
		return r, 0
	}
	mu.Lock()
	r.disrupted = time.Now()
	mu.Unlock()
	r.promoted = disrupt()
	if !waitTurns(done.Load()+int64(5*len(convs)), "after the new primary took writes") {
		return r, 0
	}
	turns := stop()
	mu.Lock()
	defer mu.Unlock()
	return r, turns
}

// assertAnswersStored checks that each acknowledged answer is the turn
// stored at url: the same session, at the same version, holding the value
// the turn set.
func assertAnswersStored(ctx context.Context, t *testing.T, url string, acked map[string]*slotdv1.TurnResponse) {
	t.Helper()
	pool := dbtest.Connect(t, url)
	rows, err := pool.Query(ctx, `SELECT turn_id, session_id::text, version FROM turns`)
	if err != nil {
		t.Fatal(err)
	}
	type stored struct {
		session string
		version int64
	}
	byTurn := map[string]stored{}
	for rows.Next() {
		var id string
		var s stored
		if err := rows.Scan(&id, &s.session, &s.version); err != nil {
			t.Fatal(err)
		}
		byTurn[id] = s
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for id, resp := range acked {
		s, ok := byTurn[id]
		got := stored{resp.GetSession().GetId(), resp.GetSession().GetVersion()}
		if !ok || got != s {
			t.Errorf("%s: answered %+v, stored %+v (stored: %v)", id, got, s, ok)
			continue
		}
		j := int(s.version)
		slot, want := fmt.Sprintf("slot_%02d", (j-1)%20+1), fmt.Sprintf("value %d", j)
		if v := resp.GetSession().GetSlots().GetFields()[slot].GetStringValue(); v != want {
			t.Errorf("%s: answered %s = %q, want %q", id, slot, v, want)
		}
	}
}

// patroni is a two-node Patroni cluster on loopback, with etcd as its DCS,
// in synchronous mode.
type patroni struct {
	dir    string
	config string // a node's configuration file, for patronictl
	nodes  []*patroniNode
}

// patroniNode is one Patroni and the Postgres it runs.
type patroniNode struct {
	name            string
	dir             string
	pgPort, apiPort int
	patroni         *os.Process
	start           func() // starts its Patroni (again)
}

func (n *patroniNode) data() string { return filepath.Join(n.dir, "data") }

func (n *patroniNode) api(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", n.apiPort, path)
}

// url is slotd's URL, naming both hosts: a connection goes to whichever
// takes writes.
func (pc *patroni) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/%s?sslmode=disable&target_session_attrs=read-write",
		pc.nodes[0].pgPort, pc.nodes[1].pgPort, db)
}

func (pc *patroni) nodeURL(n *patroniNode, db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", n.pgPort, db)
}

// startPatroni starts etcd and two Patronis at once (one bootstraps the
// cluster, the other clones it), waits until the second streams as the
// synchronous standby, and creates the database slotd. Postgres runs as
// the postgres user when the test runs as root, which initdb requires.
func startPatroni(ctx context.Context, t *testing.T) *patroni {
	t.Helper()
	bindir := postgresBindir()
	if bindir == "" {
		t.Fatal("no Postgres binaries (apt-get install postgresql)")
	}
	patroniBin, err := exec.LookPath("patroni")
	if err != nil {
		t.Fatal("no patroni on PATH: scripts/test-ha.sh installs it (apt-get install patroni python3-etcd)")
	}
	etcdBin, err := exec.LookPath("etcd")
	if err != nil {
		t.Fatal("no etcd on PATH: scripts/test-ha.sh installs it (apt-get install etcd-server)")
	}
	dir, err := os.MkdirTemp("", "slotd-test-patroni-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		cred = postgresUser(t)
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}

	etcdDir := filepath.Join(dir, "etcd")
	client, peer := servertest.FreeAddr(t), servertest.FreeAddr(t)
	startDaemon(t, "etcd", filepath.Join(dir, "etcd.log"), cred, etcdBin, "--name", "etcd", "--data-dir", etcdDir,
		"--listen-client-urls", "http://"+client, "--advertise-client-urls", "http://"+client,
		"--listen-peer-urls", "http://"+peer, "--initial-advertise-peer-urls", "http://"+peer,
		"--initial-cluster", "etcd=http://"+peer)

	pc := &patroni{dir: dir}
	dcs := patroniTiming
	if extra := os.Getenv("SLOTD_TEST_PATRONI_DCS"); extra != "" {
		dcs += "\n    " + strings.ReplaceAll(strings.TrimSpace(extra), "\n", "\n    ")
	}
	for i := 1; i <= 2; i++ {
		n := &patroniNode{name: fmt.Sprintf("pg%d", i), dir: filepath.Join(dir, fmt.Sprintf("pg%d", i)),
			pgPort: freePort(t), apiPort: freePort(t)}
		if err := os.Mkdir(n.dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if cred != nil {
			if err := os.Chown(n.dir, int(cred.Uid), int(cred.Gid)); err != nil {
				t.Fatal(err)
			}
		}
		config := filepath.Join(n.dir, "patroni.yml")
		if err := os.WriteFile(config, []byte(patroniConfig(n, client, bindir, dcs)), 0o644); err != nil {
			t.Fatal(err)
		}
		pc.nodes = append(pc.nodes, n)
		pc.config = config
		n.start = func() {
			n.patroni = startDaemon(t, n.name, filepath.Join(n.dir, "patroni.log"), cred, patroniBin, config)
		}
		n.start()
	}
	// A Postgres outlives a Patroni that is killed: stop both (cleanups
	// run last-registered first, so after the Patronis ended).
	t.Cleanup(func() {
		for _, n := range pc.nodes {
			cmd := exec.Command(filepath.Join(bindir, "pg_ctl"), "-D", n.data(), "-m", "immediate", "-w", "stop")
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
			_ = cmd.Run()
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range pc.nodes {
				b, _ := os.ReadFile(filepath.Join(n.dir, "patroni.log"))
				t.Logf("%s's Patroni log:\n%s", n.name, tail(string(b), 3000))
			}
		}
	})

	pc.waitHealthy(ctx, t)
	leader, _ := pc.roles(ctx, t)
	admin := dbtest.Connect(t, pc.nodeURL(leader, "postgres"))
	defer admin.Close()
	if _, err := admin.Exec(ctx, "CREATE DATABASE slotd"); err != nil {
		t.Fatal(err)
	}
	return pc
}

// patroniConfig is a node's patroni.yml. Replication and pg_rewind connect
// as trusted loopback users; Patroni still wants passwords to write its
// pgpass.
func patroniConfig(n *patroniNode, etcd, bindir, dcs string) string {
	return fmt.Sprintf(`scope: slotd-test
name: %[1]s
restapi:
  listen: 127.0.0.1:%[2]d
  connect_address: 127.0.0.1:%[2]d
etcd3:
  hosts: %[3]s
bootstrap:
  dcs:
    %[4]s
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        fsync: "off"
        max_connections: 100
postgresql:
  listen: 127.0.0.1:%[5]d
  connect_address: 127.0.0.1:%[5]d
  data_dir: %[6]s
  bin_dir: %[7]s
  pgpass: %[8]s/pgpass
  basebackup:
    - checkpoint: fast
  parameters:
    unix_socket_directories: %[8]s
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
  authentication:
    superuser:
      username: postgres
      password: postgres
    replication:
      username: replicator
      password: replicator
    rewind:
      username: postgres
      password: postgres
`, n.name, n.apiPort, etcd, dcs, n.pgPort, n.data(), bindir, n.dir)
}

// startDaemon runs a long-lived process (as cred's user, when not nil),
// its output appended to logPath, and kills it when the test ends.
func startDaemon(t *testing.T, name, logPath string, cred *syscall.Credential, bin string, args ...string) *os.Process {
	t.Helper()
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Dir = filepath.Dir(logPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if cred != nil {
		cmd.Env = append(os.Environ(), "HOME="+filepath.Dir(logPath))
		if err := os.Chown(logPath, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		// Patroni stops its Postgres on SIGTERM; give it a moment.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logFile.Close()
	})
	return cmd.Process
}

// postgresUser is the postgres OS user, created when missing.
func postgresUser(t *testing.T) *syscall.Credential {
	t.Helper()
	u, err := user.Lookup("postgres")
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "postgres").CombinedOutput(); err != nil {
			t.Fatalf("useradd postgres: %v\n%s", err, out)
		}
		if u, err = user.Lookup("postgres"); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

func freePort(t *testing.T) int {
	t.Helper()
	_, p, _ := net.SplitHostPort(servertest.FreeAddr(t))
	port, _ := strconv.Atoi(p)
	return port
}

// member is a node as Patroni's GET /cluster lists it.
type member struct {
	Name  string `json:"name"`
	Role  string `json:"role"`
	State string `json:"state"`
}

// members asks any node's Patroni for the cluster's members.
func (pc *patroni) members(ctx context.Context) ([]member, error) {
	var last error
	for _, n := range pc.nodes {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, n.api("/cluster"), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			last = err
			continue
		}
		var c struct {
			Members []member `json:"members"`
		}
		err = json.NewDecoder(resp.Body).Decode(&c)
		resp.Body.Close()
		if err == nil {
			return c.Members, nil
		}
		last = err
	}
	return nil, last
}

// roles is the leader and the synchronous standby, as Patroni sees them.
func (pc *patroni) roles(ctx context.Context, t *testing.T) (leader, standby *patroniNode) {
	t.Helper()
	ms, err := pc.members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		for _, n := range pc.nodes {
			if n.name == m.Name && m.Role == "leader" {
				leader = n
			} else if n.name == m.Name && m.Role == "sync_standby" {
				standby = n
			}
		}
	}
	if leader == nil || standby == nil {
		t.Fatalf("members %+v: want a leader and a sync_standby", ms)
	}
	return leader, standby
}

// waitHealthy waits until Patroni lists a running leader and a
// synchronous standby, and the leader streams to it synchronously.
func (pc *patroni) waitHealthy(ctx context.Context, t *testing.T) {
	t.Helper()
	start := time.Now()
	var ms []member
	var err error
	for ctx.Err() == nil {
		ms, err = pc.members(ctx)
		var leader *patroniNode
		sync := false
		for _, m := range ms {
			for _, n := range pc.nodes {
				if n.name == m.Name && m.Role == "leader" && m.State == "running" {
					leader = n
				}
			}
			sync = sync || (m.Role == "sync_standby" && (m.State == "running" || m.State == "streaming"))
		}
		if leader != nil && sync && pc.streamsSync(ctx, leader) {
			t.Logf("Patroni cluster healthy after %s: %+v", time.Since(start).Round(time.Millisecond), ms)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no healthy Patroni cluster (a leader and a streaming synchronous standby) after %s: %+v (%v)",
		time.Since(start).Round(time.Second), ms, err)
}

// streamsSync reports whether n streams to a synchronous standby.
func (pc *patroni) streamsSync(ctx context.Context, n *patroniNode) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pc.nodeURL(n, "postgres"))
	if err != nil {
		return false
	}
	defer conn.Close(ctx)
	var ok bool
	err = conn.QueryRow(ctx, `SELECT count(*) > 0 FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = 'sync'`).Scan(&ok)
	return err == nil && ok
}

// waitWrites polls url with new connections until one takes writes, and
// returns when; the zero time when ctx ends first.
func (pc *patroni) waitWrites(ctx context.Context, t *testing.T, url string) time.Time {
	t.Helper()
	for ctx.Err() == nil {
		connCtx, cancel := context.WithTimeout(ctx, time.Second)
		conn, err := pgx.Connect(connCtx, url)
		if err == nil {
			var inRecovery bool
			err = conn.QueryRow(connCtx, `SELECT pg_is_in_recovery()`).Scan(&inRecovery)
			conn.Close(connCtx)
			if err == nil && !inRecovery {
				cancel()
				return time.Now()
			}
		}
		cancel()
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("no server of %s took writes", url)
	return time.Time{}
}

// killPostmaster kills n's postmaster as a crash would (kill -9): its
// backends notice and quit, and nothing is checkpointed.
func (n *patroniNode) killPostmaster(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(n.data(), "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pidText, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(pidText))
	if err != nil {
		t.Fatalf("postmaster.pid: %q", pidText)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d: %v", pid, err)
	}
}

// switchover asks Patroni for a planned switchover from leader to
// candidate; patronictl returns once it is done.
func (pc *patroni) switchover(t *testing.T, leader, candidate *patroniNode) {
	t.Helper()
	out, err := exec.Command("patronictl", "-c", pc.config, "switchover", "--leader", leader.name,
		"--candidate", candidate.name, "--force", "slotd-test").CombinedOutput()
	if err != nil {
		t.Fatalf("patronictl switchover: %v\n%s", err, out)
	}
}
