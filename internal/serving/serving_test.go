package serving_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/slotd/slotd/internal/serving"
)

// TestAwait: Await answers as soon as the health service says SERVING,
// and gives up at once, not after Within, when its context ends or the
// server ends first.
func TestAwait(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })

	ended := make(chan struct{})
	time.AfterFunc(200*time.Millisecond, func() { close(ended) })
	start := time.Now()
	if err := serving.Await(context.Background(), conn, ended); !errors.Is(err, serving.ErrNotServing) || time.Since(start) > 5*time.Second {
		t.Fatalf("a server that ends NOT_SERVING: %v after %v, want ErrNotServing at once", err, time.Since(start))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	if err := serving.Await(ctx, conn, nil); !errors.Is(err, serving.ErrNotServing) || time.Since(start) > 5*time.Second {
		t.Fatalf("a context that ends: %v after %v, want ErrNotServing at once", err, time.Since(start))
	}
	time.AfterFunc(200*time.Millisecond, func() { hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING) })
	if err := serving.Await(context.Background(), conn, nil); err != nil {
		t.Fatalf("a server that comes to SERVING: %v", err)
	}
}
