package main

import (
	"net"
	"os"
	"regexp"
	"strings"
	"testing"
)

// What a newcomer gets wrong first gets an answer that says what to do:
// the value a flag wants, the flag and variable of an address in use, the
// same exit code for the same mistake in every command.
func TestUsageMistakesSayWhatToDo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		args []string
		code int
		want string
	}{
		{nil, []string{"serve", "--stale-after", "5"}, exitUsage, `invalid value "5" for --stale-after: want a duration such as 30s, 15m or 24h`},
		{nil, []string{"serve", "--ttl=1 day"}, exitUsage, `for --ttl: want a duration such as 30s, 15m or 24h`},
		{nil, []string{"serve", "--max-attempts", "three"}, exitUsage, `invalid value "three" for --max-attempts: want a whole number`},
		{nil, []string{"serve", "--mcp=yes please"}, exitUsage, `invalid value "yes please" for --mcp: want true or false`},
		{map[string]string{"SLOTD_TTL": "5"}, []string{"serve"}, exitUsage, `SLOTD_TTL is not a duration such as 30s, 15m or 24h`},
		// A missing database URL is a command given wrongly, for serve as for migrate.
		{nil, []string{"serve"}, exitUsage, `--database-url or SLOTD_DATABASE_URL is required`},
		{nil, []string{"migrate"}, exitUsage, `--database-url or SLOTD_DATABASE_URL is required`},
		{nil, []string{"bench", "--conversations", "0", "--database-url", "postgres://127.0.0.1/x"}, exitUsage, `slotd bench: at least one conversation (--conversations)`},
		{nil, []string{"bench"}, exitUsage, `slotd bench: a Postgres URL is needed (--database-url or SLOTD_DATABASE_URL)`},
		{nil, []string{"bench", "--rounds", "-1", "--database-url", "postgres://127.0.0.1/x"}, exitUsage, `--rounds`},
		{nil, []string{"bench", "--turns", "2", "--rounds", "3", "--database-url", "postgres://127.0.0.1/x"}, exitUsage, `2 turns (--turns) cannot be split over 3 rounds`},
	} {
		r := runCLI(t, tc.env, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("slotd %v: exit %d, stderr %q; want exit %d saying %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
		if strings.Contains(r.stderr, "bench: bench:") || strings.Contains(r.stderr, "parse error") {
			t.Errorf("slotd %v: stderr %q repeats a prefix or says only \"parse error\"", tc.args, r.stderr)
		}
	}
}

// An address another process holds is named with its flag and variable.
func TestAddressInUseNamesItsFlag(t *testing.T) {
	t.Parallel()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	for _, tc := range []struct{ flag, env string }{
		{"--listen", "SLOTD_LISTEN"}, {"--http-listen", "SLOTD_HTTP_LISTEN"}, {"--metrics-listen", "SLOTD_METRICS_LISTEN"},
	} {
		args := []string{"serve", "--store", "memory", "--contracts", "../../contracts", "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"}
		for i := range args {
			if args[i] == tc.flag {
				args[i+1] = held.Addr().String()
			}
		}
		r := runCLI(t, nil, args...)
		if r.code != exitError || !strings.Contains(r.stderr, tc.flag+" or "+tc.env) || !strings.Contains(r.stderr, "address already in use") {
			t.Errorf("%s taken: exit %d, stderr %q; want exit 1 naming %s and %s", tc.flag, r.code, r.stderr, tc.flag, tc.env)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	line := regexp.MustCompile(`^slotd \S+ commit \S+ go1\.\d+\S*\n$`)
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := runCLI(t, nil, args...)
		if r.code != exitOK || !line.MatchString(r.stdout) || r.stderr != "" {
			t.Errorf("slotd %v: exit %d, stdout %q, stderr %q; want one line with the version, commit and Go version", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := runCLI(t, nil, "version", "extra"); r.code != exitUsage {
		t.Errorf("slotd version extra: exit %d, want %d", r.code, exitUsage)
	}
}

// lint reports every mistake of a file at once, and takes a file as well
// as a folder.
func TestLintReportsEveryMistake(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := dir + "/bank.refund.json"
	src := `{"type": "object", "description": "Refund a payment.", "x-slotd": {"name": "bank.refund"},
  "properties": {
    "amount": {"type": "string", "x-slotd": {"normalize": "amountt"}},
    "card_last4": {"type": "string", "x-slotd": {"normalize": "last_digits", "max_attempts": -2}},
    "reason": {"type": "string", "enum": ["fraud", "duplicate"]}
  },
  "required": ["amount", "reason", "operation_id"]}`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{file, dir} {
		r := runCLI(t, nil, "contract", "lint", target)
		if r.code != exitError {
			t.Errorf("lint %s: exit %d, want 1\n%s%s", target, r.code, r.stdout, r.stderr)
		}
		for _, want := range []string{"#/properties/amount: error", "#/properties/card_last4: error", `unknown property "operation_id"`} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("lint %s does not report %q:\n%s%s", target, want, r.stdout, r.stderr)
			}
		}
	}
}
