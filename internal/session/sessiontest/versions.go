package sessiontest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slotd/slotd/contract"
)

// DisputeV2Dir is a folder holding the shipped contracts with the dispute
// example's v2 (examples/dispute-v2: merchant newly required, wrong_amount
// retired, original_operation_id removed, operation_date made
// irreversible) in place of bank.open_dispute, its x-slotd.upgrade set to
// upgrade ("pin" or "migrate").
func DisputeV2Dir(t testing.TB, upgrade string) string {
	t.Helper()
	shipped := ContractsDir(t)
	v2, err := os.ReadFile(filepath.Join(filepath.Dir(shipped), "examples", "dispute-v2", "bank.open_dispute.json"))
	if err != nil {
		t.Fatalf("sessiontest: %v", err)
	}
	v2 = []byte(strings.Replace(string(v2), `"upgrade": "migrate"`, `"upgrade": "`+upgrade+`"`, 1))
	dir := t.TempDir()
	files, _ := filepath.Glob(filepath.Join(shipped, "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("sessiontest: %v", err)
		}
		if filepath.Base(f) == "bank.open_dispute.json" {
			b = v2
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o600); err != nil {
			t.Fatalf("sessiontest: %v", err)
		}
	}
	return dir
}

// DisputeV2 is the catalog of DisputeV2Dir.
func DisputeV2(t testing.TB, upgrade string) *contract.Catalog {
	t.Helper()
	cat, err := contract.LoadDir(DisputeV2Dir(t, upgrade))
	if err != nil {
		t.Fatalf("sessiontest: %v", err)
	}
	return cat
}
