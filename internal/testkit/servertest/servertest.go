// Package servertest holds what tests need around a gRPC server they run
// in-process: running it until the test ends, dialling it, waiting until
// its health says SERVING, and a log sink its goroutines may write at once.
// It imports no slotd package but serving, so that any package's tests
// may use it.
package servertest

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/slotd/slotd/internal/app/serving"
)

// Run calls run (a server's Run method) in the background until the test
// ends; then it cancels run's context and fails the test if run returned
// an error.
func Run(t testing.TB, run func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server.Run: %v", err)
		}
	})
}

// Dial is a plaintext client connection to addr, closed when the test ends.
func Dial(t testing.TB, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// WaitServing waits until the gRPC health service on conn says SERVING
// (serving.Await), and fails the test when it does not within 30s.
func WaitServing(t testing.TB, conn *grpc.ClientConn) {
	t.Helper()
	if err := serving.Await(context.Background(), conn, nil); err != nil {
		t.Fatal(err)
	}
}

// FreeAddr is a loopback address no one listened on a moment ago, for a
// process that must be told its address before it starts.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// LogBuffer is a log sink that a server's goroutines may write at once
// while the test reads it.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Metrics reads the families a /metrics listener at addr exposes, failing
// the test when it cannot.
func Metrics(t testing.TB, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}
