package contract_test

import (
	"strings"
	"testing"

	"github.com/slotd/slotd/contract"
)

// TestValueLabelsRefusedWithTheirPointer: a value_labels member that does
// not fit its enum is refused at load, and the error names the JSON pointer
// of what is wrong.
func TestValueLabelsRefusedWithTheirPointer(t *testing.T) {
	t.Parallel()
	contractWith := func(prop string) string {
		return `{"type": "object", "properties": {"reason": ` + prop + `}, "x-slotd": {"name": "t.labels"}}`
	}
	tests := []struct {
		name string
		prop string
		want []string // substrings of the error
	}{
		{
			name: "a key that is not a value of the enum",
			prop: `{"type": "string", "enum": ["fraud", "duplicate"], "x-slotd": {"value_labels": {
				"fraud": {"en": "fraudulent charge"}, "fruad": {"en": "typo"}}}}`,
			want: []string{"property reason", `"fruad" is not a value of the enum (fraud, duplicate)`, "at '/properties/reason/x-slotd/value_labels/fruad'"},
		},
		{
			name: "labels without an enum",
			prop: `{"type": "string", "x-slotd": {"value_labels": {"fraud": {"en": "fraudulent charge"}}}}`,
			want: []string{"no enum", "at '/properties/reason/x-slotd/value_labels'"},
		},
		{
			name: "not an object",
			prop: `{"type": "string", "enum": ["fraud"], "x-slotd": {"value_labels": ["fraudulent charge"]}}`,
			want: []string{"an object of labels by enum value", "at '/properties/reason/x-slotd/value_labels'"},
		},
		{
			name: "a label that is a text, not texts per locale",
			prop: `{"type": "string", "enum": ["fraud"], "x-slotd": {"value_labels": {"fraud": "fraudulent charge"}}}`,
			want: []string{`the labels of "fraud" are texts per locale`, "at '/properties/reason/x-slotd/value_labels/fraud'"},
		},
		{
			name: "a locale that is not one",
			prop: `{"type": "string", "enum": ["fraud"], "x-slotd": {"value_labels": {"fraud": {"en": "fraudulent charge", "russian": "мошенничество"}}}}`,
			want: []string{`"russian" is not a locale`, "at '/properties/reason/x-slotd/value_labels/fraud/russian'"},
		},
		{
			name: "an unknown language",
			prop: `{"type": "string", "enum": ["fraud"], "x-slotd": {"value_labels": {"fraud": {"xx": "?"}}}}`,
			want: []string{`"xx" is not a locale`, "at '/properties/reason/x-slotd/value_labels/fraud/xx'"},
		},
		{
			name: "an empty label",
			prop: `{"type": "string", "enum": ["fraud"], "x-slotd": {"value_labels": {"fraud": {"ru": " "}}}}`,
			want: []string{"the ru label of \"fraud\" must be a non-empty text", "at '/properties/reason/x-slotd/value_labels/fraud/ru'"},
		},
		{
			name: "a label that is not a text",
			prop: `{"type": "string", "enum": ["fraud"], "x-slotd": {"value_labels": {"fraud": {"ru": 1}}}}`,
			want: []string{"non-empty text", "at '/properties/reason/x-slotd/value_labels/fraud/ru'"},
		},
		{
			name: "a slot name that needs escaping in the pointer",
			prop: `{"type": "string", "enum": ["a/b"], "x-slotd": {"value_labels": {"a/c": {"en": "?"}}}}`,
			want: []string{"at '/properties/reason/x-slotd/value_labels/a~1c'"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := contract.Parse("labels.json", []byte(contractWith(tt.prop)))
			if err == nil {
				t.Fatalf("Parse succeeded with contract %q, want an error mentioning %q", c.Name, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestValueLabel(t *testing.T) {
	t.Parallel()
	reason := shipped(t, "bank.open_dispute").Property("reason")
	tests := []struct {
		value, locale, fallback, want string
	}{
		{"fraud", "ru", "ru", "мошенническая операция"},
		{"fraud", "uk-UA", "ru", "шахрайська операція"},
		{"fraud", "en", "ru", "fraudulent charge"},
		{"duplicate", "ru_RU", "ru", "повторное списание"},
		{"wrong_amount", "de", "ru", "списана неверная сумма"}, // the contract's default locale
		{"not_received", "de", "pl", "goods or services not received"},
		{"chargeback", "ru", "ru", ""}, // not a value: no label
	}
	for _, tt := range tests {
		if got := reason.ValueLabel(tt.value, tt.locale, tt.fallback); got != tt.want {
			t.Errorf("ValueLabel(%q, %q, %q) = %q, want %q", tt.value, tt.locale, tt.fallback, got, tt.want)
		}
	}
	if !reason.HasValueLabels() {
		t.Error("the dispute's reason has no value labels")
	}
	if shipped(t, "bank.open_dispute").Property("amount").HasValueLabels() {
		t.Error("the dispute's amount has value labels")
	}
}

// TestLabelsAreReadBack: a user who was shown a label may say it back; the
// label then means its value.
func TestLabelsAreReadBack(t *testing.T) {
	t.Parallel()
	runNormalize(t, []normalizeCase{
		{name: "the Russian label", slot: "reason", raw: "Мошенническая операция", want: "fraud"},
		{name: "the Ukrainian label", slot: "reason", raw: "повторне списання", want: "duplicate"},
		{name: "the English label", slot: "reason", raw: "Wrong amount charged", want: "wrong_amount"},
		{name: "a synonym still", slot: "reason", raw: "дубль", want: "duplicate"},
	})
}
