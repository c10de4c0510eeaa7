package integration

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/script"
	"github.com/slotd/slotd/internal/script/scripttest"
)

// The scenarios slotd must always pass; each is a script in scripts/.
var requiredScripts = []string{
	"dispute example dialogue",
	"null and empty values never erase",
	"reversible overwrite is reported",
	"irreversible change is re-confirmed",
	"conditional required slot is asked by meaning",
	"invalid enum is repaired with allowed values",
	"approval is for exactly the arguments shown",
	"declined approval cancels",
	"search_flights with relative dates",
	"retry of the same turn_id",
	"dispute interrupted by a balance check and resumed",
	"dispute interrupted by a flight search and resumed",
	"two tool calls of one model message",
	"an exclusive tool ends the open dispute",
}

// TestScripts plays every conversation script in scripts/ through the
// script runner against the real server on a fresh Postgres database; a
// failing script fails its subtest with the runner's report (step, field,
// expected and actual value).
func TestScripts(t *testing.T) {
	t.Parallel()
	scripts, err := script.Load("scripts")
	if err != nil {
		t.Fatalf("scripts/: %v", err)
	}
	var names []string
	for _, s := range scripts {
		names = append(names, s.Name)
	}
	for _, want := range requiredScripts {
		if !slices.Contains(names, want) {
			t.Errorf("no script named %q in scripts/ (have %q)", want, names)
		}
	}
	for _, s := range scripts {
		if s.Clock.IsZero() {
			t.Errorf("%s (%s): a shipped script sets its clock", s.Name, filepath.Base(s.File))
		}
	}

	inst, _ := newPostgresServer(t)
	scripttest.Run(t, inst.conn, &script.Runner{Timeout: 30 * time.Second}, "scripts")
}
