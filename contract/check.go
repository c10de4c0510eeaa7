package contract

import (
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/slotd/slotd/contract/internal/jsontree"
	"github.com/slotd/slotd/contract/internal/wording"
	"github.com/slotd/slotd/internal/phrase"
	"github.com/slotd/slotd/problem"
)

// Report is the after phase's verdict on the whole slot object.
type Report struct {
	// Missing lists the empty slots the contract requires now, conditional
	// ones included, in contract order.
	Missing []string
	// Violations are failed rules that no missing slot explains, worded in
	// the locale Check was given.
	Violations []problem.FieldError

	issues []issue
	c      *Contract
}

// Valid reports an object that passed the whole contract.
func (r Report) Valid() bool { return len(r.Missing) == 0 && len(r.Violations) == 0 }

// ViolationsIn words the violations in another locale; a Report built by
// hand comes back as it is.
func (r Report) ViolationsIn(locale string) []problem.FieldError {
	if r.c == nil || len(r.issues) == 0 {
		return r.Violations
	}
	return r.c.wordIssues(r.issues, r.c.lang(locale))
}

// issue is one violation before it is worded.
type issue struct {
	ptr   string
	input string
	p     *Property // the slot the pointer names, or nil
	leaf  *jsonschema.ValidationError
	// rule is the schema path of the conditional the leaf failed inside
	// ("/allOf/0/then"), "" for a property's own schema.
	rule string
	// group is "not", "anyOf" or "oneOf" for a failed combination, whose
	// schema node is the keyword's value.
	group string
	node  any
}

// Check runs the whole contract over the slots, with violations worded in
// English. A failed required or dependentRequired, conditional or not, is a
// missing slot to ask for, not a rejection.
func (c *Contract) Check(slots map[string]any) Report { return c.CheckIn(slots, "") }

// CheckIn is Check with the violations worded in a locale.
func (c *Contract) CheckIn(slots map[string]any, locale string) Report {
	err := c.schema.Validate(c.validationSlots(slots))
	if err == nil {
		return Report{}
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return Report{Violations: []problem.FieldError{{Pointer: "", Message: err.Error()}}}
	}
	w := walker{c: c, slots: slots, seen: map[string]bool{}}
	w.walk(ve)
	// The library reports an object's properties in map order: the
	// violations come in the contract's order, the same on every call.
	slices.SortStableFunc(w.issues, func(a, b issue) int {
		if d := c.pointerRank(a.ptr) - c.pointerRank(b.ptr); d != 0 {
			return d
		}
		return strings.Compare(a.ptr, b.ptr)
	})
	r := Report{Missing: c.InOrder(w.missing), issues: w.issues, c: c}
	r.Violations = c.wordIssues(w.issues, c.lang(locale))
	return r
}

type walker struct {
	c       *Contract
	slots   map[string]any
	missing []string
	issues  []issue
	seen    map[string]bool
}

func (w *walker) walk(e *jsonschema.ValidationError) {
	switch k := e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		w.group(e)
		return
	case *kind.Not:
		w.add(issue{ptr: jsontree.Pointer(e.InstanceLocation), group: "not", node: w.schemaAt(e, "not"), leaf: e})
		return
	case *kind.Required:
		if len(e.InstanceLocation) == 0 {
			w.missing = append(w.missing, k.Missing...)
			return
		}
	case *kind.DependentRequired:
		if len(e.InstanceLocation) == 0 {
			w.missing = append(w.missing, k.Missing...)
			return
		}
	}
	if len(e.Causes) > 0 {
		for _, cause := range e.Causes {
			w.walk(cause)
		}
		return
	}
	w.add(issue{ptr: jsontree.Pointer(e.InstanceLocation), leaf: e, rule: ruleOf(fragment(e.SchemaURL))})
}

// group handles a failed anyOf or oneOf: when some alternative fails only
// for missing slots, those slots are missing (the alternative that needs
// the fewest, the first on a tie); otherwise the whole choice is one
// violation that lists the alternatives.
func (w *walker) group(e *jsonschema.ValidationError) {
	var best []string
	found := false
	for _, alt := range e.Causes {
		if m, ok := onlyMissing(alt); ok && (!found || len(m) < len(best)) {
			best, found = m, true
		}
	}
	if found {
		w.missing = append(w.missing, best...)
		return
	}
	name := "anyOf"
	if _, ok := e.ErrorKind.(*kind.OneOf); ok {
		name = "oneOf"
	}
	w.add(issue{ptr: jsontree.Pointer(e.InstanceLocation), group: name, node: w.schemaAt(e, name), leaf: e})
}

// onlyMissing reports an alternative whose every failure is a missing slot
// at the root, and those slots.
func onlyMissing(e *jsonschema.ValidationError) ([]string, bool) {
	if len(e.Causes) > 0 {
		var all []string
		for _, c := range e.Causes {
			m, ok := onlyMissing(c)
			if !ok {
				return nil, false
			}
			all = append(all, m...)
		}
		return all, true
	}
	if len(e.InstanceLocation) > 0 {
		return nil, false
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		return k.Missing, true
	case *kind.DependentRequired:
		return k.Missing, true
	}
	return nil, false
}

func (w *walker) add(is issue) {
	if len(is.leaf.InstanceLocation) > 0 {
		if p := w.c.byName[is.leaf.InstanceLocation[0]]; p != nil {
			is.p = p
			is.input = w.c.render(p.Name, w.slots[p.Name])
		}
	}
	key := is.ptr + "\x00" + is.rule + "\x00" + is.group + "\x00" + fmt.Sprintf("%T", is.leaf.ErrorKind)
	if w.seen[key] {
		return
	}
	w.seen[key] = true
	w.issues = append(w.issues, is)
}

// schemaAt is the written schema a keyword of the error's schema holds.
func (w *walker) schemaAt(e *jsonschema.ValidationError, keyword string) any {
	v, _ := jsontree.Lookup(w.c.raw, fragment(e.SchemaURL)+"/"+keyword)
	return v
}

// fragment is the JSON pointer part of a schema URL.
func fragment(u string) string {
	_, frag, _ := strings.Cut(u, "#")
	if s, err := url.PathUnescape(frag); err == nil {
		return s
	}
	return frag
}

// ruleOf is the conditional a schema location sits in: the path up to and
// including its last then, else or dependentSchemas/NAME; "" when none.
func ruleOf(frag string) string {
	toks := jsontree.SplitPointer(frag)
	for i := len(toks) - 1; i >= 0; i-- {
		switch toks[i] {
		case "then", "else":
			if i > 0 && toks[i-1] == "properties" {
				continue // a property named "then"
			}
			return jsontree.Pointer(toks[:i+1])
		}
		if i > 0 && toks[i-1] == "dependentSchemas" {
			return jsontree.Pointer(toks[:i+1])
		}
	}
	return ""
}

// wordIssues words issues in a language.
func (c *Contract) wordIssues(issues []issue, lang phrase.Language) []problem.FieldError {
	out := make([]problem.FieldError, 0, len(issues))
	for _, is := range issues {
		fe := problem.FieldError{Pointer: is.ptr, Input: is.input}
		switch is.group {
		case "not":
			fe.Message = phrase.Text(lang, "schema.not", phrase.Args{"rule": wording.Condition(is.node, lang)})
		case "anyOf", "oneOf":
			fe.Message = wording.Alternatives(lang, is.group, asList(is.node))
		default:
			fe.Message = leafMessage(is.leaf, lang)
		}
		if is.rule != "" {
			fe.Message = c.ruleMessage(is.rule, fe.Message, lang)
		}
		if is.p != nil {
			fe.Allowed = slices.Clone(is.p.Enum)
			fe.Format = is.p.repairFormat(lang)
		}
		switch k := is.leaf.ErrorKind.(type) {
		case *kind.Enum:
			// A rule may narrow the slot's values: list what the rule allows.
			fe.Allowed = valuesText(k.Want)
		case *kind.Const:
			fe.Allowed = valuesText([]any{k.Want})
		case *kind.AdditionalProperties:
			fe.Allowed = c.propertyNames()
			fe.Input = problem.Quote(strings.Join(k.Properties, ", "))
			fe.Format = phrase.Text(lang, "fmt.arguments", nil)
		}
		out = append(out, fe)
	}
	return out
}

// ruleMessage puts a leaf's message under the condition of its rule: "when
// reason is "duplicate": …".
func (c *Contract) ruleMessage(rule, msg string, lang phrase.Language) string {
	toks := jsontree.SplitPointer(rule)
	last := toks[len(toks)-1]
	parent := jsontree.Pointer(toks[:len(toks)-1])
	switch last {
	case "then", "else":
		ifs, ok := jsontree.Lookup(c.raw, parent+"/if")
		if !ok {
			return msg
		}
		if last == "else" {
			return wording.Unless(lang, wording.Condition(ifs, lang), msg)
		}
		return wording.When(lang, wording.Condition(ifs, lang), msg)
	}
	return wording.When(lang, wording.Given(lang, last), msg)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func valuesText(vs []any) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		if s, ok := v.(string); ok {
			out = append(out, s)
			continue
		}
		out = append(out, wording.Value(v))
	}
	return out
}

// schemaMessage is a property schema's failure in one line.
func schemaMessage(err error, lang phrase.Language) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var msgs []string
	walkLeaves(ve, func(e *jsonschema.ValidationError) {
		msgs = append(msgs, leafMessage(e, lang))
	})
	return strings.Join(msgs, "; ")
}

func walkLeaves(e *jsonschema.ValidationError, fn func(*jsonschema.ValidationError)) {
	if len(e.Causes) == 0 {
		fn(e)
		return
	}
	for _, c := range e.Causes {
		walkLeaves(c, fn)
	}
}

// leafMessage is one failed keyword in words that never echo the received
// value: the FieldError's Input carries it, redacted. The library's own
// messages repeat it ("maximum: got 4.276123456784417×10¹⁵", "'4276 1234 5678
// 4417' does not match pattern"), which would let a card number out.
func leafMessage(e *jsonschema.ValidationError, lang phrase.Language) string {
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		want := make([]string, len(k.Want))
		for i, t := range k.Want {
			want[i] = phrase.TypeName(lang, t)
		}
		return phrase.Text(lang, "schema.type", phrase.Args{"want": strings.Join(want, phrase.Text(lang, "rule.or", nil)), "got": phrase.TypeName(lang, k.Got)})
	case *kind.Enum:
		return phrase.Text(lang, "schema.enum", phrase.Args{"values": strings.Join(valuesText(k.Want), ", ")})
	case *kind.Const:
		return phrase.Text(lang, "schema.const", phrase.Args{"value": wording.Value(k.Want)})
	case *kind.Minimum:
		return phrase.Text(lang, "schema.minimum", phrase.Args{"limit": ratString(k.Want)})
	case *kind.Maximum:
		return phrase.Text(lang, "schema.maximum", phrase.Args{"limit": ratString(k.Want)})
	case *kind.ExclusiveMinimum:
		return phrase.Text(lang, "schema.xminimum", phrase.Args{"limit": ratString(k.Want)})
	case *kind.ExclusiveMaximum:
		return phrase.Text(lang, "schema.xmaximum", phrase.Args{"limit": ratString(k.Want)})
	case *kind.MultipleOf:
		return phrase.Text(lang, "schema.multiple", phrase.Args{"divisor": ratString(k.Want)})
	case *kind.MinLength:
		return phrase.Text(lang, "schema.minLength", phrase.Args{"limit": k.Want, "length": k.Got})
	case *kind.MaxLength:
		return phrase.Text(lang, "schema.maxLength", phrase.Args{"limit": k.Want, "length": k.Got})
	case *kind.Pattern:
		return phrase.Text(lang, "schema.pattern", phrase.Args{"pattern": k.Want})
	case *kind.Format:
		return phrase.Text(lang, "schema.format", phrase.Args{"format": k.Want})
	case *kind.Required:
		return phrase.Text(lang, "schema.required", phrase.Args{"names": strings.Join(k.Missing, ", ")})
	case *kind.DependentRequired:
		return wording.When(lang, wording.Given(lang, k.Prop), phrase.Text(lang, "schema.required", phrase.Args{"names": strings.Join(k.Missing, ", ")}))
	case *kind.AdditionalProperties:
		return phrase.Text(lang, "schema.additional", phrase.Args{"names": problem.Redact(strings.Join(k.Properties, ", "))})
	case *kind.MinItems:
		return phrase.Text(lang, "schema.minItems", phrase.Args{"limit": k.Want})
	case *kind.MaxItems:
		return phrase.Text(lang, "schema.maxItems", phrase.Args{"limit": k.Want})
	case *kind.FalseSchema:
		return phrase.Text(lang, "schema.false", nil)
	}
	return otherLeafMessage(e, lang)
}

// otherLeafMessage words the keywords contracts seldom use; any keyword
// slotd has no sentence for is named, in the turn's language still.
func otherLeafMessage(e *jsonschema.ValidationError, lang phrase.Language) string {
	switch k := e.ErrorKind.(type) {
	case *kind.Dependency:
		return wording.When(lang, wording.Given(lang, k.Prop), phrase.Text(lang, "schema.required", phrase.Args{"names": strings.Join(k.Missing, ", ")}))
	case *kind.MinProperties:
		return phrase.Text(lang, "schema.minProperties", phrase.Args{"limit": k.Want})
	case *kind.MaxProperties:
		return phrase.Text(lang, "schema.maxProperties", phrase.Args{"limit": k.Want})
	case *kind.UniqueItems:
		return phrase.Text(lang, "schema.uniqueItems", phrase.Args{"first": k.Duplicates[0], "second": k.Duplicates[1]})
	case *kind.Contains:
		return phrase.Text(lang, "schema.contains", nil)
	case *kind.MinContains:
		return phrase.Text(lang, "schema.minContains", phrase.Args{"got": len(k.Got), "limit": k.Want})
	case *kind.MaxContains:
		return phrase.Text(lang, "schema.maxContains", phrase.Args{"got": len(k.Got), "limit": k.Want})
	case *kind.PropertyNames:
		return phrase.Text(lang, "schema.propertyNames", phrase.Args{"name": problem.Quote(k.Property)})
	case *kind.AdditionalItems:
		return phrase.Text(lang, "schema.additionalItems", phrase.Args{"count": k.Count})
	}
	keyword := strings.Join(e.ErrorKind.KeywordPath(), "/")
	if keyword == "" {
		keyword = "?"
	}
	return phrase.Text(lang, "schema.failed", phrase.Args{"keyword": keyword})
}

// ratString writes a schema bound as a plain decimal: 10000000, not 1×10⁰⁷.
func ratString(r *big.Rat) string {
	if r == nil {
		return ""
	}
	if r.IsInt() {
		return r.Num().String()
	}
	return strings.TrimRight(r.FloatString(12), "0")
}

// pointerRank orders a pointer by the contract position of the property it
// starts with; the object itself first, unknown names last.
func (c *Contract) pointerRank(ptr string) int {
	if ptr == "" {
		return -1
	}
	name, _, _ := strings.Cut(ptr[1:], "/")
	if i, ok := c.position[jsontree.Unescape(name)]; ok {
		return i
	}
	return len(c.Properties)
}
