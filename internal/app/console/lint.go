package console

import (
	"testing/fstest"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/contract/provider"
)

// costRow is what a tool's definition costs with one provider, on every
// request of a conversation (provider.Sizes).
type costRow struct {
	Provider      string
	Bytes, Tokens int
}

// contractChecks are the findings of `slotd contract lint` and the costs
// of `slotd contract lint --sizes` for the loaded contracts, by tool, and
// the findings about the set as a whole.
type contractChecks struct {
	findings map[string][]provider.Finding
	set      []provider.Finding
	costs    map[string][]costRow
	err      error
}

// check lints the contracts as loaded (each one's Source, as its file
// would be) and measures their exports.
func check(cs []*contract.Contract) contractChecks {
	out := contractChecks{findings: map[string][]provider.Finding{}, costs: map[string][]costRow{}}
	fsys := fstest.MapFS{}
	files := map[string]string{}
	for _, c := range cs {
		name := c.Name + ".json"
		fsys[name] = &fstest.MapFile{Data: c.Source}
		files[name] = c.Name
	}
	if len(cs) > 0 {
		findings, err := provider.LintFS(fsys, ".", "")
		if err != nil {
			out.err = err
		}
		for _, f := range findings {
			if tool, ok := files[f.File]; ok {
				out.findings[tool] = append(out.findings[tool], f)
			} else {
				out.set = append(out.set, f)
			}
		}
	}
	sizes, err := provider.Sizes(cs)
	if err != nil && out.err == nil {
		out.err = err
	}
	for _, s := range sizes {
		out.costs[s.Tool] = append(out.costs[s.Tool], costRow{Provider: s.Provider, Bytes: s.Bytes, Tokens: s.Tokens})
	}
	return out
}
