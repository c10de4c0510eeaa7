package integration

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/testkit/dbtest"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

// proxy stands between slotd and Postgres so a test can take the database
// away (every connection cut, new ones refused) and give it back, without
// touching the Postgres server other tests share.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go p.serve()
	return p
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[up] = true, true
		p.mu.Unlock()
		go func() { io.Copy(up, c); up.Close(); c.Close() }()
		go func() { io.Copy(c, up); up.Close(); c.Close() }()
	}
}

// cut closes every connection and refuses new ones until restore.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

func (p *proxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// viaProxy rewrites a database URL to go through the proxy.
func viaProxy(t *testing.T, url string, p *proxy) string {
	t.Helper()
	host := "127.0.0.1:5432"
	if u := os.Getenv("SLOTD_TEST_DATABASE_URL"); u != "" {
		host = hostOf(t, u)
	}
	return replaceHost(t, url, host, p.ln.Addr().String())
}

// retryable reports whether err is a failure the problem says to retry.
func retryable(t *testing.T, err error) bool {
	st := status.Convert(err)
	for _, d := range st.Details() {
		if p, ok := d.(*slotdv1.Problem); ok {
			return p.Retryable
		}
	}
	// Transport failures (the server is gone) carry no problem: a client
	// retries UNAVAILABLE and DEADLINE_EXCEEDED with the same turn_id.
	return st.Code() == codes.Unavailable || st.Code() == codes.DeadlineExceeded
}

// driveWithRetries sends turns turn_id by turn_id; a failure must be
// retryable, and is retried with the same turn_id until it lands.
func driveWithRetries(t *testing.T, client func() slotdv1.SlotServiceClient, conv string, turns int, failures *atomic.Int64, done ...*atomic.Int64) {
	for j := 1; j <= turns; j++ {
		countFailures := func(a attempt) {
			if a.err != nil {
				failures.Add(1)
			}
		}
		if _, ok := landTurn(t, client, manySlotsTurn(t, conv, j), time.Now().Add(60*time.Second), countFailures); !ok {
			return
		}
		for _, d := range done {
			d.Add(1)
		}
	}
}

// manySlotsTurn is turn j of conversation conv on test.many_slots: each
// turn changes exactly one slot (filled, then overwritten), to "value j".
func manySlotsTurn(t *testing.T, conv string, j int) *slotdv1.TurnRequest {
	return &slotdv1.TurnRequest{ConversationId: conv, Tool: "test.many_slots", TurnId: fmt.Sprintf("%s-%02d", conv, j),
		Arguments: structOf(t, fmt.Sprintf(`{"slot_%02d": "value %d"}`, (j-1)%20+1, j)), Now: nowPB()}
}

// attempt is one call of a turn: when it was sent, and how it ended.
type attempt struct {
	sent, answered time.Time
	resp           *slotdv1.TurnResponse
	replayed       bool // the answer is the stored response of an earlier call
	err            error
}

// landTurn sends req until it lands, retrying the same turn_id after each
// retryable failure, and gives up at deadline. It tells observe of every
// attempt and reports whether the turn landed; a failure that is not
// retryable, or the deadline, fails the test.
func landTurn(t *testing.T, client func() slotdv1.SlotServiceClient, req *slotdv1.TurnRequest, deadline time.Time, observe func(attempt)) (attempt, bool) {
	for {
		callBy := time.Now().Add(5 * time.Second)
		if callBy.After(deadline) {
			callBy = deadline
		}
		ctx, cancel := context.WithDeadline(context.Background(), callBy)
		var header metadata.MD
		a := attempt{sent: time.Now()}
		a.resp, a.err = client().Turn(ctx, req, grpc.Header(&header))
		cancel()
		a.answered = time.Now()
		a.replayed = slices.Contains(header.Get(api.ReplayedHeader), "true")
		if observe != nil {
			observe(a)
		}
		if a.err == nil {
			return a, true
		}
		if !retryable(t, a.err) {
			t.Errorf("%s: a failure that is not retryable: %v", req.TurnId, a.err)
			return a, false
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: still failing at the deadline: %v", req.TurnId, a.err)
			return a, false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// assertExactlyOnce checks each conversation's turns were each applied once.
func assertExactlyOnce(t *testing.T, url string, convs []string, turns int) {
	t.Helper()
	pool := dbtest.Connect(t, url)
	ctx := context.Background()
	for _, conv := range convs {
		var stored, distinct, version, changed int
		err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT turn_id) FROM turns WHERE conversation_id = $1`, conv).Scan(&stored, &distinct)
		if err != nil {
			t.Fatal(err)
		}
		err = pool.QueryRow(ctx, `SELECT s.version, (SELECT count(*) FROM slot_changes c WHERE c.session_id = s.id AND c.decision IN ('FILLED', 'OVERWRITTEN'))
			FROM sessions s WHERE s.conversation_id = $1 AND s.status = 'active'`, conv).Scan(&version, &changed)
		if err != nil {
			t.Fatalf("%s: %v", conv, err)
		}
		if stored != turns || distinct != turns || version != turns || changed != turns {
			t.Errorf("%s: %d turns stored (%d distinct), version %d, %d slot changes; want %d of each",
				conv, stored, distinct, version, changed, turns)
		}
	}
}

func TestPostgresOutageLosesNoTurn(t *testing.T) {
	t.Parallel()
	url := dbtest.NewDatabase(t)
	p := newProxy(t, hostOf(t, dbtest.AdminURL()))
	inst := startServer(t, viaProxy(t, url, p)+"&connect_timeout=1", contractsDir(t))
	health := healthpb.NewHealthClient(inst.conn)

	const workers, turns = 16, 40
	var failures, done atomic.Int64
	var wg sync.WaitGroup
	convs := make([]string, workers)
	for i := range convs {
		convs[i] = fmt.Sprintf("outage-%02d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			driveWithRetries(t, func() slotdv1.SlotServiceClient { return inst.client }, convs[i], turns, &failures, &done)
		}()
	}
	// Take Postgres away once the load is well under way.
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	for done.Load() < workers*turns/4 {
		select {
		case <-finished:
			t.Fatal("every conversation stopped before a quarter of the turns: see the errors above")
		case <-time.After(time.Millisecond):
		}
	}
	p.cut()
	sawNotServing := false
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if h, err := health.Check(context.Background(), &healthpb.HealthCheckRequest{}); err == nil && h.Status == healthpb.HealthCheckResponse_NOT_SERVING {
			sawNotServing = true
			break
		}
	}
	time.Sleep(500 * time.Millisecond)
	p.restore()
	wg.Wait()
	if !sawNotServing {
		t.Error("health never said NOT_SERVING while Postgres was away")
	}
	servertest.WaitServing(t, inst.conn)
	if failures.Load() == 0 {
		t.Error("no turn failed during the outage: the test did not test anything")
	}
	t.Logf("%d retryable failures during the outage", failures.Load())
	assertExactlyOnce(t, url, convs, turns)
}

func TestKilledBackendsLoseNoTurn(t *testing.T) {
	t.Parallel()
	inst, url := newPostgresServer(t)
	admin := dbtest.Connect(t, dbtest.AdminURL())
	dbname := dbName(t, url)

	const workers, turns = 16, 30
	var failures atomic.Int64
	var wg sync.WaitGroup
	convs := make([]string, workers)
	stop := make(chan struct{})
	var killed, landed atomic.Int64
	go func() {
		// Every 30 ms, once a turn has landed since the last kill: on a
		// loaded machine a turn may take longer than the interval, and a
		// killer that never waits for progress would starve every turn.
		last := int64(-1)
		for {
			select {
			case <-stop:
				return
			case <-time.After(30 * time.Millisecond):
			}
			now := landed.Load()
			if now == last {
				continue
			}
			last = now
			var n int
			_ = admin.QueryRow(context.Background(),
				`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, dbname).Scan(&n)
			killed.Add(int64(n))
		}
	}()
	for i := range convs {
		convs[i] = fmt.Sprintf("killed-%02d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			driveWithRetries(t, func() slotdv1.SlotServiceClient { return inst.client }, convs[i], turns, &failures, &landed)
		}()
	}
	wg.Wait()
	close(stop)
	t.Logf("terminated %d backends; %d retryable failures", killed.Load(), failures.Load())
	if killed.Load() == 0 {
		t.Error("no backend was terminated: the test did not test anything")
	}
	assertExactlyOnce(t, url, convs, turns)
}

func TestSlotdKilledMidLoadLosesNoTurn(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "slotd")
	build := exec.Command("go", "build", "-o", bin, "../cmd/slotd")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	url := dbtest.NewDatabase(t)
	addr := servertest.FreeAddr(t)
	dir := contractsDir(t)
	start := func() *exec.Cmd {
		// No HTTP gateway or metrics listener: their default ports may be
		// taken by anything else running on the machine.
		cmd := exec.Command(bin, "serve", "--listen", addr, "--contracts", dir, "--database-url", url,
			"--http-listen", "", "--metrics-listen", "", "--client-clock", "trust")
		cmd.Stderr = io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	proc := start()
	t.Cleanup(func() { proc.Process.Kill(); proc.Wait() })
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := slotdv1.NewSlotServiceClient(conn)
	servertest.WaitServing(t, conn)

	const workers, turns = 8, 60
	var failures, done atomic.Int64
	var wg sync.WaitGroup
	convs := make([]string, workers)
	for i := range convs {
		convs[i] = fmt.Sprintf("crash-%02d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			driveWithRetries(t, func() slotdv1.SlotServiceClient { return client }, convs[i], turns, &failures, &done)
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	for done.Load() < workers*turns/4 {
		select {
		case <-finished:
			t.Fatal("every conversation stopped before a quarter of the turns: see the errors above")
		case <-time.After(time.Millisecond):
		}
	}
	if err := proc.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	proc.Wait()
	time.Sleep(300 * time.Millisecond)
	proc = start()
	wg.Wait()
	t.Logf("%d retryable failures across the crash", failures.Load())
	if failures.Load() == 0 {
		t.Error("no turn failed across the crash: the test did not test anything")
	}
	assertExactlyOnce(t, url, convs, turns)
}
