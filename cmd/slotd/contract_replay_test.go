package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/pgstore"
	"github.com/slotd/slotd/internal/session/sessiontest"
	"github.com/slotd/slotd/internal/testkit/dbtest"
)

// storedHistory is a database holding sessiontest.ReplayHistory's n
// conversations on the dispute example, its versions registered.
func storedHistory(t *testing.T, n int) (url string, st *pgstore.Store) {
	t.Helper()
	pool, url := dbtest.NewPool(t)
	st = pgstore.New(pool)
	sessiontest.StoreHistory(t, st, "chat", n, 2)
	return url, st
}

// slotd contract replay over a history in Postgres, with the dispute
// example's v2: the JSON a pipeline reads, the table people read, the
// exit status of --fail-on, and the history unchanged.
func TestContractReplay(t *testing.T) {
	t.Parallel()
	url, st := storedHistory(t, 10)
	env := map[string]string{"SLOTD_DATABASE_URL": url}
	v2 := sessiontest.DisputeV2Dir(t, "pin")
	r := runCLI(t, env, "contract", "replay", "--contracts", v2, "--json", "--since", "87600h")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep struct {
		session.ReplayReport
		Failed []string `json:"failed"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	s := rep.Summary
	if s.Conversations != 10 || s.ReadyLost != 4 || s.Masked != 4 || s.NewlyRefused != 2 || s.AskedSlots["merchant"] != 4 ||
		len(rep.Failed) != 0 {
		t.Errorf("summary %+v, failed %v", s, rep.Failed)
	}
	var card *session.ConversationReplay
	for i, c := range rep.Conversations {
		if c.ConversationID == sessiontest.ReplayConversation("chat", 3) {
			card = &rep.Conversations[i]
		}
	}
	if card == nil || strings.Join(card.Masked, ",") != "card_last4" {
		t.Errorf("the card given in full is reported masked: %+v", card)
	}
	if strings.Contains(r.stdout, "4111") || strings.Contains(r.stdout, "OP-55120") {
		t.Errorf("the report shows a masked value:\n%s", r.stdout)
	}

	// A gate: READY lost fails the pipeline, with the report printed.
	r = runCLI(t, map[string]string{"SLOTD_DATABASE_URL": url, "SLOTD_CONTRACT_FAIL_ON": "ready-later,ready-lost"},
		"contract", "replay", "--contracts", v2, "--tool", "bank.open_dispute", "--limit", "4")
	if r.code != exitError || !strings.Contains(r.stderr, "--fail-on: ready-lost") {
		t.Errorf("--fail-on ready-lost: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{"READY lost", "newly asked: merchant", "turn 3 (t3): READY → ASK merchant", "slots newly asked", "conversations  "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, r.stdout)
		}
	}
	// The shipped contracts replay the history as it was.
	r = runCLI(t, env, "contract", "replay", "--contracts", sessiontest.ContractsDir(t), "--fail-on", "any")
	if r.code != 0 || !strings.Contains(r.stdout, "with masked values") {
		t.Errorf("the same contracts: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Nothing was written.
	h, err := st.History(context.Background(), session.Lookup{Tenant: "bank", ConversationID: sessiontest.ReplayConversation("chat", 0), Latest: true})
	if err != nil || len(h.Turns) != 3 || h.Turns[2].ContractVersion == "" {
		t.Errorf("history after the replays: %+v (%v)", h, err)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--fail-on", "ready-lost,lost"}, exitUsage, `unknown condition "lost"`},
		{[]string{"--limit", "0"}, exitUsage, "--limit must be at least 1"},
		{[]string{"--tool", "bank.close_account"}, exitError, `no contract named "bank.close_account"`},
		{[]string{"--database-url", ""}, exitUsage, "--database-url or SLOTD_DATABASE_URL is required"},
	} {
		r := runCLI(t, env, append([]string{"contract", "replay", "--contracts", v2}, tc.args...)...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
}

// A replica whose contract folder holds a file that does not load refuses
// to start, naming the file, and leaves the versions in use as they are.
func TestServeRefusesAContractThatDoesNotLoad(t *testing.T) {
	t.Parallel()
	url, st := storedHistory(t, 1)
	before, err := st.ContractVersions(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	dir := sessiontest.DisputeV2Dir(t, "migrate")
	// The next version half written: the deploy copied a truncated file.
	b, err := os.ReadFile(filepath.Join(dir, "bank.open_dispute.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bank.open_dispute.json"), b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, map[string]string{"SLOTD_DATABASE_URL": url}, "serve", "--store", "postgres", "--contracts", dir,
		"--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0")
	if r.code != exitError || !strings.Contains(r.stderr, "bank.open_dispute.json") {
		t.Errorf("exit %d, stderr %q; want 1 naming the file", r.code, r.stderr)
	}
	after, err := st.ContractVersions(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("versions %d before, %d after", len(before), len(after))
	}
	for i := range after {
		if after[i].Version != before[i].Version || !after[i].LastSeen.Equal(before[i].LastSeen) || after[i].LastReplica != before[i].LastReplica {
			t.Errorf("%s %s changed: %+v -> %+v", after[i].Tool, after[i].Version, before[i], after[i])
		}
	}
}

// slotd script run --baseline: the shipped scripts played with the shipped
// contracts and with the dispute example's v2 name the steps v2 breaks
// (the retired wrong_amount, the new merchant); the same contracts break
// none.
func TestScriptRunBaseline(t *testing.T) {
	t.Parallel()
	v2 := sessiontest.DisputeV2Dir(t, "pin")
	shipped := sessiontest.ContractsDir(t)
	scripts := filepath.Join(filepath.Dir(shipped), "integration", "scripts")
	r := runCLI(t, nil, "script", "run", "--baseline", shipped, "--contracts", v2, "--run", "invalid_enum|dispute_example", scripts)
	if r.code != exitError || !strings.Contains(r.stderr, "break 9 script steps") {
		t.Fatalf("exit %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
	for _, want := range []string{
		"BROKEN  invalid enum is repaired with allowed values step 1 (",
		`allowed (line 16): expected ["duplicate","fraud","not_received","wrong_amount"], got ["duplicate","fraud","not_received"] (lacks wrong_amount)`,
		`BROKEN  dispute example dialogue step 2 (`,
		`ask (line 34): expected "original_operation_id", got "merchant"`,
		"9 of 9 steps broken by the next contracts, 0 fixed, 0 failing with the baseline already",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the report lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runCLI(t, nil, "script", "run", "--baseline", shipped, "--contracts", shipped, scripts)
	if r.code != 0 || !regexp.MustCompile(`(?m)^0 of [1-9]\d+ steps broken`).MatchString(r.stdout) {
		t.Errorf("the same contracts: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, nil, "script", "run", "--baseline", shipped, "--addr", "127.0.0.1:1", scripts)
	if r.code != exitUsage || !strings.Contains(r.stderr, "not with --addr") {
		t.Errorf("--baseline with --addr: exit %d, %q", r.code, r.stderr)
	}
}
