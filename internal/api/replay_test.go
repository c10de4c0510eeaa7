package api_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/auth"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
	"github.com/slotd/slotd/internal/session/sessiontest"
	"github.com/slotd/slotd/problem"
)

// documents are the contract files of dir, as a console would send them.
func documents(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no contracts in %s (%v)", dir, err)
	}
	var docs []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	return docs
}

// ReplayContracts replays the stored history with the documents given:
// what the dispute example's v2 would change, the fail_on conditions that
// hold, masked values reported; every field is checked first.
func TestReplayContracts(t *testing.T) {
	t.Parallel()
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	now := sessiontest.Now.Add(time.Hour)
	st := memstore.New()
	engine := session.NewEngine(st, cat, session.Config{Clock: func() time.Time { return now }, TrustClientClock: true})
	v := session.NewVersions(st, cat)
	if _, err := v.Register(context.Background(), "replica-a", sessiontest.Now); err != nil {
		t.Fatal(err)
	}
	engine.UseVersions(v)
	engine.UseReplaySource(st)
	sessiontest.ReplayHistory(t, engine, "chat", 10, 2)
	admin := api.NewAdminService(engine, slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return now })
	ctx := auth.With(context.Background(), auth.Principal{Admin: true, Name: "ops"})
	v2 := documents(t, sessiontest.DisputeV2Dir(t, "pin"))

	got, err := admin.ReplayContracts(ctx, &slotdv1.ReplayContractsRequest{Contracts: v2, Since: durationpb.New(2 * time.Hour),
		FailOn: []string{"ready-later", "Ready-Lost", "newly-refused"}})
	if err != nil {
		t.Fatal(err)
	}
	s := got.Summary
	if s.Conversations != 10 || s.ReadyLost != 4 || s.Masked != 4 || s.NewlyRefused != 2 || s.NewlyAskedSlots["merchant"] != 4 ||
		!slices.Equal(got.Failed, []string{"ready-lost", "newly-refused"}) {
		t.Errorf("summary %v, failed %v", s, got.Failed)
	}
	var fraud *slotdv1.ConversationReplay
	for _, c := range got.Conversations {
		if c.ConversationId == sessiontest.ReplayConversation("chat", 0) {
			fraud = c
		}
	}
	if fraud == nil || fraud.Ready != "lost" || len(fraud.Diffs) != 2 {
		t.Fatalf("the fraud conversation: %v", fraud)
	}
	if d := fraud.Diffs[1]; d.Before.Action != slotdv1.Action_ACTION_READY || d.After.Action != slotdv1.Action_ACTION_ASK ||
		d.After.QuestionSlot != "merchant" || d.Before.Arguments.AsMap()["reason"] != "fraud" {
		t.Errorf("its last turn: %v", d)
	}
	// Only the balance checks, and none used in the last half hour.
	got, err = admin.ReplayContracts(ctx, &slotdv1.ReplayContractsRequest{Contracts: v2, Tool: "bank.check_balance", FailOn: []string{"any"}})
	if err != nil || got.Summary.Conversations != 2 || got.Summary.Same != 2 || len(got.Failed) != 0 {
		t.Errorf("balance checks: %v (%v)", got, err)
	}
	got, err = admin.ReplayContracts(ctx, &slotdv1.ReplayContractsRequest{Contracts: v2, Since: durationpb.New(30 * time.Minute)})
	if err != nil || got.Summary.Conversations != 0 {
		t.Errorf("since half an hour: %v (%v)", got, err)
	}

	broken := strings.Replace(v2[1], `"type": "object"`, `"type": "4111 1111 1111 1111"`, 1)
	for _, tc := range []struct {
		req     *slotdv1.ReplayContractsRequest
		pointer string
	}{
		{&slotdv1.ReplayContractsRequest{}, "/contracts"},
		{&slotdv1.ReplayContractsRequest{Contracts: []string{"{"}}, "/contracts/0"},
		{&slotdv1.ReplayContractsRequest{Contracts: []string{v2[0], broken}}, "/contracts/1"},
		{&slotdv1.ReplayContractsRequest{Contracts: []string{v2[0], v2[0]}}, "/contracts"},
		{&slotdv1.ReplayContractsRequest{Contracts: v2, Limit: 10001}, "/limit"},
		{&slotdv1.ReplayContractsRequest{Contracts: v2, Limit: -1}, "/limit"},
		{&slotdv1.ReplayContractsRequest{Contracts: v2, Since: durationpb.New(-time.Hour)}, "/since"},
		{&slotdv1.ReplayContractsRequest{Contracts: v2, FailOn: []string{"ready-lost,differ"}}, "/fail_on/0"},
		{&slotdv1.ReplayContractsRequest{Contracts: v2, FailOn: []string{"lost"}}, "/fail_on/0"},
		{&slotdv1.ReplayContractsRequest{Contracts: v2, Tool: "bank.close_account"}, "/tool"},
		{&slotdv1.ReplayContractsRequest{Contracts: v2, Tool: "bank\x00"}, "/tool"},
	} {
		_, err := admin.ReplayContracts(ctx, tc.req)
		var pe *problem.Error
		if !errors.As(err, &pe) || pe.Problem.Type != problem.TypeInvalidRequest || len(pe.Problem.Errors) == 0 || pe.Problem.Errors[0].Pointer != tc.pointer {
			t.Errorf("%.80v: %v; want an invalid request about %s", tc.req, err, tc.pointer)
			continue
		}
		if strings.Contains(err.Error(), "4111 1111") {
			t.Errorf("the problem shows the card number: %v", err)
		}
	}
}
