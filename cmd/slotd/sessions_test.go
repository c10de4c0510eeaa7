package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/server"
)

func TestSessionsCommands(t *testing.T) {
	t.Parallel()
	srv, err := server.New(server.Config{Listen: "127.0.0.1:0", Contracts: "../../contracts", Store: "memory",
		AdminKeys: "ops-admin-key-0123456789", APIKeys: "bank:bank-key-0123456789abc", TrustClientClock: true},
		slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	args, _ := structpb.NewStruct(map[string]any{"card_last4": "•• 4417"})
	tctx := contextWithKey(ctx, "bank-key-0123456789abc")
	r, err := slotdv1.NewSlotServiceClient(conn).Turn(tctx, &slotdv1.TurnRequest{ConversationId: "chat-7", Tool: "bank.open_dispute",
		TurnId: "1", Arguments: args, Now: timestamppb.New(timestamppb.Now().AsTime().Add(-48 * 3600e9))})
	if err != nil {
		t.Fatal(err)
	}

	run := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		full := append([]string{args[0], "--addr", srv.Addr(), "--admin-key", "ops-admin-key-0123456789"}, args[1:]...)
		if err := sessionsTo(ctx, &out, full); err != nil {
			t.Fatalf("slotd sessions %s: %v", strings.Join(args, " "), err)
		}
		return out.String()
	}
	if out := run("list"); !strings.Contains(out, r.Session.Id) || !strings.Contains(out, "bank") || !strings.Contains(out, "active") {
		t.Errorf("list:\n%s", out)
	}
	if out := run("reset-stale", "--idle", "1h", "--dry-run"); !strings.Contains(out, "would reset 1 sessions") {
		t.Errorf("reset-stale --dry-run:\n%s", out)
	}
	if out := run("reset-stale", "--idle", "1h"); !strings.Contains(out, "reset 1 sessions") || !strings.Contains(out, r.Session.Id) {
		t.Errorf("reset-stale:\n%s", out)
	}
	if out := run("show", "--session", r.Session.Id, "--tenant", "bank"); !strings.Contains(out, "DECISION_CLEARED") || !strings.Contains(out, "DECISION_FILLED") {
		t.Errorf("show:\n%s", out)
	}
	if out := run("purge", "--ended", "1h", "--dry-run"); !strings.Contains(out, "would purge 0 sessions") {
		t.Errorf("purge --dry-run:\n%s", out)
	}

	// Without the admin key the server refuses.
	var out bytes.Buffer
	if err := sessionsTo(ctx, &out, []string{"list", "--addr", srv.Addr(), "--admin-key", ""}); err == nil {
		t.Error("list without an admin key was allowed")
	}
	if err := sessionsTo(ctx, &out, []string{"bogus"}); err == nil {
		t.Error("an unknown command was accepted")
	}
}
