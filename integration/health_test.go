package integration

import (
	"context"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

func TestNotServingWithoutPostgres(t *testing.T) {
	t.Parallel()
	url := "postgres://postgres@" + servertest.FreeAddr(t) + "/slotd?sslmode=disable&connect_timeout=1"
	srv, err := server.New(server.Config{Listen: "127.0.0.1:0", Contracts: contractsDir(t), DatabaseURL: url,
		HealthInterval: 100 * time.Millisecond}, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		t.Fatal(err)
	}
	servertest.Run(t, srv.Run)
	conn := servertest.Dial(t, srv.Addr())

	time.Sleep(300 * time.Millisecond)
	h, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if h.Status != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("health = %v without Postgres, want NOT_SERVING", h.Status)
	}

	tctx, tcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer tcancel()
	_, err = slotdv1.NewSlotServiceClient(conn).Turn(tctx, &slotdv1.TurnRequest{
		ConversationId: "c", Tool: "bank.open_dispute", TurnId: "t1", Arguments: structOf(t, seedFirstTurn),
	})
	st := status.Convert(err)
	if st.Code() != codes.Unavailable {
		t.Fatalf("turn without Postgres: code %v (%v), want Unavailable", st.Code(), err)
	}
	p := problemOf(t, st)
	if !p.Retryable || p.RetryAfterSeconds <= 0 || p.Type == "" {
		t.Errorf("problem = %v, want retryable with retry_after", p)
	}
	for _, leak := range []string{"127.0.0.1", "postgres://", "SQLSTATE", "dial tcp"} {
		if strings.Contains(st.Message()+p.Detail+p.Title, leak) {
			t.Errorf("the error leaks %q: %v / %v", leak, st.Message(), p)
		}
	}
}

func TestMemoryStoreDemo(t *testing.T) {
	t.Parallel()
	inst := startServer(t, "", contractsDir(t))
	c := newConvo(t, inst.client, "bank.open_dispute")
	wantAsk(t, c.send(seedFirstTurn), "reason")
	wantAsk(t, c.send(`{"reason": "Duplicate"}`), "original_operation_id")
	wantAction(t, c.send(`{"original_operation_id": "op-1"}`), slotdv1.Action_ACTION_CONFIRM)
	wantAction(t, c.confirm(true), slotdv1.Action_ACTION_READY)
}

func TestGracefulShutdownFinishesAndRefuses(t *testing.T) {
	t.Parallel()
	srv, err := server.New(server.Config{Listen: "127.0.0.1:0", Contracts: contractsDir(t), Store: "memory"},
		slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	servertest.WaitServing(t, conn)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after stop: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the stop signal")
	}
	if _, err := net.DialTimeout("tcp", srv.Addr(), time.Second); err == nil {
		t.Error("the listener still accepts connections after shutdown")
	}
}

func problemOf(t *testing.T, st *status.Status) *slotdv1.Problem {
	t.Helper()
	for _, d := range st.Details() {
		if p, ok := d.(*slotdv1.Problem); ok {
			return p
		}
	}
	t.Fatalf("status %v carries no slotd.v1.Problem", st)
	return nil
}

// Server reflection lists slotd's services, so grpcurl works without the
// proto files.
func TestReflectionListsTheServices(t *testing.T) {
	t.Parallel()
	inst := startServer(t, "", contractsDir(t))
	stream, err := reflectionpb.NewServerReflectionClient(inst.conn).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{ListServices: "*"}}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, s := range resp.GetListServicesResponse().GetService() {
		got[s.Name] = true
	}
	for _, want := range []string{"slotd.v1.SlotService", "slotd.v1.AdminService", "grpc.health.v1.Health"} {
		if !got[want] {
			t.Errorf("reflection lacks %s: %v", want, got)
		}
	}
}
