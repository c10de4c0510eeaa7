package api_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
	"github.com/slotd/slotd/internal/session/sessiontest"
)

// serveReplica serves cat on st as a replica registered at at.
func serveReplica(t *testing.T, st *memstore.Store, cat *contract.Catalog, at time.Time) slotdv1.SlotServiceClient {
	t.Helper()
	engine := session.NewEngine(st, cat, session.Config{TrustClientClock: true})
	v := session.NewVersions(st, cat)
	if _, err := v.Register(context.Background(), "r", at); err != nil {
		t.Fatal(err)
	}
	engine.UseVersions(v)
	g := api.NewGuard(api.Limits{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := grpc.NewServer(grpc.ForceServerCodecV2(g.Codec()), grpc.ChainUnaryInterceptor(g.Recover(), g.Limit(), g.Errors()))
	api.NewSlotService(engine).Register(srv)
	lis := bufconn.Listen(1 << 20)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///slotd-test",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return slotdv1.NewSlotServiceClient(conn)
}

func TestTurnResponseCarriesTheContractVersionAndTheMigration(t *testing.T) {
	t.Parallel()
	st := memstore.New()
	cat1, cat2 := sessiontest.Catalog(t), sessiontest.DisputeV2(t, "migrate")
	a := serveReplica(t, st, cat1, time.Now().Add(-time.Hour))
	b := serveReplica(t, st, cat2, time.Now())
	ctx := t.Context()
	args, _ := structpb.NewStruct(map[string]any{"card_last4": "4417", "reason": "wrong_amount"})
	r, err := a.Turn(ctx, &slotdv1.TurnRequest{ConversationId: "c1", Tool: "bank.open_dispute", TurnId: "1", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	v1 := cat1.Get("bank.open_dispute").Version
	if r.Session.ContractVersion != v1 {
		t.Fatalf("contract_version %q, want %s", r.Session.ContractVersion, v1)
	}
	list, err := a.ListContracts(ctx, &slotdv1.ListContractsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list.Contracts, func(c *slotdv1.ContractInfo) bool { return c.Version == v1 }) {
		t.Errorf("ListContracts does not show %s", v1)
	}
	r, err = b.Turn(ctx, &slotdv1.TurnRequest{ConversationId: "c1", Tool: "bank.open_dispute", TurnId: "2"})
	if err != nil {
		t.Fatal(err)
	}
	v2 := cat2.Get("bank.open_dispute").Version
	m := r.Migration
	if m == nil || m.FromVersion != v1 || m.ToVersion != v2 || !slices.Equal(m.Refused, []string{"reason"}) || r.Session.ContractVersion != v2 {
		t.Fatalf("migration %v on %q", m, r.Session.ContractVersion)
	}
	decisions := map[string]slotdv1.Decision{}
	for _, ch := range r.Changes {
		decisions[ch.Slot] = ch.Decision
	}
	if decisions["card_last4"] != slotdv1.Decision_DECISION_MIGRATED || decisions["reason"] != slotdv1.Decision_DECISION_REJECTED {
		t.Errorf("changes %v", decisions)
	}
}
