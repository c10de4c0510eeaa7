package normalizer_test

import (
	"encoding/json"
	"testing"

	"github.com/slotd/slotd/contract/normalizer"
)

func amount(o normalizer.AmountOptions) parser {
	return func(v any) (any, error) { return result(normalizer.Amount(v, o)) }
}

func TestAmount(t *testing.T) {
	t.Parallel()
	run(t, amount(normalizer.AmountOptions{Scale: 2}), []dirty{
		{raw: "1 200,50 ₽", want: "1200.50"},
		{raw: "1\u00a0200,50\u00a0₽", want: "1200.50"},
		{raw: "1\u202f200 ₽", want: "1200.00"},
		{raw: "1,200.50", want: "1200.50"},
		{raw: "1.200,50 €", want: "1200.50"},
		{raw: "1200.5 руб.", want: "1200.50"},
		{raw: "руб. 1 200", want: "1200.00"}, // the stop of an abbreviation is no separator
		{raw: "1 340 рублей", want: "1340.00"},
		{raw: "$1,200", want: "1200.00"},
		{raw: "1 200 грн", want: "1200.00"},
		{raw: "1.200 ₽", want: "1200.00"}, // one separator before three digits groups thousands, "." or ","
		{raw: "1,200", want: "1200.00"},
		{raw: "1200.500", want: "1200.50"}, // the scale of the options: no needless re-confirmation
		{raw: "1,2 тыс. руб", want: "1200.00"},
		{raw: "5k", want: "5000.00"},
		{raw: "2 млн", want: "2000000.00"},
		{raw: "RUB 99,9", want: "99.90"},
		{raw: "US$ 15", want: "15.00"},
		{raw: "1'200.50", want: "1200.50"},
		{raw: "12,5", want: "12.50"},
		{raw: "1\u200b200", want: "1200.00"},
		{raw: "-5", want: "-5.00"}, // bounds are the schema's
		{raw: "+5", want: "5.00"},
		{raw: "0", want: "0.00"},
		{raw: 1200.5, want: "1200.50"},
		{raw: json.Number("1200.50"), want: "1200.50"},
		{raw: 0.1, want: "0.10"},
		{raw: "1200.505", key: "amount.decimals", args: normalizer.Args{"decimals": int32(2)}},
		{raw: "1 200 50", key: "amount.not_amount"},
		{raw: "1.2.3", key: "amount.not_amount"},
		{raw: "1,200,5", key: "amount.not_amount"},
		{raw: "двести", key: "amount.not_amount"},
		{raw: "₽", key: "amount.not_amount"},
		{raw: "--5", key: "amount.not_amount"},
		{raw: "5-", key: "amount.not_amount"},
		{raw: "5 тыс. тыс.", key: "amount.not_amount"},
		{raw: "5 #", key: "amount.not_amount"},
		{raw: "$5 €", key: "currency.two"},
		{raw: "5 долларов евро", key: "currency.two"},
		{raw: true, key: "amount.not_number"},
		{raw: json.Number("x"), key: "amount.not_number"},
	})
}

func TestAmountInOneCurrency(t *testing.T) {
	t.Parallel()
	run(t, amount(normalizer.AmountOptions{Scale: 2, Currency: "RUB"}), []dirty{
		{raw: "1 200,50 ₽", want: "1200.50"},
		{raw: "1200.5 руб.", want: "1200.50"},
		{raw: "RUB 99,9", want: "99.90"},
		{raw: "99", want: "99.00"},
		{raw: "0", want: "0.00"},
		{raw: "-1 200,50 ₽", want: "-1200.50"},
		{raw: "1 200 рублей", want: "1200.00"},
		{raw: "1,2 тыс. руб", want: "1200.00"},
		{raw: 1340.0, want: "1340.00"},
		{raw: "₽ 5", want: "5.00"},
		{raw: "$1,200", key: "currency.wrong", args: normalizer.Args{"currency": "USD", "accepted": "RUB"}},
		{raw: "1 200 грн", key: "currency.wrong", args: normalizer.Args{"currency": "UAH", "accepted": "RUB"}},
		{raw: "1.200,50 €", key: "currency.wrong", args: normalizer.Args{"currency": "EUR", "accepted": "RUB"}},
		{raw: "5 dollars", key: "currency.wrong", args: normalizer.Args{"currency": "USD", "accepted": "RUB"}},
		{raw: "5 CHF", key: "currency.wrong", args: normalizer.Args{"currency": "CHF", "accepted": "RUB"}},
	})
}

func TestAmountWhole(t *testing.T) {
	t.Parallel()
	run(t, amount(normalizer.AmountOptions{Scale: 0, Currency: "JPY"}), []dirty{
		{raw: "1,200 JPY", want: "1200"},
		{raw: "1200", want: "1200"},
		{raw: "1200.00", want: "1200"},
		{raw: "1 200", want: "1200"},
		{raw: "5k", want: "5000"},
		{raw: 12.0, want: "12"},
		{raw: json.Number("12"), want: "12"},
		{raw: "¥ 300", key: "currency.wrong", args: normalizer.Args{"currency": "CNY", "accepted": "JPY"}},
		{raw: "12.50", key: "amount.whole"},
		{raw: "12,5", key: "amount.whole"},
		{raw: 12.5, key: "amount.whole"},
		{raw: "0.1", key: "amount.whole"},
		{raw: "1.2 тыс", want: "1200"},
		{raw: "x", key: "amount.not_amount"},
		{raw: nil, key: "amount.not_number"},
	})
}

func TestCurrencyOf(t *testing.T) {
	t.Parallel()
	for raw, want := range map[any]string{
		"$1,200": "USD", "1 200 рублей": "RUB", "€ 99": "EUR", "1000 ₸": "KZT", "99": "", "$5 €": "", 5.0: "",
		"\u200b1 200 грн\u00a0": "UAH",
	} {
		if got := normalizer.CurrencyOf(raw); got != want {
			t.Errorf("CurrencyOf(%#v) = %q, want %q", raw, got, want)
		}
	}
}

func TestCurrency(t *testing.T) {
	t.Parallel()
	run(t, func(v any) (any, error) { return result(normalizer.Currency(v)) }, []dirty{
		{raw: "₽", want: "RUB"},
		{raw: "руб.", want: "RUB"},
		{raw: "рублей", want: "RUB"},
		{raw: "rub", want: "RUB"},
		{raw: "$", want: "USD"},
		{raw: "Dollars", want: "USD"},
		{raw: "usd", want: "USD"},
		{raw: "€", want: "EUR"},
		{raw: "евро", want: "EUR"},
		{raw: "євро", want: "EUR"},
		{raw: "грн", want: "UAH"},
		{raw: "гривні", want: "UAH"},
		{raw: "₴", want: "UAH"},
		{raw: "£", want: "GBP"},
		{raw: " Uah ", want: "UAH"},
		{raw: "JPY", want: "JPY"}, // whether the slot takes it is the schema's to say
		{raw: "money", key: "currency.not_currency"},
		{raw: "€€", key: "currency.not_currency"},
		{raw: "ру", key: "currency.not_currency"},
		{raw: 5.0, key: "currency.not_currency"},
	})
}
