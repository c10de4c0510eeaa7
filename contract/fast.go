package contract

import (
	"encoding/json"
	"math"
	"math/big"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A turn checks its slots against the contract's schema twice: each new
// value against its property's schema, and the whole object against the
// whole schema. Most of the time the answer is "valid" or "valid but for
// these missing slots", and the library, which builds an error tree and
// converts every number to a fraction to say so, spent a tenth of a turn's
// processor time on it. The fast path below gives those two answers from
// the compiled schema's own keywords, with the library's own pattern and
// format checkers; whenever it sees a violation, or a schema uses a
// keyword it does not know, it answers "not sure" and the library decides
// and words the verdict as before. So the library stays the authority, and
// the fast path only ever says what the library would (the differential
// test holds them to the same verdicts).

// fastProp is a property's schema made of keywords the fast path knows;
// nil when it uses another.
type fastProp struct {
	anyType                               bool // no type keyword
	isString, isNumber, isInteger, isBool bool
	strings                               []string // enum, all strings; nil when there is no enum
	constant                              *string  // const, a string
	minLength, maxLength                  *int
	pattern                               jsonschema.Regexp
	format                                *jsonschema.Format
	min, max, exMin, exMax                *big.Rat
	multipleOf                            *big.Rat
	// floats: the bounds as float64, when float64 holds every one of them
	// exactly and there is no multipleOf; see inFloatBounds.
	floats                     bool
	fMin, fMax, fExMin, fExMax float64
}

// fastObject is the whole schema: an object of known properties, the
// required ones, and conditionals of the form "if P is C then Q is
// required"; nil when the schema uses another keyword.
type fastObject struct {
	required   []string
	closed     bool // additionalProperties: false
	conditions []fastCondition
}

type fastCondition struct {
	prop     string
	value    string
	required []string
}

// annotationOnly reports a schema whose keywords are only the ones that
// constrain nothing.
func annotationOnly(s *jsonschema.Schema) bool {
	return s.Bool == nil && s.Ref == nil && s.RecursiveRef == nil && s.DynamicRef == nil &&
		(s.Types == nil || s.Types.IsEmpty()) && s.Enum == nil && s.Const == nil && s.Not == nil &&
		s.AllOf == nil && s.AnyOf == nil && s.OneOf == nil && s.If == nil && s.Then == nil && s.Else == nil &&
		s.Format == nil && s.MaxProperties == nil && s.MinProperties == nil && s.Required == nil &&
		s.PropertyNames == nil && s.Properties == nil && s.PatternProperties == nil &&
		s.AdditionalProperties == nil && s.Dependencies == nil && s.DependentRequired == nil &&
		s.DependentSchemas == nil && s.UnevaluatedProperties == nil && s.MinItems == nil && s.MaxItems == nil &&
		!s.UniqueItems && s.Contains == nil && s.MinContains == nil && s.MaxContains == nil && s.Items == nil &&
		s.AdditionalItems == nil && s.PrefixItems == nil && s.Items2020 == nil && s.UnevaluatedItems == nil &&
		s.MinLength == nil && s.MaxLength == nil && s.Pattern == nil && s.ContentEncoding == nil &&
		s.ContentMediaType == nil && s.ContentSchema == nil && s.Maximum == nil && s.Minimum == nil &&
		s.ExclusiveMaximum == nil && s.ExclusiveMinimum == nil && s.MultipleOf == nil && s.Extensions == nil
}

// compileFastProp is the fast form of a property's schema, or nil.
func compileFastProp(s *jsonschema.Schema) *fastProp {
	if s == nil || !fastSchema {
		return nil
	}
	if s.Bool != nil {
		if *s.Bool {
			return &fastProp{anyType: true} // true, or {}: every value
		}
		return nil
	}
	p := &fastProp{minLength: s.MinLength, maxLength: s.MaxLength, pattern: s.Pattern, format: s.Format,
		min: s.Minimum, max: s.Maximum, exMin: s.ExclusiveMinimum, exMax: s.ExclusiveMaximum, multipleOf: s.MultipleOf}
	p.floats = p.multipleOf == nil
	for _, b := range []struct {
		r *big.Rat
		f *float64
	}{{p.min, &p.fMin}, {p.max, &p.fMax}, {p.exMin, &p.fExMin}, {p.exMax, &p.fExMax}} {
		if b.r != nil {
			var exact bool
			if *b.f, exact = b.r.Float64(); !exact {
				p.floats = false
			}
		}
	}
	p.anyType = s.Types == nil || s.Types.IsEmpty()
	if !p.anyType {
		for _, t := range s.Types.ToStrings() {
			switch t {
			case "string":
				p.isString = true
			case "number":
				p.isNumber = true
			case "integer":
				p.isInteger = true
			case "boolean":
				p.isBool = true
			}
		}
	}
	if s.Enum != nil {
		p.strings = make([]string, 0, len(s.Enum.Values))
		for _, v := range s.Enum.Values {
			str, ok := v.(string)
			if !ok {
				return nil
			}
			p.strings = append(p.strings, str)
		}
	}
	if s.Const != nil {
		str, ok := (*s.Const).(string)
		if !ok {
			return nil
		}
		p.constant = &str
	}
	if s.Format != nil && s.Format.Name == "regex" {
		return nil // the library checks it with its regexp engine, not Validate
	}
	// What is left must constrain nothing.
	rest := *s
	rest.Types, rest.Enum, rest.Const, rest.MinLength, rest.MaxLength, rest.Pattern, rest.Format = nil, nil, nil, nil, nil, nil, nil
	rest.Minimum, rest.Maximum, rest.ExclusiveMinimum, rest.ExclusiveMaximum, rest.MultipleOf = nil, nil, nil, nil, nil
	if !annotationOnly(&rest) {
		return nil
	}
	return p
}

// compileFast is the fast form of a contract's whole schema, or nil: its
// properties are the contract's own, each with its fast form
// (Property.fast), or there is none.
func compileFast(c *Contract) *fastObject {
	s := c.schema
	if s == nil || !fastSchema {
		return nil
	}
	if s.Types != nil && !s.Types.IsEmpty() {
		if ts := s.Types.ToStrings(); len(ts) != 1 || ts[0] != "object" {
			return nil
		}
	}
	if len(s.Properties) != len(c.byName) {
		return nil
	}
	f := &fastObject{required: s.Required}
	for name, ps := range s.Properties {
		if p := c.byName[name]; p == nil || p.fast == nil || p.schema != ps {
			return nil
		}
	}
	switch a := s.AdditionalProperties.(type) {
	case nil:
	case bool:
		f.closed = !a
	default:
		return nil
	}
	for _, sub := range s.AllOf {
		c, ok := compileFastCondition(sub)
		if !ok {
			return nil
		}
		f.conditions = append(f.conditions, c)
	}
	rest := *s
	rest.Types, rest.Properties, rest.Required, rest.AdditionalProperties, rest.AllOf = nil, nil, nil, nil, nil
	if !annotationOnly(&rest) {
		return nil
	}
	return f
}

// compileFastCondition reads {"if": {"properties": {P: {"const": C}},
// "required": [P]}, "then": {"required": [...]}}.
func compileFastCondition(s *jsonschema.Schema) (fastCondition, bool) {
	if s == nil || s.If == nil || s.Then == nil || s.Else != nil {
		return fastCondition{}, false
	}
	rest := *s
	rest.If, rest.Then = nil, nil
	if !annotationOnly(&rest) {
		return fastCondition{}, false
	}
	cond, then := s.If, s.Then
	if len(cond.Properties) != 1 || len(cond.Required) != 1 {
		return fastCondition{}, false
	}
	prop := cond.Required[0]
	ps := cond.Properties[prop]
	if ps == nil || ps.Const == nil {
		return fastCondition{}, false
	}
	value, ok := (*ps.Const).(string)
	if !ok {
		return fastCondition{}, false
	}
	constOnly := *ps
	constOnly.Const = nil
	ifRest := *cond
	ifRest.Properties, ifRest.Required = nil, nil
	thenRest := *then
	thenRest.Required = nil
	if !annotationOnly(&constOnly) || !annotationOnly(&ifRest) || !annotationOnly(&thenRest) {
		return fastCondition{}, false
	}
	return fastCondition{prop: prop, value: value, required: then.Required}, true
}

// valid reports a value the schema surely accepts; false is "not sure".
// Values come in their validation form: strings, json.Number, booleans.
func (p *fastProp) valid(v any) bool {
	switch x := v.(type) {
	case string:
		return p.validString(x)
	case json.Number:
		return p.validNumber(x)
	case bool:
		return (p.anyType || p.isBool) && p.strings == nil && p.constant == nil
	}
	return false
}

func (p *fastProp) validString(s string) bool {
	if !p.anyType && !p.isString {
		return false
	}
	if p.constant != nil && s != *p.constant {
		return false
	}
	if p.strings != nil && !slices.Contains(p.strings, s) {
		return false
	}
	if p.format != nil && p.format.Validate(s) != nil {
		return false
	}
	if p.minLength != nil || p.maxLength != nil {
		n := utf8.RuneCountInString(s)
		if p.minLength != nil && n < *p.minLength || p.maxLength != nil && n > *p.maxLength {
			return false
		}
	}
	return p.pattern == nil || p.pattern.MatchString(s)
}

func (p *fastProp) validNumber(n json.Number) bool {
	if p.strings != nil || p.constant != nil {
		return false
	}
	if !p.anyType && !p.isNumber && !(p.isInteger && plainInteger(string(n))) {
		return false
	}
	if p.min == nil && p.max == nil && p.exMin == nil && p.exMax == nil && p.multipleOf == nil {
		return true
	}
	if p.floats && decimalSyntax(string(n)) {
		if f, err := strconv.ParseFloat(string(n), 64); err == nil && !math.IsInf(f, 0) {
			if ok, sure := p.inFloatBounds(f); sure {
				return ok
			}
		}
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return false
	}
	switch {
	case p.min != nil && r.Cmp(p.min) < 0, p.max != nil && r.Cmp(p.max) > 0,
		p.exMin != nil && r.Cmp(p.exMin) <= 0, p.exMax != nil && r.Cmp(p.exMax) >= 0:
		return false
	case p.multipleOf != nil:
		return new(big.Rat).Quo(r, p.multipleOf).IsInt()
	}
	return true
}

// inFloatBounds compares f, the float64 nearest a number, with bounds
// float64 holds exactly. Where f is below or above a bound, so is the
// number: it lies within half a step of f, and the bound at least a whole
// step away. Where f equals a bound, the number may lie on either side of
// it, and only the exact comparison can tell: not sure.
func (p *fastProp) inFloatBounds(f float64) (ok, sure bool) {
	sure = true
	if p.min != nil {
		if f < p.fMin {
			return false, true
		}
		sure = sure && f != p.fMin
	}
	if p.max != nil {
		if f > p.fMax {
			return false, true
		}
		sure = sure && f != p.fMax
	}
	if p.exMin != nil {
		if f < p.fExMin {
			return false, true
		}
		sure = sure && f != p.fExMin
	}
	if p.exMax != nil {
		if f > p.fExMax {
			return false, true
		}
		sure = sure && f != p.fExMax
	}
	return true, sure
}

// decimalSyntax reports a string made only of what a JSON number is made
// of, so that strconv.ParseFloat reads it as big.Rat does (no hex, no
// underscores, no Inf or NaN).
func decimalSyntax(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '.', c == 'e', c == 'E', c == '+', c == '-':
		default:
			return false
		}
	}
	return true
}

// plainInteger reports digits with an optional sign: an integer to any
// reading of JSON Schema's "integer".
func plainInteger(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// check answers the slots missing from the contract's slots when they are
// otherwise surely valid, and sure; not sure when any value may violate the
// schema. Each value is taken in its validation form, as the library would
// see it, without building the object the library would be given.
func (f *fastObject) check(c *Contract, slots map[string]any) (missing []string, sure bool) {
	for k, v := range slots {
		p := c.byName[k]
		if p == nil {
			if f.closed {
				return nil, false
			}
			continue
		}
		if !p.fast.valid(validationForm(p, v)) {
			return nil, false
		}
	}
	for _, r := range f.required {
		if _, ok := slots[r]; !ok {
			missing = append(missing, r)
		}
	}
	for _, cond := range f.conditions {
		if v, ok := slots[cond.prop]; ok && validationForm(c.byName[cond.prop], v) == any(cond.value) {
			for _, r := range cond.required {
				if _, ok := slots[r]; !ok {
					missing = append(missing, r)
				}
			}
		}
	}
	return missing, true
}
