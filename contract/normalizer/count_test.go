package normalizer_test

import (
	"encoding/json"
	"testing"

	"github.com/slotd/slotd/contract/normalizer"
)

func TestInteger(t *testing.T) {
	t.Parallel()
	run(t, func(v any) (any, error) { return result(normalizer.Integer(v)) }, []dirty{
		{raw: "two", want: 2.0},
		{raw: "Two people", want: 2.0},
		{raw: "двое", want: 2.0},
		{raw: "двоє", want: 2.0},
		{raw: "4 человека", want: 4.0},
		{raw: "4", want: 4.0},
		{raw: 4.0, want: 4.0},
		{raw: json.Number("3"), want: 3.0},
		{raw: "на двоих", want: 2.0},
		{raw: "for 3 adults", want: 3.0},
		{raw: "троє дорослих", want: 3.0},
		{raw: "четверо", want: 4.0},
		{raw: "на 4-х", want: 4.0},
		{raw: "2x", want: 2.0},
		{raw: "table for two, please", want: 2.0},
		{raw: "п'ятеро", want: 5.0},
		{raw: "twenty", want: 20.0},
		{raw: "twenty-one", want: 21.0}, // bounds are the schema's
		{raw: "twenty one", want: 21.0},
		{raw: "двадцать один", want: 21.0},
		{raw: "a couple", want: 2.0},
		{raw: "одна", want: 1.0},
		{raw: "0", want: 0.0},
		{raw: "-3", want: -3.0},
		{raw: "2.5", key: "count.not_whole"},
		{raw: 2.5, key: "count.not_whole"},
		{raw: json.Number("2.5"), key: "count.not_whole"},
		{raw: "2 adults and 1 child", key: "count.ambiguous"},
		{raw: "two or three", key: "count.ambiguous"},
		{raw: "1234567890", key: "count.ambiguous"},
		{raw: "4abc", key: "count.not_count"},
		{raw: "many", key: "count.not_count"},
		{raw: true, key: "count.not_count"},
	})
}
