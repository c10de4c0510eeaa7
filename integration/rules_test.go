package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// writeContract adds an inline contract to a contracts folder.
func writeContract(t *testing.T, dir, name, src string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

const transferContract = `{"type": "object",
	"properties": {
		"mode": {"type": "string", "enum": ["transfer", "cash"]},
		"speed": {"type": "string", "enum": ["fast", "standard", "slow"]}
	},
	"required": ["mode", "speed"],
	"allOf": [{"if": {"properties": {"mode": {"const": "transfer"}}, "required": ["mode"]},
		"then": {"properties": {"speed": {"enum": ["standard", "slow"]}}}}],
	"x-slotd": {"name": "test.transfer", "confirm": true}}`

// A model that resends the same rule-breaking call is handed off after
// max_attempts REPAIRs, instead of looping.
func TestRepeatedRepairHandsOff(t *testing.T) {
	t.Parallel()
	dir := contractsDir(t)
	writeContract(t, dir, "test.transfer", transferContract)
	inst := startServer(t, dbtestURL(t), dir)
	c := newConvo(t, inst.client, "test.transfer")
	c.locale = "en"
	for i := 1; i <= 3; i++ {
		r := c.send(`{"mode": "transfer", "speed": "fast"}`)
		if i < 3 {
			wantAction(t, r, slotdv1.Action_ACTION_REPAIR)
			if r.Problem == nil || len(r.Problem.Errors) == 0 {
				t.Fatalf("REPAIR without a problem: %v", r)
			}
			continue
		}
		wantAction(t, r, slotdv1.Action_ACTION_HANDOFF)
	}
}

// A "no" to the approval withdraws any earlier "yes", even when the user
// puts the approved values back in the same turn.
func TestDeclineWithdrawsAnEarlierApproval(t *testing.T) {
	t.Parallel()
	dir := contractsDir(t)
	writeContract(t, dir, "test.transfer", transferContract)
	inst := startServer(t, "", dir)
	c := newConvo(t, inst.client, "test.transfer")
	wantAction(t, c.send(`{"mode": "cash", "speed": "fast"}`), slotdv1.Action_ACTION_CONFIRM)
	wantAction(t, c.confirm(true), slotdv1.Action_ACTION_READY)
	wantAction(t, c.send(`{"speed": "slow"}`), slotdv1.Action_ACTION_CONFIRM)
	req := c.request(`{"speed": "fast"}`)
	req.Confirmation = &slotdv1.Confirmation{Accept: false}
	r := c.do(req)
	if r.Action == slotdv1.Action_ACTION_READY {
		t.Fatalf("a declined approval answered READY with key %s", r.IdempotencyKey)
	}
	wantAction(t, r, slotdv1.Action_ACTION_CONFIRM)
}

// A slot marked sensitive never shows its value: not in changes, the
// session, the questions, the history; only READY arguments carry it.
func TestSensitiveValuesStayHidden(t *testing.T) {
	t.Parallel()
	dir := contractsDir(t)
	writeContract(t, dir, "test.secret", `{"type": "object",
		"properties": {
			"account": {"type": "string", "pattern": "^[0-9]{20}$", "x-slotd": {"sensitive": true, "irreversible": true,
				"ask": {"en": "Which account?"}}},
			"note": {"type": "string"}
		},
		"required": ["account", "note"],
		"x-slotd": {"name": "test.secret", "confirm": true, "confirm_text": {"en": "Send from {account} with note {note}?"}}}`)
	inst := startServer(t, dbtestURL(t), dir)
	c := newConvo(t, inst.client, "test.secret")
	c.locale = "en"
	const first, second = "40817810099910004312", "40817810099910007777"
	var seen []string
	record := func(r *slotdv1.TurnResponse) *slotdv1.TurnResponse {
		b, _ := protojson.Marshal(r)
		seen = append(seen, string(b))
		return r
	}
	record(c.send(`{"account": "` + first + `"}`))
	record(c.send(`{"account": "` + second + `"}`)) // irreversible: RECONFIRM shows old and new, masked
	record(c.confirm(true))
	confirm := record(c.send(`{"note": "rent"}`))
	wantAction(t, confirm, slotdv1.Action_ACTION_CONFIRM)
	ready := c.confirm(true)
	wantAction(t, ready, slotdv1.Action_ACTION_READY)
	if ready.Arguments.AsMap()["account"] != second {
		t.Errorf("READY arguments lack the real account: %v", ready.Arguments.AsMap())
	}
	ready.Arguments = nil
	record(ready)
	h, err := inst.admin.GetSessionHistory(context.Background(), &slotdv1.GetSessionHistoryRequest{ConversationId: c.id})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := protojson.Marshal(h)
	seen = append(seen, string(b))
	for i, out := range seen {
		for _, secret := range []string{first, second, "0009991000"} {
			if strings.Contains(out, secret) {
				t.Errorf("answer %d shows a sensitive value: %s", i, out)
			}
		}
	}
	if !strings.Contains(seen[1], "RECONFIRM") {
		t.Errorf("the second answer is not a RECONFIRM: %s", seen[1])
	}
}
