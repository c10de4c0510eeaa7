package contract

import (
	"encoding/json"
	"math"
	"strings"
	"unicode"

	"github.com/shopspring/decimal"
)

// currencySigns are the symbols models copy into amounts.
var currencySigns = map[rune]string{
	'₽': "RUB", '$': "USD", '€': "EUR", '₴': "UAH", '£': "GBP", '₸': "KZT", '¥': "CNY",
}

// currencyWords are the codes and words, in ru, uk and en, that name a
// currency next to an amount; lower case, without a final full stop.
var currencyWords = map[string]string{
	"rub": "RUB", "rur": "RUB", "руб": "RUB", "р": "RUB", "рубль": "RUB", "рубля": "RUB", "рублей": "RUB",
	"рублях": "RUB", "рублі": "RUB", "рублів": "RUB", "ruble": "RUB", "rubles": "RUB", "rouble": "RUB", "roubles": "RUB",
	"usd": "USD", "долл": "USD", "доллар": "USD", "доллара": "USD", "долларов": "USD", "долар": "USD", "долари": "USD",
	"доларів": "USD", "dollar": "USD", "dollars": "USD", "бакс": "USD", "баксов": "USD",
	"eur": "EUR", "евро": "EUR", "євро": "EUR", "euro": "EUR", "euros": "EUR",
	"uah": "UAH", "грн": "UAH", "гривна": "UAH", "гривны": "UAH", "гривен": "UAH", "гривня": "UAH", "гривні": "UAH",
	"гривень": "UAH", "hryvnia": "UAH", "hryvnias": "UAH",
	"gbp": "GBP", "pound": "GBP", "pounds": "GBP", "фунт": "GBP", "фунтов": "GBP", "фунтів": "GBP",
	"kzt": "KZT", "тенге": "KZT", "cny": "CNY", "юань": "CNY", "юаней": "CNY", "yuan": "CNY",
	"chf": "CHF", "jpy": "JPY", "pln": "PLN", "злотых": "PLN", "byn": "BYN",
}

// multiplierWords scale an amount written with a word: "1,2 тыс.", "5k".
var multiplierWords = map[string]int32{
	"тыс": 3, "тысяч": 3, "тысячи": 3, "тысяча": 3, "тис": 3, "тисяч": 3, "тисячі": 3, "тисяча": 3,
	"k": 3, "thousand": 3, "млн": 6, "миллион": 6, "миллиона": 6, "миллионов": 6, "мільйон": 6, "мільйона": 6,
	"мільйонів": 6, "million": 6, "mln": 6,
}

// normalizeAmount reads money as models send it. Separators follow one rule
// for both conventions (docs/contracts.md): spaces and apostrophes group
// thousands; when both "." and "," occur the later one is the decimal
// separator; one kind occurring several times groups thousands; a single
// "." or "," followed by exactly three digits after one to three leading
// digits groups thousands ("1.200" and "1,200" are both 1200), otherwise it
// is the decimal separator. The result has the canonical scale (2 unless
// x-slotd.scale says otherwise), so "1200.5" and "1200.500" are one value.
func normalizeAmount(v any, p *Property, _ Env) (any, error) {
	var d decimal.Decimal
	var currency string
	switch t := v.(type) {
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, refuse("amount.not_number")
		}
		d = decimal.NewFromFloat(t)
	case json.Number:
		var err error
		if d, err = decimal.NewFromString(string(t)); err != nil {
			return nil, refuse("amount.not_number")
		}
	case string:
		var err error
		if d, currency, err = parseAmount(t); err != nil {
			return nil, err
		}
	default:
		return nil, refuse("amount.not_number")
	}
	if currency != "" && p.Currency != "" && p.CurrencySlot == "" && currency != p.Currency {
		return nil, refuse("currency.wrong", currency, p.Currency)
	}
	scale := p.Scale
	if d.Exponent() < -scale {
		if !d.Equal(d.Truncate(scale)) {
			if scale == 0 {
				return nil, refuse("amount.whole")
			}
			return nil, refuse("amount.decimals", scale)
		}
	}
	return d.StringFixed(scale), nil
}

// currencyOf is the currency a raw amount names, or "".
func currencyOf(v any) string {
	s, ok := v.(string)
	if !ok {
		return ""
	}
	_, code, err := parseAmount(cleanText(s))
	if err != nil {
		return ""
	}
	return code
}

func parseAmount(s string) (decimal.Decimal, string, error) {
	var (
		num      = make([]byte, 0, len(s))
		currency string
		neg      bool
		shift    int32
		lastWord bool // the previous token was a word: "руб." ends with a stop
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r >= '0' && r <= '9':
			num = append(num, byte(r))
			lastWord = false
		case r == '.' || r == ',':
			if lastWord && (i+1 == len(rs) || !isDigit(rs[i+1])) {
				continue // the stop of an abbreviation
			}
			num = append(num, byte(r))
		case r == '-' || r == '−' || r == '–':
			if neg || len(num) > 0 {
				return decimal.Decimal{}, "", refuse("amount.not_amount")
			}
			neg = true
		case r == '+' && len(num) == 0 && !neg:
		case unicode.IsSpace(r) || r == '\'' || r == '’' || r == '_':
			if len(num) > 0 && num[len(num)-1] != ' ' {
				num = append(num, ' ')
			}
		case unicode.IsLetter(r):
			j := i
			for j < len(rs) && unicode.IsLetter(rs[j]) {
				j++
			}
			word := strings.ToLower(string(rs[i:j]))
			i = j - 1
			lastWord = true
			if word == "us" && j < len(rs) && rs[j] == '$' {
				continue
			}
			if code, ok := currencyWords[word]; ok {
				if currency != "" && currency != code {
					return decimal.Decimal{}, "", refuse("currency.two")
				}
				currency = code
				continue
			}
			if m, ok := multiplierWords[word]; ok && shift == 0 && len(num) > 0 {
				shift = m
				continue
			}
			return decimal.Decimal{}, "", refuse("amount.not_amount")
		default:
			code, ok := currencySigns[r]
			if !ok {
				return decimal.Decimal{}, "", refuse("amount.not_amount")
			}
			if currency != "" && currency != code {
				return decimal.Decimal{}, "", refuse("currency.two")
			}
			currency = code
			lastWord = false
		}
	}
	text, ok := canonicalNumber(strings.TrimSpace(string(num)))
	if !ok {
		return decimal.Decimal{}, "", refuse("amount.not_amount")
	}
	d, err := decimal.NewFromString(text)
	if err != nil {
		return decimal.Decimal{}, "", refuse("amount.not_amount")
	}
	if shift > 0 {
		d = d.Shift(shift)
	}
	if neg {
		d = d.Neg()
	}
	return d, currency, nil
}

// canonicalNumber applies the separator rule of normalizeAmount: it returns
// the number as "1200.50", or false when the grouping makes no sense.
func canonicalNumber(num string) (string, bool) {
	num = strings.TrimRight(num, ".,")
	num = strings.TrimSpace(num)
	if num == "" {
		return "", false
	}
	dots, commas := strings.Count(num, "."), strings.Count(num, ",")
	spaced := strings.Contains(num, " ")
	decimalSep := byte(0)
	switch {
	case dots > 0 && commas > 0:
		decimalSep = '.'
		if strings.LastIndexByte(num, ',') > strings.LastIndexByte(num, '.') {
			decimalSep = ','
		}
		if strings.Count(num, string(decimalSep)) > 1 {
			return "", false
		}
	case dots+commas == 1:
		sep := byte('.')
		if commas == 1 {
			sep = ','
		}
		i := strings.IndexByte(num, sep)
		intPart, frac := num[:i], num[i+1:]
		thousands := !spaced && len(frac) == 3 && len(intPart) >= 1 && len(intPart) <= 3 && intPart[0] != '0'
		if !thousands {
			decimalSep = sep
		}
	}
	intPart, frac := num, ""
	if decimalSep != 0 {
		i := strings.IndexByte(num, decimalSep)
		intPart, frac = num[:i], num[i+1:]
		if frac == "" || strings.ContainsAny(frac, " .,") {
			return "", false
		}
	}
	// Whatever separates the integer part groups thousands: the first group
	// has one to three digits, every later one exactly three.
	groups := strings.FieldsFunc(intPart, func(r rune) bool { return r == ' ' || r == '.' || r == ',' })
	if len(groups) == 0 {
		return "", false
	}
	if len(groups) > 1 {
		if len(groups[0]) > 3 {
			return "", false
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				return "", false
			}
		}
	}
	out := strings.Join(groups, "")
	if frac != "" {
		out += "." + frac
	}
	return out, true
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// normalizeCurrency turns a currency sign, word or code into its ISO 4217
// code: "₽", "руб.", "рублей" → RUB; "$", "dollars" → USD.
func normalizeCurrency(v any, _ *Property, _ Env) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, refuse("currency.not_currency")
	}
	s = strings.Trim(s, " .")
	if rs := []rune(s); len(rs) == 1 {
		if code, ok := currencySigns[rs[0]]; ok {
			return code, nil
		}
	}
	lower := strings.ToLower(s)
	if code, ok := currencyWords[lower]; ok {
		return code, nil
	}
	if len(s) == 3 && strings.IndexFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') }) < 0 {
		return strings.ToUpper(s), nil
	}
	return nil, refuse("currency.not_currency")
}
