package contract_test

import (
	"reflect"
	"strings"
	"testing"
)

// filled is a complete bank.open_dispute slot object, as merged slots hold
// it (decimals and dates as strings), with overrides; a nil override removes
// the slot.
func filled(over map[string]any) map[string]any {
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

// violation is what one Violation must say; empty members are not checked.
type violation struct {
	pointer string
	message string // substring
	allowed []string
	format  string // substring
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		tool       string
		slots      map[string]any
		missing    []string
		violations []violation
	}{
		{
			name:    "nothing yet: every required slot in contract order",
			slots:   map[string]any{},
			missing: []string{"card_last4", "operation_date", "amount", "reason"},
		},
		{
			name:    "nil slots",
			slots:   nil,
			missing: []string{"card_last4", "operation_date", "amount", "reason"},
		},
		{
			name:    "missing ones in contract order, not file-required order",
			slots:   map[string]any{"amount": "1200.50", "operation_date": "2026-08-22"},
			missing: []string{"card_last4", "reason"},
		},
		{
			name:  "all present, reason fraud: valid without the original operation",
			slots: filled(nil),
		},
		{
			name:    "reason duplicate: the original operation is missing, not a violation",
			slots:   filled(map[string]any{"reason": "duplicate"}),
			missing: []string{"original_operation_id"},
		},
		{
			name:    "reason duplicate with other slots missing: all in contract order",
			slots:   map[string]any{"reason": "duplicate"},
			missing: []string{"card_last4", "operation_date", "amount", "original_operation_id"},
		},
		{
			name:  "reason duplicate with the original operation: valid",
			slots: filled(map[string]any{"reason": "duplicate", "original_operation_id": "OP-1"}),
		},
		{
			name:  "a float amount from an older session is valid too",
			slots: filled(map[string]any{"amount": 1200.5}),
		},
		{
			name:  "a zero amount",
			slots: filled(map[string]any{"amount": "0.00"}),
			violations: []violation{{
				pointer: "/amount", message: "exclusiveMinimum", format: "roubles",
			}},
		},
		{
			name:  "an amount that is no number",
			slots: filled(map[string]any{"amount": "1 200"}),
			violations: []violation{{
				pointer: "/amount", message: "want number",
			}},
		},
		{
			name:  "a reason outside the enum lists the allowed values",
			slots: filled(map[string]any{"reason": "chargeback"}),
			violations: []violation{{
				pointer: "/reason", message: "must be one of", allowed: reasons,
			}},
		},
		{
			name:  "an impossible date",
			slots: filled(map[string]any{"operation_date": "2026-02-31"}),
			violations: []violation{{
				pointer: "/operation_date", message: "date", format: "YYYY-MM-DD",
			}},
		},
		{
			name:    "an unknown slot is a violation at the root; missing ones are still missing",
			slots:   map[string]any{"card_number": "4276 1234 5678 4417", "reason": "fraud"},
			missing: []string{"card_last4", "operation_date", "amount"},
			violations: []violation{{
				pointer: "", message: "card_number",
			}},
		},
		{
			name:    "flights: missing in contract order",
			tool:    "travel.search_flights",
			slots:   map[string]any{"to": "KBP"},
			missing: []string{"from", "date"},
		},
		{
			name:  "flights: a city name in an airport slot",
			tool:  "travel.search_flights",
			slots: map[string]any{"from": "Madrid", "to": "KBP", "date": "2026-08-25"},
			violations: []violation{{
				pointer: "/from", message: "pattern", format: "IATA",
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tool := tt.tool
			if tool == "" {
				tool = "bank.open_dispute"
			}
			c := shipped(t, tool)
			r := c.Check(tt.slots)

			if !reflect.DeepEqual(r.Missing, tt.missing) && len(r.Missing)+len(tt.missing) > 0 {
				t.Errorf("missing = %q, want %q", r.Missing, tt.missing)
			}
			if len(r.Violations) != len(tt.violations) {
				t.Fatalf("violations = %v, want %d like %+v", r.Violations, len(tt.violations), tt.violations)
			}
			for i, want := range tt.violations {
				got := r.Violations[i]
				if got.Pointer != want.pointer {
					t.Errorf("violation %d pointer = %q, want %q", i, got.Pointer, want.pointer)
				}
				if !strings.Contains(got.Message, want.message) {
					t.Errorf("violation %d message = %q, want it to contain %q", i, got.Message, want.message)
				}
				if want.allowed != nil && !reflect.DeepEqual(got.Allowed, want.allowed) {
					t.Errorf("violation %d allowed = %q, want %q", i, got.Allowed, want.allowed)
				}
				if !strings.Contains(got.Format, want.format) {
					t.Errorf("violation %d format = %q, want it to contain %q", i, got.Format, want.format)
				}
				if want.pointer != "" && got.Input == "" {
					t.Errorf("violation %d does not say what the slot holds", i)
				}
				assertNoCard(t, got)
			}
			if wantValid := len(tt.missing) == 0 && len(tt.violations) == 0; r.Valid() != wantValid {
				t.Errorf("Valid() = %v, want %v", r.Valid(), wantValid)
			}
		})
	}
}

func TestCheckConditionalRules(t *testing.T) {
	t.Parallel()
	// dependentRequired and if/then are both "missing", never violations;
	// a failed rule that names no missing slot is a violation.
	c := mustParse(t, `{
		"type": "object",
		"properties": {
			"mode":     {"type": "string", "enum": ["card", "transfer"]},
			"iban":     {"type": "string"},
			"bic":      {"type": "string"},
			"from_day": {"type": "integer"},
			"to_day":   {"type": "integer"}
		},
		"required": ["mode"],
		"dependentRequired": {"iban": ["bic"]},
		"if": {"properties": {"mode": {"const": "transfer"}}, "required": ["mode"]},
		"then": {"required": ["iban"]},
		"dependentSchemas": {"to_day": {"properties": {"from_day": {"maximum": 10}}}},
		"x-slotd": {"name": "t.rules"}
	}`)
	tests := []struct {
		name          string
		slots         map[string]any
		missing       []string
		violationPtrs []string
	}{
		{"card needs nothing more", map[string]any{"mode": "card"}, nil, nil},
		{"transfer needs an IBAN", map[string]any{"mode": "transfer"}, []string{"iban"}, nil},
		{"an IBAN needs a BIC", map[string]any{"mode": "transfer", "iban": "DE89"}, []string{"bic"}, nil},
		{"both rules at once, in contract order", map[string]any{"iban": "DE89"}, []string{"mode", "bic"}, nil},
		{"a rule without a missing slot", map[string]any{"mode": "card", "from_day": 12.0, "to_day": 3.0}, nil, []string{"/from_day"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := c.Check(tt.slots)
			if !reflect.DeepEqual(r.Missing, tt.missing) && len(r.Missing)+len(tt.missing) > 0 {
				t.Errorf("missing = %q, want %q", r.Missing, tt.missing)
			}
			var ptrs []string
			for _, v := range r.Violations {
				ptrs = append(ptrs, v.Pointer)
			}
			if !reflect.DeepEqual(ptrs, tt.violationPtrs) {
				t.Errorf("violations = %v, want pointers %q", r.Violations, tt.violationPtrs)
			}
		})
	}
}

func TestCheckMissingInContractOrder(t *testing.T) {
	t.Parallel()
	// The file's "required" array lists the slots in another order than
	// "properties": the question order must follow "properties".
	c := mustParse(t, `{
		"type": "object",
		"properties": {
			"first":  {"type": "string"},
			"second": {"type": "string"},
			"third":  {"type": "string"},
			"fourth": {"type": "string"}
		},
		"required": ["fourth", "second", "first"],
		"dependentRequired": {"first": ["third"]},
		"x-slotd": {"name": "t.order"}
	}`)
	tests := []struct {
		slots map[string]any
		want  []string
	}{
		{map[string]any{}, []string{"first", "second", "fourth"}},
		{map[string]any{"first": "x"}, []string{"second", "third", "fourth"}},
		{map[string]any{"first": "x", "fourth": "y"}, []string{"second", "third"}},
	}
	for _, tt := range tests {
		if got := c.Check(tt.slots).Missing; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Check(%v).Missing = %q, want %q", tt.slots, got, tt.want)
		}
	}
}

func TestCheckNeverEchoesACardNumber(t *testing.T) {
	t.Parallel()
	c := mustParse(t, `{
		"type": "object",
		"properties": {
			"code":  {"type": "string", "pattern": "^[A-Z]{3}$"},
			"limit": {"type": "number", "maximum": 1000},
			"day":   {"type": "string", "format": "date"}
		},
		"x-slotd": {"name": "t.leak"}
	}`)
	r := c.Check(map[string]any{
		"code":  "4276 1234 5678 4417",
		"limit": "4276123456784417",
		"day":   "4276-1234-5678-4417",
	})
	if len(r.Violations) != 3 {
		t.Fatalf("violations = %v, want one per slot", r.Violations)
	}
	for _, v := range r.Violations {
		assertNoCard(t, v)
	}
}
