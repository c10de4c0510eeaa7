package contract

import (
	"encoding/json"
	"fmt"
	"strings"
)

// A cross-field rule in words: what a REPAIR tells the model would satisfy
// the rule, and what an export puts into the description when the
// provider's strict mode cannot carry the keyword (if/then/else, not,
// dependentRequired, dependentSchemas, allOf).

// describeCondition says when a condition schema holds: `reason is
// "duplicate"`, `to_day is given`.
func describeCondition(s any, lang string) string { return describeSchema(s, lang, true) }

// describeRequirement says what a schema requires: `original_operation_id
// is required`, `bic must be: one of: X, Y`.
func describeRequirement(s any, lang string) string { return describeSchema(s, lang, false) }

func describeSchema(s any, lang string, cond bool) string {
	o, ok := s.(*object)
	if !ok {
		if b, ok := s.(bool); ok && !b {
			return tr(lang, "schema.false")
		}
		return ""
	}
	var parts []string
	parts = append(parts, describeProperties(o, lang, cond)...)
	parts = append(parts, describeDependencies(o, lang)...)
	parts = append(parts, describeConditional(o, lang, cond)...)
	parts = append(parts, describeCombinations(o, lang, cond)...)
	return strings.Join(parts, tr(lang, "rule.and"))
}

// describeProperties says what the properties must hold and which are
// required; a condition names a required property once, by its value when
// it says one.
func describeProperties(o *object, lang string, cond bool) []string {
	var parts []string
	described := map[string]bool{}
	if props := o.obj("properties"); props != nil {
		for _, name := range props.keys {
			if w := describeValue(name, props.obj(name), lang, cond); w != "" {
				parts = append(parts, w)
				described[name] = true
			}
		}
	}
	for _, r := range o.list("required") {
		name, _ := r.(string)
		if name == "" || (cond && described[name]) {
			continue
		}
		if cond {
			parts = append(parts, tr(lang, "rule.given", name))
		} else {
			parts = append(parts, tr(lang, "rule.required", name))
		}
	}
	return parts
}

// describeDependencies says dependentRequired and dependentSchemas: "when
// iban is given: bic is required".
func describeDependencies(o *object, lang string) []string {
	var parts []string
	if dr := o.obj("dependentRequired"); dr != nil {
		for _, name := range dr.keys {
			var need []string
			for _, n := range dr.list(name) {
				if s, ok := n.(string); ok {
					need = append(need, tr(lang, "rule.required", s))
				}
			}
			if len(need) > 0 {
				parts = append(parts, tr(lang, "rule.when", tr(lang, "rule.given", name), strings.Join(need, tr(lang, "rule.and"))))
			}
		}
	}
	if ds := o.obj("dependentSchemas"); ds != nil {
		for _, name := range ds.keys {
			if w := describeRequirement(ds.vals[name], lang); w != "" {
				parts = append(parts, tr(lang, "rule.when", tr(lang, "rule.given", name), w))
			}
		}
	}
	return parts
}

// describeConditional says if/then/else: "when mode is "cash": …", "unless
// mode is "cash": …".
func describeConditional(o *object, lang string, cond bool) []string {
	ifs, ok := o.get("if")
	if !ok {
		return nil
	}
	var parts []string
	c := describeCondition(ifs, lang)
	if then, ok := o.get("then"); ok {
		if w := describeSchema(then, lang, cond); w != "" {
			parts = append(parts, tr(lang, "rule.when", c, w))
		}
	}
	if els, ok := o.get("else"); ok {
		if w := describeSchema(els, lang, cond); w != "" {
			parts = append(parts, tr(lang, "rule.otherwise", c, w))
		}
	}
	return parts
}

// describeCombinations says allOf (each part), anyOf and oneOf (the
// alternatives, numbered) and not.
func describeCombinations(o *object, lang string, cond bool) []string {
	var parts []string
	for _, sub := range o.list("allOf") {
		if w := describeSchema(sub, lang, cond); w != "" {
			parts = append(parts, w)
		}
	}
	for _, k := range [...]string{"anyOf", "oneOf"} {
		subs := o.list(k)
		if len(subs) == 0 {
			continue
		}
		alts := make([]string, 0, len(subs))
		for i, sub := range subs {
			alts = append(alts, tr(lang, "rule.alt", i+1, describeSchema(sub, lang, cond)))
		}
		parts = append(parts, tr(lang, "schema."+k, strings.Join(alts, "; ")))
	}
	if not, ok := o.get("not"); ok {
		if w := describeCondition(not, lang); w != "" {
			if cond {
				parts = append(parts, tr(lang, "rule.not", w))
			} else {
				parts = append(parts, tr(lang, "schema.not", w))
			}
		}
	}
	return parts
}

// describeValue says what one property must hold, or "" when its schema
// constrains nothing this can say.
func describeValue(name string, s *object, lang string, cond bool) string {
	if s == nil {
		return ""
	}
	if v, ok := s.get("const"); ok {
		if cond {
			return tr(lang, "rule.is", name, jsonText(v))
		}
		return tr(lang, "rule.must", name, jsonText(v))
	}
	if list := s.list("enum"); len(list) > 0 {
		vals := make([]string, len(list))
		for i, v := range list {
			vals[i] = jsonText(v)
		}
		if cond {
			return tr(lang, "rule.one_of", name, strings.Join(vals, ", "))
		}
		return tr(lang, "rule.must", name, tr(lang, "fmt.enum", strings.Join(vals, ", ")))
	}
	if not := s.obj("not"); not != nil {
		if w := describeValue(name, not, lang, true); w != "" {
			return tr(lang, "rule.not", w)
		}
	}
	if w := constraintsInWords(s, lang); w != "" {
		if cond {
			return tr(lang, "rule.cond_bound", name, w)
		}
		return tr(lang, "rule.must", name, w)
	}
	if t := s.str("type"); t != "" && !cond {
		return tr(lang, "rule.must", name, typeName(lang, t))
	}
	return ""
}

// jsonText writes a schema value for a sentence: strings quoted, numbers
// and the rest as JSON.
func jsonText(v any) string {
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
