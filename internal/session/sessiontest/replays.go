package sessiontest

import (
	"testing"

	"github.com/slotd/slotd/internal/session"
)

// A turn_id delivered again is recorded on its turn: how many times, and
// when the last session.MaxReplayTimes of them came, oldest first. A turn
// never retried records none.
func testReplaysRecorded(t *testing.T, h *harness) {
	first := h.req(Dispute, map[string]any{"card_last4": "карта •• 4417"})
	h.do(first)
	h.do(h.req(Dispute, map[string]any{"amount": "1 340 ₽"}))
	retries := session.MaxReplayTimes + 4
	for range retries {
		if !h.do(first).Replayed {
			t.Fatalf("a retry of %s was not replayed", first.TurnID)
		}
	}
	hist := h.history(h.active())
	if len(hist.Turns) != 2 {
		t.Fatalf("history holds %d turns, want 2", len(hist.Turns))
	}
	got, other := hist.Turns[0], hist.Turns[1]
	if got.ID != first.TurnID {
		got, other = other, got
	}
	if got.Replays != retries || len(got.ReplayedAt) != session.MaxReplayTimes {
		t.Errorf("retried turn: %d replays at %d times, want %d at %d", got.Replays, len(got.ReplayedAt), retries, session.MaxReplayTimes)
	}
	for i, at := range got.ReplayedAt {
		if at.IsZero() || i > 0 && at.Before(got.ReplayedAt[i-1]) {
			t.Errorf("replay times not in order: %v", got.ReplayedAt)
			break
		}
	}
	if other.Replays != 0 || len(other.ReplayedAt) != 0 {
		t.Errorf("the turn never retried records %d replays at %v", other.Replays, other.ReplayedAt)
	}
}
