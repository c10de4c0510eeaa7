package serving_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/slotd/slotd/internal/app/serving"
)

// TestAwait: Await answers as soon as the health service says SERVING,
// and gives up at once, not after Within, when its context ends or the
// server ends first, saying which.
func TestAwait(t *testing.T) {
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	conn := serveHealth(t, hs)

	ended := make(chan struct{})
	time.AfterFunc(200*time.Millisecond, func() { close(ended) })
	start := time.Now()
	if err := serving.Await(context.Background(), conn, ended); !errors.Is(err, serving.ErrNotServing) ||
		!strings.Contains(err.Error(), "ended first") || time.Since(start) > 5*time.Second {
		t.Fatalf("a server that ends NOT_SERVING: %v after %v, want ErrNotServing at once", err, time.Since(start))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	if err := serving.Await(ctx, conn, nil); !errors.Is(err, serving.ErrNotServing) ||
		!errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("a context that ends: %v after %v, want ErrNotServing at once", err, time.Since(start))
	}
	time.AfterFunc(200*time.Millisecond, func() { hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING) })
	if err := serving.Await(context.Background(), conn, nil); err != nil {
		t.Fatalf("a server that comes to SERVING: %v", err)
	}
}

// hangingHealth answers no health check: each waits until its caller
// gives up.
type hangingHealth struct {
	healthpb.UnimplementedHealthServer
}

func (hangingHealth) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestAwaitBoundsEachQuestion: a health service that never answers holds
// Await a second at most per question, so that a server that ends
// meanwhile is noticed within about a second, not after Within.
func TestAwaitBoundsEachQuestion(t *testing.T) {
	conn := serveHealth(t, hangingHealth{})

	ended := make(chan struct{})
	time.AfterFunc(200*time.Millisecond, func() { close(ended) })
	// The test's own bound, well past a second: without Await's, the
	// question would hang until this ends.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	err := serving.Await(ctx, conn, ended)
	if took := time.Since(start); !errors.Is(err, serving.ErrNotServing) || took > 3*time.Second {
		t.Fatalf("a server that never answers and ends after 200ms: %v after %v, want ErrNotServing within about a second", err, took)
	}
}

// serveHealth serves hs on loopback until the test ends, and dials it.
func serveHealth(t *testing.T, hs healthpb.HealthServer) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
