package normalizer_test

import (
	"testing"

	"github.com/slotd/slotd/contract/normalizer"
)

func lastDigits(n int) parser {
	return func(v any) (any, error) { return result(normalizer.LastDigits(v, n)) }
}

func TestLastDigits(t *testing.T) {
	t.Parallel()
	run(t, lastDigits(4), []dirty{
		{raw: "•• 4417", want: "4417"},
		{raw: "**** **** **** 4417", want: "4417"},
		{raw: "карта 4417", want: "4417"},
		{raw: "card ending in 4417", want: "4417"},
		{raw: "4276 1234 5678 4417", want: "4417"},
		{raw: "4276-1234-5678-4417", want: "4417"},
		{raw: "*4417", want: "4417"},
		{raw: "Visa •••• 4417", want: "4417"},
		{raw: "44\u200b17", want: "4417"},
		{raw: "12.08 карта 4417", want: "4417"}, // a date elsewhere is not mixed in
		{raw: "картка, що закінчується на 4417.", want: "4417"},
		{raw: 4417.0, want: "4417"},
		{raw: 17.0, want: "0017"},
		{raw: "44", key: "digits.found", args: normalizer.Args{"found": 2, "need": 4}},
		{raw: "моя карта", key: "digits.found", args: normalizer.Args{"found": 0, "need": 4}},
		{raw: "44, 17", key: "digits.found", args: normalizer.Args{"found": 2, "need": 4}}, // a comma ends a group: "17" is the last
		{raw: 44.17, key: "digits.not_digits", args: normalizer.Args{"digits": 4}},
		{raw: -4417.0, key: "digits.not_digits", args: normalizer.Args{"digits": 4}},
		{raw: 1e20, key: "digits.not_digits", args: normalizer.Args{"digits": 4}},
		{raw: false, key: "digits.not_digits", args: normalizer.Args{"digits": 4}},
	})
	run(t, lastDigits(6), []dirty{
		{raw: "счёт 40817810000000123456", want: "123456"},
		{raw: "№ 123456", want: "123456"},
		{raw: "123456", want: "123456"},
		{raw: "40817 810 000 000 123456", want: "123456"},
		{raw: 123456.0, want: "123456"},
		{raw: 17.0, want: "000017"},
		{raw: "acct ending 9 123456", want: "123456"},
		{raw: "00 1234", want: "001234"},
		{raw: "x1234567", want: "234567"},
		{raw: "a 123456 b", want: "123456"},
		{raw: "9123456", want: "123456"},
		{raw: "•• 4417", key: "digits.found", args: normalizer.Args{"found": 4, "need": 6}},
		{raw: "", key: "digits.found", args: normalizer.Args{"found": 0, "need": 6}},
		{raw: "12345", key: "digits.found", args: normalizer.Args{"found": 5, "need": 6}},
		{raw: true, key: "digits.not_digits", args: normalizer.Args{"digits": 6}},
	})
}

var (
	reasons  = []string{"duplicate", "fraud", "not_received", "wrong_amount"}
	synonyms = map[string][]string{
		"duplicate":    {"дубль", "двойное списание", "списали дважды", "двічі списали"},
		"fraud":        {"не я", "мошенничество", "шахрайство"},
		"wrong_amount": {"не та сумма"},
	}
)

func TestEnum(t *testing.T) {
	t.Parallel()
	e := normalizer.NewEnum(reasons, synonyms)
	run(t, func(v any) (any, error) { return e.Match(v), nil }, []dirty{
		{raw: "duplicate", want: "duplicate"},
		{raw: "Duplicate", want: "duplicate"},
		{raw: " DUPLICATE ", want: "duplicate"},
		{raw: "not-received", want: "not_received"},
		{raw: "Not Received", want: "not_received"},
		{raw: "wrong amount", want: "wrong_amount"},
		{raw: "WRONG-AMOUNT", want: "wrong_amount"},
		{raw: "dupli\u200bcate", want: "duplicate"},
		{raw: "'duplicate'", want: "duplicate"},
		{raw: "not_received.", want: "not_received"},
		{raw: "дубль", want: "duplicate"},
		{raw: "двойное списание", want: "duplicate"},
		{raw: "Двойное\u00a0Списание", want: "duplicate"},
		{raw: "списали дважды", want: "duplicate"},
		{raw: "двічі списали", want: "duplicate"},
		{raw: "не я", want: "fraud"},
		{raw: "Мошенничество", want: "fraud"},
		{raw: "не та сумма", want: "wrong_amount"},
		{raw: "не та сумма!", want: "wrong_amount"},
		{raw: "chargeback", want: "chargeback"}, // no match: the schema refuses it with the allowed values
		{raw: 3.0, want: 3.0},
		{raw: []any{"duplicate"}, want: []any{"duplicate"}},
	})
}

func TestEnumFoldsYo(t *testing.T) {
	t.Parallel()
	e := normalizer.NewEnum([]string{"ёлка", "other"}, map[string][]string{"other": {"всё равно"}})
	for raw, want := range map[string]string{"елка": "ёлка", "ЁЛКА": "ёлка", "все равно": "other", "Всё-равно": "other"} {
		if got := e.Match(raw); got != want {
			t.Errorf("Match(%q) = %v, want %s", raw, got, want)
		}
	}
	if got := normalizer.NewEnum(nil, nil).Match("x"); got != "x" {
		t.Errorf("an empty enum changed a value to %v", got)
	}
}

func TestIATA(t *testing.T) {
	t.Parallel()
	run(t, func(v any) (any, error) { return result(normalizer.IATA(v)) }, []dirty{
		{raw: "mad", want: "MAD"},
		{raw: "MAD", want: "MAD"},
		{raw: " kbp ", want: "KBP"},
		{raw: "Lhr", want: "LHR"},
		{raw: "\u00a0jfk\u200b", want: "JFK"},
		{raw: "Madrid (MAD)", want: "MAD"},
		{raw: "MAD - Madrid Barajas", want: "MAD"},
		{raw: "Kyiv Boryspil (KBP)", want: "KBP"},
		{raw: "JFK airport", want: "JFK"},
		{raw: "MAD or MAD", want: "MAD"},
		{raw: "Madrid", key: "iata.city"},
		{raw: "Kyiv", key: "iata.city"},
		{raw: "Мадрид", key: "iata.city"},
		{raw: "МАД", key: "iata.city"},
		{raw: "KB", key: "iata.city"},
		{raw: "MAD or BCN", key: "iata.city"},
		{raw: 123.0, key: "iata.not_text"},
	})
}
