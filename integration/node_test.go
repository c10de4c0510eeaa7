package integration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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

// npmInstall is one example's install, run once per test binary.
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
		in.out, in.err = npmInstallCached(ctx, dir)
	})
	if in.err != nil {
		t.Fatalf("npm ci for %s: %v\n%s", rel, in.err, in.out)
	}
	return dir
}

// npmInstallCached makes dir's node_modules what `npm ci` installs from its
// lockfile. The install lives in the user's cache (slotd-test/npm/, named by
// the hash of package.json, the lockfile and node's version) and dir's
// node_modules is a link to it, so that a clean clone on a machine that ran
// the tests before installs nothing, as Go's build cache compiles nothing.
// An example whose node_modules is a directory of its own (a user's npm
// install) gets npm ci in place, as that user would run it.
func npmInstallCached(ctx context.Context, dir string) ([]byte, error) {
	link := filepath.Join(dir, "node_modules")
	if fi, err := os.Lstat(link); err == nil && fi.Mode()&os.ModeSymlink == 0 {
		return npmCI(ctx, dir)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return npmCI(ctx, dir)
	}
	version, err := exec.CommandContext(ctx, "node", "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("node --version: %w", err)
	}
	h := sha256.New()
	h.Write(version)
	files := []string{"package.json", "package-lock.json"}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	cache := filepath.Join(base, "slotd-test", "npm", hex.EncodeToString(h.Sum(nil)[:12]))
	if _, err := os.Stat(cache); err != nil {
		if err := os.MkdirAll(filepath.Dir(cache), 0o755); err != nil {
			return nil, err
		}
		// Installed beside the cache and renamed into it when complete: a
		// run that stops half way, or another run installing at the same
		// time, never leaves a partial install under the name.
		tmp, err := os.MkdirTemp(filepath.Dir(cache), "installing-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
				return nil, err
			}
		}
		if out, err := npmCI(ctx, tmp); err != nil {
			return out, err
		}
		if err := os.Rename(tmp, cache); err != nil {
			if _, serr := os.Stat(cache); serr != nil {
				return nil, err
			}
		}
	}
	if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return nil, os.Symlink(filepath.Join(cache, "node_modules"), link)
}

func npmCI(ctx context.Context, dir string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	return cmd.CombinedOutput()
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
