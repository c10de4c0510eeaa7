package provider

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/contract/internal/jsontree"
)

// The per-request limits of the providers' strict modes: a request with more
// strict tools, optional parameters or union-typed parameters than these is
// refused with "Schema is too complex for compilation", so the whole set of
// contracts sent together must fit.
const (
	LimitStrictTools    = 20
	LimitOptionalParams = 24
	LimitUnionParams    = 16
	// OpenAI's structural limits for one request's strict schemas.
	limitOpenAIProperties = 5000
	limitOpenAIDepth      = 10
	limitOpenAIEnumValues = 1000
)

// Severity of a lint finding.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Finding is one thing lint says about a contract file.
type Finding struct {
	File     string `json:"file"`
	Pointer  string `json:"pointer"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

func (f Finding) String() string {
	ptr := f.Pointer
	if ptr == "" {
		ptr = "/"
	}
	return fmt.Sprintf("%s#%s: %s: %s", f.File, ptr, f.Severity, f.Message)
}

// LintDir checks every *.json contract directly in dir: schema errors, what
// the providers' strict modes would lose or refuse, and the per-request
// limits of the whole set.
func LintDir(dir string) ([]Finding, error) {
	return LintFS(os.DirFS(dir), ".", dir)
}

// LintPath is LintDir for a folder, and the same checks of one file alone
// for a file.
func LintPath(target string) ([]Finding, error) {
	st, err := os.Stat(target)
	if err != nil || st.IsDir() {
		return LintDir(target)
	}
	src, err := os.ReadFile(target)
	if err != nil {
		return nil, fmt.Errorf("contracts: cannot read %s: %w", target, err)
	}
	c, out := lintFile(target, src)
	if c != nil {
		out = append(out, lintSet([]*contract.Contract{c}, map[*contract.Contract]string{c: target})...)
	}
	return out, nil
}

// LintFS is LintDir over a file system; prefix is shown before file names.
func LintFS(fsys fs.FS, dir, prefix string) ([]Finding, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		// The file system's own name for the folder (os.DirFS's ".") would
		// tell the reader nothing: name it as given.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("contracts: cannot read the folder %s: %w", prefix, err)
	}
	var out []Finding
	var parsed []*contract.Contract
	files := map[*contract.Contract]string{}
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".json" {
			continue
		}
		file := path.Join(prefix, e.Name())
		src, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		c, findings := lintFile(file, src)
		out = append(out, findings...)
		if c != nil {
			parsed = append(parsed, c)
			files[c] = file
		}
	}
	if len(parsed) == 0 && len(out) == 0 {
		return nil, fmt.Errorf("contracts: no *.json contract in %s", prefix)
	}
	out = append(out, lintSet(parsed, files)...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out, nil
}

var (
	atPointer = regexp.MustCompile(`at '(/[^']*)'`)
	atProp    = regexp.MustCompile(`property ([^:]+):`)
)

// reporter adds a finding about one file.
type reporter func(sev, ptr, msg string, args ...any)

// lintFile parses one file and reports what is wrong with it alone.
func lintFile(file string, src []byte) (*contract.Contract, []Finding) {
	var out []Finding
	add := func(sev, ptr, msg string, args ...any) {
		out = append(out, Finding{File: file, Pointer: ptr, Severity: sev, Message: fmt.Sprintf(msg, args...)})
	}
	tree, err := jsontree.Decode(src)
	if err != nil {
		add(SeverityError, "", "not JSON: %v", err)
		return nil, out
	}
	root, ok := tree.(*jsontree.Object)
	if !ok {
		add(SeverityError, "", "the contract must be a JSON object")
		return nil, out
	}
	lintExtensions(root, add)
	c, err := contract.Parse(path.Base(file), src)
	if err != nil {
		// Parse reports every mistake it found, joined: one finding each.
		errs := []error{err}
		if j, ok := errors.Unwrap(err).(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		}
		for _, err := range errs {
			msg := strings.TrimPrefix(err.Error(), "contract "+path.Base(file)+": ")
			ptr := ""
			if ms := atPointer.FindAllStringSubmatch(msg, -1); ms != nil {
				ptr = ms[len(ms)-1][1] // the deepest location the metaschema names
			} else if m := atProp.FindStringSubmatch(msg); m != nil {
				ptr = "/properties/" + jsontree.Escape(m[1])
			}
			add(SeverityError, ptr, "%s", msg)
		}
		return nil, out
	}
	if t := root.Str("type"); t != "object" {
		add(SeverityError, "/type", `the root must be "type": "object": both providers take an object of arguments`)
	}
	if c.Description == "" {
		add(SeverityWarning, "/description", "no description: the model chooses and fills a tool by its description")
	}
	if n := contract.ProviderName(c.Name); n != c.Name && len(c.Name) > 64 {
		add(SeverityError, "/x-slotd/name", "the name is longer than the 64 characters providers take")
	}
	lintProperties(c, root.Obj("properties"), add)
	for _, prov := range []string{OpenAI, Anthropic} {
		e, err := Export(c, prov)
		if err != nil {
			add(SeverityError, "", "%s export: %v", prov, err)
			continue
		}
		if err := compileExport(e); err != nil {
			add(SeverityError, "", "%s export is not a valid JSON Schema: %v", prov, err)
		}
	}
	return c, out
}

// lintProperties reports what is wrong with each slot: what the model and
// the strict modes would miss, and settings that have no effect.
func lintProperties(c *contract.Contract, props *jsontree.Object, add reporter) {
	required := map[string]bool{}
	for _, r := range c.Required {
		required[r] = true
	}
	for _, p := range c.Properties {
		ptr := "/properties/" + jsontree.Escape(p.Name)
		schema := props.Obj(p.Name)
		if p.Description == "" {
			add(SeverityWarning, ptr, "no description: say what the slot holds, with an example (the description fixes most wrong calls)")
		}
		if required[p.Name] && schema.Obj("x-slotd").Obj("ask").Len() == 0 {
			add(SeverityWarning, ptr+"/x-slotd/ask", "a required slot without a question by meaning: slotd asks with its generic one")
		}
		for _, n := range p.Normalizers() {
			if n == "amount" && p.Currency == "" && p.CurrencySlot == "" {
				add(SeverityWarning, ptr+"/x-slotd", "an amount without x-slotd.currency or x-slotd.currency_slot: a currency in the input (\"$1,200\") is dropped")
			}
		}
		if p.Currency != "" && p.CurrencySlot != "" {
			add(SeverityWarning, ptr+"/x-slotd", "x-slotd.currency and x-slotd.currency_slot together: the currency slot wins")
		}
		if pat := schema.Str("pattern"); pat != "" && unsupportedRegex.MatchString(pat) {
			add(SeverityWarning, ptr+"/pattern", "look-arounds, back-references and word boundaries are not supported by strict modes' regex engines")
		}
		if f := p.Format; f != "" && !openAIFormats[f] {
			add(SeverityWarning, ptr+"/format", "format %q is not enforced by OpenAI's strict mode; the export says it in the description", f)
		}
		if p.DateRange != "" && p.Format != "date" && !slices.Contains(p.Normalizers(), "date") {
			add(SeverityWarning, ptr+"/x-slotd/date_range", "date_range has effect only with the date normalizer")
		}
		lintValueLabels(p, schema.Obj("x-slotd").Obj("value_labels"), ptr+"/x-slotd/value_labels", add)
	}
}

// lintValueLabels reports enum values that lack a label in a locale the
// other values have one in: a turn in that locale would show such a value
// as written, or by another language's label, beside labels in its own.
func lintValueLabels(p *contract.Property, labels *jsontree.Object, ptr string, add reporter) {
	if labels.Len() == 0 {
		return
	}
	var locales []string
	for _, v := range labels.Keys() {
		for _, l := range labels.Obj(v).Keys() {
			if !slices.Contains(locales, l) {
				locales = append(locales, l)
			}
		}
	}
	for _, v := range p.Enum {
		have := labels.Obj(v)
		if have.Len() == 0 {
			add(SeverityWarning, ptr, "%q has no label: users are shown the code", v)
			continue
		}
		var lack []string
		for _, l := range locales {
			if !have.Has(l) {
				lack = append(lack, l)
			}
		}
		if len(lack) > 0 {
			add(SeverityWarning, ptr+"/"+jsontree.Escape(v), "no label in %s, which other values have: a turn in it shows another language's label", strings.Join(lack, ", "))
		}
	}
}

var unsupportedRegex = regexp.MustCompile(`\(\?[=!<]|\\[1-9]|\\b|\\B`)

var (
	rootExtensionKeys     = []string{"name", "confirm", "confirm_text", "stale_after", "ttl", "time_zone", "default_locale", "carry_over", "exclusive", "label", "output", "partial", "upgrade"}
	propertyExtensionKeys = []string{"normalize", "irreversible", "sensitive", "ask", "label", "expected", "synonyms", "max_attempts", "currency", "currency_slot", "scale", "digits", "date_range", "value_labels"}
)

// lintExtensions reports x-slotd members slotd does not know: a typo
// ("normalise") would otherwise be ignored silently.
func lintExtensions(root *jsontree.Object, add reporter) {
	check := func(x *jsontree.Object, ptr string, known []string) {
		if x == nil {
			return
		}
		for _, k := range x.Keys() {
			if !slices.Contains(known, k) {
				add(SeverityWarning, ptr+"/"+jsontree.Escape(k), "unknown x-slotd member %q (known: %s)", k, strings.Join(known, ", "))
			}
		}
	}
	check(root.Obj("x-slotd"), "/x-slotd", rootExtensionKeys)
	if props := root.Obj("properties"); props != nil {
		for _, name := range props.Keys() {
			if p := props.Obj(name); p != nil {
				check(p.Obj("x-slotd"), "/properties/"+jsontree.Escape(name)+"/x-slotd", propertyExtensionKeys)
			}
		}
	}
}

// compileExport checks that an export is itself a valid JSON Schema.
func compileExport(e *Tool) error {
	raw, err := e.ParametersJSON()
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	if err := comp.AddResource("slotd:///export.json", inst); err != nil {
		return err
	}
	_, err = comp.Compile("slotd:///export.json")
	return err
}

// paramStats counts, in one export, the parameters a strict mode's limits
// are about.
type paramStats struct {
	optional, unions []string // pointers
	properties       int
	depth            int
	enumValues       int
}

func statsOf(s *jsontree.Object, ptr string, depth int, st *paramStats) {
	if s == nil {
		return
	}
	if depth > st.depth {
		st.depth = depth
	}
	st.enumValues += len(s.List("enum"))
	props := s.Obj("properties")
	if props == nil {
		if items := s.Obj("items"); items != nil {
			statsOf(items, ptr+"/items", depth+1, st)
		}
		return
	}
	required := map[string]bool{}
	for _, r := range s.List("required") {
		if n, ok := r.(string); ok {
			required[n] = true
		}
	}
	for _, name := range props.Keys() {
		p := props.Obj(name)
		pp := ptr + "/properties/" + jsontree.Escape(name)
		st.properties++
		if !required[name] {
			st.optional = append(st.optional, pp)
		}
		if p != nil && (len(p.List("anyOf")) > 0 || len(p.List("type")) > 1) {
			st.unions = append(st.unions, pp)
		}
		statsOf(p, pp, depth+1, st)
	}
}

// lintSet checks the limits of one request that carries every contract as
// a strict tool.
func lintSet(cs []*contract.Contract, files map[*contract.Contract]string) []Finding {
	var out []Finding
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	names := map[string]string{}
	for _, c := range cs {
		n := contract.ProviderName(c.Name)
		if other, ok := names[n]; ok {
			out = append(out, Finding{File: files[c], Pointer: "/x-slotd/name", Severity: SeverityError,
				Message: fmt.Sprintf("%s and %s both export as the tool %q", other, c.Name, n)})
		}
		names[n] = c.Name
	}
	if len(cs) > LimitStrictTools {
		out = append(out, Finding{File: files[cs[LimitStrictTools]], Severity: SeverityWarning,
			Message: fmt.Sprintf("the set has %d strict tools; one request takes at most %d (this is the first over the limit)", len(cs), LimitStrictTools)})
	}
	type at struct {
		file, ptr string
	}
	for _, prov := range []string{Anthropic, OpenAI} {
		var optional, unions []at
		var total paramStats
		for _, c := range cs {
			e, err := Export(c, prov)
			if err != nil {
				continue
			}
			var st paramStats
			statsOf(e.params, "", 0, &st)
			for _, p := range st.optional {
				optional = append(optional, at{files[c], p})
			}
			for _, p := range st.unions {
				unions = append(unions, at{files[c], p})
			}
			total.properties += st.properties
			total.enumValues += st.enumValues
			if st.depth > limitOpenAIDepth && prov == OpenAI {
				out = append(out, Finding{File: files[c], Severity: SeverityError,
					Message: fmt.Sprintf("openai: objects nest %d levels deep; strict mode takes at most %d", st.depth, limitOpenAIDepth)})
			}
		}
		if prov == OpenAI {
			if total.properties > limitOpenAIProperties {
				out = append(out, Finding{File: files[cs[len(cs)-1]], Severity: SeverityWarning,
					Message: fmt.Sprintf("openai: the set has %d properties; one request's strict schemas take at most %d", total.properties, limitOpenAIProperties)})
			}
			if total.enumValues > limitOpenAIEnumValues {
				out = append(out, Finding{File: files[cs[len(cs)-1]], Severity: SeverityWarning,
					Message: fmt.Sprintf("openai: the set has %d enum values; one request's strict schemas take at most %d", total.enumValues, limitOpenAIEnumValues)})
			}
			continue
		}
		if len(optional) > LimitOptionalParams {
			first := optional[LimitOptionalParams]
			out = append(out, Finding{File: first.file, Pointer: first.ptr, Severity: SeverityWarning,
				Message: fmt.Sprintf("%s: the set has %d optional parameters; one request takes at most %d (this is the first over the limit)", prov, len(optional), LimitOptionalParams)})
		}
		if len(unions) > LimitUnionParams {
			first := unions[LimitUnionParams]
			out = append(out, Finding{File: first.file, Pointer: first.ptr, Severity: SeverityWarning,
				Message: fmt.Sprintf("%s: the set has %d union-typed parameters; one request takes at most %d (this is the first over the limit)", prov, len(unions), LimitUnionParams)})
		}
	}
	return out
}

// HasErrors reports whether any finding is an error.
func HasErrors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}
