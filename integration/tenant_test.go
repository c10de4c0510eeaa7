package integration

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/app/server"
)

const (
	bankKey  = "bank-key-0123456789abcdef"
	shopKey  = "shop-key-0123456789abcdef"
	adminKey = "ops-admin-key-0123456789abcdef"
)

func as(key string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+key)
}

func TestTenantsNeverSeeEachOther(t *testing.T) {
	t.Parallel()
	url := dbtestURL(t)
	inst := startServer(t, url, contractsDir(t), func(c *server.Config) {
		c.APIKeys = "bank:" + bankKey + ",shop:" + shopKey
		c.AdminKeys = "ops:" + adminKey
	})
	cl := inst.client
	turn := func(ctx context.Context, conv, id, args string) (*slotdv1.TurnResponse, error) {
		return cl.Turn(ctx, &slotdv1.TurnRequest{ConversationId: conv, Tool: "bank.open_dispute", TurnId: id,
			Arguments: structOf(t, args), Locale: "ru", Now: nowPB()})
	}

	// The same conversation_id under two tenants is two conversations.
	bank, err := turn(as(bankKey), "chat-1", "t1", seedFirstTurn)
	if err != nil {
		t.Fatal(err)
	}
	shop, err := turn(as(shopKey), "chat-1", "t1", `{"reason": "fraud"}`)
	if err != nil {
		t.Fatal(err)
	}
	if shop.Session.Id == bank.Session.Id || len(slots(shop)) != 1 {
		t.Fatalf("tenants share a conversation: bank %v, shop %v", bank.Session, shop.Session)
	}

	// Every RPC of the other tenant, by conversation and by session id.
	shopCtx := as(shopKey)
	checks := map[string]error{}
	_, checks["GetSession by id"] = cl.GetSession(shopCtx, &slotdv1.GetSessionRequest{SessionId: bank.Session.Id})
	_, checks["ResetSession by id"] = cl.ResetSession(shopCtx, &slotdv1.ResetSessionRequest{SessionId: bank.Session.Id})
	result, _ := structpb.NewValue(map[string]any{"status": "accepted", "case_id": "X"})
	_, checks["CompleteSession by id"] = cl.CompleteSession(shopCtx, &slotdv1.CompleteSessionRequest{SessionId: bank.Session.Id,
		Outcome: &slotdv1.CompleteSessionRequest_Result{Result: result}})
	for name, err := range checks {
		if c := status.Code(err); c != codes.NotFound && c != codes.PermissionDenied {
			t.Errorf("%s across tenants: %v, want NotFound or PermissionDenied", name, err)
		}
	}
	// Shop resetting its own "chat-1" leaves the bank's untouched.
	if _, err := cl.ResetSession(shopCtx, &slotdv1.ResetSessionRequest{ConversationId: "chat-1"}); err != nil {
		t.Fatal(err)
	}
	got, err := cl.GetSession(as(bankKey), &slotdv1.GetSessionRequest{ConversationId: "chat-1"})
	if err != nil || got.Session.Id != bank.Session.Id || got.Session.Version != 1 || len(got.Session.Slots.AsMap()) != 3 {
		t.Errorf("bank's session changed by the shop: %v, %v", got, err)
	}

	// Keys: none, wrong, tenant on admin, admin on tenant.
	for name, tc := range map[string]struct {
		ctx  context.Context
		call func(ctx context.Context) error
		want codes.Code
	}{
		"no key": {context.Background(), func(ctx context.Context) error {
			_, err := turn(ctx, "c", "t", `{}`)
			return err
		}, codes.Unauthenticated},
		"wrong key": {as("not-a-key-0123456789"), func(ctx context.Context) error {
			_, err := turn(ctx, "c", "t", `{}`)
			return err
		}, codes.Unauthenticated},
		"tenant key on admin": {as(bankKey), func(ctx context.Context) error {
			_, err := inst.admin.ListSessions(ctx, &slotdv1.ListSessionsRequest{})
			return err
		}, codes.PermissionDenied},
		"tenant key on reset-stale": {as(bankKey), func(ctx context.Context) error {
			_, err := inst.admin.ResetStaleSessions(ctx, &slotdv1.ResetStaleSessionsRequest{IdleLongerThan: durationpb.New(1)})
			return err
		}, codes.PermissionDenied},
		"admin key on a tenant RPC": {as(adminKey), func(ctx context.Context) error {
			_, err := turn(ctx, "c", "t", `{}`)
			return err
		}, codes.PermissionDenied},
	} {
		err := tc.call(tc.ctx)
		st := status.Convert(err)
		if st.Code() != tc.want {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
			continue
		}
		p := problemOf(t, st)
		if p.Retryable || !p.OwnerActionRequired {
			t.Errorf("%s: problem %v, want not retryable, owner action", name, p)
		}
		if strings.Contains(st.Message()+p.Detail, "0123456789") {
			t.Errorf("%s: a key leaks into the error", name)
		}
	}

	// The admin sees both tenants.
	list, err := inst.admin.ListSessions(as(adminKey), &slotdv1.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	tenants := map[string]bool{}
	for _, s := range list.Sessions {
		tenants[s.Tenant] = true
	}
	if !tenants["bank"] || !tenants["shop"] {
		t.Errorf("admin listing tenants = %v", tenants)
	}
}

func TestServeRefusesPublicAddressWithoutKeys(t *testing.T) {
	t.Parallel()
	_, err := server.New(server.Config{Listen: "0.0.0.0:0", Contracts: contractsDir(t), Store: "memory"},
		slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("serve on 0.0.0.0 without keys: %v", err)
	}
}
