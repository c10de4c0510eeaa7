package provider

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/slotd/slotd/contract"
)

// Size is what one tool's definition costs: it is sent to the provider on
// every request of a conversation, whether the tool is used or not.
type Size struct {
	Tool     string `json:"tool"`
	Provider string `json:"provider"`
	// Bytes is the compact JSON of the provider's tool definition.
	Bytes int `json:"bytes"`
	// Tokens is an estimate: providers do not publish their tokenizers.
	Tokens int `json:"tokens_estimate"`
}

// EstimateTokens guesses the tokens of a JSON text: about four bytes a
// token, which holds for English JSON and, since Cyrillic takes two bytes a
// letter, roughly for Russian and Ukrainian descriptions too. It is a
// budget figure, not a bill.
func EstimateTokens(n int) int { return (n + 3) / 4 }

// Sizes measures every provider export of every contract, sorted by tool
// then provider, followed by one total per provider (Tool "*").
func Sizes(cs []*contract.Contract) ([]Size, error) {
	sorted := append([]*contract.Contract(nil), cs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	totals := map[string]int{}
	var out []Size
	for _, c := range sorted {
		for _, prov := range Names() {
			e, err := Export(c, prov)
			if err != nil {
				return nil, err
			}
			def, err := e.Definition()
			if err != nil {
				return nil, err
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, def); err != nil {
				return nil, err
			}
			n := compact.Len()
			out = append(out, Size{Tool: c.Name, Provider: prov, Bytes: n, Tokens: EstimateTokens(n)})
			totals[prov] += n
		}
	}
	for _, prov := range Names() {
		out = append(out, Size{Tool: "*", Provider: prov, Bytes: totals[prov], Tokens: EstimateTokens(totals[prov])})
	}
	return out, nil
}
