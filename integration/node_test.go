package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The Node.js orchestrator example (examples/node) run as a user runs it:
// npm ci from the committed lockfile, then node dispute.mjs against a real
// slotd. make test installs node and npm when the machine has none.

// npmInstall is one example's npm ci, run once per test binary.
type npmInstall struct {
	once sync.Once
	err  error
	out  []byte
}

var npmInstalls sync.Map // example directory → *npmInstall

// npmExample installs the dependencies of the Node.js example at rel (from
// the repository's root, e.g. "examples/node") once per test binary, from
// its committed lockfile, and returns its directory.
func npmExample(t *testing.T, rel string) string {
	t.Helper()
	for _, bin := range []string{"node", "npm"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is needed to run %s and is not on PATH; `make test` installs it (apt-get install nodejs npm)", bin, rel)
		}
	}
	dir, err := filepath.Abs(filepath.Join("..", rel))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := npmInstalls.LoadOrStore(dir, new(npmInstall))
	in := v.(*npmInstall)
	in.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		in.out, in.err = cmd.CombinedOutput()
	})
	if in.err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", rel, in.err, in.out)
	}
	return dir
}

func runNodeExample(t *testing.T, dir, addr string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "dispute.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SLOTD_ADDR="+addr)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestNodeExampleRunsTheSeedDialogue(t *testing.T) {
	t.Parallel()
	dir := npmExample(t, "examples/node")
	inst, _ := newPostgresServer(t)
	out, err := runNodeExample(t, dir, inst.srv.Addr())
	if err != nil {
		t.Fatalf("node dispute.mjs: %v, want exit 0; output:\n%s", err, out)
	}
	for _, want := range []string{
		"(slotd's bank.open_dispute), properties ",
		"ACTION_ASK: Что случилось с операцией на 1200.50 ₽",
		"allowed: duplicate, fraud, not_received, wrong_amount",
		"step 2 (bank.check_balance) user: ",
		`ACTION_READY: call the backend with {"card_last4":"4417"}`,
		"parked: bank.open_dispute (missing reason)",
		"step 3 (bank.open_dispute) user: ",
		"resumed: Возвращаемся: спор по операции. Уже известно: карта: 4417;",
		"осталось уточнить: исходная операция.",
		"bank.check_balance completed: {",
		`"available":"15230.40"`,
		`"currency":"RUB"`,
		"ACTION_ASK: Какая из двух операций по карте •• 4417 была первой?",
		"ACTION_CONFIRM: ",
		"ACTION_READY: ",
		"completed: SESSION_STATUS_COMPLETED",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the example's output lacks %q; output:\n%s", want, out)
		}
	}
	// The balance check was completed before the dispute went on: nothing
	// of it is parked any more.
	if strings.Contains(out, "parked: bank.check_balance") {
		t.Errorf("a completed balance check is still parked; output:\n%s", out)
	}
	// The output contract keeps the backend's internal fields from the model.
	if strings.Contains(out, "account_ref") || strings.Contains(out, "internal-77") {
		t.Errorf("the balance check's output leaks a field its output contract lacks; output:\n%s", out)
	}
}

// TestNodeExampleFailsOnAnUnexpectedAction runs the example against a slotd
// whose dispute contract needs no approval: the fourth step answers READY
// where the example expects CONFIRM, and the example must say so and fail.
func TestNodeExampleFailsOnAnUnexpectedAction(t *testing.T) {
	t.Parallel()
	dir := npmExample(t, "examples/node")
	contracts := contractsDir(t)
	path := filepath.Join(contracts, "bank.open_dispute.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	ext, ok := doc["x-slotd"].(map[string]any)
	if !ok || ext["confirm"] != true {
		t.Fatalf("bank.open_dispute no longer asks for approval (x-slotd.confirm = %v); this test needs a contract that does", ext["confirm"])
	}
	ext["confirm"] = false
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	inst := startServer(t, dbtestURL(t), contracts)
	out, err := runNodeExample(t, dir, inst.srv.Addr())
	if err == nil {
		t.Fatalf("node dispute.mjs exited 0 on a dialogue without approval; output:\n%s", out)
	}
	if want := "step 4: expected ACTION_CONFIRM, got ACTION_READY"; !strings.Contains(out, want) {
		t.Errorf("the example's output lacks %q; output:\n%s", want, out)
	}
}
