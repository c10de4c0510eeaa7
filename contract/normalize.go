package contract

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/slotd/slotd/contract/internal/jsontree"
	"github.com/slotd/slotd/contract/normalizer"
	"github.com/slotd/slotd/internal/phrase"
	"github.com/slotd/slotd/internal/redact"
	"github.com/slotd/slotd/problem"
)

// Env is what a normalizer may know besides the value: the turn's clock, the
// time zone relative dates are resolved in, and the locale the refusals are
// worded in ("ru", "uk-UA", "en"; empty means English).
type Env struct {
	Now      time.Time
	Location *time.Location
	Locale   string
}

// normalizerFunc turns a raw value into the slot's value or refuses it,
// with what the property and the turn say about the value.
type normalizerFunc func(v any, p *Property, env Env) (any, error)

// normalizers are the named entries a contract may list in
// x-slotd.normalize; docs/contracts.md describes each.
var normalizers = map[string]normalizerFunc{
	"text": func(v any, _ *Property, _ Env) (any, error) { return normalizer.Text(v), nil },
	"date": func(v any, p *Property, env Env) (any, error) {
		return value(normalizer.Date(v, normalizer.DateOptions{Now: env.Now, Location: env.Location, Range: p.DateRange}))
	},
	"time": func(v any, _ *Property, _ Env) (any, error) { return value(normalizer.Time(v)) },
	"amount": func(v any, p *Property, _ Env) (any, error) {
		return value(normalizer.Amount(v, amountOptions(p)))
	},
	"integer":  func(v any, _ *Property, _ Env) (any, error) { return value(normalizer.Integer(v)) },
	"last4":    func(v any, p *Property, _ Env) (any, error) { return value(normalizer.LastDigits(v, p.Digits)) },
	"enum":     func(v any, p *Property, _ Env) (any, error) { return p.enum.Match(v), nil },
	"iata":     func(v any, _ *Property, _ Env) (any, error) { return value(normalizer.IATA(v)) },
	"currency": func(v any, _ *Property, _ Env) (any, error) { return value(normalizer.Currency(v)) },
}

// value is a parser's result as a normalizer's: nothing beside a refusal.
func value[T any](v T, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return v, nil
}

// amountOptions are the property's scale and currency; a currency found in
// an amount that fills another slot (x-slotd.currency_slot) is checked there,
// not here.
func amountOptions(p *Property) normalizer.AmountOptions {
	o := normalizer.AmountOptions{Scale: p.Scale, Currency: p.Currency}
	if p.CurrencySlot != "" {
		o.Currency = ""
	}
	return o
}

// formatKeys are the catalog keys of each normalizer's accepted form.
var formatKeys = map[string]string{
	"date":     "fmt.date",
	"time":     "fmt.time",
	"amount":   "fmt.amount",
	"integer":  "fmt.integer",
	"last4":    "fmt.digits",
	"iata":     "fmt.iata",
	"currency": "fmt.currency",
}

// NormalizerNames lists the normalizers a contract may name.
func NormalizerNames() []string {
	names := make([]string, 0, len(normalizers))
	for n := range normalizers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Normalizers returns the named normalizers of the property, or the ones
// its standard keywords select: format date selects date, an enum selects
// enum. The slice is shared: do not change it.
func (p *Property) Normalizers() []string { return p.normalizers() }

func (p *Property) normalizers() []string {
	if len(p.Normalize) > 0 {
		return p.Normalize
	}
	switch {
	case p.Format == "date":
		return dateOnly
	case len(p.Enum) > 0:
		return enumOnly
	}
	return nil
}

var (
	dateOnly = []string{"date"}
	enumOnly = []string{"enum"}
)

// IsEmpty reports a value that never overwrites a slot: null, or a string
// with nothing but spaces and invisible characters.
func IsEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return normalizer.Blank(t)
	}
	return false
}

// Normalize turns a raw argument into the slot's normalized value (decimals
// and dates as strings), or says why it does not fit and what would, in the
// locale of env.
func (c *Contract) Normalize(slot string, raw any, env Env) (any, *problem.FieldError) {
	p := c.byName[slot]
	if p == nil {
		lang := c.lang(env.Locale)
		return nil, &problem.FieldError{
			Pointer: "/" + jsontree.Escape(slot),
			Input:   c.render(slot, raw),
			Message: phrase.Text(lang, "unknown_argument", nil),
			Allowed: c.propertyNames(),
			Format:  phrase.Text(lang, "fmt.arguments", nil),
		}
	}
	if c.HoldsCard(slot, raw) {
		lang := c.lang(env.Locale)
		return nil, &problem.FieldError{
			Pointer: "/" + jsontree.Escape(slot),
			Input:   c.render(slot, raw),
			Message: phrase.Text(lang, "card.full", nil),
		}
	}
	if env.Location == nil {
		// Relative dates resolve in the contract's own zone, not in UTC,
		// when the caller does not name one.
		env.Location = c.loc
	}
	v := normalizer.CleanValue(raw)
	for _, name := range p.normalizers() {
		out, err := normalizers[name](v, p, env)
		if err != nil {
			lang := c.lang(env.Locale)
			return nil, c.fieldError(p, raw, refusalText(err, lang), lang)
		}
		v = out
	}
	if err := p.schema.Validate(validationForm(p, v)); err != nil {
		lang := c.lang(env.Locale)
		return nil, c.fieldError(p, raw, schemaMessage(err, lang), lang)
	}
	return v, nil
}

// HoldsCard reports a value the slot must never keep: a full card number
// (redact.HasCard) anywhere in it, in a slot that is not for card digits
// (the last4 normalizer keeps the last digits of a card number and drops the
// rest). Such a value is refused, never stored.
func (c *Contract) HoldsCard(slot string, v any) bool {
	if p := c.byName[slot]; p != nil && hasNormalizer(p, "last4") {
		return false
	}
	return redact.ValueHasCard(v)
}

func hasNormalizer(p *Property, name string) bool {
	return slices.Contains(p.normalizers(), name)
}

// NormalizeArgs normalizes a whole call's arguments: each known argument in
// contract order, then unknown ones in name order. Nulls and blank strings
// are left out (they never overwrite a slot). Beyond Normalize it fills the
// slots an argument implies: a currency found in an amount ("$1,200") goes
// into the contract's currency slot (x-slotd.currency_slot) when the call
// does not name one, and is refused when the call names another.
func (c *Contract) NormalizeArgs(raw map[string]any, env Env) (map[string]any, []problem.FieldError) {
	out := make(map[string]any, len(raw))
	var errs []problem.FieldError
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	known := c.InOrder(names)
	var unknown []string
	for _, k := range names {
		if c.byName[k] == nil {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, slot := range known {
		v := raw[slot]
		if IsEmpty(v) {
			continue
		}
		nv, fe := c.Normalize(slot, v, env)
		if fe != nil {
			errs = append(errs, *fe)
			continue
		}
		out[slot] = nv
	}
	// Implied slots, after every explicit one is known.
	for _, slot := range known {
		p := c.byName[slot]
		if p.CurrencySlot == "" {
			continue
		}
		if _, ok := out[slot]; !ok {
			continue
		}
		code := normalizer.CurrencyOf(raw[slot])
		if code == "" {
			continue
		}
		target := c.byName[p.CurrencySlot]
		given, ok := out[p.CurrencySlot]
		switch {
		case !ok && !IsEmpty(raw[p.CurrencySlot]):
			// The currency argument itself was refused; its error says why.
		case !ok:
			v, fe := c.Normalize(target.Name, code, env)
			if fe != nil {
				lang := c.lang(env.Locale)
				delete(out, slot)
				errs = append(errs, *c.fieldError(p, raw[slot], phrase.Text(lang, "currency.unsupported", phrase.Args{"currency": code}), lang))
				continue
			}
			out[target.Name] = v
		case given != code:
			lang := c.lang(env.Locale)
			delete(out, slot)
			errs = append(errs, *c.fieldError(p, raw[slot], phrase.Text(lang, "currency.conflict", phrase.Args{"currency": code, "given": given}), lang))
		}
	}
	for _, k := range unknown {
		if IsEmpty(raw[k]) {
			continue // a null for a field the contract lacks says nothing
		}
		_, fe := c.Normalize(k, raw[k], env)
		errs = append(errs, *fe)
	}
	return out, errs
}

// fieldError is a refusal with everything a model needs to repair the call:
// where, what came, why, and what would fit.
func (c *Contract) fieldError(p *Property, raw any, msg string, lang phrase.Language) *problem.FieldError {
	return &problem.FieldError{
		Pointer: "/" + jsontree.Escape(p.Name),
		Input:   c.render(p.Name, raw),
		Message: msg,
		Allowed: slices.Clone(p.Enum),
		Format:  p.repairFormat(lang),
	}
}

func (c *Contract) propertyNames() []string {
	out := make([]string, len(c.Properties))
	for i, p := range c.Properties {
		out[i] = p.Name
	}
	return out
}

// render shows a received value in an error: JSON text, redacted, and masked
// entirely for a sensitive slot.
func (c *Contract) render(slot string, raw any) string {
	if p := c.byName[slot]; p != nil && p.Sensitive {
		return `"•••"`
	}
	if s, ok := raw.(string); ok {
		return problem.Quote(s)
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return ""
	}
	s := problem.Redact(string(b))
	// Cut by runes: a cut inside a multi-byte character is invalid UTF-8,
	// which a protobuf string field refuses to carry.
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// validationSlots is every slot in its validation form.
func (c *Contract) validationSlots(slots map[string]any) map[string]any {
	inst := make(map[string]any, len(slots))
	for k, v := range slots {
		inst[k] = validationForm(c.byName[k], v)
	}
	return inst
}

// validationForm is the value as the JSON Schema validator must see it: a
// decimal kept as a string in the slots is a number to the schema.
func validationForm(p *Property, v any) any {
	if p == nil {
		return v
	}
	if s, ok := v.(string); ok && (p.Type == "number" || p.Type == "integer") {
		if _, err := decimal.NewFromString(s); err == nil {
			return json.Number(s)
		}
	}
	if f, ok := v.(float64); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
		// NaN and ±Inf stay floats, which the library refuses as no JSON
		// value; as json.Number they would pass a schema without bounds
		// and panic one with them.
		return json.Number(strconv.FormatFloat(f, 'f', -1, 64))
	}
	return v
}

// refusalText words a normalizer's refusal in a language.
func refusalText(err error, lang phrase.Language) string {
	var r *normalizer.Refusal
	if errors.As(err, &r) {
		return phrase.Text(lang, r.Key, r.Args)
	}
	return err.Error()
}

// AllowedValues is a copy of the slot's enum values: a caller may change
// what it gets without changing the contract.
func (p *Property) AllowedValues() []string { return slices.Clone(p.Enum) }
