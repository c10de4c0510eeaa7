package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
)

// newService serves a SlotService over the shipped contracts and the
// memory store, in process, behind the Guard's interceptors as slotd serves
// it, and returns a client of it.
func newService(t *testing.T) (slotdv1.SlotServiceClient, *contract.Catalog) {
	t.Helper()
	return serve(t, api.Limits{}, nil)
}

// serve is newService with limits, telling obs (when not nil) of the
// turns, those Limit refuses too.
func serve(t *testing.T, limits api.Limits, obs api.Observer) (slotdv1.SlotServiceClient, *contract.Catalog) {
	t.Helper()
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	engine := session.NewEngine(memstore.New(), cat, session.Config{TrustClientClock: true})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	g := api.NewGuard(limits, log)
	g.ObserveTurns(obs)
	srv := grpc.NewServer(grpc.ForceServerCodecV2(g.Codec()), grpc.ChainUnaryInterceptor(g.Recover(), g.Limit(), g.Errors()))
	api.NewSlotService(engine, api.WithObserver(obs)).Register(srv)
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
	return slotdv1.NewSlotServiceClient(conn), cat
}

func TestGetToolSchema(t *testing.T) {
	t.Parallel()
	svc, cat := newService(t)
	tests := []struct {
		tool, provider string
		wantName       string
		wantProvider   string
		strictObjects  bool // additionalProperties false and no x-slotd anywhere
		wantRequired   []string
	}{
		{"bank.open_dispute", "openai", "bank_open_dispute", "openai", true,
			[]string{"card_last4", "operation_date", "amount", "reason", "original_operation_id"}},
		{"bank.open_dispute", "openai-chat", "bank_open_dispute", "openai-chat", true,
			[]string{"card_last4", "operation_date", "amount", "reason", "original_operation_id"}},
		{"bank.open_dispute", "anthropic", "bank_open_dispute", "anthropic", true, nil},
		{"travel.search_flights", "OpenAI", "travel_search_flights", "openai", true, []string{"from", "to", "date"}},
		{"travel.search_flights", "anthropic", "travel_search_flights", "anthropic", true, []string{"from", "to", "date"}},
		{"travel.search_flights", "plain", "travel.search_flights", "plain", false, []string{"from", "to", "date"}},
		{"travel.search_flights", "", "travel.search_flights", "plain", false, []string{"from", "to", "date"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+"/"+tt.provider, func(t *testing.T) {
			t.Parallel()
			res, err := svc.GetToolSchema(context.Background(), &slotdv1.GetToolSchemaRequest{Tool: tt.tool, Provider: tt.provider})
			if err != nil {
				t.Fatalf("GetToolSchema: %v", err)
			}
			if res.Name != tt.wantName || res.Provider != tt.wantProvider {
				t.Errorf("name, provider = %q, %q; want %q, %q", res.Name, res.Provider, tt.wantName, tt.wantProvider)
			}
			if want := cat.Get(tt.tool).Version; res.Version != want {
				t.Errorf("version = %q, want the contract's %q", res.Version, want)
			}
			if !strings.HasPrefix(res.Description, cat.Get(tt.tool).Description) {
				t.Errorf("description %q does not start with the contract's", res.Description)
			}
			params := res.Parameters.AsMap()
			raw, _ := json.Marshal(params)
			if strings.Contains(string(raw), "x-slotd") {
				t.Errorf("x-slotd leaks into the %s schema: %s", tt.provider, raw)
			}
			var required []string
			for _, r := range asSlice(params["required"]) {
				required = append(required, r.(string))
			}
			if strings.Join(required, ",") != strings.Join(tt.wantRequired, ",") {
				t.Errorf("required = %v, want %v", required, tt.wantRequired)
			}
			if tt.strictObjects && params["additionalProperties"] != false {
				t.Errorf("additionalProperties = %v, want false", params["additionalProperties"])
			}
		})
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func TestGetToolSchemaErrors(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	tests := []struct {
		name     string
		req      *slotdv1.GetToolSchemaRequest
		code     codes.Code
		pointer  string
		allowed  []string
		wantType string
	}{
		{"unknown tool", &slotdv1.GetToolSchemaRequest{Tool: "bank.close_account", Provider: "openai"}, codes.NotFound, "/tool",
			[]string{"bank.block_card", "bank.check_balance", "bank.open_dispute", "travel.search_flights"}, "https://slotd.dev/problems/unknown-tool"},
		{"unknown provider", &slotdv1.GetToolSchemaRequest{Tool: "bank.open_dispute", Provider: "gemini"}, codes.InvalidArgument, "/provider",
			nil, "https://slotd.dev/problems/invalid-request"},
		{"no tool", &slotdv1.GetToolSchemaRequest{Provider: "openai"}, codes.InvalidArgument, "/tool",
			nil, "https://slotd.dev/problems/invalid-request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := svc.GetToolSchema(context.Background(), tt.req)
			if err == nil {
				t.Fatalf("GetToolSchema = %v, want an error", res)
			}
			st, _ := status.FromError(err)
			if st.Code() != tt.code {
				t.Errorf("code = %s, want %s", st.Code(), tt.code)
			}
			var p *slotdv1.Problem
			for _, d := range st.Details() {
				if pp, ok := d.(*slotdv1.Problem); ok {
					p = pp
				}
			}
			if p == nil || p.Type != tt.wantType || len(p.Errors) == 0 || p.Errors[0].Pointer != tt.pointer {
				t.Fatalf("problem = %v, want type %s with an error at %s", p, tt.wantType, tt.pointer)
			}
			if tt.allowed != nil && strings.Join(p.Errors[0].AllowedValues, ",") != strings.Join(tt.allowed, ",") {
				t.Errorf("allowed = %v, want %v", p.Errors[0].AllowedValues, tt.allowed)
			}
		})
	}
}

func TestListContracts(t *testing.T) {
	t.Parallel()
	svc, cat := newService(t)
	res, err := svc.ListContracts(context.Background(), &slotdv1.ListContractsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"bank.block_card": true, "bank.check_balance": false, "bank.open_dispute": true, "travel.search_flights": false}
	if len(res.Contracts) != len(want) {
		t.Fatalf("contracts = %v, want %d", res.Contracts, len(want))
	}
	for _, ci := range res.Contracts {
		c := cat.Get(ci.Name)
		if c == nil {
			t.Fatalf("unknown contract %q listed", ci.Name)
		}
		if ci.RequiresApproval != want[ci.Name] || ci.Version != c.Version || len(ci.Version) != 16 || ci.Description != c.Description {
			t.Errorf("%s: approval %v, version %q, description %q; want %v, %q, %q",
				ci.Name, ci.RequiresApproval, ci.Version, ci.Description, want[ci.Name], c.Version, c.Description)
		}
	}
}
