package session_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
	"github.com/slotd/slotd/internal/session/sessiontest"
)

// replayed is a replay of sessiontest.ReplayHistory's n conversations, made
// on the dispute example, with its v2.
func replayed(t *testing.T, n int, f session.ReplayFilter) (*session.ReplayReport, *memstore.Store) {
	t.Helper()
	st := memstore.New()
	cat1, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	e := replica(t, st, cat1, "replica-a", now.Add(-time.Hour))
	sessiontest.ReplayHistory(t, e, "r", n, 2)
	rep, err := session.NewReplayer(sessiontest.DisputeV2(t, "pin"), st, session.Config{}).Run(context.Background(), st, f)
	if err != nil {
		t.Fatal(err)
	}
	return rep, st
}

func conversationOf(rep *session.ReplayReport, id string) *session.ConversationReplay {
	for i := range rep.Conversations {
		if rep.Conversations[i].ConversationID == id {
			return &rep.Conversations[i]
		}
	}
	return nil
}

// The dispute example's history replayed with v2: READY lost where v2
// asks for a merchant or refuses a retired reason, masked values (the
// sensitive operation id, a card number cut to four digits) reported and
// played as absent, the balance checks unchanged; the store is left as
// it was.
func TestReplayComparesTheNextVersionTurnByTurn(t *testing.T) {
	t.Parallel()
	rep, st := replayed(t, 10, session.ReplayFilter{})
	s := rep.Summary
	if s.Conversations != 10 || s.Replayed != 10 || s.Differ != 6 || s.Same != 4 || s.ReadyLost != 4 || s.ReadyEarlier != 0 ||
		s.ReadyLater != 0 || s.NewlyAsked != 6 || s.NewlyRefused != 2 || s.Masked != 4 || s.NotReplayed != 0 ||
		s.AskedSlots["merchant"] != 4 || s.RefusedSlots["reason"] != 2 {
		t.Errorf("summary %+v", s)
	}
	fraud := conversationOf(rep, sessiontest.ReplayConversation("r", 0))
	if fraud == nil || fraud.Ready != session.ReadyLost || fraud.ReadyBefore != 3 || fraud.ReadyAfter != 0 ||
		!slices.Equal(fraud.NewlyAsked, []string{"merchant"}) || len(fraud.Diffs) != 2 {
		t.Fatalf("fraud conversation %+v", fraud)
	}
	d := fraud.Diffs[1]
	if d.Turn != 3 || d.TurnID != "t3" || d.Before.Action != "READY" || d.After.Action != "ASK" || d.After.QuestionSlot != "merchant" ||
		!slices.Equal(d.Fields, []string{"action", "question", "arguments", "idempotency_key"}) ||
		d.Before.Arguments["reason"] != "fraud" || !strings.HasPrefix(d.Before.IdempotencyKey, "sd_") {
		t.Errorf("fraud's last turn %+v", d)
	}
	wrong := conversationOf(rep, sessiontest.ReplayConversation("r", 1))
	if wrong == nil || wrong.Ready != session.ReadyLost || !slices.Equal(wrong.NewlyRefused, []string{"reason"}) ||
		wrong.Diffs[0].Before.Action != "CONFIRM" || !slices.Equal(wrong.Diffs[0].After.Refused, []string{"reason"}) {
		t.Errorf("wrong_amount conversation %+v", wrong)
	}
	dup := conversationOf(rep, sessiontest.ReplayConversation("r", 2))
	if dup == nil || !slices.Equal(dup.Masked, []string{"original_operation_id"}) || dup.Diffs[0].Before.QuestionSlot != "original_operation_id" {
		t.Errorf("duplicate conversation %+v", dup)
	}
	card := conversationOf(rep, sessiontest.ReplayConversation("r", 3))
	if card == nil || !slices.Equal(card.Masked, []string{"card_last4"}) || card.Differs() {
		t.Errorf("card conversation %+v", card)
	}
	balance := conversationOf(rep, sessiontest.ReplayConversation("r", 4))
	if balance == nil || balance.Differs() || balance.Ready != session.ReadySame || balance.ReadyBefore != 1 {
		t.Errorf("balance conversation %+v", balance)
	}
	if b, _ := json.Marshal(rep); strings.Contains(string(b), "4111") || strings.Contains(string(b), "OP-55120") {
		t.Errorf("the report holds a masked value: %s", b)
	}
	// Nothing was written: the conversations' sessions are where the
	// history left them.
	h, err := st.History(context.Background(), session.Lookup{Tenant: "bank", ConversationID: sessiontest.ReplayConversation("r", 0), Latest: true})
	if err != nil || len(h.Turns) != 3 {
		t.Errorf("history after the replay: %d turns (%v)", len(h.Turns), err)
	}
	if got := rep.Holding([]string{"ready-later", "ready-lost", "newly-refused", "not-replayed", "any"}); !slices.Equal(got, []string{"ready-lost", "newly-refused", "any"}) {
		t.Errorf("holding %v", got)
	}
}

// The filter picks conversations by tool, by last use and by count, the
// most recently used first.
func TestReplayFilter(t *testing.T) {
	t.Parallel()
	rep, st := replayed(t, 10, session.ReplayFilter{Tool: "bank.check_balance"})
	if rep.Summary.Conversations != 2 || rep.Summary.Differ != 0 {
		t.Errorf("balance only: %+v", rep.Summary)
	}
	keys, err := st.ReplayKeys(context.Background(), session.ReplayFilter{Limit: 3})
	if err != nil || len(keys) != 3 {
		t.Fatalf("keys %v (%v)", keys, err)
	}
	// Conversation 9's last turn is the latest of all (one turn after Now,
	// as the others' first), then those of three turns.
	keys, err = st.ReplayKeys(context.Background(), session.ReplayFilter{Since: sessiontest.Now.Add(3 * time.Minute)})
	if err != nil || len(keys) != 4 {
		t.Errorf("since the third minute: %v (%v), want the 4 conversations of three turns", keys, err)
	}
}

// Conversations that cannot be replayed say why, and never stop the
// replay: a session whose turns are gone, a version the store no longer
// holds, a turn stored before versions were kept, a request that does not
// parse.
func TestReplayReportsWhatItCannotReplay(t *testing.T) {
	t.Parallel()
	st := memstore.New()
	r := session.NewReplayer(sessiontest.DisputeV2(t, "pin"), st, session.Config{})
	req := `{"conversation_id":"c","tool":"bank.open_dispute","turn_id":"t1","arguments":{"card_last4":"4417"},"now":"2026-08-23T10:00:00Z"}`
	turn := func(version, request string) session.StoredTurn {
		return session.StoredTurn{TurnID: "t1", SessionID: "019ad0c4-5b1e-7c3a-9f00-1e2d3c4b5a69", Tool: "bank.open_dispute",
			Request: []byte(request), At: sessiontest.Now, ContractVersion: version}
	}
	for _, tc := range []struct {
		sc   session.StoredConversation
		want string
	}{
		{session.StoredConversation{Bare: []string{"019ad0c4-5b1e-7c3a-9f00-1e2d3c4b5a69"}}, session.NotReplayedPurged},
		{session.StoredConversation{Turns: []session.StoredTurn{turn("0123456789abcdef", req)},
			Bare: []string{"019ad0c4-5b1e-7c3a-9f00-1e2d3c4b5a6a"}}, session.NotReplayedPurged},
		{session.StoredConversation{Turns: []session.StoredTurn{turn("0123456789abcdef", req)}}, session.NotReplayedVersionGone},
		{session.StoredConversation{Turns: []session.StoredTurn{turn("", req)}}, session.NotReplayedVersionUnknown},
		{session.StoredConversation{Turns: []session.StoredTurn{turn("0123456789abcdef", `{"tool":`)}}, session.NotReplayedUnreadable},
		{session.StoredConversation{Turns: []session.StoredTurn{turn("0123456789abcdef", `{"tool":"bank.block_card"}`)}}, session.NotReplayedUnreadable},
	} {
		tc.sc.Key = session.Key{Tenant: "bank", ConversationID: "c"}
		got, err := r.Conversation(context.Background(), &tc.sc)
		if err != nil || got.NotReplayed != tc.want || got.Detail == "" || got.Differs() {
			t.Errorf("%+v: %+v (%v), want not replayed: %s", tc.sc, got, err, tc.want)
		}
	}
}

func TestParseFailOn(t *testing.T) {
	t.Parallel()
	got, err := session.ParseFailOn(" Ready-Lost,newly-asked,,ready-lost ")
	if err != nil || !slices.Equal(got, []string{"ready-lost", "newly-asked"}) {
		t.Errorf("%v (%v)", got, err)
	}
	if _, err := session.ParseFailOn("ready-lost,lost"); err == nil || !strings.Contains(err.Error(), `"lost"`) {
		t.Errorf("an unknown condition: %v", err)
	}
}
