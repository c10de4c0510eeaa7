package provider

import (
	"slices"
	"strings"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/contract/internal/jsontree"
	"github.com/slotd/slotd/contract/internal/wording"
	"github.com/slotd/slotd/internal/phrase"
)

// fixedByNormalizer are the keywords of a slot that its normalizers make
// true of what the user said: "•• 4417" is no ^[0-9]{4}$ until last4 has
// run, "вчера" no date, "Duplicate" no enum value. An MCP client that
// validates tool input against inputSchema (LangChain's adapters) refuses
// such a value before slotd sees it, so the MCP export leaves them out and
// says them in the description.
var fixedByNormalizer = [...]string{"pattern", "format", "enum", "minLength", "maxLength"}

// lenient rewrites the properties of an MCP tool's inputSchema so that a
// client validating against it lets through what models send for every
// normalizable slot: a string beside the slot's type, and none of the
// keywords a normalizer fixes. Their strict form goes into the property's
// description. slotd still checks every value against the strict contract.
func lenient(c *contract.Contract, props *jsontree.Object) {
	if props == nil {
		return
	}
	for _, name := range props.Keys() {
		p := c.Property(name)
		s := props.Obj(name)
		if p == nil || s == nil || len(p.Normalizers()) == 0 {
			continue
		}
		dropped := jsontree.NewObject()
		for _, k := range fixedByNormalizer {
			if v, ok := s.Get(k); ok {
				dropped.Set(k, v)
				s.Del(k)
			}
		}
		withString(s)
		var form []string
		if e := contract.Expected(p); e != "" {
			form = append(form, e)
		}
		// Lengths and a pattern in words, unless the slot's expected form
		// already says them (the last 4 digits, an IATA code).
		if w := wording.Constraints(dropped, phrase.English); w != "" && len(form) == 0 {
			form = append(form, w)
		}
		if len(form) == 0 {
			continue
		}
		d := strings.TrimSpace(s.Str("description"))
		if d != "" && !strings.HasSuffix(d, ".") {
			d += "."
		}
		s.Set("description", strings.TrimSpace(d+" slotd normalizes it to "+strings.Join(form, "; ")+"."))
	}
}

// withString makes a schema's type also take a string.
func withString(s *jsontree.Object) {
	switch t, _ := s.Get("type"); t := t.(type) {
	case string:
		if t != "string" {
			s.Set("type", []any{t, "string"})
		}
	case []any:
		if !slices.Contains(t, any("string")) {
			s.Set("type", append(slices.Clone(t), "string"))
		}
	}
}
