package contract

import (
	"errors"
	"math/big"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/slotd/slotd/problem"
)

var english = message.NewPrinter(language.English)

// Report is the after phase's verdict on the whole slot object.
type Report struct {
	// Missing lists the empty slots the contract requires now, conditional
	// ones included, in contract order.
	Missing []string
	// Violations are failed rules that no missing slot explains.
	Violations []problem.FieldError
}

// Valid reports an object that passed the whole contract.
func (r Report) Valid() bool { return len(r.Missing) == 0 && len(r.Violations) == 0 }

// Check runs the whole contract over the slots. A failed required or
// dependentRequired, conditional or not, is a missing slot to ask for, not a
// rejection.
func (c *Contract) Check(slots map[string]any) Report {
	inst := make(map[string]any, len(slots))
	for k, v := range slots {
		inst[k] = validationForm(c.byName[k], v)
	}
	err := c.schema.Validate(inst)
	if err == nil {
		return Report{}
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return Report{Violations: []problem.FieldError{{Pointer: "", Message: err.Error()}}}
	}
	var missing []string
	var violations []problem.FieldError
	seen := map[string]bool{}
	walkLeaves(ve, func(e *jsonschema.ValidationError) {
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			if len(e.InstanceLocation) == 0 {
				missing = append(missing, k.Missing...)
				return
			}
		case *kind.DependentRequired:
			if len(e.InstanceLocation) == 0 {
				missing = append(missing, k.Missing...)
				return
			}
		}
		ptr := "/" + strings.Join(mapEscape(e.InstanceLocation), "/")
		if len(e.InstanceLocation) == 0 {
			ptr = ""
		}
		msg := leafMessage(e)
		if seen[ptr+msg] {
			return
		}
		seen[ptr+msg] = true
		fe := problem.FieldError{Pointer: ptr, Message: msg}
		if len(e.InstanceLocation) > 0 {
			if p := c.byName[e.InstanceLocation[0]]; p != nil {
				fe.Input = c.render(p.Name, slots[p.Name])
				fe.Allowed = p.Enum
				fe.Format = p.expected()
			}
		}
		violations = append(violations, fe)
	})
	return Report{Missing: c.InOrder(missing), Violations: violations}
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

func mapEscape(loc []string) []string {
	out := make([]string, len(loc))
	for i, s := range loc {
		out[i] = escapePointer(s)
	}
	return out
}

// schemaMessage is a property schema's failure in one line.
func schemaMessage(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var msgs []string
	walkLeaves(ve, func(e *jsonschema.ValidationError) {
		msgs = append(msgs, leafMessage(e))
	})
	return strings.Join(msgs, "; ")
}

// leafMessage is one failed keyword in words that never echo the received
// value: the FieldError's Input carries it, redacted. The library's own
// messages repeat it ("maximum: got 4.276123456784417×10¹⁵", "'4276 1234 5678
// 4417' does not match pattern"), which would let a card number out.
func leafMessage(e *jsonschema.ValidationError) string {
	switch k := e.ErrorKind.(type) {
	case *kind.Minimum:
		return "minimum: want at least " + ratString(k.Want)
	case *kind.Maximum:
		return "maximum: want at most " + ratString(k.Want)
	case *kind.ExclusiveMinimum:
		return "exclusiveMinimum: want more than " + ratString(k.Want)
	case *kind.ExclusiveMaximum:
		return "exclusiveMaximum: want less than " + ratString(k.Want)
	case *kind.MultipleOf:
		return "multipleOf: want a multiple of " + ratString(k.Want)
	case *kind.Pattern:
		return "does not match pattern '" + k.Want + "'"
	case *kind.Format:
		return "is not a valid " + k.Want
	}
	return problem.Redact(e.ErrorKind.LocalizedString(english))
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
