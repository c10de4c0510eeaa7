package contract

import (
	"github.com/slotd/slotd/contract/internal/jsontree"
	"github.com/slotd/slotd/internal/phrase"
	"github.com/slotd/slotd/problem"
)

// NullError says that a required slot that is still empty arrived as null.
// A null never changes a slot, yet here it is often not the model's "I do
// not know": a client coerced what the model sent (the MCP Inspector passes
// "1 200,50 ₽" for a number through Number(), which gives null), and a bare
// question again would not tell the model why its value vanished. The error
// carries the slot's accepted form, as a refusal does. nil for a slot the
// contract does not have.
func (c *Contract) NullError(slot, locale string) *problem.FieldError {
	p := c.byName[slot]
	if p == nil {
		return nil
	}
	lang := c.lang(locale)
	return &problem.FieldError{
		Pointer: "/" + jsontree.Escape(slot),
		Input:   "null",
		Message: phrase.Text(lang, "null.required", nil),
		Allowed: append([]string(nil), p.Enum...),
		Format:  p.repairFormat(lang),
	}
}
