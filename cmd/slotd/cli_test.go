package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// result is one run of the CLI.
type result struct {
	stdout, stderr string
	code           int
}

// runCLI runs slotd with args in an environment of env alone: the test
// machine's variables never reach it.
func runCLI(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	c := &cli{stdout: &out, stderr: &errOut, lookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}}
	code := c.execute(context.Background(), slotd, args)
	return result{out.String(), errOut.String(), code}
}

// leaves walks the command tree: every command that does work, by path.
func leaves(path string, cmd *command, visit func(path string, cmd *command)) {
	if len(cmd.subs) == 0 {
		visit(path, cmd)
		return
	}
	for _, s := range cmd.subs {
		leaves(strings.TrimSpace(path+" "+s.name), s, visit)
	}
}

// groups are the commands that hold subcommands, by path ("" for slotd).
func groups(path string, cmd *command, visit func(path string, cmd *command)) {
	if len(cmd.subs) == 0 {
		return
	}
	visit(path, cmd)
	for _, s := range cmd.subs {
		groups(strings.TrimSpace(path+" "+s.name), s, visit)
	}
}

// slotd, slotd help, every command's --help, -h and -help, and help
// COMMAND print usage on stdout, nothing on stderr, and exit 0.
func TestHelpOfEveryCommand(t *testing.T) {
	t.Parallel()
	var cases [][]string
	cases = append(cases, nil, []string{"help"})
	add := func(path string, cmd *command) {
		words := strings.Fields(path)
		for _, h := range []string{"--help", "-h", "-help"} {
			cases = append(cases, append(append([]string{}, words...), h))
		}
		if len(words) > 0 {
			cases = append(cases, append([]string{"help"}, words...))
		}
	}
	groups("", slotd, func(path string, cmd *command) {
		add(path, cmd)
		if path != "" {
			cases = append(cases, strings.Fields(path)) // a group alone lists its commands
		}
	})
	leaves("", slotd, add)
	for _, args := range cases {
		r := runCLI(t, nil, args...)
		name := "slotd " + strings.Join(args, " ")
		if r.code != 0 || r.stderr != "" {
			t.Errorf("%s: exit %d, stderr %q; want 0 and nothing", name, r.code, r.stderr)
		}
		if !strings.HasPrefix(r.stdout, "usage: slotd") {
			t.Errorf("%s: stdout does not start with the usage line:\n%s", name, r.stdout)
		}
	}
	r := runCLI(t, nil)
	for _, want := range []string{"serve", "migrate", "sessions", "contract", "script", "bench"} {
		if !strings.Contains(r.stdout, "\n  "+want+" ") {
			t.Errorf("slotd's usage does not list %s:\n%s", want, r.stdout)
		}
	}
	r = runCLI(t, nil, "contract")
	for _, want := range []string{"export", "lint", "list"} {
		if !strings.Contains(r.stdout, "\n  "+want+" ") {
			t.Errorf("slotd contract's usage does not list %s:\n%s", want, r.stdout)
		}
	}
}

// A command given wrongly is one human line on stderr, naming the command,
// and exit 2; nothing on stdout.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `slotd: unknown command "frobnicate"`},
		{[]string{"sessions", "bogus"}, `slotd sessions: unknown command "bogus"`},
		{[]string{"help", "bogus"}, `unknown command "bogus"`},
		{[]string{"serve", "--bogus"}, "slotd serve: unknown flag --bogus"},
		{[]string{"serve", "--listen"}, "--listen needs a value"},
		{[]string{"serve", "--ttl", "soon"}, `invalid value "soon" for --ttl`},
		{[]string{"serve", "--client-clock", "sometimes"}, `--client-clock "sometimes": one of window, trust`},
		{[]string{"serve", "--store", "redis"}, `--store "redis": one of postgres, memory`},
		{[]string{"serve", "extra"}, `unexpected argument "extra"`},
		{[]string{"migrate"}, "--database-url or SLOTD_DATABASE_URL is required"},
		{[]string{"sessions", "show"}, "--conversation or --session is required"},
		{[]string{"sessions", "reset-stale"}, "--idle is required"},
		{[]string{"sessions", "purge"}, "--ended is required"},
		{[]string{"sessions", "list", "--status", "sleeping"}, `--status "sleeping"`},
		{[]string{"contract", "export", "--contracts", "../../contracts"}, "give one contract NAME, or --all"},
		{[]string{"contract", "export", "--all", "bank.open_dispute"}, "NAME or --all, not both"},
		{[]string{"contract", "export", "--all", "--parameters"}, "--parameters prints one tool's input schema"},
		{[]string{"contract", "export", "--provider", "gemini", "bank.open_dispute"}, `--provider "gemini": one of openai, openai-chat, anthropic, plain`},
		{[]string{"contract", "lint", "a", "b"}, "at most one DIR"},
		{[]string{"contract", "list", "x"}, `unexpected argument "x"`},
		{[]string{"script"}, ""}, // a group alone is its usage: see below
		{[]string{"script", "run"}, "give the script files or folders to play"},
		{[]string{"script", "run", "--in-process", "--addr", "127.0.0.1:1", "x.yaml"}, "--addr or --in-process, not both"},
		{[]string{"bench", "extra"}, `unexpected argument "extra"`},
	} {
		if tc.want == "" {
			continue
		}
		r := runCLI(t, nil, tc.args...)
		name := "slotd " + strings.Join(tc.args, " ")
		if r.code != 2 || r.stdout != "" {
			t.Errorf("%s: exit %d, stdout %q; want 2 and nothing", name, r.code, r.stdout)
		}
		if strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tc.want) || strings.HasPrefix(r.stderr, "{") {
			t.Errorf("%s: stderr %q, want one human line saying %q", name, r.stderr, tc.want)
		}
	}
	// A bad value in an environment twin is a usage error too.
	r := runCLI(t, map[string]string{"SLOTD_MAX_ATTEMPTS": "many"}, "serve")
	if r.code != 2 || r.stderr != "slotd serve: SLOTD_MAX_ATTEMPTS is not a whole number\n" {
		t.Errorf("SLOTD_MAX_ATTEMPTS=many: exit %d, stderr %q", r.code, r.stderr)
	}
}

// A command that fails at its work says so in one human line and exits 1;
// a path it was given is named.
func TestRuntimeErrorsAreHumanLines(t *testing.T) {
	t.Parallel()
	missing, empty := t.TempDir()+"/nonexistent", t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"contract", "list", "--contracts", missing}, "cannot read the folder " + missing + ": no such file or directory"},
		{[]string{"contract", "list", "--contracts", empty}, "no *.json contract in " + empty},
		{[]string{"contract", "lint", missing}, "cannot read the folder " + missing},
		{[]string{"contract", "export", "--contracts", empty, "bank.open_dispute"}, "no *.json contract in " + empty},
		{[]string{"serve", "--store", "memory", "--contracts", missing}, "slotd serve: contracts: cannot read the folder " + missing},
		{[]string{"serve", "--store", "memory", "--contracts", empty}, "no *.json contract in " + empty},
		{[]string{"contract", "export", "--contracts", "../../contracts", "bank.close_account"}, `no contract named "bank.close_account"`},
		{[]string{"sessions", "list", "--addr", "127.0.0.1:1"}, "cannot reach slotd at 127.0.0.1:1"},
	} {
		r := runCLI(t, nil, tc.args...)
		name := "slotd " + strings.Join(tc.args, " ")
		if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, `"level"`) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and one human line saying %q", name, r.code, r.stderr, tc.want)
		}
		if strings.Contains(r.stderr, "open .:") || strings.Contains(r.stderr, " in .\n") {
			t.Errorf("%s: %q names the folder \".\"", name, r.stderr)
		}
	}
}

// twinValue is a value for a flag's environment twin that differs from the
// flag's default.
func twinValue(fl *flag.Flag, kind string) string {
	switch {
	case strings.HasPrefix(kind, "true or false"):
		if fl.DefValue == "true" {
			return "false"
		}
		return "true"
	case strings.HasPrefix(kind, "a whole number"):
		return "7"
	case strings.HasPrefix(kind, "a duration"):
		return (7 * time.Minute).String()
	}
	return "from-the-environment"
}

// Every flag of every command names its environment twin in the usage,
// the command reads that variable when the flag is not given (and the flag
// wins when it is), and the README's table lists it.
func TestEveryFlagHasAnEnvironmentTwin(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	// The README's rows are "| `--flag` | `SLOTD_TWIN` | what it does |".
	row := regexp.MustCompile("(?m)^\\| `--([a-z0-9-]+)` \\| `(SLOTD_[A-Z0-9_]+)` \\|")
	inReadme := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		inReadme["--"+m[1]+" "+m[2]] = true
	}
	twins := map[string]bool{}
	leaves("", slotd, func(path string, cmd *command) {
		fs := newFlags("slotd " + path)
		cmd.setup(fs)
		help := runCLI(t, nil, append(strings.Fields(path), "--help")...).stdout
		fs.fs.VisitAll(func(fl *flag.Flag) {
			what := "slotd " + path + " --" + fl.Name
			env := fs.env[fl.Name]
			if !strings.HasPrefix(env, "SLOTD_") {
				t.Errorf("%s has no SLOTD_* environment twin (%q)", what, env)
				return
			}
			if !regexp.MustCompile(`(?m)^  --` + regexp.QuoteMeta(fl.Name) + `\b.*\n .*env ` + env + `\)$`).MatchString(help) {
				t.Errorf("%s: the usage does not name %s:\n%s", what, env, help)
			}
			if !inReadme["--"+fl.Name+" "+env] {
				t.Errorf("%s: README's tables have no row | `--%s` | `%s` |", what, fl.Name, env)
			}
			twins["--"+fl.Name+" "+env] = true
			v := twinValue(fl, fs.kind[fl.Name])
			read := newFlags("x")
			cmd.setup(read)
			if _, err := read.parse(nil, func(k string) (string, bool) { return v, k == env }); err != nil {
				t.Errorf("%s: %s=%s: %v", what, env, v, err)
				return
			}
			if got := read.fs.Lookup(fl.Name).Value.String(); got != v {
				t.Errorf("%s: with %s=%s the flag is %q; the variable is not read", what, env, v, got)
			}
			given := newFlags("x")
			cmd.setup(given)
			if _, err := given.parse([]string{"--" + fl.Name + "=" + fl.DefValue}, func(k string) (string, bool) { return v, k == env }); err != nil {
				t.Fatal(err)
			}
			if got := given.fs.Lookup(fl.Name).Value.String(); got != fl.DefValue {
				t.Errorf("%s: the flag on the command line (%q) lost to %s (%q)", what, fl.DefValue, env, got)
			}
		})
	})
	for pair := range inReadme {
		if !twins[pair] {
			t.Errorf("README's tables list %s, which no command has", pair)
		}
	}
}
