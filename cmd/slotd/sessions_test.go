package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

func TestSessionsCommands(t *testing.T) {
	t.Parallel()
	srv, err := server.New(server.Config{Listen: "127.0.0.1:0", Contracts: "../../contracts", Store: "memory",
		AdminKeys: "ops-admin-key-0123456789", APIKeys: "bank:bank-key-0123456789abc,shop:shop-key-0123456789abc", Session: session.Config{TrustClientClock: true}},
		slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		t.Fatal(err)
	}
	servertest.Run(t, srv.Run)
	conn := servertest.Dial(t, srv.Addr())
	ctx := context.Background()
	args, _ := structpb.NewStruct(map[string]any{"card_last4": "•• 4417"})
	tctx := contextWithKey(ctx, "bank-key-0123456789abc")
	r, err := slotdv1.NewSlotServiceClient(conn).Turn(tctx, &slotdv1.TurnRequest{ConversationId: "chat-7", Tool: "bank.open_dispute",
		TurnId: "1", Arguments: args, Now: timestamppb.New(timestamppb.Now().AsTime().Add(-48 * 3600e9))})
	if err != nil {
		t.Fatal(err)
	}

	// The address and key come from the environment, as an operator's
	// shell would hold them.
	env := map[string]string{"SLOTD_ADDR": srv.Addr(), "SLOTD_ADMIN_KEY": "ops-admin-key-0123456789"}
	run := func(args ...string) string {
		t.Helper()
		r := runCLI(t, env, append([]string{"sessions"}, args...)...)
		if r.code != 0 {
			t.Fatalf("slotd sessions %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
		}
		return r.stdout
	}
	if out := run("list"); !strings.Contains(out, r.Session.Id) || !strings.Contains(out, "bank") || !strings.Contains(out, "active") {
		t.Errorf("list:\n%s", out)
	}
	// A conversation id prefix is taken literally, and pages follow the
	// token the previous page prints.
	for i, conv := range []string{"50%-a", "500-b", "50%-c"} {
		if _, err := slotdv1.NewSlotServiceClient(conn).Turn(tctx, &slotdv1.TurnRequest{ConversationId: conv, Tool: "travel.search_flights",
			TurnId: fmt.Sprint(i), Arguments: args}); err != nil {
			t.Fatal(err)
		}
	}
	first := run("list", "--prefix", "50%", "--limit", "1")
	m := regexp.MustCompile(`\(more: --page (\S+)\)`).FindStringSubmatch(first)
	if !strings.Contains(first, "50%-a") || strings.Contains(first, "500-b") || m == nil {
		t.Fatalf("list --prefix 50%% --limit 1:\n%s", first)
	}
	env["SLOTD_SESSIONS_PREFIX"], env["SLOTD_SESSIONS_PAGE"] = "50%", m[1]
	if out := run("list", "--limit", "1"); !strings.Contains(out, "50%-c") || strings.Contains(out, "50%-a") || strings.Contains(out, "500-b") {
		t.Errorf("list with SLOTD_SESSIONS_PREFIX=50%% and the page token:\n%s", out)
	}
	delete(env, "SLOTD_SESSIONS_PREFIX")
	delete(env, "SLOTD_SESSIONS_PAGE")
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

	// Without the session's tenant: found by its id, or by a conversation
	// one tenant holds.
	if out := run("show", "--session", r.Session.Id); !strings.Contains(out, "DECISION_FILLED") {
		t.Errorf("show --session without --tenant:\n%s", out)
	}
	if out := run("show", "--conversation", "chat-7"); !strings.Contains(out, r.Session.Id) {
		t.Errorf("show --conversation without --tenant:\n%s", out)
	}
	fail := func(want string, code int, args ...string) {
		t.Helper()
		res := runCLI(t, env, append([]string{"sessions"}, args...)...)
		if res.code != code || strings.Count(res.stderr, "\n") != 1 || !strings.Contains(res.stderr, want) {
			t.Errorf("slotd sessions %s: exit %d, stderr %q; want %d and a line saying %q", strings.Join(args, " "), res.code, res.stderr, code, want)
		}
	}
	fail(`session of conversation "chat-7" under tenant "shop" not found; tenant "bank" holds it`, 1,
		"show", "--conversation", "chat-7", "--tenant", "shop")
	fail(`session of conversation "chat-9" under any tenant not found`, 1, "show", "--conversation", "chat-9")
	// A conversation id two tenants hold needs --tenant.
	if _, err := slotdv1.NewSlotServiceClient(conn).Turn(contextWithKey(ctx, "shop-key-0123456789abc"), &slotdv1.TurnRequest{
		ConversationId: "chat-7", Tool: "travel.search_flights", TurnId: "1", Arguments: args}); err != nil {
		t.Fatal(err)
	}
	fail("is held by 2 tenants", 1, "show", "--conversation", "chat-7")
	fail("with --tenant", 1, "show", "--conversation", "chat-7")
	if out := run("show", "--conversation", "chat-7", "--tenant", "shop"); !strings.Contains(out, "travel.search_flights") {
		t.Errorf("show --tenant shop:\n%s", out)
	}

	// Erasing the shop's chat-7 leaves the bank's; again, nothing is found.
	if out := run("erase", "--tenant", "shop", "--conversation", "chat-7"); !strings.Contains(out, "erased 1 sessions") ||
		strings.Contains(out, "chat-7") || !strings.Contains(out, " by key-") {
		t.Errorf("erase:\n%s", out)
	}
	if out := run("erase", "--tenant", "shop", "--conversation", "chat-7"); !strings.Contains(out, "found nothing to erase") {
		t.Errorf("erase again:\n%s", out)
	}
	fail(`session of conversation "chat-7" under tenant "shop" not found; tenant "bank" holds it`, 1,
		"show", "--conversation", "chat-7", "--tenant", "shop")
	fail("--conversation is required", 2, "erase", "--tenant", "shop")

	// Without the admin key the server refuses, and the line says what to do.
	fail("SLOTD_ADMIN_KEY", 1, "list", "--admin-key", "")
	fail("SLOTD_ADMIN_KEYS", 1, "list", "--admin-key", "bank-key-0123456789abc")
}
