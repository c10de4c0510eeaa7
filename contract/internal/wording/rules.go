// Package wording says a contract's JSON Schema in words, in the turn's
// language: cross-field rules (what a REPAIR tells the model would satisfy
// a rule, and what an export puts into a description when the provider's
// strict mode cannot carry the keyword), bounds and lengths, and simple
// patterns.
package wording

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/slotd/slotd/contract/internal/jsontree"
	"github.com/slotd/slotd/internal/phrase"
)

// Condition says when a condition schema holds: `reason is "duplicate"`,
// `to_day is given`.
func Condition(s any, lang string) string { return describeSchema(s, lang, true) }

// Requirement says what a schema requires: `original_operation_id is
// required`, `bic must be: one of: X, Y`.
func Requirement(s any, lang string) string { return describeSchema(s, lang, false) }

func describeSchema(s any, lang string, cond bool) string {
	o, ok := s.(*jsontree.Object)
	if !ok {
		if b, ok := s.(bool); ok && !b {
			return phrase.Text(lang, "schema.false")
		}
		return ""
	}
	var parts []string
	parts = append(parts, describeProperties(o, lang, cond)...)
	parts = append(parts, describeDependencies(o, lang)...)
	parts = append(parts, describeConditional(o, lang, cond)...)
	parts = append(parts, describeCombinations(o, lang, cond)...)
	return strings.Join(parts, phrase.Text(lang, "rule.and"))
}

// describeProperties says what the properties must hold and which are
// required; a condition names a required property once, by its value when
// it says one.
func describeProperties(o *jsontree.Object, lang string, cond bool) []string {
	var parts []string
	described := map[string]bool{}
	if props := o.Obj("properties"); props != nil {
		for _, name := range props.Keys() {
			if w := describeValue(name, props.Obj(name), lang, cond); w != "" {
				parts = append(parts, w)
				described[name] = true
			}
		}
	}
	for _, r := range o.List("required") {
		name, _ := r.(string)
		if name == "" || (cond && described[name]) {
			continue
		}
		if cond {
			parts = append(parts, phrase.Text(lang, "rule.given", name))
		} else {
			parts = append(parts, phrase.Text(lang, "rule.required", name))
		}
	}
	return parts
}

// describeDependencies says dependentRequired and dependentSchemas: "when
// iban is given: bic is required".
func describeDependencies(o *jsontree.Object, lang string) []string {
	var parts []string
	if dr := o.Obj("dependentRequired"); dr != nil {
		for _, name := range dr.Keys() {
			var need []string
			for _, n := range dr.List(name) {
				if s, ok := n.(string); ok {
					need = append(need, phrase.Text(lang, "rule.required", s))
				}
			}
			if len(need) > 0 {
				parts = append(parts, phrase.Text(lang, "rule.when", phrase.Text(lang, "rule.given", name), strings.Join(need, phrase.Text(lang, "rule.and"))))
			}
		}
	}
	if ds := o.Obj("dependentSchemas"); ds != nil {
		for _, name := range ds.Keys() {
			sub, _ := ds.Get(name)
			if w := Requirement(sub, lang); w != "" {
				parts = append(parts, phrase.Text(lang, "rule.when", phrase.Text(lang, "rule.given", name), w))
			}
		}
	}
	return parts
}

// describeConditional says if/then/else: "when mode is "cash": …", "unless
// mode is "cash": …".
func describeConditional(o *jsontree.Object, lang string, cond bool) []string {
	ifs, ok := o.Get("if")
	if !ok {
		return nil
	}
	var parts []string
	c := Condition(ifs, lang)
	if then, ok := o.Get("then"); ok {
		if w := describeSchema(then, lang, cond); w != "" {
			parts = append(parts, phrase.Text(lang, "rule.when", c, w))
		}
	}
	if els, ok := o.Get("else"); ok {
		if w := describeSchema(els, lang, cond); w != "" {
			parts = append(parts, phrase.Text(lang, "rule.otherwise", c, w))
		}
	}
	return parts
}

// describeCombinations says allOf (each part), anyOf and oneOf (the
// alternatives, numbered) and not.
func describeCombinations(o *jsontree.Object, lang string, cond bool) []string {
	var parts []string
	for _, sub := range o.List("allOf") {
		if w := describeSchema(sub, lang, cond); w != "" {
			parts = append(parts, w)
		}
	}
	for _, k := range [...]string{"anyOf", "oneOf"} {
		subs := o.List(k)
		if len(subs) == 0 {
			continue
		}
		alts := make([]string, 0, len(subs))
		for i, sub := range subs {
			alts = append(alts, phrase.Text(lang, "rule.alt", i+1, describeSchema(sub, lang, cond)))
		}
		parts = append(parts, phrase.Text(lang, "schema."+k, strings.Join(alts, "; ")))
	}
	if not, ok := o.Get("not"); ok {
		if w := Condition(not, lang); w != "" {
			if cond {
				parts = append(parts, phrase.Text(lang, "rule.not", w))
			} else {
				parts = append(parts, phrase.Text(lang, "schema.not", w))
			}
		}
	}
	return parts
}

// describeValue says what one property must hold, or "" when its schema
// constrains nothing this can say.
func describeValue(name string, s *jsontree.Object, lang string, cond bool) string {
	if s == nil {
		return ""
	}
	if v, ok := s.Get("const"); ok {
		if cond {
			return phrase.Text(lang, "rule.is", name, Value(v))
		}
		return phrase.Text(lang, "rule.must", name, Value(v))
	}
	if list := s.List("enum"); len(list) > 0 {
		vals := make([]string, len(list))
		for i, v := range list {
			vals[i] = Value(v)
		}
		if cond {
			return phrase.Text(lang, "rule.one_of", name, strings.Join(vals, ", "))
		}
		return phrase.Text(lang, "rule.must", name, phrase.Text(lang, "fmt.enum", strings.Join(vals, ", ")))
	}
	if not := s.Obj("not"); not != nil {
		if w := describeValue(name, not, lang, true); w != "" {
			return phrase.Text(lang, "rule.not", w)
		}
	}
	if w := Constraints(s, lang); w != "" {
		if cond {
			return phrase.Text(lang, "rule.cond_bound", name, w)
		}
		return phrase.Text(lang, "rule.must", name, w)
	}
	if t := s.Str("type"); t != "" && !cond {
		return phrase.Text(lang, "rule.must", name, phrase.TypeName(lang, t))
	}
	return ""
}

// Value writes a schema value for a sentence: strings quoted, numbers and
// the rest as JSON.
func Value(v any) string {
	switch t := v.(type) {
	case string:
		return fmt.Sprintf("%q", t)
	case json.Number:
		return string(t)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
