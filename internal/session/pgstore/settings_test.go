package pgstore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/pgstore"
	"github.com/slotd/slotd/internal/session/sessiontest"
	"github.com/slotd/slotd/internal/testkit/dbtest"
)

// A value of the URL's lock_timeout that Postgres refuses fails each turn
// as a retryable unavailability that names the setting to correct, never
// as an internal error.
func TestRefusedSettingOfTheURLNamesTheFix(t *testing.T) {
	t.Parallel()
	url := withParams(t, dbtest.NewDatabase(t), "lock_timeout", "soon")
	e := sessiontest.NewEngine(pgstore.New(configured(t, url, 1)), sessiontest.Catalog(t))
	_, err := e.Turn(t.Context(), session.TurnRequest{Tenant: "acme-bank", ConversationID: "conv-setting", Tool: sessiontest.Twenty,
		TurnID: "turn-1", Arguments: map[string]any{sessiontest.TwentySlots[0]: "v"}, Now: sessiontest.Now})
	var u *session.UnavailableError
	if !errors.As(err, &u) || !strings.Contains(u.Cause, "refused the value") || !strings.Contains(u.Fix, "lock_timeout") {
		t.Fatalf("a turn with lock_timeout=soon in the URL = %v; want an unavailability that names the setting", err)
	}
}
