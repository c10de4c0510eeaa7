package contract

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/shopspring/decimal"
	"golang.org/x/text/unicode/norm"

	"github.com/slotd/slotd/problem"
)

// Env is what a normalizer may know besides the value: the turn's clock and
// the time zone relative dates are resolved in.
type Env struct {
	Now      time.Time
	Location *time.Location
}

func (e Env) today() time.Time {
	loc := e.Location
	if loc == nil {
		loc = time.UTC
	}
	now := e.Now
	if now.IsZero() {
		now = time.Now()
	}
	y, m, d := now.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// unfit is a normalizer's refusal: why, and what form would fit.
type unfit struct {
	msg    string
	format string
}

func (u *unfit) Error() string { return u.msg }

// normalizer turns a raw value into the slot's value or refuses it.
type normalizer func(v any, p *Property, env Env) (any, error)

var normalizers = map[string]normalizer{
	"text":   normalizeText,
	"date":   normalizeDate,
	"amount": normalizeAmount,
	"last4":  normalizeLast4,
	"enum":   normalizeEnum,
	"iata":   normalizeIATA,
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

// normalizers returns the named normalizers of the property, or the ones its
// standard keywords select: format date selects date, an enum selects enum.
func (p *Property) normalizers() []string {
	if len(p.Normalize) > 0 {
		return p.Normalize
	}
	switch {
	case p.Format == "date":
		return []string{"date"}
	case len(p.Enum) > 0:
		return []string{"enum"}
	}
	return nil
}

// IsEmpty reports a value that never overwrites a slot: null, or a string
// with nothing but spaces and invisible characters.
func IsEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return cleanText(t) == ""
	}
	return false
}

// Normalize turns a raw argument into the slot's normalized value (decimals
// and dates as strings), or says why it does not fit and what would.
func (c *Contract) Normalize(slot string, raw any, env Env) (any, *problem.FieldError) {
	p := c.byName[slot]
	if p == nil {
		return nil, &problem.FieldError{
			Pointer: "/" + escapePointer(slot),
			Input:   c.render(slot, raw),
			Message: "unknown argument",
			Allowed: c.propertyNames(),
		}
	}
	if env.Location == nil {
		// Relative dates resolve in the contract's own zone, not in UTC,
		// when the caller does not name one.
		env.Location = c.Location()
	}
	v := raw
	if s, ok := v.(string); ok {
		v = cleanText(s)
	}
	for _, name := range p.normalizers() {
		out, err := normalizers[name](v, p, env)
		if err != nil {
			fe := c.fieldError(p, raw, err.Error())
			if u, ok := err.(*unfit); ok && u.format != "" {
				fe.Format = u.format
			}
			return nil, fe
		}
		v = out
	}
	if err := p.schema.Validate(validationForm(p, v)); err != nil {
		return nil, c.fieldError(p, raw, schemaMessage(err))
	}
	return v, nil
}

func (c *Contract) fieldError(p *Property, raw any, msg string) *problem.FieldError {
	return &problem.FieldError{
		Pointer: "/" + escapePointer(p.Name),
		Input:   c.render(p.Name, raw),
		Message: msg,
		Allowed: p.Enum,
		Format:  p.expected(),
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

// expected describes the accepted form of the slot with an example.
func (p *Property) expected() string {
	if p.Expected != "" {
		return p.Expected
	}
	switch {
	case p.Format == "date":
		return dateFormat
	case len(p.Enum) > 0:
		return "one of: " + strings.Join(p.Enum, ", ")
	}
	for _, n := range p.normalizers() {
		switch n {
		case "amount":
			return amountFormat
		case "last4":
			return last4Format
		case "iata":
			return iataFormat
		}
	}
	return ""
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
	if f, ok := v.(float64); ok {
		return json.Number(strconv.FormatFloat(f, 'f', -1, 64))
	}
	return v
}

var zeroWidth = strings.NewReplacer("\u200b", "", "\u200c", "", "\u200d", "", "\u2060", "", "\ufeff", "", "\u00ad", "")

// cleanText trims, folds runs of white space to one space, strips
// zero-width characters, and composes to Unicode NFC.
func cleanText(s string) string {
	s = zeroWidth.Replace(norm.NFC.String(s))
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}

func normalizeText(v any, _ *Property, _ Env) (any, error) {
	if s, ok := v.(string); ok {
		return cleanText(s), nil
	}
	return v, nil
}

const dateFormat = "a date as YYYY-MM-DD, e.g. 2026-08-22; today, yesterday and the day before are understood"

// relativeDays are the words for a day relative to today, in ru, uk and en.
var relativeDays = map[string]int{
	"сегодня": 0, "вчера": -1, "позавчера": -2, "завтра": 1, "послезавтра": 2,
	"сьогодні": 0, "вчора": -1, "позавчора": -2, "післязавтра": 2,
	"today": 0, "yesterday": -1, "tomorrow": 1, "the day before yesterday": -2, "the day after tomorrow": 2,
}

var (
	isoDate = regexp.MustCompile(`^(\d{4})-(\d{1,2})-(\d{1,2})$`)
	dmyDate = regexp.MustCompile(`^(\d{1,2})[./](\d{1,2})(?:[./](\d{2}|\d{4}))?$`)
)

func normalizeDate(v any, _ *Property, env Env) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, &unfit{msg: "expected a date as text", format: dateFormat}
	}
	key := strings.Trim(strings.ToLower(s), " .!")
	if d, ok := relativeDays[key]; ok {
		return env.today().AddDate(0, 0, d).Format(time.DateOnly), nil
	}
	if m := isoDate.FindStringSubmatch(key); m != nil {
		return makeDate(atoi(m[1]), atoi(m[2]), atoi(m[3]))
	}
	if m := dmyDate.FindStringSubmatch(key); m != nil {
		year := env.today().Year()
		if m[3] != "" {
			year = atoi(m[3])
			if len(m[3]) == 2 {
				year += 2000
			}
		}
		return makeDate(year, atoi(m[2]), atoi(m[1]))
	}
	return nil, &unfit{msg: "not a date slotd can read", format: dateFormat}
}

// makeDate refuses an impossible date instead of rolling it over.
func makeDate(y, m, d int) (any, error) {
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Year() != y || int(t.Month()) != m || t.Day() != d {
		return nil, &unfit{msg: "no such date", format: dateFormat}
	}
	return t.Format(time.DateOnly), nil
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

const amountFormat = "an amount such as 1200.50 (a currency sign or spaces between thousands are fine)"

// currencyMarks are the currency signs and words models copy into amounts.
var currencyMarks = regexp.MustCompile(`(?i)(₽|руб(?:лей|ля|ль)?\.?|р\.|rub|rur|\$|usd|€|eur|грн\.?|₴|uah|£|gbp)`)

func normalizeAmount(v any, _ *Property, _ Env) (any, error) {
	var d decimal.Decimal
	switch t := v.(type) {
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, &unfit{msg: "not a number", format: amountFormat}
		}
		d = decimal.NewFromFloat(t)
	case json.Number:
		var err error
		if d, err = decimal.NewFromString(string(t)); err != nil {
			return nil, &unfit{msg: "not a number", format: amountFormat}
		}
	case string:
		var err error
		if d, err = parseAmount(t); err != nil {
			return nil, err
		}
	default:
		return nil, &unfit{msg: "expected an amount", format: amountFormat}
	}
	// Money keeps at least two decimals: "1200.50", never "1200.5".
	return d.StringFixed(max(2, -d.Exponent())), nil
}

func parseAmount(s string) (decimal.Decimal, error) {
	s = currencyMarks.ReplaceAllString(s, "")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9', r == '.', r == ',', r == '-':
			b.WriteRune(r)
		case unicode.IsSpace(r), r == '\'', r == '’', r == '_':
			// thousands separators
		default:
			return decimal.Decimal{}, &unfit{msg: "not an amount", format: amountFormat}
		}
	}
	num := strings.TrimRight(b.String(), ".,")
	lastDot, lastComma := strings.LastIndex(num, "."), strings.LastIndex(num, ",")
	dots, commas := strings.Count(num, "."), strings.Count(num, ",")
	switch {
	case dots > 0 && commas > 0:
		// The later separator is the decimal one: "1,200.50", "1.200,50".
		if lastDot > lastComma {
			num = strings.ReplaceAll(num, ",", "")
		} else {
			num = strings.ReplaceAll(strings.ReplaceAll(num, ".", ""), ",", ".")
		}
	case commas == 1 && len(num)-lastComma-1 == 3 && lastComma > 0:
		// "1,200": a thousands separator.
		num = strings.ReplaceAll(num, ",", "")
	case commas == 1:
		num = strings.ReplaceAll(num, ",", ".")
	case commas > 1:
		num = strings.ReplaceAll(num, ",", "")
	case dots > 1:
		num = strings.ReplaceAll(num, ".", "")
	}
	d, err := decimal.NewFromString(num)
	if err != nil || num == "" {
		return decimal.Decimal{}, &unfit{msg: "not an amount", format: amountFormat}
	}
	return d, nil
}

const last4Format = "the last four digits of the card, e.g. 4417"

func normalizeLast4(v any, _ *Property, _ Env) (any, error) {
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case float64:
		if t < 0 || t != math.Trunc(t) || t > 1e19 {
			return nil, &unfit{msg: "expected digits", format: last4Format}
		}
		s = fmt.Sprintf("%04.0f", t)
	default:
		return nil, &unfit{msg: "expected digits", format: last4Format}
	}
	digits := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			digits = append(digits, s[i])
		}
	}
	if len(digits) < 4 {
		return nil, &unfit{msg: fmt.Sprintf("found %d digits, need four", len(digits)), format: last4Format}
	}
	return string(digits[len(digits)-4:]), nil
}

// fold makes enum matching blind to case, spaces, hyphens and underscores.
func fold(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(cleanText(s)) {
		if r == ' ' || r == '-' || r == '_' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func normalizeEnum(v any, p *Property, _ Env) (any, error) {
	s, ok := v.(string)
	if !ok {
		return v, nil // the schema says what fits
	}
	f := fold(s)
	for _, e := range p.Enum {
		if fold(e) == f {
			return e, nil
		}
	}
	if e, ok := p.synonyms[f]; ok {
		return e, nil
	}
	return s, nil
}

const iataFormat = "a three-letter IATA airport code such as MAD"

func normalizeIATA(v any, _ *Property, _ Env) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, &unfit{msg: "expected an airport code", format: iataFormat}
	}
	s = strings.ToUpper(strings.TrimSpace(s))
	if len(s) != 3 || strings.IndexFunc(s, func(r rune) bool { return r < 'A' || r > 'Z' }) >= 0 {
		return nil, &unfit{msg: "not an IATA airport code; a city name cannot be turned into one here", format: iataFormat}
	}
	return s, nil
}

// Expected describes the accepted form of a slot with an example, or "".
func Expected(p *Property) string { return p.expected() }
