package contract_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slotd/slotd/contract"
)

// LoadDir's errors name the folder as the user gave it, never os.DirFS's
// ".", and a broken file by its path.
func TestLoadDirNamesThePath(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "bad.json"), []byte(`{"x-slotd": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(broken, "bad.json")
	missing := filepath.Join(empty, "nonexistent")
	tests := []struct {
		dir  string
		want []string
	}{
		{missing, []string{missing, "no such file or directory"}},
		{empty, []string{"no *.json contract in " + empty}},
		{broken, []string{filepath.Join(broken, "bad.json"), "x-slotd.name"}},
		{notDir, []string{notDir}},
	}
	for _, tt := range tests {
		_, err := contract.LoadDir(tt.dir)
		if err == nil {
			t.Errorf("LoadDir(%s) succeeded", tt.dir)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("LoadDir(%s): %q does not say %q", tt.dir, err, w)
			}
		}
		if strings.Contains(err.Error(), "open .:") || strings.Contains(err.Error(), " in .") {
			t.Errorf("LoadDir(%s): %q names the folder as \".\"", tt.dir, err)
		}
	}
}

// A tool without arguments is a contract: its empty arguments pass the
// whole schema, and nothing is missing.
func TestParseNoProperties(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		`{"type": "object", "description": "List the user's cards.", "x-slotd": {"name": "bank.list_cards"}}`,
		`{"type": "object", "properties": {}, "additionalProperties": false, "x-slotd": {"name": "bank.list_cards"}}`,
	} {
		c, err := contract.Parse("list_cards.json", []byte(src))
		if err != nil {
			t.Fatalf("Parse of a contract without properties: %v\n%s", err, src)
		}
		if len(c.Properties) != 0 || len(c.Required) != 0 {
			t.Errorf("properties %v, required %v; want none", c.Properties, c.Required)
		}
		if r := c.Check(map[string]any{}); len(r.Missing) != 0 || len(r.Violations) != 0 {
			t.Errorf("Check({}) = missing %v, violations %v; want a valid call", r.Missing, r.Violations)
		}
	}
}
