package api_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/auth"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
	"github.com/slotd/slotd/problem"
)

// EraseConversation records the admin's name and a hash of the id, and its
// log line holds the hash, never the id; a missing id is a bad request.
func TestEraseConversation(t *testing.T) {
	t.Parallel()
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)
	store := memstore.New()
	engine := session.NewEngine(store, cat, session.Config{Clock: func() time.Time { return now }, TrustClientClock: true})
	var logs bytes.Buffer
	admin := api.NewAdminService(engine, slog.New(slog.NewJSONHandler(&logs, nil)), func() time.Time { return now })
	const conv = "chat-erase-7c1d"
	if _, err := engine.Turn(context.Background(), session.TurnRequest{Tenant: "bank", ConversationID: conv, Tool: "travel.search_flights",
		TurnID: "t1", Arguments: map[string]any{"from": "mad"}, Now: now}); err != nil {
		t.Fatal(err)
	}
	ctx := auth.With(context.Background(), auth.Principal{Admin: true, Name: "ops"})
	got, err := admin.EraseConversation(ctx, &slotdv1.EraseConversationRequest{Tenant: "bank", ConversationId: conv})
	hash := session.ConversationHash(session.Key{Tenant: "bank", ConversationID: conv})
	if err != nil || !got.Found || got.SessionsErased != 1 || got.ConversationHash != hash || got.ErasedBy != "ops" || !got.ErasedAt.AsTime().Equal(now) {
		t.Fatalf("EraseConversation = %v, %v; want one session found, hash %s, by ops at %v", got, err, hash, now)
	}
	if recs := store.Erasures(); len(recs) != 1 || recs[0].By != "ops" || recs[0].ConversationHash != hash || recs[0].Tenant != "bank" {
		t.Errorf("erasure records = %+v", recs)
	}
	if strings.Contains(logs.String(), conv) || !strings.Contains(logs.String(), hash) {
		t.Errorf("the log names the erased conversation, or not its hash: %s", logs.String())
	}
	if _, err := engine.Get(context.Background(), session.Lookup{Tenant: "bank", ConversationID: conv}); err == nil {
		t.Error("the erased conversation's session is still there")
	}
	_, err = admin.EraseConversation(ctx, &slotdv1.EraseConversationRequest{Tenant: "bank"})
	var pe *problem.Error
	if !errors.As(err, &pe) || pe.Problem.Type != problem.TypeInvalidRequest {
		t.Errorf("erasing without a conversation_id = %v; want an invalid-request problem", err)
	}
}

// ResetSession ends one session of the tenant named, for an operator in
// the process; it is logged by the admin's name, and a session of another
// tenant, a made-up id or one that is not an id resets nothing.
func TestResetSession(t *testing.T) {
	t.Parallel()
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)
	engine := session.NewEngine(memstore.New(), cat, session.Config{Clock: func() time.Time { return now }, TrustClientClock: true})
	var logs bytes.Buffer
	admin := api.NewAdminService(engine, slog.New(slog.NewJSONHandler(&logs, nil)), func() time.Time { return now })
	res, err := engine.Turn(context.Background(), session.TurnRequest{Tenant: "bank", ConversationID: "c1", Tool: "travel.search_flights",
		TurnID: "t1", Arguments: map[string]any{"from": "mad"}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Session.ID
	ctx := auth.With(context.Background(), auth.Principal{Admin: true, Name: "ops"})
	for _, tc := range []struct{ tenant, id string }{
		{"shop", id}, {"bank", "00000000-0000-0000-0000-000000000000"}, {"bank", "'; DELETE FROM sessions; --"}, {"bank", ""},
	} {
		if got, err := admin.ResetSession(ctx, tc.tenant, tc.id); err == nil {
			t.Errorf("ResetSession(%q, %q) = %v, want an error", tc.tenant, tc.id, got)
		}
	}
	got, err := admin.ResetSession(ctx, "bank", id)
	if err != nil || got.GetStatus() != slotdv1.SessionStatus_SESSION_STATUS_RESET || got.GetId() != id {
		t.Fatalf("ResetSession = %v, %v; want the session, reset", got, err)
	}
	if n := strings.Count(logs.String(), `"msg":"reset session"`); n != 1 || !strings.Contains(logs.String(), `"by":"ops"`) {
		t.Errorf("the reset is not logged once by ops: %s", logs.String())
	}
	if _, err := admin.ResetSession(ctx, "bank", id); err == nil {
		t.Error("an ended session was reset again")
	}
}
