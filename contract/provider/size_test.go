package provider_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/contract/provider"
)

func TestSizesCoverEveryToolAndProvider(t *testing.T) {
	t.Parallel()
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatal(err)
	}
	sizes, err := provider.Sizes(cat.All())
	if err != nil {
		t.Fatal(err)
	}
	want := len(cat.All())*len(provider.Names()) + len(provider.Names())
	if len(sizes) != want {
		t.Fatalf("%d sizes, want %d", len(sizes), want)
	}
	total := map[string]int{}
	for _, s := range sizes {
		if s.Bytes <= 0 || s.Tokens != (s.Bytes+3)/4 {
			t.Errorf("%+v: bytes and estimate do not agree", s)
		}
		if s.Tool != "*" {
			total[s.Provider] += s.Bytes
		} else if total[s.Provider] != s.Bytes {
			t.Errorf("total for %s = %d, want the sum %d", s.Provider, s.Bytes, total[s.Provider])
		}
	}
	// The dispute's export carries its Russian questions nowhere: only the
	// schema the model sees is paid for.
	for _, s := range sizes {
		if s.Tool == "bank.open_dispute" && s.Provider == provider.OpenAI && s.Bytes > 8000 {
			t.Errorf("the dispute's OpenAI export is %d bytes; something leaks into it", s.Bytes)
		}
	}
}

func TestLintRefusesABrokenOutputContract(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"broken.json": {Data: []byte(`{"type": "object",
		"properties": {"a": {"type": "string"}},
		"x-slotd": {"name": "t.broken", "output": {"type": "object", "properties": {"status": {"type": "nonsense"}}}}}`)}}
	findings, err := provider.LintFS(fsys, ".", "contracts")
	if err != nil {
		t.Fatal(err)
	}
	if !provider.HasErrors(findings) {
		t.Fatalf("an output contract with an unknown type passed lint: %v", findings)
	}
	found := false
	for _, f := range findings {
		if strings.Contains(f.String(), "output") {
			found = true
		}
	}
	if !found {
		t.Errorf("the finding does not name the output contract: %v", findings)
	}
}
