package normalizer

import (
	"encoding/json"
	"math"
	"strings"
)

// countWords are the numbers written as words, in ru, uk and en, in the
// forms a count takes: cardinal, collective ("двое", "двоє") and the
// oblique cases that follow a preposition ("на двоих", "для двох").
var countWords = func() map[string]int {
	m := map[string]int{}
	add := func(n int, forms ...string) {
		for _, f := range forms {
			m[f] = n
		}
	}
	add(0, "zero", "none", "ноль", "нуль")
	add(1, "one", "a", "an", "single", "один", "одна", "одно", "одного", "одну", "одной", "одне", "одна", "одному", "одній")
	add(2, "two", "couple", "pair", "both", "два", "две", "двух", "двое", "двоих", "дві", "двох", "двоє", "двом")
	add(3, "three", "три", "трех", "трое", "троих", "трьох", "троє")
	add(4, "four", "четыре", "четырех", "четверо", "четверых", "чотири", "чотирьох", "четверо")
	add(5, "five", "пять", "пяти", "пятеро", "пятерых", "п'ять", "п'ятьох", "п'ятеро", "пять")
	add(6, "six", "шесть", "шести", "шестеро", "шестерых", "шість", "шістьох", "шестеро")
	add(7, "seven", "семь", "семи", "семеро", "семерых", "сім", "сімох", "семеро")
	add(8, "eight", "восемь", "восьми", "восьмеро", "вісім", "вісьмох", "восьмеро")
	add(9, "nine", "девять", "девяти", "девятеро", "дев'ять", "дев'ятьох", "дев'ятеро")
	add(10, "ten", "десять", "десяти", "десятеро", "десятьох")
	add(11, "eleven", "одиннадцать", "одинадцять")
	add(12, "twelve", "dozen", "двенадцать", "дванадцять")
	add(13, "thirteen", "тринадцать", "тринадцять")
	add(14, "fourteen", "четырнадцать", "чотирнадцять")
	add(15, "fifteen", "пятнадцать", "п'ятнадцять")
	add(16, "sixteen", "шестнадцать", "шістнадцять")
	add(17, "seventeen", "семнадцать", "сімнадцять")
	add(18, "eighteen", "восемнадцать", "вісімнадцять")
	add(19, "nineteen", "девятнадцать", "дев'ятнадцять")
	add(20, "twenty", "двадцать", "двадцять")
	add(30, "thirty", "тридцать", "тридцять")
	add(40, "forty", "сорок")
	add(50, "fifty", "пятьдесят", "п'ятдесят")
	add(60, "sixty", "шестьдесят", "шістдесят")
	add(70, "seventy", "семьдесят", "сімдесят")
	add(80, "eighty", "восемьдесят", "вісімдесят")
	add(90, "ninety", "девяносто", "дев'яносто")
	return m
}()

// Integer reads a count: 4, "4", "4 человека", "two people", "двое", "на
// двоих", "двоє дорослих". Exactly one number must be there; "2 adults and 1
// child" is refused as ambiguous rather than summed. The count comes back as
// a JSON number.
func Integer(v any) (float64, error) {
	switch t := v.(type) {
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) || t != math.Trunc(t) {
			return 0, refuse("count.not_whole")
		}
		return t, nil
	case json.Number:
		f, err := t.Float64()
		if err != nil || f != math.Trunc(f) {
			return 0, refuse("count.not_whole")
		}
		return f, nil
	case string:
		n, err := parseCount(t)
		if err != nil {
			return 0, err
		}
		return float64(n), nil
	}
	return 0, refuse("count.not_count")
}

func parseCount(s string) (int, error) {
	key := dateKey(s)
	fields := strings.FieldsFunc(key, func(r rune) bool {
		return r == ' ' || r == ',' || r == '(' || r == ')' || r == ':'
	})
	found := false
	n := 0
	prevTens := false
	for _, f := range fields {
		f = strings.Trim(f, ".!?;")
		if f == "" {
			continue
		}
		neg := false
		if f[0] == '-' || strings.HasPrefix(f, "−") {
			neg = true
			f = strings.TrimPrefix(strings.TrimPrefix(f, "-"), "−")
		}
		if d, rest := leadingDigits(f); d != "" {
			if strings.ContainsAny(rest, ".,") && len(rest) > 1 && isDigitByte(rest[1]) {
				return 0, refuse("count.not_whole")
			}
			if !countSuffix(rest) {
				return 0, refuse("count.not_count")
			}
			if found || len(d) > 9 {
				return 0, refuse("count.ambiguous")
			}
			found, n = true, atoi(d)
			if neg {
				n = -n
			}
			prevTens = false
			continue
		}
		w, ok := countWord(f)
		if !ok {
			prevTens = false
			continue // "people", "человека", "table for": the number is what counts
		}
		if f == "a" || f == "an" {
			continue // an article; "a couple" is counted by "couple"
		}
		if prevTens && w < 10 {
			n += w // "twenty one", "двадцать один"
			prevTens = false
			continue
		}
		if found {
			return 0, refuse("count.ambiguous")
		}
		found, n = true, w
		if neg {
			n = -n
		}
		prevTens = w >= 20 && w%10 == 0
	}
	if !found {
		return 0, refuse("count.not_count")
	}
	return n, nil
}

// countWord reads one written number: "two", "двое", "twenty-one".
func countWord(f string) (int, bool) {
	if n, ok := countWords[f]; ok {
		return n, true
	}
	a, b, cut := strings.Cut(f, "-")
	if !cut {
		return 0, false
	}
	tens, okA := countWords[a]
	units, okB := countWords[b]
	if okA && okB && tensAndUnits(tens, units) {
		return tens + units, true
	}
	return 0, false
}

// tensAndUnits says whether two number words make one: "twenty" and "one",
// "двадцать" and "пять".
func tensAndUnits(tens, units int) bool {
	return tens >= 20 && tens < 100 && tens%10 == 0 && units < 10
}

func leadingDigits(s string) (string, string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

func isDigitByte(b byte) bool { return b >= '0' && b <= '9' }

// countSuffix accepts what may follow the digits of a count: nothing, a
// case ending ("4-х", "2-ое") or "x" ("2x").
func countSuffix(rest string) bool {
	switch strings.TrimPrefix(rest, "-") {
	case "", "х", "х.", "x", "ти", "ем", "ох", "ух", "ое", "е", "ро", "ро.", "pax", "чел", "ос":
		return true
	}
	return false
}
