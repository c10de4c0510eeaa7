// Package contract owns a tool's input contract: a JSON Schema (draft
// 2020-12) document with x-slotd extension members. It loads contracts into
// a catalog, turns what a model really sends into normalized values through
// each slot's normalizers (the before phase; the parsers are package
// contract/normalizer), checks each value against its property schema
// (core), and checks the whole object (after), saying precisely what is
// missing and what would fit, in the turn's language. It also owns the
// output contract. Exports for the providers and lint are package
// contract/provider; docs/contracts.md is the reference.
//
// This package is public: authoring tools (editors, CI checks, generators)
// import it to load and check contracts as slotd does. slotd's public Go
// packages are client, contract (with contract/normalizer and
// contract/provider), problem and the wire API in api/proto/slotd/v1;
// everything else is internal to the slotd binary and may change without
// notice.
package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/slotd/slotd/contract/internal/jsontree"
	"github.com/slotd/slotd/contract/internal/wording"
	"github.com/slotd/slotd/contract/normalizer"
	"github.com/slotd/slotd/internal/phrase"
)

// Contract is one tool's compiled input contract.
type Contract struct {
	// Name is x-slotd.name, namespaced ("bank.open_dispute").
	Name        string
	Description string
	// Version is a hash of the contract's canonical JSON (version.go):
	// the same document written with other spacing or member order has the
	// same version.
	Version string
	// Canonical is the document as its version hashes it: what a replica
	// writes to the store so that any replica can serve this version.
	Canonical []byte
	// Upgrade is what becomes of a session started on an older version of
	// this tool when this version is the newest (x-slotd.upgrade): Pin
	// (the default) or Migrate.
	Upgrade string
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
	// Partial says the model calls the tool with whatever the user has
	// said so far (x-slotd.partial): exports then mark every argument
	// optional (nullable for OpenAI), so that a strict mode never makes the
	// model invent a value slotd would rather ask for.
	Partial bool
	// CarryOver lets slots of the conversation's other open sessions carry
	// over into a new session of this tool when their names and types fit
	// (default true).
	CarryOver bool
	// Exclusive tools replace whatever else the conversation was doing
	// (blocking a stolen card): opening one ends the conversation's other
	// open sessions (x-slotd.exclusive).
	Exclusive bool
	// Properties in contract order: the order of the file's "properties".
	Properties []*Property
	// Required lists the unconditionally required slots, in contract order.
	Required []string
	// Source is the contract file as loaded.
	Source []byte

	confirmText map[string]string
	label       map[string]string
	output      *Output
	byName      map[string]*Property
	// position is each property's index in Properties.
	position map[string]int
	schema   *jsonschema.Schema
	loc      *time.Location
	raw      *jsontree.Object // the contract as written, members in file order
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
	// Expected describes an accepted value in words, with an example
	// (x-slotd.expected; its English text when it is given per locale).
	Expected string
	// Currency is the ISO 4217 code amounts of this slot are in
	// (x-slotd.currency); an amount naming another currency is refused.
	Currency string
	// CurrencySlot names the slot a currency found in an amount fills
	// (x-slotd.currency_slot).
	CurrencySlot string
	// Scale is the number of decimals an amount keeps (x-slotd.scale;
	// 2 by default, 0 for an integer slot).
	Scale int32
	// Digits is how many trailing digits the last4 normalizer keeps
	// (x-slotd.digits, else what the pattern or length says, else 4).
	Digits int
	// MaxAttempts is how many refused values or repairs the slot gets
	// before the conversation goes to a person (x-slotd.max_attempts); 0
	// means the server's default.
	MaxAttempts int
	// DateRange is "past" or "future" when only such dates make sense
	// (x-slotd.date_range): "15.12" then resolves to that side of today,
	// and a date on the other side is refused.
	DateRange string

	expected    map[string]string
	ask         map[string]string
	label       map[string]string
	valueLabels map[string]map[string]string // x-slotd.value_labels: value → locale → label
	enum        *normalizer.Enum             // Enum with x-slotd.synonyms and the value labels
	schema      *jsonschema.Schema
	raw         *jsontree.Object         // the property's schema as written
	formats     [phrase.Languages]string // repairFormat in each language, worded when compiled
}

// extension is the x-slotd member of the contract root.
type extension struct {
	Name          string            `json:"name"`
	StaleAfter    string            `json:"stale_after"`
	TTL           string            `json:"ttl"`
	CarryOver     *bool             `json:"carry_over"`
	Exclusive     bool              `json:"exclusive"`
	Label         map[string]string `json:"label"`
	Output        json.RawMessage   `json:"output"`
	Confirm       bool              `json:"confirm"`
	TimeZone      string            `json:"time_zone"`
	DefaultLocale string            `json:"default_locale"`
	ConfirmText   map[string]string `json:"confirm_text"`
	Partial       bool              `json:"partial"`
	Upgrade       string            `json:"upgrade"`
}

// propertyExtension is the x-slotd member of a property.
type propertyExtension struct {
	Normalize    []string            `json:"normalize"`
	Irreversible bool                `json:"irreversible"`
	Sensitive    bool                `json:"sensitive"`
	Ask          map[string]string   `json:"ask"`
	Label        map[string]string   `json:"label"`
	Expected     json.RawMessage     `json:"expected"`
	Synonyms     map[string][]string `json:"synonyms"`
	MaxAttempts  int                 `json:"max_attempts"`
	Currency     string              `json:"currency"`
	CurrencySlot string              `json:"currency_slot"`
	Scale        *int32              `json:"scale"`
	Digits       int                 `json:"digits"`
	DateRange    string              `json:"date_range"`
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
	c, doc, err := parseRoot(src)
	if err == nil {
		err = c.parseProperties(src, doc)
	}
	if err == nil {
		err = c.compile(src, doc.X.Output)
	}
	if err != nil {
		return nil, fmt.Errorf("contract %s: %w", name, err)
	}
	return c, nil
}

// parseRoot reads the root's own members: the tool's name, description and
// x-slotd settings.
func parseRoot(src []byte) (*Contract, *document, error) {
	var doc document
	if err := json.Unmarshal(src, &doc); err != nil {
		return nil, nil, err
	}
	if doc.X == nil || doc.X.Name == "" {
		return nil, nil, errors.New("x-slotd.name is required")
	}
	canonical, version, err := Canonical(src)
	if err != nil {
		return nil, nil, err
	}
	upgrade, err := parseUpgrade(doc.X.Upgrade)
	if err != nil {
		return nil, nil, err
	}
	c := &Contract{
		Name:          doc.X.Name,
		Description:   doc.Description,
		Version:       version,
		Canonical:     canonical,
		Upgrade:       upgrade,
		Confirm:       doc.X.Confirm,
		Partial:       doc.X.Partial,
		TimeZone:      doc.X.TimeZone,
		DefaultLocale: doc.X.DefaultLocale,
		Source:        src,
		CarryOver:     doc.X.CarryOver == nil || *doc.X.CarryOver,
		confirmText:   doc.X.ConfirmText,
		label:         doc.X.Label,
		Exclusive:     doc.X.Exclusive,
		byName:        map[string]*Property{},
		position:      map[string]int{},
	}
	if c.DefaultLocale == "" {
		c.DefaultLocale = "en"
	}
	if err := c.parseTimes(doc.X); err != nil {
		return nil, nil, err
	}
	return c, &doc, nil
}

// parseTimes reads the time zone and the idle times of x-slotd.
func (c *Contract) parseTimes(x *extension) error {
	if c.TimeZone == "" {
		c.TimeZone = "UTC"
	}
	loc, err := time.LoadLocation(c.TimeZone)
	if err != nil {
		return fmt.Errorf("x-slotd.time_zone: %w", err)
	}
	c.loc = loc
	for _, d := range []struct {
		name string
		src  string
		dst  *time.Duration
	}{{"stale_after", x.StaleAfter, &c.StaleAfter}, {"ttl", x.TTL, &c.TTL}} {
		if d.src == "" {
			continue
		}
		v, err := time.ParseDuration(d.src)
		if err != nil || v <= 0 {
			return fmt.Errorf("x-slotd.%s: a positive duration such as 30m or 24h", d.name)
		}
		*d.dst = v
	}
	if c.StaleAfter > 0 && c.TTL > 0 && c.StaleAfter >= c.TTL {
		return errors.New("x-slotd.stale_after must be shorter than x-slotd.ttl")
	}
	return nil
}

// parseProperties reads the properties in file order, and the slots the
// root requires.
func (c *Contract) parseProperties(src []byte, doc *document) error {
	tree, err := jsontree.Decode(src)
	if err != nil {
		return err
	}
	root, ok := tree.(*jsontree.Object)
	if !ok {
		return errors.New("the contract must be a JSON object")
	}
	c.raw = root
	// A tool without arguments ("list my cards") has no properties: its
	// first turn is READY, or CONFIRM when it needs approval.
	props := root.Obj("properties")
	if props == nil {
		props = jsontree.NewObject()
	}
	// Every mistake is reported, not only the first: a file with two bad
	// properties would otherwise take two rounds of fixing to find out.
	var errs []error
	for _, pname := range props.Keys() {
		p, err := parseProperty(pname, doc.Properties[pname], props.Obj(pname))
		if err != nil {
			errs = append(errs, fmt.Errorf("property %s: %w", pname, err))
			continue
		}
		c.position[pname] = len(c.Properties)
		c.Properties = append(c.Properties, p)
		c.byName[pname] = p
	}
	for _, p := range c.Properties {
		if p.CurrencySlot != "" && c.byName[p.CurrencySlot] == nil && props.Obj(p.CurrencySlot) == nil {
			errs = append(errs, fmt.Errorf("property %s: x-slotd.currency_slot names unknown property %q", p.Name, p.CurrencySlot))
		}
	}
	for _, r := range doc.Required {
		if c.byName[r] == nil && props.Obj(r) == nil {
			errs = append(errs, fmt.Errorf("required names unknown property %q", r))
		}
	}
	c.Required = c.InOrder(doc.Required)
	return errors.Join(errs...)
}

// compile compiles the whole schema, the output contract and each
// property's own schema from the same resource, so that $ref and $defs
// resolve the same way in all of them.
func (c *Contract) compile(src []byte, output json.RawMessage) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
	if err != nil {
		return err
	}
	url := "slotd:///" + c.Name + ".json"
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.AssertFormat()
	if err := comp.AddResource(url, inst); err != nil {
		return err
	}
	if c.schema, err = comp.Compile(url); err != nil {
		return err
	}
	if len(output) > 0 {
		c.output = &Output{}
		if c.output.fields, err = parseOutputFields(output); err != nil {
			return fmt.Errorf("x-slotd.output: %w", err)
		}
		if c.output.schema, err = comp.Compile(url + "#/x-slotd/output"); err != nil {
			return fmt.Errorf("x-slotd.output: %w", err)
		}
	}
	for _, p := range c.Properties {
		// The pointer travels in a URL's fragment, which the library
		// percent-decodes: a name with a % (or a space, #, ?) is escaped
		// again, or "p%41" would compile "pA"'s schema.
		if p.schema, err = comp.Compile(url + "#/properties/" + neturl.PathEscape(jsontree.Escape(p.Name))); err != nil {
			return fmt.Errorf("property %s: %w", p.Name, err)
		}
		p.formats = p.wordFormats()
	}
	return nil
}

func parseProperty(name string, raw json.RawMessage, tree *jsontree.Object) (*Property, error) {
	var pd propertyDocument
	if err := json.Unmarshal(raw, &pd); err != nil {
		return nil, err
	}
	p := &Property{Name: name, Type: typeOf(pd.Type), Format: pd.Format, Description: pd.Description, raw: tree, Digits: 4, Scale: 2}
	if p.Type == "integer" {
		p.Scale = 0
	}
	for _, v := range pd.Enum {
		if s, ok := v.(string); ok {
			p.Enum = append(p.Enum, s)
		}
	}
	if n := digitsOf(tree); n > 0 {
		p.Digits = n
	}
	var synonyms map[string][]string
	if x := pd.X; x != nil {
		if err := p.parseExtension(x); err != nil {
			return nil, err
		}
		synonyms = x.Synonyms
	}
	if err := p.parseValueLabels(tree.Obj("x-slotd")); err != nil {
		return nil, err
	}
	p.enum = normalizer.NewEnum(p.Enum, p.labelSynonyms(synonyms))
	for _, n := range p.normalizers() {
		if _, ok := normalizers[n]; !ok {
			return nil, fmt.Errorf("x-slotd.normalize: unknown normalizer %q (known: %s)", n, strings.Join(NormalizerNames(), ", "))
		}
	}
	return p, nil
}

// typeOf is a property's type: the type, or the first non-null one of a
// list (["string","null"]).
func typeOf(t any) string {
	switch t := t.(type) {
	case string:
		return t
	case []any:
		for _, v := range t {
			if s, _ := v.(string); s != "" && s != "null" {
				return s
			}
		}
	}
	return ""
}

// parseExtension reads a property's x-slotd member.
func (p *Property) parseExtension(x *propertyExtension) error {
	p.Normalize = x.Normalize
	p.Irreversible = x.Irreversible
	p.Sensitive = x.Sensitive
	p.ask = x.Ask
	p.label = x.Label
	p.CurrencySlot = x.CurrencySlot
	if len(x.Expected) > 0 {
		var one string
		if err := json.Unmarshal(x.Expected, &one); err == nil {
			p.expected = map[string]string{"en": one}
			p.Expected = one
		} else if err := json.Unmarshal(x.Expected, &p.expected); err != nil {
			return errors.New("x-slotd.expected: a text, or texts by locale")
		} else {
			p.Expected = pick(p.expected, "en", "")
		}
	}
	if x.Currency != "" {
		if !isCurrencyCode(x.Currency) {
			return fmt.Errorf("x-slotd.currency: an ISO 4217 code such as RUB, not %q", x.Currency)
		}
		p.Currency = x.Currency
	}
	if x.MaxAttempts < 0 {
		return errors.New("x-slotd.max_attempts: a positive number of attempts")
	}
	p.MaxAttempts = x.MaxAttempts
	return p.parseBounds(x)
}

// parseBounds reads the scale, the digits and the date range of x-slotd.
func (p *Property) parseBounds(x *propertyExtension) error {
	if x.Scale != nil {
		if *x.Scale < 0 || *x.Scale > 8 {
			return errors.New("x-slotd.scale: 0 to 8 decimals")
		}
		p.Scale = *x.Scale
	}
	if x.Digits != 0 {
		if x.Digits < 1 || x.Digits > 19 {
			return errors.New("x-slotd.digits: 1 to 19")
		}
		p.Digits = x.Digits
	}
	switch x.DateRange {
	case "", normalizer.Past, normalizer.Future:
		p.DateRange = x.DateRange
	default:
		return fmt.Errorf("x-slotd.date_range: past or future, not %q", x.DateRange)
	}
	return nil
}

// isCurrencyCode reports three capital Latin letters, the form of an ISO
// 4217 code.
func isCurrencyCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// digitsOf reads how many digits a property holds from its pattern
// ("^[0-9]{4}$", "^\\d{6}$") or equal min and max lengths; 0 when it says
// nothing.
func digitsOf(s *jsontree.Object) int {
	if s == nil {
		return 0
	}
	if n := wording.PatternDigits(s.Str("pattern")); n > 0 {
		return n
	}
	minL, _ := s.Get("minLength")
	maxL, _ := s.Get("maxLength")
	if a, ok := minL.(json.Number); ok && a == maxL {
		n, _ := strconv.Atoi(string(a))
		return n
	}
	return 0
}

// SlotOf is the slot a JSON pointer into the arguments names: its first
// reference token, unescaped ("/reason" → "reason", "/a~1b/0" → "a/b").
func SlotOf(pointer string) string {
	pointer = strings.TrimPrefix(pointer, "/")
	if i := strings.IndexByte(pointer, '/'); i >= 0 {
		pointer = pointer[:i]
	}
	return jsontree.Unescape(pointer)
}

// Property returns the named slot, or nil.
func (c *Contract) Property(name string) *Property { return c.byName[name] }

// InOrder returns the given slot names sorted in contract order; unknown
// names are dropped.
func (c *Contract) InOrder(names []string) []string {
	// out holds at most one name per property: finding a name in it is
	// cheaper than a set.
	out := make([]string, 0, min(len(names), len(c.Properties)))
	for _, n := range names {
		if _, ok := c.position[n]; ok && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return c.position[a] - c.position[b] })
	return out
}

// Location is the contract's default time zone.
func (c *Contract) Location() *time.Location {
	if c.loc == nil {
		return time.UTC
	}
	return c.loc
}

// Label is what the tool is called in a sentence, for the locale
// (x-slotd.label: "спор по операции"); the tool's name when the contract
// gives none.
func (c *Contract) Label(locale string) string {
	if l := pick(c.label, locale, c.DefaultLocale); l != "" {
		return l
	}
	return c.Name
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

// pick returns the text for the locale: the first locale of phrase.Locales
// (the locale as given, its base, the fallback and its base, English) that
// the texts have, then any, stably.
func pick(m map[string]string, locale, fallback string) string {
	s, _ := pickIn(m, locale, fallback)
	return s
}

// pickIn is pick, with the locale the text was found under ("" when there
// is none).
func pickIn(m map[string]string, locale, fallback string) (text, found string) {
	if len(m) == 0 {
		return "", ""
	}
	for l := range phrase.Locales(locale, fallback) {
		if s, ok := m[l]; ok {
			return s, l
		}
	}
	l := slices.Min(slices.Collect(maps.Keys(m)))
	return m[l], l
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// ProviderName is the tool's name as OpenAI and Anthropic accept it:
// characters outside [A-Za-z0-9_-] become "_" (bank.open_dispute →
// bank_open_dispute), and at most 64 of them. The catalog finds a contract
// by it too.
func ProviderName(name string) string {
	n := unsafeName.ReplaceAllString(name, "_")
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

// Catalog is the set of contracts a server serves, by name.
type Catalog struct {
	byName  map[string]*Contract
	aliases map[string]*Contract
	names   []string
}

// NewCatalog builds a catalog; two contracts with one name are an error.
func NewCatalog(cs ...*Contract) (*Catalog, error) {
	cat := &Catalog{byName: map[string]*Contract{}, aliases: map[string]*Contract{}}
	for _, c := range cs {
		if cat.byName[c.Name] != nil {
			return nil, fmt.Errorf("two contracts are named %s", c.Name)
		}
		cat.byName[c.Name] = c
		cat.names = append(cat.names, c.Name)
	}
	// The name a provider's export gives the tool (bank_open_dispute) finds
	// it too, so an orchestrator can pass on the tool call's name as is;
	// unless two contracts would share it (lint reports that).
	taken := map[string]int{}
	for _, c := range cs {
		taken[ProviderName(c.Name)]++
	}
	for _, c := range cs {
		if a := ProviderName(c.Name); a != c.Name && taken[a] == 1 && cat.byName[a] == nil {
			cat.aliases[a] = c
		}
	}
	sort.Strings(cat.names)
	return cat, nil
}

// LoadDir parses every *.json file directly in dir. Its errors name dir as
// given, and each broken file by its path within it.
func LoadDir(dir string) (*Catalog, error) {
	return loadFS(os.DirFS(dir), ".", dir)
}

// LoadFS parses every *.json file directly in dir of fsys.
func LoadFS(fsys fs.FS, dir string) (*Catalog, error) {
	return loadFS(fsys, dir, dir)
}

// loadFS reads dir of fsys, calling it shown in its errors: os.DirFS names
// its root ".", which would tell the reader nothing.
func loadFS(fsys fs.FS, dir, shown string) (*Catalog, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("contracts: cannot read the folder %s: %w", shown, pathless(err))
	}
	var cs []*Contract
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".json" {
			continue
		}
		src, err := fs.ReadFile(fsys, filepath.ToSlash(filepath.Join(dir, e.Name())))
		file := filepath.Join(shown, e.Name())
		if err != nil {
			return nil, fmt.Errorf("contracts: cannot read %s: %w", file, pathless(err))
		}
		c, err := Parse(file, src)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("contracts: no *.json contract in %s", shown)
	}
	return NewCatalog(cs...)
}

// pathless is a file system error without the path it names, which is the
// file system's own name for the file, not the one the user gave.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Get returns the named contract, or nil. The name a provider's export
// gives the tool (bank_open_dispute for bank.open_dispute) finds it too.
func (cat *Catalog) Get(name string) *Contract {
	if c := cat.byName[name]; c != nil {
		return c
	}
	return cat.aliases[name]
}

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
