package contract

import (
	"testing"

	"github.com/slotd/slotd/internal/phrase"
)

// TestRefusalFormatsAreWordedOnce: a compiled property words its repair
// format in every language when the contract is compiled, the same words as
// wording it afresh, and a refusal reads it without wording (or
// allocating) anything.
func TestRefusalFormatsAreWordedOnce(t *testing.T) {
	worded := 0
	for _, c := range loadTestContracts(t) {
		for _, p := range c.Properties {
			for lang := range phrase.Languages {
				want := p.wordFormat(lang)
				if got := p.repairFormat(lang); got != want {
					t.Errorf("%s.%s in %s: %q, worded afresh %q", c.Name, p.Name, lang, got, want)
				}
				if want != "" {
					worded++
				}
				if n := testing.AllocsPerRun(20, func() { _ = p.repairFormat(lang) }); n != 0 {
					t.Errorf("%s.%s in %s: %v allocations per refusal's format", c.Name, p.Name, lang, n)
				}
			}
		}
	}
	if worded < 20 {
		t.Fatalf("only %d worded formats: the contracts lost their formats", worded)
	}
}
