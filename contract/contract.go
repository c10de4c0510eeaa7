// Package contract owns a tool's input contract: a JSON Schema (draft
// 2020-12) document with x-slotd extension members. It turns what a model
// really sends into normalized values (the before phase), checks each value
// against its property schema (core), and checks the whole object (after),
// saying precisely what is missing and what would fit.
package contract

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Contract is one tool's compiled input contract.
type Contract struct {
	// Name is x-slotd.name, namespaced ("bank.open_dispute").
	Name        string
	Description string
	// Version is a hash of the file's content.
	Version string
	// Confirm is true when the tool is an action that needs the user's
	// approval of a summary before READY.
	Confirm bool
	// TimeZone is the default IANA zone for resolving relative dates.
	TimeZone      string
	DefaultLocale string
	// StaleAfter is the idle time after which the next turn asks whether to
	// go on (RESUME); 0 means the server's default.
	StaleAfter time.Duration
	// TTL is the idle time after which the session has expired and the next
	// turn starts a new one; 0 means the server's default.
	TTL time.Duration
	// CarryOver lets slots of the conversation's previous tool carry over
	// into this one when their names and types fit (default true).
	CarryOver bool
	// Properties in contract order: the order of the file's "properties".
	Properties []*Property
	// Required lists the unconditionally required slots, in contract order.
	Required []string
	// Source is the contract file as loaded.
	Source []byte

	confirmText map[string]string
	output      *Output
	byName      map[string]*Property
	schema      *jsonschema.Schema
}

// Property is one slot of a contract.
type Property struct {
	Name        string
	Type        string
	Format      string
	Description string
	Enum        []string
	// Normalize lists the named normalizers run before the type check.
	Normalize []string
	// Irreversible changes are held until the user re-confirms them.
	Irreversible bool
	// Sensitive values are masked in logs.
	Sensitive bool
	// Expected describes an accepted value in words, with an example.
	Expected string

	ask      map[string]string
	label    map[string]string
	synonyms map[string]string // folded synonym → enum value
	schema   *jsonschema.Schema
}

// extension is the x-slotd member of the contract root.
type extension struct {
	Name          string            `json:"name"`
	StaleAfter    string            `json:"stale_after"`
	TTL           string            `json:"ttl"`
	CarryOver     *bool             `json:"carry_over"`
	Output        json.RawMessage   `json:"output"`
	Confirm       bool              `json:"confirm"`
	TimeZone      string            `json:"time_zone"`
	DefaultLocale string            `json:"default_locale"`
	ConfirmText   map[string]string `json:"confirm_text"`
}

// propertyExtension is the x-slotd member of a property.
type propertyExtension struct {
	Normalize    []string            `json:"normalize"`
	Irreversible bool                `json:"irreversible"`
	Sensitive    bool                `json:"sensitive"`
	Ask          map[string]string   `json:"ask"`
	Label        map[string]string   `json:"label"`
	Expected     string              `json:"expected"`
	Synonyms     map[string][]string `json:"synonyms"`
}

type document struct {
	Description string                     `json:"description"`
	Required    []string                   `json:"required"`
	Properties  map[string]json.RawMessage `json:"properties"`
	X           *extension                 `json:"x-slotd"`
}

type propertyDocument struct {
	Type        any                `json:"type"`
	Format      string             `json:"format"`
	Description string             `json:"description"`
	Enum        []any              `json:"enum"`
	X           *propertyExtension `json:"x-slotd"`
}

// Parse compiles one contract file. The name is used in error messages.
func Parse(name string, src []byte) (*Contract, error) {
	var doc document
	if err := json.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("contract %s: %w", name, err)
	}
	if doc.X == nil || doc.X.Name == "" {
		return nil, fmt.Errorf("contract %s: x-slotd.name is required", name)
	}
	sum := sha256.Sum256(src)
	c := &Contract{
		Name:          doc.X.Name,
		Description:   doc.Description,
		Version:       hex.EncodeToString(sum[:8]),
		Confirm:       doc.X.Confirm,
		TimeZone:      doc.X.TimeZone,
		DefaultLocale: doc.X.DefaultLocale,
		Source:        src,
		confirmText:   doc.X.ConfirmText,
		byName:        map[string]*Property{},
	}
	if c.TimeZone == "" {
		c.TimeZone = "UTC"
	}
	if _, err := time.LoadLocation(c.TimeZone); err != nil {
		return nil, fmt.Errorf("contract %s: x-slotd.time_zone: %w", name, err)
	}
	if c.DefaultLocale == "" {
		c.DefaultLocale = "en"
	}
	c.CarryOver = doc.X.CarryOver == nil || *doc.X.CarryOver
	for _, d := range []struct {
		name string
		src  string
		dst  *time.Duration
	}{{"stale_after", doc.X.StaleAfter, &c.StaleAfter}, {"ttl", doc.X.TTL, &c.TTL}} {
		if d.src == "" {
			continue
		}
		v, err := time.ParseDuration(d.src)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("contract %s: x-slotd.%s: a positive duration such as 30m or 24h", name, d.name)
		}
		*d.dst = v
	}
	if c.StaleAfter > 0 && c.TTL > 0 && c.StaleAfter >= c.TTL {
		return nil, fmt.Errorf("contract %s: x-slotd.stale_after must be shorter than x-slotd.ttl", name)
	}

	order, err := propertyOrder(src)
	if err != nil {
		return nil, fmt.Errorf("contract %s: %w", name, err)
	}
	for _, pname := range order {
		p, err := parseProperty(pname, doc.Properties[pname])
		if err != nil {
			return nil, fmt.Errorf("contract %s: property %s: %w", name, pname, err)
		}
		c.Properties = append(c.Properties, p)
		c.byName[pname] = p
	}
	for _, r := range doc.Required {
		if c.byName[r] == nil {
			return nil, fmt.Errorf("contract %s: required names unknown property %q", name, r)
		}
	}
	c.Required = c.InOrder(doc.Required)

	// Compile the whole schema and each property's own schema from the same
	// resource, so that $ref and $defs resolve the same way in both.
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
	if err != nil {
		return nil, fmt.Errorf("contract %s: %w", name, err)
	}
	url := "slotd:///" + c.Name + ".json"
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.AssertFormat()
	if err := comp.AddResource(url, inst); err != nil {
		return nil, fmt.Errorf("contract %s: %w", name, err)
	}
	if c.schema, err = comp.Compile(url); err != nil {
		return nil, fmt.Errorf("contract %s: %w", name, err)
	}
	if len(doc.X.Output) > 0 {
		c.output = &Output{}
		if c.output.fields, err = parseOutputFields(doc.X.Output); err != nil {
			return nil, fmt.Errorf("contract %s: x-slotd.output: %w", name, err)
		}
		if c.output.schema, err = comp.Compile(url + "#/x-slotd/output"); err != nil {
			return nil, fmt.Errorf("contract %s: x-slotd.output: %w", name, err)
		}
	}
	for _, p := range c.Properties {
		if p.schema, err = comp.Compile(url + "#/properties/" + escapePointer(p.Name)); err != nil {
			return nil, fmt.Errorf("contract %s: property %s: %w", name, p.Name, err)
		}
	}
	return c, nil
}

func parseProperty(name string, raw json.RawMessage) (*Property, error) {
	var pd propertyDocument
	if err := json.Unmarshal(raw, &pd); err != nil {
		return nil, err
	}
	p := &Property{Name: name, Format: pd.Format, Description: pd.Description}
	switch t := pd.Type.(type) {
	case string:
		p.Type = t
	case []any:
		// ["string","null"]: the first non-null type is the slot's type.
		for _, v := range t {
			if s, _ := v.(string); s != "" && s != "null" {
				p.Type = s
				break
			}
		}
	}
	for _, v := range pd.Enum {
		if s, ok := v.(string); ok {
			p.Enum = append(p.Enum, s)
		}
	}
	if x := pd.X; x != nil {
		p.Normalize = x.Normalize
		p.Irreversible = x.Irreversible
		p.Sensitive = x.Sensitive
		p.ask = x.Ask
		p.label = x.Label
		p.Expected = x.Expected
		if len(x.Synonyms) > 0 {
			p.synonyms = map[string]string{}
			for value, syns := range x.Synonyms {
				for _, s := range syns {
					p.synonyms[fold(s)] = value
				}
			}
		}
	}
	for _, n := range p.normalizers() {
		if _, ok := normalizers[n]; !ok {
			return nil, fmt.Errorf("x-slotd.normalize: unknown normalizer %q (known: %s)", n, strings.Join(NormalizerNames(), ", "))
		}
	}
	return p, nil
}

// propertyOrder reads the keys of the root "properties" object in file order:
// contract order decides which missing slot is asked first.
func propertyOrder(src []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("the contract must be a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if t != "properties" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return nil, errors.New("properties must be an object")
		}
		var names []string
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return nil, err
			}
			names = append(names, t.(string))
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
		}
		return names, nil
	}
	return nil, errors.New("the contract has no properties")
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// Property returns the named slot, or nil.
func (c *Contract) Property(name string) *Property { return c.byName[name] }

// InOrder returns the given slot names sorted in contract order; unknown
// names are dropped.
func (c *Contract) InOrder(names []string) []string {
	idx := make(map[string]int, len(c.Properties))
	for i, p := range c.Properties {
		idx[p.Name] = i
	}
	out := make([]string, 0, len(names))
	seen := map[string]bool{}
	for _, n := range names {
		if _, ok := idx[n]; ok && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return idx[out[i]] < idx[out[j]] })
	return out
}

// Location is the contract's default time zone.
func (c *Contract) Location() *time.Location {
	loc, err := time.LoadLocation(c.TimeZone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// ConfirmText is the contract's approval summary template for the locale,
// or "" when it has none.
func (c *Contract) ConfirmText(locale string) string {
	return pick(c.confirmText, locale, c.DefaultLocale)
}

// Ask is the slot's question by meaning for the locale, or "".
func (p *Property) Ask(locale, fallback string) string {
	return pick(p.ask, locale, fallback)
}

// Label is how the slot is named to a user in the locale; the slot's name
// when the contract gives none.
func (p *Property) Label(locale, fallback string) string {
	if l := pick(p.label, locale, fallback); l != "" {
		return l
	}
	return p.Name
}

// pick returns the text for the locale, falling back to the contract's
// default locale, then to English, then to any.
func pick(m map[string]string, locale, fallback string) string {
	if len(m) == 0 {
		return ""
	}
	for _, l := range []string{locale, BaseLocale(locale), fallback, "en"} {
		if s, ok := m[l]; ok {
			return s
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return m[keys[0]]
}

// BaseLocale reduces "ru-RU" or "uk_UA" to "ru" or "uk".
func BaseLocale(locale string) string {
	locale = strings.ToLower(strings.TrimSpace(locale))
	if i := strings.IndexAny(locale, "-_"); i > 0 {
		locale = locale[:i]
	}
	return locale
}

// Catalog is the set of contracts a server serves, by name.
type Catalog struct {
	byName map[string]*Contract
	names  []string
}

// NewCatalog builds a catalog; two contracts with one name are an error.
func NewCatalog(cs ...*Contract) (*Catalog, error) {
	cat := &Catalog{byName: map[string]*Contract{}}
	for _, c := range cs {
		if cat.byName[c.Name] != nil {
			return nil, fmt.Errorf("two contracts are named %s", c.Name)
		}
		cat.byName[c.Name] = c
		cat.names = append(cat.names, c.Name)
	}
	sort.Strings(cat.names)
	return cat, nil
}

// LoadDir parses every *.json file directly in dir.
func LoadDir(dir string) (*Catalog, error) {
	return LoadFS(os.DirFS(dir), ".")
}

// LoadFS parses every *.json file directly in dir of fsys.
func LoadFS(fsys fs.FS, dir string) (*Catalog, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("contracts: %w", err)
	}
	var cs []*Contract
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".json" {
			continue
		}
		src, err := fs.ReadFile(fsys, filepath.ToSlash(filepath.Join(dir, e.Name())))
		if err != nil {
			return nil, fmt.Errorf("contracts: %w", err)
		}
		c, err := Parse(e.Name(), src)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("contracts: no *.json contract in %s", dir)
	}
	return NewCatalog(cs...)
}

// Get returns the named contract, or nil.
func (cat *Catalog) Get(name string) *Contract { return cat.byName[name] }

// Names lists the contracts' names, sorted.
func (cat *Catalog) Names() []string { return append([]string(nil), cat.names...) }

// All lists the contracts sorted by name.
func (cat *Catalog) All() []*Contract {
	out := make([]*Contract, 0, len(cat.names))
	for _, n := range cat.names {
		out = append(out, cat.byName[n])
	}
	return out
}
