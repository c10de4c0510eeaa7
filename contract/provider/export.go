// Package provider owns what slotd hands the model providers: each
// contract's tool definition in the form a provider's strict mode accepts
// (OpenAI's strict function calling, Anthropic's strict tool use, or the
// plain schema), what those definitions cost on every request, and lint of
// a set of contract files against the strict modes and their per-request
// limits. docs/contracts.md describes the exports and the lint.
//
// This package is public: authoring tools import it to export and lint
// contracts as slotd does. slotd's public Go packages are client, contract
// (with contract/normalizer and contract/provider), problem and the wire API
// in api/proto/slotd/v1; everything else is internal to the slotd binary and
// may change without notice.
package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/contract/internal/jsontree"
	"github.com/slotd/slotd/contract/internal/wording"
	"github.com/slotd/slotd/internal/phrase"
)

// Providers slotd exports a contract for.
const (
	// OpenAI is OpenAI's strict function calling, as a tool of the
	// Responses API ({"type":"function","name",…}).
	OpenAI = "openai"
	// OpenAIChat is the same function as a tool of the Chat Completions
	// API, which nests it: {"type":"function","function":{"name",…}}.
	OpenAIChat = "openai-chat"
	// Anthropic is Anthropic's strict tool use.
	Anthropic = "anthropic"
	// Plain is the contract's JSON Schema without slotd's extension.
	Plain = "plain"
	// MCP is the tool as slotd's MCP endpoint lists it: nothing required
	// (the model calls with what it has) and every normalizable slot
	// lenient, since MCP clients validate input against it (see lenient).
	// Not a strict mode: slotd checks the strict contract itself.
	MCP = "mcp"
)

// Names lists the export targets.
func Names() []string { return []string{OpenAI, OpenAIChat, Anthropic, Plain, MCP} }

// ErrUnknown is returned for a provider slotd cannot export for.
var ErrUnknown = fmt.Errorf("unknown provider (known: %s)", strings.Join(Names(), ", "))

// Tool is one contract's tool definition for one provider.
type Tool struct {
	Provider string
	// Name is the tool's name as the provider accepts it
	// (contract.ProviderName: bank.open_dispute → bank_open_dispute); Plain
	// keeps the contract's name.
	Name string
	// Description is the contract's description, plus the rules the
	// provider's schema cannot carry, in words.
	Description string
	// Version is the contract's version (a hash of its file).
	Version string
	// Strict is whether the definition asks for the provider's strict mode.
	Strict bool

	params *jsontree.Object
}

// Parameters is the input schema as maps and float64 numbers, for a
// google.protobuf.Struct.
func (t *Tool) Parameters() map[string]any {
	m, _ := jsontree.Plain(t.params).(map[string]any)
	return m
}

// ParametersJSON is the input schema as JSON, members in contract order.
func (t *Tool) ParametersJSON() ([]byte, error) { return indentJSON(t.params) }

// Definition is the tool definition exactly as the provider's API takes it,
// as indented JSON with the members in contract order: OpenAI's Responses
// API function tool ({"type":"function","name",…,"strict":true,
// "parameters"}), its Chat Completions tool ({"type":"function",
// "function":{"name",…}}), Anthropic's tool ({"name",…,"strict":true,
// "input_schema"}), MCP's tool ({"name","description","inputSchema"}), or
// for Plain {"name","description","parameters"}.
func (t *Tool) Definition() ([]byte, error) { return indentJSON(t.definition()) }

// Definitions are the tools' definitions as one JSON array, the tools
// member of a request to the provider, in the order given.
func Definitions(tools []*Tool) ([]byte, error) {
	defs := make([]any, 0, len(tools))
	for _, t := range tools {
		defs = append(defs, t.definition())
	}
	return indentJSON(defs)
}

func (t *Tool) definition() *jsontree.Object {
	def := jsontree.NewObject()
	switch t.Provider {
	case OpenAI:
		def.Set("type", "function")
		def.Set("name", t.Name)
		def.Set("description", t.Description)
		def.Set("strict", true)
		def.Set("parameters", t.params)
	case OpenAIChat:
		fn := jsontree.NewObject()
		fn.Set("name", t.Name)
		fn.Set("description", t.Description)
		fn.Set("strict", true)
		fn.Set("parameters", t.params)
		def.Set("type", "function")
		def.Set("function", fn)
	case Anthropic:
		def.Set("name", t.Name)
		def.Set("description", t.Description)
		def.Set("strict", true)
		def.Set("input_schema", t.params)
	case MCP:
		def.Set("name", t.Name)
		def.Set("description", t.Description)
		def.Set("inputSchema", t.params)
	default:
		def.Set("name", t.Name)
		def.Set("description", t.Description)
		def.Set("parameters", t.params)
	}
	return def
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

// Export builds the contract's tool definition for a provider.
func Export(c *contract.Contract, provider string) (*Tool, error) {
	switch provider {
	case Plain, OpenAI, OpenAIChat, Anthropic, MCP:
	default:
		return nil, fmt.Errorf("%q: %w", provider, ErrUnknown)
	}
	// A tree of its own, read from the file: an export never changes the
	// contract.
	tree, err := jsontree.Decode(c.Source)
	if err != nil {
		return nil, err
	}
	root, ok := tree.(*jsontree.Object)
	if !ok {
		return nil, fmt.Errorf("contract %s: the contract must be a JSON object", c.Name)
	}
	stripExtension(root)
	t := &Tool{Provider: provider, Name: c.Name, Version: c.Version, Description: c.Description, params: root}
	if provider == Plain {
		return t, nil
	}
	t.Name = contract.ProviderName(c.Name)
	// The tool's own description says what the tool is; the schema's
	// title and description at the root would only repeat it.
	for _, k := range [...]string{"$schema", "$id", "title", "description"} {
		root.Del(k)
	}
	if c.Partial || provider == MCP {
		root.Del("required")
	}
	// Both strict modes take an object of arguments, with its properties
	// listed, even when a tool has none ("list my cards").
	if !root.Has("type") {
		root.Set("type", "object")
	}
	if !root.Has("properties") {
		root.Set("properties", jsontree.NewObject())
	}
	rules := strictRules(root)
	if len(rules) > 0 {
		t.Description = strings.TrimSpace(t.Description + "\n\nRules: " + strings.Join(rules, "; ") + ".")
	}
	if provider == MCP {
		lenient(c, root.Obj("properties"))
		return t, nil
	}
	t.Strict = true
	// Both OpenAI APIs take the same strict schema; only the wrapping
	// differs.
	x := exporter{provider: provider}
	if provider == OpenAIChat {
		x.provider = OpenAI
	}
	t.params = x.schema(root, true)
	return t, nil
}

// stripExtension removes every x-slotd member: slotd's extension never
// reaches a model.
func stripExtension(v any) {
	switch t := v.(type) {
	case *jsontree.Object:
		t.Del("x-slotd")
		for _, k := range t.Keys() {
			val, _ := t.Get(k)
			if k == "properties" || k == "$defs" || k == "definitions" || k == "dependentSchemas" || k == "patternProperties" {
				// Members named by the user: only their values are schemas.
				if o, ok := val.(*jsontree.Object); ok {
					for _, name := range o.Keys() {
						sub, _ := o.Get(name)
						stripExtension(sub)
					}
				}
				continue
			}
			stripExtension(val)
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
func strictRules(root *jsontree.Object) []string {
	rules := ruleParts(root)
	for _, k := range ruleKeywords {
		root.Del(k)
	}
	if subs := root.List("anyOf"); len(subs) > 0 {
		rules = append(rules, wording.Alternatives(phrase.English, "anyOf", subs))
		root.Del("anyOf")
	}
	return rules
}

// ruleParts describes an object's rule keywords, one sentence each.
func ruleParts(o *jsontree.Object) []string {
	var rules []string
	add := func(s any) {
		if w := wording.Requirement(s, phrase.English); w != "" {
			rules = append(rules, w)
		}
	}
	for _, sub := range o.List("allOf") {
		add(sub)
	}
	if ifs, ok := o.Get("if"); ok {
		only := jsontree.NewObject()
		only.Set("if", ifs)
		for _, k := range [...]string{"then", "else"} {
			if v, ok := o.Get(k); ok {
				only.Set(k, v)
			}
		}
		add(only)
	}
	for _, k := range [...]string{"dependentRequired", "dependentSchemas", "not"} {
		if v, ok := o.Get(k); ok {
			only := jsontree.NewObject()
			only.Set(k, v)
			add(only)
		}
	}
	if alts := o.List("oneOf"); len(alts) > 0 {
		rules = append(rules, wording.Alternatives(phrase.English, "oneOf", alts))
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

// schema rewrites one schema for the provider's strict mode: its nested
// schemas first, then what the mode does not take moves into the
// description in words, then objects are closed (and, for OpenAI, require
// every property).
func (x exporter) schema(v any, root bool) *jsontree.Object {
	s, ok := v.(*jsontree.Object)
	if !ok {
		// true / false schemas: an unconstrained or impossible value.
		return jsontree.NewObject()
	}
	var notes []string
	if !root {
		notes = ruleParts(s)
		for _, k := range ruleKeywords {
			s.Del(k)
		}
	}
	x.nested(s)
	notes = append(notes, x.unsupported(s)...)
	if isObjectSchema(s) {
		s.Set("additionalProperties", false)
		if x.provider == OpenAI {
			requireAll(s)
		}
	}
	if len(notes) > 0 {
		d := strings.TrimSpace(s.Str("description"))
		if d != "" && !strings.HasSuffix(d, ".") {
			d += "."
		}
		s.Set("description", strings.TrimSpace(d+" "+strings.Join(notes, " ")))
	}
	return s
}

// nested rewrites the schemas inside one: properties, $defs, items, anyOf
// and allOf.
func (x exporter) nested(s *jsontree.Object) {
	for _, k := range [...]string{"properties", "$defs"} {
		if m := s.Obj(k); m != nil {
			for _, name := range m.Keys() {
				sub, _ := m.Get(name)
				m.Set(name, x.schema(sub, false))
			}
		}
	}
	if items, ok := s.Get("items"); ok {
		s.Set("items", x.schema(items, false))
	}
	for _, k := range [...]string{"anyOf", "allOf"} {
		if subs := s.List(k); subs != nil {
			out := make([]any, len(subs))
			for i, sub := range subs {
				out[i] = x.schema(sub, false)
			}
			s.Set(k, out)
		}
	}
}

// unsupported removes the keywords the provider's strict mode does not take
// and says them in words: a format it does not enforce, bounds, lengths and
// the pattern, a default, item counts and the rest.
func (x exporter) unsupported(s *jsontree.Object) []string {
	keep, formats := openAIKeep, openAIFormats
	if x.provider == Anthropic {
		keep, formats = anthropicKeep, anthropicFormats
		if m, ok := s.Get("minItems"); ok {
			if n, _ := m.(json.Number); n != "0" && n != "1" {
				keep = copyKeep(keep, "minItems", false)
			}
		}
	}
	var notes []string
	if f := s.Str("format"); f != "" && !formats[f] {
		notes = append(notes, "Format: "+f+".")
		s.Del("format")
	}
	if w := wording.Constraints(droppedBounds(s, keep), phrase.English); w != "" {
		notes = append(notes, capitalize(w)+".")
	}
	for _, k := range slices.Clone(s.Keys()) {
		if keep[k] {
			continue
		}
		v, _ := s.Get(k)
		if note := keywordNote(k, v); note != "" {
			notes = append(notes, note)
		}
		s.Del(k)
	}
	return notes
}

// keywordNote says a keyword a strict mode does not take, or "" for one
// said with the bounds or meant for people rather than the model's grammar.
func keywordNote(k string, v any) string {
	switch k {
	case "default":
		return "Default: " + wording.Value(v) + "."
	case "minItems":
		return "At least " + wording.Value(v) + " items."
	case "maxItems":
		return "At most " + wording.Value(v) + " items."
	case "uniqueItems":
		if b, _ := v.(bool); b {
			return "Items are unique."
		}
	case "minProperties", "maxProperties", "patternProperties", "propertyNames", "unevaluatedProperties", "contains",
		"minContains", "maxContains", "prefixItems", "unevaluatedItems", "dependencies", "definitions":
		return k + ": " + wording.Value(jsontree.Plain(v)) + "."
	}
	return ""
}

// droppedBounds is the part of a schema's bounds, lengths and pattern the
// provider does not take, for wording.Constraints.
func droppedBounds(s *jsontree.Object, keep map[string]bool) *jsontree.Object {
	out := jsontree.NewObject()
	for _, k := range [...]string{"exclusiveMinimum", "minimum", "exclusiveMaximum", "maximum", "multipleOf", "minLength", "maxLength", "pattern"} {
		if v, ok := s.Get(k); ok && !keep[k] {
			out.Set(k, v)
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

func isObjectSchema(s *jsontree.Object) bool {
	if s.Str("type") == "object" || s.Has("properties") {
		return true
	}
	return slices.Contains(s.List("type"), any("object"))
}

// requireAll lists every property in required, as OpenAI's strict mode
// demands; an optional one becomes a union with null, so the model can
// still leave it out by saying null.
func requireAll(s *jsontree.Object) {
	props := s.Obj("properties")
	if props == nil {
		s.Set("required", []any{})
		return
	}
	required := map[string]bool{}
	for _, r := range s.List("required") {
		if n, ok := r.(string); ok {
			required[n] = true
		}
	}
	all := make([]any, 0, props.Len())
	for _, name := range props.Keys() {
		all = append(all, name)
		if !required[name] {
			props.Set(name, nullable(props.Obj(name)))
		}
	}
	s.Set("required", all)
}

// nullable makes a schema also accept null.
func nullable(s *jsontree.Object) *jsontree.Object {
	if s == nil {
		s = jsontree.NewObject()
	}
	t, _ := s.Get("type")
	switch t := t.(type) {
	case string:
		if t == "null" {
			return s
		}
		if s.Has("const") {
			break
		}
		s.Set("type", []any{t, "null"})
		addNullToEnum(s)
		return s
	case []any:
		if s.Has("const") {
			break
		}
		if !slices.Contains(t, any("null")) {
			s.Set("type", append(append([]any(nil), t...), "null"))
		}
		addNullToEnum(s)
		return s
	}
	// $ref, anyOf, const or no type: wrap in a union with null, keeping the
	// description outside where the model reads it.
	out := jsontree.NewObject()
	if d := s.Str("description"); d != "" {
		s.Del("description")
		out.Set("description", d)
	}
	null := jsontree.NewObject()
	null.Set("type", "null")
	if subs := s.List("anyOf"); subs != nil && s.Len() == 1 {
		out.Set("anyOf", append(append([]any(nil), subs...), null))
		return out
	}
	out.Set("anyOf", []any{s, null})
	return out
}

func addNullToEnum(s *jsontree.Object) {
	if list := s.List("enum"); list != nil && !slices.Contains(list, nil) {
		s.Set("enum", append(append([]any(nil), list...), nil))
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = []rune(strings.ToUpper(string(r[0])))[0]
	return string(r)
}
