package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Providers slotd exports a contract for.
const (
	// OpenAI is OpenAI's strict function calling (Responses API tool).
	OpenAI = "openai"
	// Anthropic is Anthropic's strict tool use.
	Anthropic = "anthropic"
	// Plain is the contract's JSON Schema without slotd's extension.
	Plain = "plain"
)

// Providers lists the export targets.
func Providers() []string { return []string{OpenAI, Anthropic, Plain} }

// ErrUnknownProvider is returned for a provider slotd cannot export for.
var ErrUnknownProvider = fmt.Errorf("unknown provider (known: %s)", strings.Join(Providers(), ", "))

// Export is one contract's tool definition for one provider.
type Export struct {
	Provider string
	// Name is the tool's name as the provider accepts it: dots and other
	// characters outside [A-Za-z0-9_-] become "_" (bank.open_dispute →
	// bank_open_dispute); Plain keeps the contract's name.
	Name string
	// Description is the contract's description, plus the rules the
	// provider's schema cannot carry, in words.
	Description string
	// Version is the contract's version (a hash of its file).
	Version string
	// Strict is whether the definition asks for the provider's strict mode.
	Strict bool

	params *object
}

// Parameters is the input schema as maps and float64 numbers, for a
// google.protobuf.Struct.
func (e *Export) Parameters() map[string]any {
	m, _ := plain(e.params).(map[string]any)
	return m
}

// ParametersJSON is the input schema as JSON, members in contract order.
func (e *Export) ParametersJSON() ([]byte, error) { return indentJSON(e.params) }

// Definition is the tool definition exactly as the provider's API takes it,
// as indented JSON with the members in contract order: OpenAI's function
// tool ({"type":"function","name",…,"strict":true,"parameters"}),
// Anthropic's tool ({"name",…,"strict":true,"input_schema"}), or for Plain
// {"name","description","parameters"}.
func (e *Export) Definition() ([]byte, error) {
	def := newObject()
	switch e.Provider {
	case OpenAI:
		def.set("type", "function")
		def.set("name", e.Name)
		def.set("description", e.Description)
		def.set("strict", true)
		def.set("parameters", e.params)
	case Anthropic:
		def.set("name", e.Name)
		def.set("description", e.Description)
		def.set("strict", true)
		def.set("input_schema", e.params)
	default:
		def.set("name", e.Name)
		def.set("description", e.Description)
		def.set("parameters", e.params)
	}
	return indentJSON(def)
}

func indentJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// ProviderName is the tool's name as OpenAI and Anthropic accept it.
func ProviderName(name string) string {
	n := unsafeName.ReplaceAllString(name, "_")
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

// Export builds the contract's tool definition for a provider.
func (c *Contract) Export(provider string) (*Export, error) {
	root := clone(c.raw).(*object)
	e := &Export{Provider: provider, Version: c.Version, Description: c.Description}
	switch provider {
	case Plain:
		e.Name = c.Name
		stripExtension(root)
		e.params = root
		return e, nil
	case OpenAI, Anthropic:
		e.Name = ProviderName(c.Name)
		e.Strict = true
	default:
		return nil, fmt.Errorf("%q: %w", provider, ErrUnknownProvider)
	}
	stripExtension(root)
	// The tool's own description says what the tool is; the schema's
	// title and description at the root would only repeat it.
	for _, k := range [...]string{"$schema", "$id", "title", "description"} {
		root.del(k)
	}
	if c.Partial {
		root.del("required")
	}
	rules := strictRules(root)
	x := exporter{provider: provider}
	params := x.schema(root, true)
	if len(rules) > 0 {
		e.Description = strings.TrimSpace(e.Description + "\n\nRules: " + strings.Join(rules, "; ") + ".")
	}
	e.params = params
	return e, nil
}

// stripExtension removes every x-slotd member: slotd's extension never
// reaches a model.
func stripExtension(v any) {
	switch t := v.(type) {
	case *object:
		t.del("x-slotd")
		for _, k := range t.keys {
			if k == "properties" || k == "$defs" || k == "definitions" || k == "dependentSchemas" || k == "patternProperties" {
				// Members named by the user: only their values are schemas.
				if o := t.obj(k); o != nil {
					for _, name := range o.keys {
						stripExtension(o.vals[name])
					}
				}
				continue
			}
			stripExtension(t.vals[k])
		}
	case []any:
		for _, x := range t {
			stripExtension(x)
		}
	}
}

// ruleKeywords are the conditional and combining keywords neither
// provider's strict mode takes; their meaning moves into the description.
var ruleKeywords = [...]string{"if", "then", "else", "dependentRequired", "dependentSchemas", "allOf", "not", "oneOf"}

// strictRules removes the root's rule keywords and returns their meaning in
// words. A root anyOf goes too: OpenAI wants an object at the root.
func strictRules(root *object) []string {
	rules := ruleParts(root)
	for _, k := range ruleKeywords {
		root.del(k)
	}
	if subs := root.list("anyOf"); len(subs) > 0 {
		alts := make([]string, len(subs))
		for i, sub := range subs {
			alts[i] = tr("en", "rule.alt", i+1, describeRequirement(sub, "en"))
		}
		rules = append(rules, tr("en", "schema.anyOf", strings.Join(alts, "; ")))
		root.del("anyOf")
	}
	return rules
}

// ruleParts describes an object's rule keywords, one sentence each.
func ruleParts(o *object) []string {
	var rules []string
	add := func(s any) {
		if w := describeRequirement(s, "en"); w != "" {
			rules = append(rules, w)
		}
	}
	for _, sub := range o.list("allOf") {
		add(sub)
	}
	if ifs, ok := o.get("if"); ok {
		only := newObject()
		only.set("if", ifs)
		for _, k := range [...]string{"then", "else"} {
			if v, ok := o.get(k); ok {
				only.set(k, v)
			}
		}
		add(only)
	}
	for _, k := range [...]string{"dependentRequired", "dependentSchemas", "not"} {
		if v, ok := o.get(k); ok {
			only := newObject()
			only.set(k, v)
			add(only)
		}
	}
	if alts := o.list("oneOf"); len(alts) > 0 {
		parts := make([]string, len(alts))
		for i, sub := range alts {
			parts[i] = tr("en", "rule.alt", i+1, describeRequirement(sub, "en"))
		}
		rules = append(rules, tr("en", "schema.oneOf", strings.Join(parts, "; ")))
	}
	return rules
}

type exporter struct {
	provider string
}

// openAIFormats and anthropicFormats are the string formats each strict
// mode enforces; another format moves into the description.
var (
	openAIFormats    = map[string]bool{"date-time": true, "time": true, "date": true, "duration": true, "email": true, "hostname": true, "ipv4": true, "ipv6": true, "uuid": true}
	anthropicFormats = map[string]bool{"date-time": true, "time": true, "date": true, "duration": true, "email": true, "hostname": true, "uri": true, "ipv4": true, "ipv6": true, "uuid": true}
)

// keep lists, per provider, the keywords its strict mode takes; anything
// else is moved into the description in words.
var (
	openAIKeep = map[string]bool{
		"type": true, "description": true, "title": true, "properties": true, "required": true, "additionalProperties": true,
		"items": true, "enum": true, "const": true, "anyOf": true, "$ref": true, "$defs": true, "pattern": true, "format": true,
		"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
		"minItems": true, "maxItems": true,
	}
	anthropicKeep = map[string]bool{
		"type": true, "description": true, "title": true, "properties": true, "required": true, "additionalProperties": true,
		"items": true, "enum": true, "const": true, "anyOf": true, "allOf": true, "$ref": true, "$defs": true, "pattern": true,
		"format": true, "minItems": true,
	}
)

// schema rewrites one schema for the provider's strict mode.
func (x exporter) schema(v any, root bool) *object {
	s, ok := v.(*object)
	if !ok {
		// true / false schemas: an unconstrained or impossible value.
		return newObject()
	}
	var notes []string
	if !root {
		notes = ruleParts(s)
		for _, k := range ruleKeywords {
			s.del(k)
		}
	}
	// Nested schemas first.
	if props := s.obj("properties"); props != nil {
		for _, name := range props.keys {
			props.vals[name] = x.schema(props.vals[name], false)
		}
	}
	if defs := s.obj("$defs"); defs != nil {
		for _, name := range defs.keys {
			defs.vals[name] = x.schema(defs.vals[name], false)
		}
	}
	if items, ok := s.get("items"); ok {
		s.set("items", x.schema(items, false))
	}
	for _, k := range [...]string{"anyOf", "allOf"} {
		if subs := s.list(k); subs != nil {
			out := make([]any, len(subs))
			for i, sub := range subs {
				out[i] = x.schema(sub, false)
			}
			s.set(k, out)
		}
	}

	keep := openAIKeep
	formats := openAIFormats
	if x.provider == Anthropic {
		keep, formats = anthropicKeep, anthropicFormats
	}
	if f := s.str("format"); f != "" && !formats[f] {
		notes = append(notes, "Format: "+f+".")
		s.del("format")
	}
	if m, ok := s.get("minItems"); ok && x.provider == Anthropic {
		if n, _ := m.(json.Number); n != "0" && n != "1" {
			keep = copyKeep(keep, "minItems", false)
		}
	}
	if w := constraintsInWords(droppedBounds(s, keep), "en"); w != "" {
		notes = append(notes, capitalize(w)+".")
	}
	var other []string
	for _, k := range append([]string(nil), s.keys...) {
		if keep[k] {
			continue
		}
		switch k {
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern":
			// said in words above
		case "examples", "$comment", "deprecated", "readOnly", "writeOnly", "contentMediaType", "contentEncoding", "$schema", "$id":
			// for people, not for the model's grammar
		case "default":
			other = append(other, "Default: "+jsonText(s.vals[k])+".")
		case "minItems":
			other = append(other, "At least "+jsonText(s.vals[k])+" items.")
		case "maxItems":
			other = append(other, "At most "+jsonText(s.vals[k])+" items.")
		case "uniqueItems":
			if b, _ := s.vals[k].(bool); b {
				other = append(other, "Items are unique.")
			}
		case "minProperties", "maxProperties", "patternProperties", "propertyNames", "unevaluatedProperties", "contains",
			"minContains", "maxContains", "prefixItems", "unevaluatedItems", "dependencies", "definitions":
			other = append(other, k+": "+jsonText(plain(s.vals[k]))+".")
		}
		s.del(k)
	}
	notes = append(notes, other...)

	if isObjectSchema(s) {
		s.set("additionalProperties", false)
		if x.provider == OpenAI {
			x.requireAll(s)
		}
	}
	if len(notes) > 0 {
		d := strings.TrimSpace(s.str("description"))
		if d != "" && !strings.HasSuffix(d, ".") {
			d += "."
		}
		d = strings.TrimSpace(d + " " + strings.Join(notes, " "))
		s.set("description", d)
	}
	return s
}

// droppedBounds is the part of a schema's bounds, lengths and pattern the
// provider does not take, for constraintsInWords.
func droppedBounds(s *object, keep map[string]bool) *object {
	out := newObject()
	for _, k := range [...]string{"exclusiveMinimum", "minimum", "exclusiveMaximum", "maximum", "multipleOf", "minLength", "maxLength", "pattern"} {
		if v, ok := s.get(k); ok && !keep[k] {
			out.set(k, v)
		}
	}
	return out
}

func copyKeep(m map[string]bool, k string, v bool) map[string]bool {
	out := make(map[string]bool, len(m)+1)
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

func isObjectSchema(s *object) bool {
	if s.str("type") == "object" || s.has("properties") {
		return true
	}
	for _, t := range s.list("type") {
		if t == "object" {
			return true
		}
	}
	return false
}

// requireAll lists every property in required, as OpenAI's strict mode
// demands; an optional one becomes a union with null, so the model can
// still leave it out by saying null.
func (x exporter) requireAll(s *object) {
	props := s.obj("properties")
	if props == nil {
		s.set("required", []any{})
		return
	}
	required := map[string]bool{}
	for _, r := range s.list("required") {
		if n, ok := r.(string); ok {
			required[n] = true
		}
	}
	all := make([]any, 0, len(props.keys))
	for _, name := range props.keys {
		all = append(all, name)
		if !required[name] {
			props.vals[name] = nullable(props.obj(name))
		}
	}
	s.set("required", all)
}

// nullable makes a schema also accept null.
func nullable(s *object) *object {
	if s == nil {
		s = newObject()
	}
	switch t := s.vals["type"].(type) {
	case string:
		if t == "null" {
			return s
		}
		if s.has("const") {
			break
		}
		s.set("type", []any{t, "null"})
		if list := s.list("enum"); list != nil && !containsNull(list) {
			s.set("enum", append(append([]any(nil), list...), nil))
		}
		return s
	case []any:
		if s.has("const") {
			break
		}
		if !containsString(t, "null") {
			s.set("type", append(append([]any(nil), t...), "null"))
		}
		if list := s.list("enum"); list != nil && !containsNull(list) {
			s.set("enum", append(append([]any(nil), list...), nil))
		}
		return s
	}
	// $ref, anyOf, const or no type: wrap in a union with null, keeping the
	// description outside where the model reads it.
	out := newObject()
	if d := s.str("description"); d != "" {
		s.del("description")
		out.set("description", d)
	}
	null := newObject()
	null.set("type", "null")
	if subs := s.list("anyOf"); subs != nil && len(s.keys) == 1 {
		out.set("anyOf", append(append([]any(nil), subs...), null))
		return out
	}
	out.set("anyOf", []any{s, null})
	return out
}

func containsNull(list []any) bool {
	for _, v := range list {
		if v == nil {
			return true
		}
	}
	return false
}

func containsString(list []any, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = []rune(strings.ToUpper(string(r[0])))[0]
	return string(r)
}
