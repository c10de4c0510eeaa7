// Package serving waits for a slotd to be ready: until the gRPC health
// service of a connection says SERVING. The bench, the script runner and
// tests start servers and wait for them alike. It imports no slotd
// package, so that any package and its tests may use it.
package serving

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// Within is how long Await waits for SERVING.
const Within = 30 * time.Second

// ErrNotServing is what every error of Await's is: the server did not say
// SERVING in time, ended first, or the wait was called off.
var ErrNotServing = errors.New("slotd did not become SERVING")

// Await asks conn's health service every 50 ms, each question bounded to a
// second, until it says SERVING, Within passes, ctx ends or ended (a server
// exiting; nil for none) is closed.
func Await(ctx context.Context, conn *grpc.ClientConn, ended <-chan struct{}) error {
	hc := healthpb.NewHealthClient(conn)
	for deadline := time.Now().Add(Within); time.Now().Before(deadline); {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		resp, err := hc.Check(cctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil && resp.Status == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrNotServing, context.Cause(ctx))
		case <-ended:
			return fmt.Errorf("%w: the server ended first", ErrNotServing)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("%w within %v", ErrNotServing, Within)
}
