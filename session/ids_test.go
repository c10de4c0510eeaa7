package session_test

import (
	"context"
	"strings"
	"testing"

	"github.com/slotd/slotd/internal/redact"
	"github.com/slotd/slotd/session"
)

// TestAcceptedIDsNeedNoMasking: a turn is only ever taken with ids that
// masking leaves as they are (slotd's log line relies on it and logs a
// taken turn's ids unmasked): ids holding a card number, or too long to
// log whole, are refused before any work.
func TestAcceptedIDsNeedNoMasking(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	accepted, refused := 0, 0
	for _, id := range []string{
		"chat-42", "bench-18ec9b9caa6a247c-slotd-12-34", "4111111111111111", "chat 4111 1111 1111 1111",
		"a-4111-1111-1111-1111-b", "4111\u00a01111\u00a01111\u00a01111", "٤١١١١١١١١١١١١١١١", "41111111\u200b11111111",
		"order 2026-08-22 10:00", "01a2321a-842d-7a84-9c13-293a60851298", "call_8bb9984512926510",
		strings.Repeat("x", 256), strings.Repeat("x", 257), strings.Repeat("я", 129), "+7 916 123-45-67",
	} {
		for _, field := range []string{"conversation", "turn"} {
			req := session.TurnRequest{Tenant: "bank", ConversationID: "ids-conv", Tool: "bank.open_dispute",
				TurnID: "ids-turn", Arguments: map[string]any{"card_last4": "4417"}, Locale: "ru"}
			if field == "conversation" {
				req.ConversationID = id
			} else {
				req.TurnID = id
			}
			if _, err := e.Turn(context.Background(), req); err != nil {
				refused++
				continue
			}
			accepted++
			if got := redact.LoggedID(id); got != id {
				t.Errorf("%s id %q was taken, and would log as %q", field, id, got)
			}
		}
	}
	if accepted == 0 || refused == 0 {
		t.Errorf("%d ids taken, %d refused: the list no longer tells them apart", accepted, refused)
	}
}
