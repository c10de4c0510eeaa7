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
func Condition(s any, lang phrase.Language) string { return describeSchema(s, lang, true) }

// Requirement says what a schema requires: `original_operation_id is
// required`, `bic must be: one of: X, Y`.
func Requirement(s any, lang phrase.Language) string { return describeSchema(s, lang, false) }

func describeSchema(s any, lang phrase.Language, cond bool) string {
	o, ok := s.(*jsontree.Object)
	if !ok {
		if b, ok := s.(bool); ok && !b {
			return phrase.Text(lang, "schema.false", nil)
		}
		return ""
	}
	var parts []string
	parts = append(parts, describeProperties(o, lang, cond)...)
	parts = append(parts, describeDependencies(o, lang)...)
	parts = append(parts, describeConditional(o, lang, cond)...)
	parts = append(parts, describeCombinations(o, lang, cond)...)
	return strings.Join(parts, phrase.Text(lang, "rule.and", nil))
}

// describeProperties says what the properties must hold and which are
// required; a condition names a required property once, by its value when
// it says one.
func describeProperties(o *jsontree.Object, lang phrase.Language, cond bool) []string {
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
			parts = append(parts, given(lang, name))
		} else {
			parts = append(parts, required(lang, name))
		}
	}
	return parts
}

// describeDependencies says dependentRequired and dependentSchemas: "when
// iban is given: bic is required".
func describeDependencies(o *jsontree.Object, lang phrase.Language) []string {
	var parts []string
	if dr := o.Obj("dependentRequired"); dr != nil {
		for _, name := range dr.Keys() {
			var need []string
			for _, n := range dr.List(name) {
				if s, ok := n.(string); ok {
					need = append(need, required(lang, s))
				}
			}
			if len(need) > 0 {
				parts = append(parts, When(lang, given(lang, name), strings.Join(need, phrase.Text(lang, "rule.and", nil))))
			}
		}
	}
	if ds := o.Obj("dependentSchemas"); ds != nil {
		for _, name := range ds.Keys() {
			sub, _ := ds.Get(name)
			if w := Requirement(sub, lang); w != "" {
				parts = append(parts, When(lang, given(lang, name), w))
			}
		}
	}
	return parts
}

// describeConditional says if/then/else: "when mode is "cash": …", "unless
// mode is "cash": …".
func describeConditional(o *jsontree.Object, lang phrase.Language, cond bool) []string {
	ifs, ok := o.Get("if")
	if !ok {
		return nil
	}
	var parts []string
	c := Condition(ifs, lang)
	if then, ok := o.Get("then"); ok {
		if w := describeSchema(then, lang, cond); w != "" {
			parts = append(parts, When(lang, c, w))
		}
	}
	if els, ok := o.Get("else"); ok {
		if w := describeSchema(els, lang, cond); w != "" {
			parts = append(parts, Unless(lang, c, w))
		}
	}
	return parts
}

// describeCombinations says allOf (each part), anyOf and oneOf (the
// alternatives, numbered) and not.
func describeCombinations(o *jsontree.Object, lang phrase.Language, cond bool) []string {
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
			alts = append(alts, alternative(lang, i, describeSchema(sub, lang, cond)))
		}
		parts = append(parts, phrase.Text(lang, "schema."+k, phrase.Args{"alternatives": strings.Join(alts, "; ")}))
	}
	if not, ok := o.Get("not"); ok {
		if w := Condition(not, lang); w != "" {
			if cond {
				parts = append(parts, phrase.Text(lang, "rule.not", phrase.Args{"rule": w}))
			} else {
				parts = append(parts, phrase.Text(lang, "schema.not", phrase.Args{"rule": w}))
			}
		}
	}
	return parts
}

// describeValue says what one property must hold, or "" when its schema
// constrains nothing this can say.
func describeValue(name string, s *jsontree.Object, lang phrase.Language, cond bool) string {
	if s == nil {
		return ""
	}
	if v, ok := s.Get("const"); ok {
		if cond {
			return phrase.Text(lang, "rule.is", phrase.Args{"name": name, "value": Value(v)})
		}
		return must(lang, name, Value(v))
	}
	if list := s.List("enum"); len(list) > 0 {
		vals := make([]string, len(list))
		for i, v := range list {
			vals[i] = Value(v)
		}
		if cond {
			return phrase.Text(lang, "rule.one_of", phrase.Args{"name": name, "values": strings.Join(vals, ", ")})
		}
		return must(lang, name, phrase.Text(lang, "fmt.enum", phrase.Args{"values": strings.Join(vals, ", ")}))
	}
	if not := s.Obj("not"); not != nil {
		if w := describeValue(name, not, lang, true); w != "" {
			return phrase.Text(lang, "rule.not", phrase.Args{"rule": w})
		}
	}
	if w := Constraints(s, lang); w != "" {
		if cond {
			return phrase.Text(lang, "rule.cond_bound", phrase.Args{"name": name, "bounds": w})
		}
		return must(lang, name, w)
	}
	if t := s.Str("type"); t != "" && !cond {
		return must(lang, name, phrase.TypeName(lang, t))
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

// When puts what a rule requires under its condition: `when mode is
// "cash": …`.
func When(lang phrase.Language, condition, rule string) string {
	return phrase.Text(lang, "rule.when", phrase.Args{"condition": condition, "rule": rule})
}

// Unless puts what a rule requires otherwise: `unless mode is "cash": …`.
func Unless(lang phrase.Language, condition, rule string) string {
	return phrase.Text(lang, "rule.otherwise", phrase.Args{"condition": condition, "rule": rule})
}

// Given says that a slot has a value: "to_day is given".
func Given(lang phrase.Language, name string) string { return given(lang, name) }

func given(lang phrase.Language, name string) string {
	return phrase.Text(lang, "rule.given", phrase.Args{"name": name})
}

func required(lang phrase.Language, name string) string {
	return phrase.Text(lang, "rule.required", phrase.Args{"name": name})
}

func must(lang phrase.Language, name, requirement string) string {
	return phrase.Text(lang, "rule.must", phrase.Args{"name": name, "requirement": requirement})
}

// Alternatives words the alternatives of an anyOf or oneOf: "must satisfy
// one of: (1) …; (2) …".
func Alternatives(lang phrase.Language, keyword string, subs []any) string {
	alts := make([]string, len(subs))
	for i, sub := range subs {
		alts[i] = alternative(lang, i, Requirement(sub, lang))
	}
	return phrase.Text(lang, "schema."+keyword, phrase.Args{"alternatives": strings.Join(alts, "; ")})
}

// alternative is the i-th alternative, numbered from 1.
func alternative(lang phrase.Language, i int, rule string) string {
	return phrase.Text(lang, "rule.alt", phrase.Args{"n": i + 1, "rule": rule})
}
