package script

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

// realServer starts slotd in-process on the memory store with the shipped
// contracts: the runner's own tests are about the runner, so they need no
// Postgres (integration/scripts_test.go plays the shipped scripts on it).
func realServer(t *testing.T) *grpc.ClientConn {
	t.Helper()
	return realServerClock(t, true)
}

// realServerClock is realServer, trusting client clocks or not (as slotd
// serve does by default).
func realServerClock(t *testing.T, trust bool) *grpc.ClientConn {
	t.Helper()
	srv, err := server.New(server.Config{Listen: "127.0.0.1:0", Contracts: "../../contracts", Store: "memory", Session: session.Config{TrustClientClock: trust}},
		slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	servertest.Run(t, srv.Run)
	conn := servertest.Dial(t, srv.Addr())
	servertest.WaitServing(t, conn)
	return conn
}

// fakeSlots is a SlotService that records what it receives and answers
// what the test says.
type fakeSlots struct {
	slotdv1.UnimplementedSlotServiceServer

	mu        sync.Mutex
	turns     []*slotdv1.TurnRequest
	resets    []*slotdv1.ResetSessionRequest
	completes []*slotdv1.CompleteSessionRequest
	auth      []string

	turn func(*slotdv1.TurnRequest) (*slotdv1.TurnResponse, error)
}

func (f *fakeSlots) note(ctx context.Context) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.auth = append(f.auth, strings.Join(md.Get("authorization"), ","))
}

func (f *fakeSlots) Turn(ctx context.Context, req *slotdv1.TurnRequest) (*slotdv1.TurnResponse, error) {
	f.mu.Lock()
	f.turns = append(f.turns, req)
	f.note(ctx)
	f.mu.Unlock()
	if f.turn != nil {
		return f.turn(req)
	}
	return &slotdv1.TurnResponse{Action: slotdv1.Action_ACTION_READY, IdempotencyKey: "sd_" + req.TurnId, Session: &slotdv1.Session{}}, nil
}

func (f *fakeSlots) ResetSession(ctx context.Context, req *slotdv1.ResetSessionRequest) (*slotdv1.ResetSessionResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resets = append(f.resets, req)
	f.note(ctx)
	return &slotdv1.ResetSessionResponse{Session: &slotdv1.Session{Status: slotdv1.SessionStatus_SESSION_STATUS_RESET}}, nil
}

func (f *fakeSlots) CompleteSession(ctx context.Context, req *slotdv1.CompleteSessionRequest) (*slotdv1.CompleteSessionResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.completes = append(f.completes, req)
	f.note(ctx)
	return &slotdv1.CompleteSessionResponse{Session: &slotdv1.Session{Status: slotdv1.SessionStatus_SESSION_STATUS_COMPLETED}}, nil
}

func fakeServer(t *testing.T, f *fakeSlots) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	slotdv1.RegisterSlotServiceServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return servertest.Dial(t, lis.Addr().String())
}

// parseOne parses a script written in a test; the file name is x.yaml.
func parseOne(t *testing.T, src string) *Script {
	t.Helper()
	scripts, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if len(scripts) != 1 {
		t.Fatalf("parsed %d scripts, want 1", len(scripts))
	}
	return scripts[0]
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
