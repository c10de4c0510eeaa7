package integration

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/testkit/dbtest"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

// contractsDir is the shipped contracts plus test.many_slots, a contract of
// twenty independent slots for concurrency tests.
func contractsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	shipped, err := filepath.Glob("../contracts/*.json")
	if err != nil || len(shipped) == 0 {
		t.Fatalf("no shipped contracts: %v", err)
	}
	for _, f := range shipped {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	props := ""
	for i := 1; i <= 20; i++ {
		if i > 1 {
			props += ","
		}
		props += fmt.Sprintf(`"slot_%02d": {"type": "string", "x-slotd": {"ask": {"en": "Value %d?"}}}`, i, i)
	}
	// Two small tools sharing slot names with bank.open_dispute, to test
	// carry-over on a change of topic (one refuses it).
	for name, carry := range map[string]string{"test.carry": "", "test.no_carry": `, "carry_over": false`} {
		doc := `{"type": "object", "properties": {
			"card_last4": {"type": "string", "pattern": "^[0-9]{4}$", "x-slotd": {"normalize": ["last4"]}},
			"amount": {"type": "integer", "minimum": 1},
			"note": {"type": "string"}},
			"required": ["card_last4", "note"], "x-slotd": {"name": "` + name + `"` + carry + `}}`
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	many := `{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
		"properties": {` + props + `}, "x-slotd": {"name": "test.many_slots"}}`
	if err := os.WriteFile(filepath.Join(dir, "test.many_slots.json"), []byte(many), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

type instance struct {
	srv    *server.Server
	conn   *grpc.ClientConn
	client slotdv1.SlotServiceClient
	admin  slotdv1.AdminServiceClient
}

// startServer runs slotd in-process on :0 against databaseURL (or the
// memory store when databaseURL is "") and waits until health says SERVING.
func startServer(t *testing.T, databaseURL, contracts string, opts ...func(*server.Config)) *instance {
	t.Helper()
	// The tests replay conversations at the dispute example's dates: the server
	// trusts their clocks.
	cfg := server.Config{Listen: "127.0.0.1:0", Contracts: contracts, Store: "postgres", DatabaseURL: databaseURL,
		HealthInterval: 100 * time.Millisecond, Session: session.Config{TrustClientClock: true}}
	if databaseURL == "" {
		cfg.Store = "memory"
	}
	for _, o := range opts {
		o(&cfg)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := server.New(cfg, log)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	servertest.Run(t, srv.Run)
	conn := servertest.Dial(t, srv.Addr())
	servertest.WaitServing(t, conn)
	return &instance{srv: srv, conn: conn, client: slotdv1.NewSlotServiceClient(conn), admin: slotdv1.NewAdminServiceClient(conn)}
}

// newPostgresServer starts slotd on a fresh database of its own.
func newPostgresServer(t *testing.T) (*instance, string) {
	t.Helper()
	url := dbtest.NewDatabase(t)
	return startServer(t, url, contractsDir(t)), url
}
