package session

import (
	"testing"

	"github.com/slotd/slotd/internal/redact"
)

// A session's id is shown as it is: in problems, in logs, in admin output.
// No id the engine draws is one that card masking would change. (One in a
// few thousand random UUIDs has digit groups that read as a card's tail.)
func TestNewIDsAreNeverMasked(t *testing.T) {
	t.Parallel()
	for range 200000 {
		if id := newID(); redact.String(id) != id || redact.HasCard(id) {
			t.Fatalf("newID() = %q, masked as %q", id, redact.String(id))
		}
	}
}
