package normalizer

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

// AmountOptions are what an amount depends on besides its text.
type AmountOptions struct {
	// Scale is the number of decimals the amount keeps.
	Scale int32
	// Currency is the ISO 4217 code the amount must be in; an amount that
	// names another is refused. Empty takes any currency (a caller that
	// files the currency in a slot of its own passes none).
	Currency string
}

// Amount reads money as models send it. Separators follow one rule for both
// conventions (docs/contracts.md): spaces and apostrophes group thousands;
// when both "." and "," occur the later one is the decimal separator; one
// kind occurring several times groups thousands; a single "." or ","
// followed by exactly three digits after one to three leading digits groups
// thousands ("1.200" and "1,200" are both 1200), otherwise it is the decimal
// separator. The result has the scale of the options, so "1200.5" and
// "1200.500" are one value.
func Amount(v any, o AmountOptions) (string, error) {
	var d decimal.Decimal
	var currency string
	switch t := v.(type) {
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return "", refuse("amount.not_number")
		}
		d = decimal.NewFromFloat(t)
	case json.Number:
		var err error
		if d, err = decimal.NewFromString(string(t)); err != nil {
			return "", refuse("amount.not_number")
		}
	case string:
		var err error
		if d, currency, err = parseAmount(t); err != nil {
			return "", err
		}
	default:
		return "", refuse("amount.not_number")
	}
	if currency != "" && o.Currency != "" && currency != o.Currency {
		return "", refuse("currency.wrong", Args{"currency": currency, "accepted": o.Currency})
	}
	if d.Exponent() < -o.Scale && !d.Equal(d.Truncate(o.Scale)) {
		if o.Scale == 0 {
			return "", refuse("amount.whole")
		}
		return "", refuse("amount.decimals", Args{"decimals": o.Scale})
	}
	return d.StringFixed(o.Scale), nil
}

// CurrencyOf is the currency a raw amount names ("$1,200" → USD), or "".
func CurrencyOf(v any) string {
	s, ok := v.(string)
	if !ok {
		return ""
	}
	_, code, err := parseAmount(Clean(s))
	if err != nil {
		return ""
	}
	return code
}

// parseAmount reads an amount written as text: its number, and the currency
// it names, if any.
func parseAmount(s string) (decimal.Decimal, string, error) {
	var sc amountScanner
	sc.num = make([]byte, 0, len(s))
	if err := sc.scan([]rune(s)); err != nil {
		return decimal.Decimal{}, "", err
	}
	text, ok := canonicalNumber(strings.TrimSpace(string(sc.num)))
	if !ok {
		return decimal.Decimal{}, "", refuse("amount.not_amount")
	}
	d, err := decimal.NewFromString(text)
	if err != nil {
		return decimal.Decimal{}, "", refuse("amount.not_amount")
	}
	if sc.shift > 0 {
		d = d.Shift(sc.shift)
	}
	if sc.neg {
		d = d.Neg()
	}
	return d, sc.currency, nil
}

// amountScanner collects the digits and separators of an amount, with the
// sign, currency and multiplier the text around them names.
type amountScanner struct {
	num      []byte // digits, "." and ",", and one space for a run of group separators
	currency string
	neg      bool
	shift    int32 // a multiplier word's power of ten: "тыс." 3, "млн" 6
	lastWord bool  // the previous token was a word: "руб." ends with a stop
}

func (sc *amountScanner) scan(rs []rune) error {
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r >= '0' && r <= '9':
			sc.num = append(sc.num, byte(r))
			sc.lastWord = false
		case r == '.' || r == ',':
			if sc.lastWord && (i+1 == len(rs) || !isDigit(rs[i+1])) {
				continue // the stop of an abbreviation
			}
			sc.num = append(sc.num, byte(r))
		case r == '-' || r == '−' || r == '–':
			if sc.neg || len(sc.num) > 0 {
				return refuse("amount.not_amount")
			}
			sc.neg = true
		case r == '+' && len(sc.num) == 0 && !sc.neg:
		case unicode.IsSpace(r) || r == '\'' || r == '’' || r == '_':
			if len(sc.num) > 0 && sc.num[len(sc.num)-1] != ' ' {
				sc.num = append(sc.num, ' ')
			}
		case unicode.IsLetter(r):
			j := i
			for j < len(rs) && unicode.IsLetter(rs[j]) {
				j++
			}
			if err := sc.word(strings.ToLower(string(rs[i:j])), j < len(rs) && rs[j] == '$'); err != nil {
				return err
			}
			i = j - 1
		default:
			if err := sc.sign(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// word takes a word of an amount: a currency, a multiplier after the
// number, or "US" before "$".
func (sc *amountScanner) word(word string, beforeDollar bool) error {
	sc.lastWord = true
	if word == "us" && beforeDollar {
		return nil
	}
	if code, ok := currencyWords[word]; ok {
		return sc.setCurrency(code)
	}
	if m, ok := multiplierWords[word]; ok && sc.shift == 0 && len(sc.num) > 0 {
		sc.shift = m
		return nil
	}
	return refuse("amount.not_amount")
}

// sign takes a currency sign; any other symbol is no part of an amount.
func (sc *amountScanner) sign(r rune) error {
	code, ok := currencySigns[r]
	if !ok {
		return refuse("amount.not_amount")
	}
	sc.lastWord = false
	return sc.setCurrency(code)
}

func (sc *amountScanner) setCurrency(code string) error {
	if sc.currency != "" && sc.currency != code {
		return refuse("currency.two")
	}
	sc.currency = code
	return nil
}

// canonicalNumber applies the separator rule of Amount: it returns
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

// Currency turns a currency sign, word or code into its ISO 4217 code: "₽",
// "руб.", "рублей" → RUB; "$", "dollars" → USD.
func Currency(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", refuse("currency.not_currency")
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
	if len(s) == 3 && isLatin(s) {
		return strings.ToUpper(s), nil
	}
	return "", refuse("currency.not_currency")
}
