// Package servertest holds what tests need around a gRPC server they run
// in-process: running it until the test ends, dialling it, waiting until
// its health says SERVING, and a log sink its goroutines may write at once.
// It imports no slotd package, so that any package's tests may use it.
package servertest

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
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

// WaitServing waits up to 30s until the gRPC health service on conn says
// SERVING, and fails the test when it does not.
func WaitServing(t testing.TB, conn *grpc.ClientConn) {
	t.Helper()
	if !Serving(conn, nil) {
		t.Fatal("slotd did not become SERVING within 30s")
	}
}

// Serving waits up to 30s until the gRPC health service on conn says
// SERVING; false when it does not, or when ended (a server's process
// exiting; nil for none) is closed first.
func Serving(conn *grpc.ClientConn, ended <-chan struct{}) bool {
	hc := healthpb.NewHealthClient(conn)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil && resp.Status == healthpb.HealthCheckResponse_SERVING {
			return true
		}
		select {
		case <-ended:
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return false
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
