package normalizer_test

import (
	"testing"

	"github.com/slotd/slotd/contract/normalizer"
)

func TestTime(t *testing.T) {
	t.Parallel()
	run(t, func(v any) (any, error) { return result(normalizer.Time(v)) }, []dirty{
		{raw: "6:15 pm", want: "18:15"},
		{raw: "6:15PM", want: "18:15"},
		{raw: "19:30", want: "19:30"},
		{raw: "1930", want: "19:30"},
		{raw: "7 вечера", want: "19:00"},
		{raw: "в половине седьмого вечера", want: "18:30"},
		{raw: "полседьмого", want: "06:30"},
		{raw: "пол-седьмого", want: "06:30"},
		{raw: "о 19:30", want: "19:30"},
		{raw: "о пів на сьому вечора", want: "18:30"},
		{raw: "о сьомій", want: "07:00"},
		{raw: "half past 6 in the evening", want: "18:30"},
		{raw: "2 o'clock in the afternoon", want: "14:00"},
		{raw: "noon", want: "12:00"},
		{raw: "midnight", want: "00:00"},
		{raw: "полдень", want: "12:00"},
		{raw: "12 am", want: "00:00"},
		{raw: "12 p.m.", want: "12:00"},
		{raw: "11 ночи", want: "23:00"},
		{raw: "2 ночи", want: "02:00"},
		{raw: "12 ночи", want: "00:00"},
		{raw: "в 3 дня", want: "15:00"},
		{raw: "quarter to 8", want: "07:45"},
		{raw: "quarter past 8", want: "08:15"},
		{raw: "ten to 8", want: "07:50"},
		{raw: "без четверти восемь", want: "07:45"},
		{raw: "без десяти семь", want: "06:50"},
		{raw: "четверть восьмого", want: "07:15"},
		{raw: "ten past six", want: "06:10"},
		{raw: "seven thirty pm", want: "19:30"},
		{raw: "seven forty-five", want: "07:45"},
		{raw: "семь сорок пять", want: "07:45"},
		{raw: "19.30", want: "19:30"},
		{raw: "7:05 a.m.", want: "07:05"},
		{raw: "quarter to zero", want: "11:45"},
		{raw: "25:00", key: "time.no_such"},
		{raw: "7:75", key: "time.no_such"},
		{raw: "19:00 утра", key: "time.no_such"},
		{raw: "7 утра вечера", key: "time.not_time"},
		{raw: "asap", key: "time.not_time"},
		{raw: "half past", key: "time.not_time"},
		{raw: 1930.0, key: "time.not_text"},
	})
}
