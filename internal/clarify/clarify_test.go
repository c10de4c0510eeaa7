package clarify_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/merge"
	"github.com/slotd/slotd/problem"
)

var reasons = []string{"duplicate", "fraud", "not_received", "wrong_amount"}

func shipped(t *testing.T, name string) *contract.Contract {
	t.Helper()
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		t.Fatalf("LoadDir(../contracts): %v", err)
	}
	c := cat.Get(name)
	if c == nil {
		t.Fatalf("contract %s is not shipped; have %v", name, cat.Names())
	}
	return c
}

func mustParse(t *testing.T, src string) *contract.Contract {
	t.Helper()
	c, err := contract.Parse("inline.json", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

// dispute is a complete bank.open_dispute slot object with overrides; a nil
// override removes the slot.
func dispute(over map[string]any) map[string]any {
	s := map[string]any{
		"card_last4":     "4417",
		"operation_date": "2026-08-22",
		"amount":         "1200.50",
		"reason":         "fraud",
	}
	for k, v := range over {
		if v == nil {
			delete(s, k)
			continue
		}
		s[k] = v
	}
	return s
}

// input is what the turn engine hands Decide: the report is the contract's
// real check of the slots.
func input(c *contract.Contract, locale string, slots, pending map[string]any) clarify.Input {
	st := merge.State{Slots: slots, Pending: pending}
	return clarify.Input{Contract: c, State: st, Report: c.Check(slots), Locale: locale}
}

// wantStep is what a Step must be; empty members are not checked, except
// that noQuestion demands a nil Question.
type wantStep struct {
	action     clarify.Action
	slot       string
	text       string // exactly, when set
	allowed    []string
	old, new   any
	noQuestion bool
	violations []string // pointers
}

func checkStep(t *testing.T, got clarify.Step, want wantStep) {
	t.Helper()
	if got.Action != want.action {
		t.Fatalf("action = %s (question %+v, violations %v), want %s", got.Action, got.Question, got.Violations, want.action)
	}
	if want.noQuestion {
		if got.Question != nil {
			t.Errorf("question = %+v, want none", *got.Question)
		}
	} else if got.Question == nil {
		t.Fatalf("no question, want one about %q", want.slot)
	} else {
		q := got.Question
		if q.Slot != want.slot {
			t.Errorf("question slot = %q, want %q", q.Slot, want.slot)
		}
		if want.text != "" && q.Text != want.text {
			t.Errorf("question text:\n got %q\nwant %q", q.Text, want.text)
		}
		if !reflect.DeepEqual(q.Allowed, want.allowed) {
			t.Errorf("allowed values = %q, want %q", q.Allowed, want.allowed)
		}
		if !reflect.DeepEqual(q.Old, want.old) || !reflect.DeepEqual(q.New, want.new) {
			t.Errorf("old, new = %#v, %#v; want %#v, %#v", q.Old, q.New, want.old, want.new)
		}
	}
	var ptrs []string
	for _, v := range got.Violations {
		ptrs = append(ptrs, v.Pointer)
	}
	if !reflect.DeepEqual(ptrs, want.violations) {
		t.Errorf("violations = %v, want pointers %q", got.Violations, want.violations)
	}
}

func TestDecideOrder(t *testing.T) {
	t.Parallel()
	bank := shipped(t, "bank.open_dispute")
	flights := shipped(t, "travel.search_flights")
	tests := []struct {
		name string
		in   clarify.Input
		want wantStep
	}{
		{
			name: "a pending change comes before everything, first in contract order",
			in: func() clarify.Input {
				in := input(bank, "ru", dispute(map[string]any{"reason": "chargeback", "operation_date": nil}),
					map[string]any{"amount": "1340.00", "card_last4": "5521"})
				in.Rejected = []string{"reason"}
				return in
			}(),
			want: wantStep{
				action: clarify.Reconfirm, slot: "card_last4",
				text: "Карта: было 4417, теперь 5521. Заменить?",
				old:  "4417", new: "5521",
			},
		},
		{
			name: "a pending amount shows old and new amounts",
			in:   input(bank, "ru", dispute(nil), map[string]any{"amount": "1340.00"}),
			want: wantStep{
				action: clarify.Reconfirm, slot: "amount",
				text: "Сумма: было 1200.50, теперь 1340.00. Заменить?",
				old:  "1200.50", new: "1340.00",
			},
		},
		{
			name: "a pending change in English",
			in:   input(bank, "en-US", dispute(nil), map[string]any{"card_last4": "5521"}),
			want: wantStep{
				action: clarify.Reconfirm, slot: "card_last4",
				text: "Card: it was 4417, now 5521. Shall I change it?",
				old:  "4417", new: "5521",
			},
		},
		{
			name: "a pending slot the contract does not know is skipped",
			in:   input(bank, "ru", dispute(nil), map[string]any{"card_number": "5521"}),
			want: wantStep{action: clarify.Confirm,
				text: "Открываю спор по карте •• 4417: операция от 22 августа 2026 на 1200.50 ₽, причина — мошенническая операция. Всё верно?"},
		},
		{
			name: "a value refused this turn is asked again before a missing one",
			in: func() clarify.Input {
				in := input(bank, "ru", dispute(map[string]any{"operation_date": nil}), nil)
				in.Rejected = []string{"reason", "amount"}
				return in
			}(),
			want: wantStep{action: clarify.Ask, slot: "amount", text: "На какую сумму была операция?"},
		},
		{
			name: "a refused enum value is asked again with the allowed values",
			in: func() clarify.Input {
				in := input(bank, "ru", dispute(map[string]any{"reason": nil}), nil)
				in.Rejected = []string{"reason"}
				return in
			}(),
			want: wantStep{
				action: clarify.Ask, slot: "reason", allowed: reasons,
				text: "Что случилось с операцией на 1200.50 ₽: списали дважды, вы её не совершали, не получили оплаченное или сумма не та?",
			},
		},
		{
			name: "a refused argument the contract lacks is not asked about",
			in: func() clarify.Input {
				in := input(bank, "ru", dispute(map[string]any{"reason": nil}), nil)
				in.Rejected = []string{"card_number"}
				return in
			}(),
			want: wantStep{action: clarify.Ask, slot: "reason", allowed: reasons},
		},
		{
			name: "nothing yet: the first slot in contract order",
			in:   input(bank, "ru", map[string]any{}, nil),
			want: wantStep{action: clarify.Ask, slot: "card_last4",
				text: "По какой карте прошла операция? Назовите последние четыре цифры."},
		},
		{
			name: "the first missing in contract order, with the card filled in",
			in:   input(bank, "ru", dispute(map[string]any{"operation_date": nil, "reason": nil}), nil),
			want: wantStep{action: clarify.Ask, slot: "operation_date", text: "Когда прошла операция по карте •• 4417?"},
		},
		{
			name: "a conditionally required slot is asked, not repaired",
			in:   input(bank, "ru", dispute(map[string]any{"reason": "duplicate"}), nil),
			want: wantStep{action: clarify.Ask, slot: "original_operation_id",
				text: "Какая из двух операций по карте •• 4417 была первой? Назовите её номер из выписки."},
		},
		{
			name: "a failed rule with every slot present is a REPAIR of that slot",
			in:   input(bank, "ru", dispute(map[string]any{"reason": "chargeback"}), nil),
			want: wantStep{action: clarify.Repair, slot: "reason", allowed: reasons, violations: []string{"/reason"}},
		},
		{
			name: "a rule of the whole object: REPAIR without a question",
			in: clarify.Input{
				Contract: bank, Locale: "ru", State: merge.State{Slots: dispute(nil)},
				Report: contract.Report{Violations: []problem.FieldError{{Pointer: "", Message: "additional properties 'x' not allowed"}}},
			},
			want: wantStep{action: clarify.Repair, noQuestion: true, violations: []string{""}},
		},
		{
			name: "REPAIR asks about the first violation that names a slot",
			in: clarify.Input{
				Contract: bank, Locale: "en", State: merge.State{Slots: dispute(nil)},
				Report: contract.Report{Violations: []problem.FieldError{
					{Pointer: "", Message: "additional properties 'x' not allowed"},
					{Pointer: "/nope/0", Message: "?"},
					{Pointer: "/amount", Message: "exclusiveMinimum"},
					{Pointer: "/reason", Message: "must be one of"},
				}},
			},
			want: wantStep{action: clarify.Repair, slot: "amount", text: "What was the amount of the operation?",
				violations: []string{"", "/nope/0", "/amount", "/reason"}},
		},
		{
			name: "all valid, an action, not approved: CONFIRM with the summary",
			in:   input(bank, "ru", dispute(nil), nil),
			want: wantStep{action: clarify.Confirm,
				text: "Открываю спор по карте •• 4417: операция от 22 августа 2026 на 1200.50 ₽, причина — мошенническая операция. Всё верно?"},
		},
		{
			name: "approved: READY",
			in: func() clarify.Input {
				in := input(bank, "ru", dispute(nil), nil)
				in.Approved = true
				return in
			}(),
			want: wantStep{action: clarify.Ready, noQuestion: true},
		},
		{
			name: "approval does not skip a pending change",
			in: func() clarify.Input {
				in := input(bank, "ru", dispute(nil), map[string]any{"amount": "1340.00"})
				in.Approved = true
				return in
			}(),
			want: wantStep{action: clarify.Reconfirm, slot: "amount", old: "1200.50", new: "1340.00"},
		},
		{
			name: "approval does not skip a missing slot",
			in: func() clarify.Input {
				in := input(bank, "ru", dispute(map[string]any{"reason": "duplicate"}), nil)
				in.Approved = true
				return in
			}(),
			want: wantStep{action: clarify.Ask, slot: "original_operation_id"},
		},
		{
			name: "not an action: READY without approval",
			in:   input(flights, "uk", map[string]any{"from": "MAD", "to": "KBP", "date": "2026-08-25"}, nil),
			want: wantStep{action: clarify.Ready, noQuestion: true},
		},
		{
			name: "flights: the first missing, with the departure airport filled in",
			in:   input(flights, "uk", map[string]any{"from": "MAD", "date": "2026-08-25"}, nil),
			want: wantStep{action: clarify.Ask, slot: "to", text: "До якого аеропорту летимо з MAD?"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkStep(t, clarify.Decide(tt.in), tt.want)
		})
	}
}

func TestDecideIsPure(t *testing.T) {
	t.Parallel()
	bank := shipped(t, "bank.open_dispute")
	mk := func() clarify.Input {
		in := input(bank, "ru", dispute(map[string]any{"reason": "duplicate"}), map[string]any{"amount": "1340.00"})
		in.Rejected = []string{"reason"}
		return in
	}
	in, untouched := mk(), mk()
	first := clarify.Decide(in)
	second := clarify.Decide(in)
	if !reflect.DeepEqual(first, second) {
		t.Errorf("the same input gave two steps:\n%+v\n%+v", first, second)
	}
	if !reflect.DeepEqual(in, untouched) {
		t.Errorf("Decide changed its input:\n got %+v\nwant %+v", in, untouched)
	}
}

func TestDecideReconfirmsInContractOrder(t *testing.T) {
	t.Parallel()
	// Pending is a map: its order is random on every range, so ask many
	// times. The first pending slot in contract order must always win.
	bank := shipped(t, "bank.open_dispute")
	in := input(bank, "en", dispute(nil), map[string]any{
		"reason": "duplicate", "amount": "1340.00", "card_last4": "5521", "operation_date": "2026-08-21",
	})
	for i := range 50 {
		step := clarify.Decide(in)
		if step.Action != clarify.Reconfirm || step.Question == nil || step.Question.Slot != "card_last4" {
			t.Fatalf("try %d: step %+v (question %+v), want RECONFIRM of card_last4", i, step, step.Question)
		}
	}
}

func TestQuestionWording(t *testing.T) {
	t.Parallel()
	bank := shipped(t, "bank.open_dispute")
	flights := shipped(t, "travel.search_flights")
	inline := mustParse(t, `{
		"type": "object",
		"properties": {
			"flight": {"type": "string", "x-slotd": {"label": {"en": "flight", "ru": "рейс"}}},
			"seat":   {"type": "string", "x-slotd": {"ask": {
				"en": "Which seat would you like[ on flight {flight}][ in {cabin} class]?",
				"ru": "Какое место[ на рейсе {flight}] вы хотите?"
			}}},
			"cabin":  {"type": "string", "enum": ["economy", "business"], "x-slotd": {
				"label": {"en": "cabin class"},
				"ask":   {"en": "Economy or business[ for {passenger}, seat {seat}]?"}
			}},
			"passengers": {"type": "integer", "minimum": 1},
			"meal":   {"type": "string", "x-slotd": {"label": {"en": "meal", "ru": "питание"},
				"ask": {"en": "Any meal wishes[ for {unknown_thing}]? Your code: {promo}."}}}
		},
		"x-slotd": {"name": "t.seat", "default_locale": "en"}
	}`)
	tests := []struct {
		name    string
		c       *contract.Contract
		locale  string
		slots   map[string]any
		slot    string
		text    string
		allowed []string
		format  string // substring
	}{
		{
			name: "by meaning with a placeholder filled", c: bank, locale: "ru",
			slots: dispute(nil), slot: "operation_date", text: "Когда прошла операция по карте •• 4417?",
			format: "YYYY-MM-DD",
		},
		{
			name: "the same in English", c: bank, locale: "en",
			slots: dispute(nil), slot: "operation_date", text: "When did the operation on the card •• 4417 happen?",
		},
		{
			name: "a regional locale uses its language", c: bank, locale: "en-GB",
			slots: dispute(nil), slot: "amount", text: "What was the amount of the operation?", format: "roubles",
		},
		{
			name: "a locale the contract lacks falls back to its default locale", c: bank, locale: "de",
			slots: dispute(nil), slot: "amount", text: "На какую сумму была операция?",
		},
		{
			name: "no locale: the default", c: bank, locale: "",
			slots: dispute(nil), slot: "card_last4", text: "По какой карте прошла операция? Назовите последние четыре цифры.",
			format: "last four digits",
		},
		{
			name: "ru on a Ukrainian contract: its default locale", c: flights, locale: "ru",
			slots: map[string]any{"from": "MAD", "to": "KBP"}, slot: "date", text: "Якого дня ви хочете летіти з MAD до KBP?",
		},
		{
			name: "an enum slot lists its allowed values and no format", c: bank, locale: "en",
			slots: dispute(nil), slot: "reason", allowed: reasons,
			text: "What went wrong with the 1200.50 operation: charged twice, not made by you, paid but not received, or a wrong amount?",
		},
		{
			name: "an empty slot in a placeholder outside brackets is an ellipsis", c: flights, locale: "uk",
			slots: map[string]any{}, slot: "to", text: "До якого аеропорту летимо з …?",
		},
		{
			name: "ru→en: a contract with only an English question", c: inline, locale: "ru",
			slots: map[string]any{}, slot: "cabin", allowed: []string{"economy", "business"},
			text: "Economy or business?",
		},
		{
			name: "optional segments dropped when their slot is empty", c: inline, locale: "en",
			slots: map[string]any{}, slot: "seat", text: "Which seat would you like?",
		},
		{
			name: "optional segments kept when their slot is filled", c: inline, locale: "en",
			slots: map[string]any{"flight": "IB3101", "cabin": "business"}, slot: "seat",
			text: "Which seat would you like on flight IB3101 in business class?",
		},
		{
			name: "only the segment whose slot is empty is dropped", c: inline, locale: "en",
			slots: map[string]any{"cabin": "economy"}, slot: "seat",
			text: "Which seat would you like in economy class?",
		},
		{
			name: "a segment naming something that is not a slot is dropped", c: inline, locale: "en",
			slots: map[string]any{"seat": "12A"}, slot: "cabin", allowed: []string{"economy", "business"},
			text: "Economy or business?",
		},
		{
			name: "an optional segment in Russian", c: inline, locale: "ru-RU",
			slots: map[string]any{"flight": "SU100"}, slot: "seat", text: "Какое место на рейсе SU100 вы хотите?",
		},
		{
			name: "a placeholder outside brackets that names no slot stays as written", c: inline, locale: "en",
			slots: map[string]any{}, slot: "meal", text: "Any meal wishes? Your code: {promo}.",
		},
		{
			name: "no question in the contract: slotd's own, with the label", c: inline, locale: "ru",
			slots: map[string]any{}, slot: "flight", text: "Уточните, пожалуйста: рейс.",
		},
		{
			name: "no question and no label: slotd's own, with the name", c: inline, locale: "de",
			slots: map[string]any{}, slot: "passengers", text: "Please tell me the passengers.",
		},
		{
			name: "no question, Ukrainian", c: inline, locale: "uk-UA",
			slots: map[string]any{}, slot: "flight", text: "Уточніть, будь ласка: flight.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := clarify.Input{Contract: tt.c, State: merge.State{Slots: tt.slots}, Locale: tt.locale}
			// A slot whose value was refused is asked again, first of all.
			in.Rejected = []string{tt.slot}
			q := clarify.Decide(in).Question
			if q == nil {
				t.Fatalf("no question for %s", tt.slot)
			}
			if q.Slot != tt.slot {
				t.Errorf("slot = %q, want %q", q.Slot, tt.slot)
			}
			if q.Text != tt.text {
				t.Errorf("text:\n got %q\nwant %q", q.Text, tt.text)
			}
			if strings.Contains(q.Text, tt.slot) && tt.c.Property(tt.slot).Label(tt.locale, tt.c.DefaultLocale) != tt.slot {
				t.Errorf("the question names the field %q instead of asking by meaning: %q", tt.slot, q.Text)
			}
			if !reflect.DeepEqual(q.Allowed, tt.allowed) {
				t.Errorf("allowed = %q, want %q", q.Allowed, tt.allowed)
			}
			if tt.allowed != nil && q.Format != "" {
				t.Errorf("format = %q for an enum slot, want none beside the allowed values", q.Format)
			}
			if !strings.Contains(q.Format, tt.format) {
				t.Errorf("format = %q, want it to contain %q", q.Format, tt.format)
			}
		})
	}
}

func TestConfirmSummary(t *testing.T) {
	t.Parallel()
	bank := shipped(t, "bank.open_dispute")
	plain := mustParse(t, `{
		"type": "object",
		"properties": {
			"to":     {"type": "string", "x-slotd": {"label": {"en": "recipient", "ru": "получатель"}}},
			"amount": {"type": "string", "x-slotd": {"label": {"en": "amount", "ru": "сумма"}}},
			"note":   {"type": "string"}
		},
		"required": ["to", "amount"],
		"x-slotd": {"name": "t.pay", "confirm": true}
	}`)
	labelled := mustParse(t, `{
		"type": "object",
		"properties": {
			"day":    {"type": "string", "format": "date", "x-slotd": {"label": {"en": "day", "ru": "день", "uk": "день"}}},
			"kind":   {"type": "string", "enum": ["card", "cash"], "x-slotd": {
				"label": {"en": "method", "ru": "способ", "uk": "спосіб"},
				"value_labels": {"card": {"en": "by card", "ru": "картой", "uk": "карткою"}}
			}},
			"urgent": {"type": "boolean", "x-slotd": {"label": {"en": "urgent", "ru": "срочно", "uk": "терміново"}}}
		},
		"x-slotd": {"name": "t.labelled", "confirm": true}
	}`)
	tests := []struct {
		name   string
		c      *contract.Contract
		locale string
		slots  map[string]any
		text   string
	}{
		{
			name: "the contract's summary in Russian", c: bank, locale: "ru",
			slots: dispute(map[string]any{"reason": "duplicate", "original_operation_id": "OP-1"}),
			text:  "Открываю спор по карте •• 4417: операция от 22 августа 2026 на 1200.50 ₽, причина — повторное списание. Всё верно?",
		},
		{
			name: "the contract's summary in Ukrainian", c: bank, locale: "uk-UA",
			slots: dispute(map[string]any{"reason": "not_received", "operation_date": "2026-11-22"}),
			text:  "Відкриваю спір щодо картки •• 4417: операція від 22 листопада 2026 на 1200.50 ₽, причина — товар або послугу не отримано. Усе правильно?",
		},
		{
			name: "the contract's summary in English", c: bank, locale: "en",
			slots: dispute(map[string]any{"operation_date": "2026-11-22"}),
			text:  "I am opening a dispute for the card •• 4417: the operation of 1200.50 on 22 November 2026, reason: fraudulent charge. Is that right?",
		},
		{
			name: "a locale the contract lacks: the default locale's summary and labels", c: bank, locale: "de",
			slots: dispute(map[string]any{"reason": "wrong_amount", "operation_date": "2026-01-05"}),
			text:  "Открываю спор по карте •• 4417: операция от 5 января 2026 на 1200.50 ₽, причина — списана неверная сумма. Всё верно?",
		},
		{
			name: "slotd's summary: labels and long dates too", c: labelled, locale: "uk",
			slots: map[string]any{"day": "2026-03-01", "kind": "card", "urgent": true},
			text:  "Перевірте, чи все правильно: день: 1 березня 2026; спосіб: карткою; терміново: так.",
		},
		{
			name: "slotd's summary in English: a value without a label is shown as it is", c: labelled, locale: "en",
			slots: map[string]any{"day": "2026-12-31", "kind": "cash", "urgent": false},
			text:  "Please check that this is right: day: 31 December 2026; method: cash; urgent: no.",
		},
		{
			name: "slotd's summary in contract order, only filled slots", c: plain, locale: "ru",
			slots: map[string]any{"amount": "10.00", "to": "Анна"},
			text:  "Проверьте, всё ли верно: получатель: Анна; сумма: 10.00.",
		},
		{
			name: "a value that looks like a template is shown as it is", c: plain, locale: "en",
			slots: map[string]any{"amount": "10.00", "to": "{amount}", "note": "[see {to}]"},
			text:  "Please check that this is right: recipient: {amount}; amount: 10.00; note: [see {to}].",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			step := clarify.Decide(input(tt.c, tt.locale, tt.slots, nil))
			if step.Action != clarify.Confirm || step.Question == nil {
				t.Fatalf("step = %+v, want CONFIRM with a summary", step)
			}
			if step.Question.Text != tt.text {
				t.Errorf("summary:\n got %q\nwant %q", step.Question.Text, tt.text)
			}
		})
	}
}

func TestChangeMessage(t *testing.T) {
	t.Parallel()
	bank := shipped(t, "bank.open_dispute")
	tests := []struct {
		name   string
		locale string
		ch     merge.Change
		want   string
	}{
		{
			name: "overwritten, Russian", locale: "ru",
			ch:   merge.Change{Slot: "operation_date", Old: "2026-08-22", New: "2026-08-21", Decision: merge.Overwritten},
			want: "Понял, меняю: дата операции — 21 августа 2026.",
		},
		{
			name: "overwritten date, Ukrainian", locale: "uk",
			ch:   merge.Change{Slot: "operation_date", Old: "2026-08-22", New: "2026-11-22", Decision: merge.Overwritten},
			want: "Зрозумів, змінюю: дата операції — 22 листопада 2026.",
		},
		{
			name: "overwritten reason, Russian", locale: "ru-RU",
			ch:   merge.Change{Slot: "reason", Old: "fraud", New: "duplicate", Decision: merge.Overwritten},
			want: "Понял, меняю: причина — повторное списание.",
		},
		{
			name: "overwritten, English", locale: "en",
			ch:   merge.Change{Slot: "reason", Old: "fraud", New: "duplicate", Decision: merge.Overwritten},
			want: "Got it, changing the reason to duplicate charge.",
		},
		{
			name: "overwritten, a locale the contract lacks", locale: "de",
			ch:   merge.Change{Slot: "reason", Old: "fraud", New: "duplicate", Decision: merge.Overwritten},
			want: "Понял, меняю: причина — повторное списание.",
		},
		{
			name: "a new value is never read as a template", locale: "en",
			ch:   merge.Change{Slot: "reason", Old: "fraud", New: "OP-{card_last4} [x {amount}]", Decision: merge.Overwritten},
			want: "Got it, changing the reason to OP-{card_last4} [x {amount}].",
		},
		{
			name: "an overwritten slot the contract lacks says nothing", locale: "ru",
			ch: merge.Change{Slot: "card_number", Old: "1", New: "2", Decision: merge.Overwritten},
		},
	}
	for _, d := range []merge.Decision{merge.Filled, merge.Unchanged, merge.Pending, merge.IgnoredNull,
		merge.Rejected, merge.Carried, merge.Confirmed, merge.Discarded, merge.Cleared} {
		tests = append(tests, struct {
			name   string
			locale string
			ch     merge.Change
			want   string
		}{
			name: "nothing to say for " + string(d), locale: "ru",
			ch: merge.Change{Slot: "operation_date", Old: "2026-08-22", New: "2026-08-21", Decision: d},
		})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := clarify.ChangeMessage(bank, tt.locale, tt.ch); got != tt.want {
				t.Errorf("ChangeMessage(%s, %+v):\n got %q\nwant %q", tt.locale, tt.ch, got, tt.want)
			}
		})
	}
}

func TestCancelledText(t *testing.T) {
	t.Parallel()
	bank := shipped(t, "bank.open_dispute")
	for locale, want := range map[string]string{
		"ru": "Хорошо, ничего не делаю.",
		"uk": "Добре, нічого не роблю.",
		"en": "All right, nothing will be done.",
		"de": "Хорошо, ничего не делаю.", // the contract's default locale
	} {
		if got := clarify.Notice(bank, locale, "cancelled"); got != want {
			t.Errorf("Notice(%s, cancelled) = %q, want %q", locale, got, want)
		}
	}
}

func TestDisplay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    any
		want string
	}{
		{nil, "—"},
		{"1200.50", "1200.50"},
		{1200.5, "1200.5"},
		{2.0, "2"},
		{3, "3"},
		{true, "true"},
	}
	for _, tt := range tests {
		if got := clarify.Display(tt.v); got != tt.want {
			t.Errorf("Display(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// TestTurnSentences: what a user is told about the session and the backend
// call, in each language, and in the contract's default one for a locale
// slotd has no words for.
func TestTurnSentences(t *testing.T) {
	t.Parallel()
	bank := shipped(t, "bank.open_dispute")
	empty := clarify.Input{Contract: bank, Locale: "uk"}
	full := input(bank, "en", dispute(nil), nil)
	ru, uk := input(bank, "ru", dispute(nil), nil), input(bank, "uk", dispute(nil), nil)
	tests := []struct {
		name, got, want string
	}{
		{"expired", clarify.Notice(bank, "en", "expired"), "The previous conversation expired; starting over."},
		{"restarted", clarify.Notice(bank, "uk-UA", "restarted"), "Добре, починаємо знову."},
		{"closed", clarify.Notice(bank, "fr", "closed"), "Прошлый разговор был закрыт, начинаем заново."},
		{"an unknown notice", clarify.Notice(bank, "en", "exploded"), ""},
		{"retry", clarify.FailureText(bank, "ru", true, 30), "Заявка не создана; повторить безопасно через 30 с."},
		{"retry in English", clarify.FailureText(bank, "en-US", true, 5), "Nothing was done yet; retrying is safe in 5 seconds."},
		{"no retry", clarify.FailureText(bank, "uk", false, 0), "Запит не виконано; передаю розмову співробітнику."},
		{"resume", clarify.ResumeText(full), "Here is where we stopped: card: 4417; operation date: 22 August 2026; amount: 1200.50; reason: fraudulent charge. Shall we go on from there?"},
		{"resume in Russian", clarify.ResumeText(ru), "Мы остановились на этом: карта: 4417; дата операции: 22 августа 2026; сумма: 1200.50; причина: мошенническая операция. Продолжаем с того же места?"},
		{"resume in Ukrainian", clarify.ResumeText(uk), "Ми зупинилися на цьому: картка: 4417; дата операції: 22 серпня 2026; сума: 1200.50; причина: шахрайська операція. Продовжуємо з того ж місця?"},
		{"resume with nothing", clarify.ResumeText(empty), "Ми перервалися. Продовжуємо?"},
		{"a date that is not a calendar day is shown as it is", clarify.ResumeText(input(bank, "ru", map[string]any{"operation_date": "2026-02-30"}, nil)),
			"Мы остановились на этом: дата операции: 2026-02-30. Продолжаем с того же места?"},
		{"handoff", clarify.HandoffText(full, "reason"),
			"A person will take over from here. Known so far: card: 4417; operation date: 22 August 2026; amount: 1200.50; reason: fraudulent charge. Could not settle: reason."},
		{"handoff in Russian", clarify.HandoffText(ru, "original_operation_id"),
			"Передаю разговор сотруднику. Уже известно: карта: 4417; дата операции: 22 августа 2026; сумма: 1200.50; причина: мошенническая операция. Не удалось уточнить: исходная операция."},
		{"handoff with nothing", clarify.HandoffText(empty, "amount"), "Передаю розмову співробітнику. Уже відомо: —. Не вдалося уточнити: сума."},
		{"resumed", clarify.ResumedText(input(bank, "uk", dispute(map[string]any{"reason": "duplicate", "amount": nil}), nil), []string{"amount", "original_operation_id"}),
			"Повертаємося: спір щодо операції. Уже відомо: картка: 4417; дата операції: 22 серпня 2026; причина: повторне списання; залишилося уточнити: сума, початкова операція."},
		{"resumed in Russian", clarify.ResumedText(ru, nil),
			"Возвращаемся: спор по операции. Уже известно: карта: 4417; дата операции: 22 августа 2026; сумма: 1200.50; причина: мошенническая операция."},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, tt.got, tt.want)
		}
	}
}

// TestReconfirmInWords: a changed irreversible value is re-confirmed with
// the old and the new one in words (a label, a long date), while the
// question's old and new stay the canonical values; a question that names
// a slot shows its value in words too.
func TestReconfirmInWords(t *testing.T) {
	t.Parallel()
	c := mustParse(t, `{
		"type": "object",
		"properties": {
			"day":  {"type": "string", "format": "date", "x-slotd": {"irreversible": true,
				"label": {"ru": "день", "uk": "день", "en": "day"}}},
			"kind": {"type": "string", "enum": ["card", "cash"], "x-slotd": {"irreversible": true,
				"label": {"ru": "способ", "uk": "спосіб", "en": "method"},
				"value_labels": {"card": {"ru": "картой", "uk": "карткою", "en": "by card"}, "cash": {"ru": "наличными", "uk": "готівкою", "en": "in cash"}}}},
			"note": {"type": "string", "x-slotd": {"ask": {"ru": "Комментарий к оплате {kind} на {day}?", "en": "A note for paying {kind} on {day}?"}}}
		},
		"required": ["day", "kind", "note"],
		"x-slotd": {"name": "t.pay", "default_locale": "ru"}
	}`)
	slots := map[string]any{"day": "2026-11-22", "kind": "card"}
	tests := []struct {
		locale  string
		pending map[string]any
		want    wantStep
	}{
		{"ru", map[string]any{"day": "2026-12-01"}, wantStep{action: clarify.Reconfirm, slot: "day",
			text: "День: было 22 ноября 2026, теперь 1 декабря 2026. Заменить?", old: "2026-11-22", new: "2026-12-01"}},
		{"uk", map[string]any{"kind": "cash"}, wantStep{action: clarify.Reconfirm, slot: "kind",
			text: "Спосіб: було карткою, тепер готівкою. Замінити?", old: "card", new: "cash"}},
		{"en", map[string]any{"kind": "cash"}, wantStep{action: clarify.Reconfirm, slot: "kind",
			text: "Method: it was by card, now in cash. Shall I change it?", old: "card", new: "cash"}},
		{"ru", nil, wantStep{action: clarify.Ask, slot: "note", text: "Комментарий к оплате картой на 22 ноября 2026?"}},
		{"en", nil, wantStep{action: clarify.Ask, slot: "note", text: "A note for paying by card on 22 November 2026?"}},
	}
	for _, tt := range tests {
		checkStep(t, clarify.Decide(input(c, tt.locale, slots, tt.pending)), tt.want)
	}
	if got := clarify.AskText(c, "uk", slots, "note"); got != "Комментарий к оплате картой на 22 ноября 2026?" {
		t.Errorf("AskText(uk) = %q: a question the locale lacks is the default locale's, its values in that language too", got)
	}
}
