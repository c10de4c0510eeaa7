package integration

import (
	"context"
	"slices"
	"testing"
	"time"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// The admin API lists sessions by a conversation id prefix taken
// literally, and a conversation's history says what each turn answered,
// how often its turn_id was delivered again and when the last deliveries
// came.
func TestAdminConversationPrefixAndReplays(t *testing.T) {
	t.Parallel()
	inst, _ := newPostgresServer(t)
	ctx := context.Background()
	turn := func(conv, turnID string) *slotdv1.TurnResponse {
		t.Helper()
		r, err := inst.client.Turn(ctx, &slotdv1.TurnRequest{ConversationId: conv, Tool: "bank.open_dispute", TurnId: turnID,
			Locale: "ru", TimeZone: "Europe/Moscow", Arguments: structOf(t, seedFirstTurn)})
		if err != nil {
			t.Fatalf("turn %s of %s: %v", turnID, conv, err)
		}
		return r
	}
	var asked *slotdv1.TurnResponse
	for _, conv := range []string{"50%-off", "500-off", "a_b", "axb", `c:\tmp`, `c:tmp`} {
		if r := turn(conv, "1"); conv == "50%-off" {
			asked = r
		}
	}
	for _, c := range []struct {
		prefix string
		want   []string
	}{
		{"50%", []string{"50%-off"}},
		{"a_", []string{"a_b"}},
		{`c:\`, []string{`c:\tmp`}},
		{"%", nil},
		{"_", nil},
		{"", []string{"50%-off", "500-off", "a_b", "axb", `c:\tmp`, `c:tmp`}},
	} {
		list, err := inst.admin.ListSessions(ctx, &slotdv1.ListSessionsRequest{ConversationPrefix: c.prefix})
		if err != nil {
			t.Fatalf("prefix %q: %v", c.prefix, err)
		}
		var got []string
		for _, s := range list.GetSessions() {
			got = append(got, s.GetSession().GetConversationId())
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("prefix %q lists %q, want %q", c.prefix, got, c.want)
		}
	}
	if _, err := inst.admin.ListSessions(ctx, &slotdv1.ListSessionsRequest{ConversationPrefix: "chat\x00"}); err == nil {
		t.Errorf("a prefix with a NUL byte was listed, want it refused")
	}

	// The client retries turn 1 of 50%-off three times after a timeout.
	before := time.Now().Add(-time.Minute)
	first := turn("50%-off", "2")
	for range 3 {
		turn("50%-off", "1")
	}
	h, err := inst.admin.GetSessionHistory(ctx, &slotdv1.GetSessionHistoryRequest{SessionId: first.GetSession().GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.GetTurns()) != 2 {
		t.Fatalf("history holds %d turns, want 2", len(h.GetTurns()))
	}
	for _, ht := range h.GetTurns() {
		// What the turn answered, without arguments or sessions.
		if a := ht.GetAnswer(); ht.GetTurnId() == "1" && (a.GetQuestion().GetText() != asked.GetQuestion().GetText() ||
			a.GetQuestion().GetText() == "" || a.GetAction() != asked.GetAction() || a.GetSession() != nil || a.GetArguments() != nil) {
			t.Errorf("turn 1's answer in the history is %v, want the question %q and no session", a, asked.GetQuestion().GetText())
		}
		want := map[string]int32{"1": 3, "2": 0}[ht.GetTurnId()]
		if ht.GetReplays() != want || len(ht.GetReplayedAt()) != int(want) {
			t.Errorf("turn %s: %d replays at %d times, want %d", ht.GetTurnId(), ht.GetReplays(), len(ht.GetReplayedAt()), want)
		}
		for i, at := range ht.GetReplayedAt() {
			if at.AsTime().Before(before) || at.AsTime().After(time.Now().Add(time.Minute)) ||
				i > 0 && at.AsTime().Before(ht.GetReplayedAt()[i-1].AsTime()) {
				t.Errorf("turn %s replayed at %v, want times of this test, oldest first", ht.GetTurnId(), ht.GetReplayedAt())
				break
			}
		}
	}
}
