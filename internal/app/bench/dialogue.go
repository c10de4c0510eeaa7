package bench

import (
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// Step is one user turn of a dialogue and the action slotd must answer.
type Step struct {
	// Tool is the contract of this turn when not the dialogue's: a
	// digression to another tool in the same conversation.
	Tool string
	// Args are the model's raw arguments, dirty as models send them; nil
	// for a confirmation.
	Args map[string]any
	// Confirm is the user's yes or no to a RECONFIRM or CONFIRM.
	Confirm *bool
	// Want is the action expected in the response; anything else is
	// counted as an error.
	Want slotdv1.Action

	args *structpb.Struct // Args, built once and shared by every conversation
	wire []byte           // the step's request but for its ids, encoded once
}

// Dialogue is a scripted conversation with one tool, and the steps that
// digress to others.
type Dialogue struct {
	Name   string
	Tool   string
	Locale string
	Zone   string
	Steps  []Step
}

func yes() *bool { t := true; return &t }
func no() *bool  { f := false; return &f }

// request is step i's request but for the conversation and turn ids.
func (d *Dialogue) request(i int) *slotdv1.TurnRequest {
	st := d.Steps[i]
	req := &slotdv1.TurnRequest{Tool: d.tool(i), Arguments: st.args, Locale: d.Locale, TimeZone: d.Zone}
	if st.Confirm != nil {
		req.Confirmation = &slotdv1.Confirmation{Accept: *st.Confirm}
	}
	return req
}

// tool is the contract step i is sent with.
func (d *Dialogue) tool(i int) string {
	if t := d.Steps[i].Tool; t != "" {
		return t
	}
	return d.Tool
}

// Mix is the realistic mix of dialogues of the shipped contracts: the
// dispute example, one with re-confirmed (and one declined) changes of
// irreversible values, one whose model sends values that are refused
// first, a flight search that changes its date after READY, and a dispute
// interrupted by a balance check (which takes the dispute's card) and
// taken up again, with two sessions open at once.
func Mix() []Dialogue {
	return []Dialogue{
		{
			Name: "dispute", Tool: "bank.open_dispute", Locale: "ru", Zone: "Europe/Moscow",
			Steps: []Step{
				{Args: map[string]any{"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽"}, Want: slotdv1.Action_ACTION_ASK},
				{Args: map[string]any{"reason": "Duplicate"}, Want: slotdv1.Action_ACTION_ASK},
				{Args: map[string]any{"original_operation_id": "op-20260822-0117", "reason": nil, "amount": ""}, Want: slotdv1.Action_ACTION_CONFIRM},
				{Confirm: yes(), Want: slotdv1.Action_ACTION_READY},
			},
		},
		{
			Name: "dispute-reconfirm", Tool: "bank.open_dispute", Locale: "ru", Zone: "Europe/Moscow",
			Steps: []Step{
				{Args: map[string]any{"card_last4": "карта **** 4417", "operation_date": "позавчера", "amount": "1200.5"}, Want: slotdv1.Action_ACTION_ASK},
				{Args: map[string]any{"amount": "1 340 руб.", "reason": "не та сумма"}, Want: slotdv1.Action_ACTION_RECONFIRM},
				{Confirm: yes(), Want: slotdv1.Action_ACTION_CONFIRM},
				{Args: map[string]any{"card_last4": "5521"}, Want: slotdv1.Action_ACTION_RECONFIRM},
				{Confirm: no(), Want: slotdv1.Action_ACTION_CONFIRM},
				{Confirm: yes(), Want: slotdv1.Action_ACTION_READY},
			},
		},
		{
			Name: "dispute-refused", Tool: "bank.open_dispute", Locale: "ru", Zone: "Europe/Moscow",
			Steps: []Step{
				{Args: map[string]any{"card_last4": "12", "operation_date": "вчера", "amount": "много"}, Want: slotdv1.Action_ACTION_ASK},
				{Args: map[string]any{"card_last4": "4417", "amount": 990.0}, Want: slotdv1.Action_ACTION_ASK},
				{Args: map[string]any{"reason": "мошенничество"}, Want: slotdv1.Action_ACTION_CONFIRM},
				{Confirm: yes(), Want: slotdv1.Action_ACTION_READY},
			},
		},
		{
			Name: "flights", Tool: "travel.search_flights", Locale: "uk", Zone: "Europe/Kyiv",
			Steps: []Step{
				{Args: map[string]any{"from": "mad", "to": "Kyiv"}, Want: slotdv1.Action_ACTION_ASK},
				{Args: map[string]any{"to": "KBP"}, Want: slotdv1.Action_ACTION_ASK},
				{Args: map[string]any{"date": "завтра"}, Want: slotdv1.Action_ACTION_READY},
				{Args: map[string]any{"date": "післязавтра", "from": "MAD"}, Want: slotdv1.Action_ACTION_READY},
			},
		},
		{
			Name: "dispute-digression", Tool: "bank.open_dispute", Locale: "ru", Zone: "Europe/Moscow",
			Steps: []Step{
				{Args: map[string]any{"card_last4": "карта 4417", "operation_date": "вчера", "amount": "1 200,50 ₽", "reason": ""}, Want: slotdv1.Action_ACTION_ASK},
				{Tool: "bank.check_balance", Args: map[string]any{"card_last4": nil}, Want: slotdv1.Action_ACTION_READY},
				{Args: map[string]any{"reason": "списали дважды"}, Want: slotdv1.Action_ACTION_ASK},
				{Args: map[string]any{"original_operation_id": " op-20260822-0117 "}, Want: slotdv1.Action_ACTION_CONFIRM},
				{Confirm: yes(), Want: slotdv1.Action_ACTION_READY},
			},
		},
	}
}

// Long is a flight search of n turns: READY on the first, then a change of
// date on every turn after it, so that one session's history grows to n
// turns and about 2n slot changes.
func Long(n int) Dialogue {
	d := Dialogue{Name: fmt.Sprintf("long-%d", n), Tool: "travel.search_flights", Locale: "en", Zone: "Europe/Kyiv"}
	d.Steps = append(d.Steps, Step{Args: map[string]any{"from": "MAD", "to": "kbp", "date": "tomorrow"}, Want: slotdv1.Action_ACTION_READY})
	dates := []string{"the day after tomorrow", "tomorrow"}
	for i := 1; i < n; i++ {
		d.Steps = append(d.Steps, Step{Args: map[string]any{"date": dates[i%2], "to": "KBP"}, Want: slotdv1.Action_ACTION_READY})
	}
	return d
}

// prepare builds every step's arguments as a protobuf Struct, once.
func prepare(ds []Dialogue) error {
	for i := range ds {
		for j := range ds[i].Steps {
			st := &ds[i].Steps[j]
			if st.Args != nil {
				s, err := structpb.NewStruct(st.Args)
				if err != nil {
					return fmt.Errorf("dialogue %s step %d: %w", ds[i].Name, j+1, err)
				}
				st.args = s
			}
			wire, err := encodeStep(ds[i].request(j))
			if err != nil {
				return fmt.Errorf("dialogue %s step %d: %w", ds[i].Name, j+1, err)
			}
			st.wire = wire
		}
	}
	return nil
}
