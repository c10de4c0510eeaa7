package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/slotd/slotd/internal/app/serving"
)

// Attacks (floods, deep nesting) are played against slotd in a process of
// its own whose address space is capped: a regression that makes a request
// cost without bound kills that process, never the machine running the
// tests.

// slotdBuild is one build of cmd/slotd, made once per test binary.
type slotdBuild struct {
	once sync.Once
	path string
	out  []byte
	err  error
}

// slotdBuilds are the builds by their tags: none, or redactOffTag.
var slotdBuilds = map[string]*slotdBuild{"": {}, redactOffTag: {}}

// TestMain removes the slotd binaries the tests built, once all are done.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, b := range slotdBuilds {
		if b.path != "" {
			os.RemoveAll(filepath.Dir(b.path))
		}
	}
	os.Exit(code)
}

// buildSlotd builds cmd/slotd once per test binary, without cgo so that the
// address-space cap bounds the Go heap rather than C threads' stacks.
func buildSlotd(t *testing.T) string { return buildSlotdTagged(t, "") }

// buildSlotdTagged builds cmd/slotd with the build tags given.
func buildSlotdTagged(t *testing.T, tags string) string {
	t.Helper()
	b := slotdBuilds[tags]
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "slotd-bin-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, "slotd")
		cmd := exec.Command("go", "build", "-tags", tags, "-o", b.path, "../cmd/slotd")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		b.out, b.err = cmd.CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("go build -tags %q ../cmd/slotd: %v\n%s", tags, b.err, b.out)
	}
	return b.path
}

// process is slotd serve running as a child process.
type process struct {
	addr, httpAddr, metricsAddr string
	// log is the path of the file its standard error goes to.
	log string
	cmd *exec.Cmd
	// done is closed when the process has ended.
	done chan struct{}
}

// addressSpace caps a child slotd: its baseline is some 750 MB of address
// space (reservations, not memory in use), so this leaves it under 800 MB
// to grow before an allocation fails and it dies.
const addressSpace = 1536 << 20

// startProcess runs slotd serve on loopback ports of its own choosing
// with the memory store and the given extra flags, its address space
// capped, and waits until it serves.
func startProcess(t *testing.T, flags ...string) *process {
	t.Helper()
	return startBinaryEnv(t, buildSlotd(t), []string{"GOMEMLIMIT=512MiB"}, flags...)
}

// startBinary is startProcess with a build of slotd's own.
func startBinary(t *testing.T, bin string, flags ...string) *process {
	t.Helper()
	return startBinaryEnv(t, bin, []string{"GOMEMLIMIT=512MiB"}, flags...)
}

// startBinaryEnv starts bin with env added to its environment.
func startBinaryEnv(t *testing.T, bin string, env []string, flags ...string) *process {
	t.Helper()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Fatal("this test caps the memory of the slotd it attacks with prlimit (util-linux), which is not on PATH")
	}
	p, _ := launch(t, prlimit, bin, env, flags)
	if err := p.serving(t); err != nil {
		t.Fatal(err)
	}
	return p
}

// launch starts one slotd process, env added to its environment, with
// every listener on port 0, and returns it with its log's path once its
// log names the addresses it bound (or it has ended: then they are
// empty). A port picked free beforehand could be taken by another test's
// process before slotd binds it; one slotd binds itself is its own.
func launch(t *testing.T, prlimit, bin string, env, flags []string) (*process, string) {
	t.Helper()
	const port0 = "127.0.0.1:0"
	p := &process{done: make(chan struct{})}
	args := append([]string{"--as=" + strconv.Itoa(addressSpace), "--", bin, "serve", "--store", "memory",
		"--contracts", contractsDir(t), "--listen", port0, "--http-listen", port0, "--metrics-listen", port0,
		"--client-clock", "trust"}, flags...)
	p.cmd = exec.Command(prlimit, args...)
	p.cmd.Env = append(os.Environ(), env...)
	logFile, err := os.Create(filepath.Join(t.TempDir(), "slotd.log"))
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr, p.log = logFile, logFile.Name()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("slotd's log:\n%s", crash(string(b), 4000))
		}
	})
	p.readAddrs(t)
	return p, logFile.Name()
}

// readAddrs waits for the lines slotd logs once it listens ("slotd
// serving" with the gRPC and HTTP addresses, "metrics serving" with the
// metrics one) and takes the addresses from them; it returns early when
// the process ends.
func (p *process) readAddrs(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(p.log)
		for line := range strings.Lines(string(b)) {
			var l struct{ Msg, Addr, HTTP string }
			if json.Unmarshal([]byte(line), &l) != nil {
				continue
			}
			switch l.Msg {
			case "slotd serving":
				p.addr, p.httpAddr = l.Addr, l.HTTP
			case "metrics serving":
				p.metricsAddr = l.Addr
			}
		}
		switch {
		case p.addr != "" && p.httpAddr != "" && p.metricsAddr != "":
			return
		case !p.alive():
			return
		case time.Now().After(deadline):
			t.Fatalf("slotd logged no addresses within 30s:\n%s", tail(string(b), 2000))
		}
	}
}

// serving waits until the process serves (serving.Await); an error when
// it did not in time, or ended first. Its connection is closed when it answers, not left
// to the process's attackers.
func (p *process) serving(t *testing.T) error {
	t.Helper()
	conn, err := grpc.NewClient(p.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return serving.Await(context.Background(), conn, p.done)
}

// alive reports whether the process still runs.
func (p *process) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// metrics reads numbers of the process's /metrics: each name's first
// sample without labels.
func (p *process) metrics(t *testing.T, names ...string) map[string]float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.metricsAddr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /metrics of slotd: %v (the process may have died)", err)
	}
	defer resp.Body.Close()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || !want[name] {
			continue
		}
		if _, seen := out[name]; !seen {
			f, err := strconv.ParseFloat(val, 64)
			if err != nil {
				t.Fatalf("metric %s = %q", name, val)
			}
			out[name] = f
		}
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			t.Fatalf("slotd's /metrics has no %s", n)
		}
	}
	return out
}

// crash is the start of the log's crash report (a panic or a fatal error
// with its first goroutines), or its last n bytes when it has none.
func crash(log string, n int) string {
	for _, mark := range []string{"\nfatal error: ", "\npanic: ", "\nruntime: "} {
		if i := strings.Index(log, mark); i >= 0 {
			return tail(log[:i], 600) + log[i:min(len(log), i+n)] + "…"
		}
	}
	return tail(log, n)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }
