package clarify

import (
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/merge"
)

// AskText is the question by meaning for one slot, filled with the values
// of slots, as a turn that asked about it would word it: for showing
// several questions at once (an MCP form of every missing slot), where a
// turn words only the first.
func AskText(c *contract.Contract, locale string, slots map[string]any, slot string) string {
	if c.Property(slot) == nil {
		return ""
	}
	return Input{Contract: c, State: merge.State{Slots: slots}, Locale: locale}.ask(slot).Text
}
