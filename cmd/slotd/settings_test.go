package main

import (
	"net"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/app/mcp"
	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/session"
)

// Every setting of serveSettings has an environment twin named after its
// flag, a row in README's table of slotd serve, a default or a meaning of
// its zero value, a usage, and a field of server.Config that is the one
// the flag fills.
func TestServeSettingsAreComplete(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	// The table after "`slotd serve`:", up to the first line that is not a row.
	_, table, ok := strings.Cut(string(readme), "`slotd serve`:\n\n")
	if !ok {
		t.Fatal("README has no table of slotd serve's settings")
	}
	var rows []string
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		rows = append(rows, line)
	}
	seen := map[string]bool{}
	for _, s := range serveSettings {
		if seen[s.flag] {
			t.Errorf("--%s is listed twice", s.flag)
		}
		seen[s.flag] = true
		if want := "SLOTD_" + strings.ToUpper(strings.ReplaceAll(s.flag, "-", "_")); s.env != want {
			t.Errorf("--%s: environment twin %q, want %q", s.flag, s.env, want)
		}
		if s.def == "" && s.zero == "" {
			t.Errorf("--%s has neither a default nor a meaning of its zero value", s.flag)
		}
		if strings.TrimSpace(s.doc) == "" {
			t.Errorf("--%s has no usage", s.flag)
		}
		row := regexp.MustCompile("^\\| `--" + regexp.QuoteMeta(s.flag) + "` \\| `" + s.env + "` \\| \\S")
		if !slicesContainsMatch(rows, row) {
			t.Errorf("--%s: README's table of slotd serve has no row | `--%s` | `%s` | meaning |", s.flag, s.flag, s.env)
		}
		var sc serveConfig
		p := reflect.ValueOf(s.bind(&sc))
		if s.field == "" {
			continue
		}
		f := reflect.ValueOf(&sc.Config).Elem()
		for _, name := range strings.Split(s.field, ".") {
			if f = f.FieldByName(name); !f.IsValid() {
				t.Fatalf("--%s: server.Config has no field %s", s.flag, s.field)
			}
		}
		// A flag said in other words (--mcp for DisableMCP) fills a field of
		// serveConfig's own, which finish turns into the Config's.
		base := reflect.ValueOf(&sc.Config).Pointer()
		inConfig := p.Pointer() >= base && p.Pointer() < base+reflect.TypeOf(sc.Config).Size()
		if inConfig != (f.Addr().Type() == p.Type() && f.Addr().Pointer() == p.Pointer()) {
			t.Errorf("--%s fills another field than %s", s.flag, s.field)
		}
	}
	if len(rows)-2 != len(serveSettings)+1 { // header, rule; --print-config
		t.Errorf("README's table of slotd serve has %d rows, the settings %d and --print-config", len(rows)-2, len(serveSettings))
	}
}

func slicesContainsMatch(lines []string, re *regexp.Regexp) bool {
	for _, l := range lines {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

// The flags' defaults that are the components' own come from their
// WithDefaults, not from a number repeated in the flags.
func TestServeDefaultsAreTheComponents(t *testing.T) {
	t.Parallel()
	cfg, err := parseServe(t, map[string]string{"SLOTD_STORE": "memory"})
	if err != nil {
		t.Fatal(err)
	}
	want := server.Config{}.WithDefaults()
	if cfg.Session.MaxAttempts != session.DefaultMaxAttempts || cfg.Session.MaxOpenSessions != session.DefaultMaxOpenSessions ||
		cfg.Limits.MaxInFlight != api.DefaultMaxInFlight || cfg.MCP.MaxSessions != mcp.DefaultMaxSessions ||
		cfg.MCP.FormTimeout != mcp.DefaultFormTimeout || cfg.Listen != want.Listen || cfg.ShutdownTimeout != want.ShutdownTimeout ||
		cfg.HTTPMaxUnauthConns != want.HTTPMaxUnauthConns || cfg.Contracts != want.Contracts {
		t.Errorf("serve's defaults are not the components': %+v", cfg)
	}
	// serve's own, which differ from a zero Config's.
	if cfg.HTTPListen != "127.0.0.1:8080" || cfg.MetricsListen != "127.0.0.1:9464" || cfg.Session.TTL != 24*time.Hour ||
		cfg.Retention != 720*time.Hour || cfg.JanitorInterval != time.Minute || cfg.DisableMCP || cfg.Session.TrustClientClock {
		t.Errorf("serve's own defaults changed: %+v", cfg)
	}
}

// A setting out of range is a command given wrongly, naming the flag and
// its variable, whether the component or serve refuses it.
func TestServeRefusesSettingsByName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--max-attempts", "0"}, "--max-attempts or SLOTD_MAX_ATTEMPTS must be at least 1, not 0"},
		{nil, []string{"--max-attempts=-2"}, "--max-attempts or SLOTD_MAX_ATTEMPTS must be at least 1, not -2"},
		{map[string]string{"SLOTD_MCP_SESSION_IDLE": "-5s"}, nil, "--mcp-session-idle or SLOTD_MCP_SESSION_IDLE must be more than 0"},
		{map[string]string{"SLOTD_MCP_FORM_TIMEOUT": "0s"}, nil, "--mcp-form-timeout or SLOTD_MCP_FORM_TIMEOUT must be more than 0"},
		{nil, []string{"--tenant-max-inflight", "-1"}, "--tenant-max-inflight or SLOTD_TENANT_MAX_INFLIGHT must be at least 0, not -1"},
		{nil, []string{"--stale-after", "-30m"}, "--stale-after or SLOTD_STALE_AFTER must be 0 or more"},
		{nil, []string{"--http-max-unauth-conns-per-source", "0"}, "--http-max-unauth-conns-per-source or SLOTD_HTTP_MAX_UNAUTH_CONNS_PER_SOURCE must be at least 1"},
		{map[string]string{"SLOTD_STORE": "postgres"}, nil, "--database-url or SLOTD_DATABASE_URL is required with the postgres store"},
		{nil, []string{"--store", "sqlite"}, `--store "sqlite": one of postgres, memory`},
	} {
		env := map[string]string{"SLOTD_STORE": "memory"}
		for k, v := range tc.env {
			env[k] = v
		}
		r := runCLI(t, env, append([]string{"serve", "--print-config"}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("serve %v %v: exit %d, stderr %q, stdout %q; want exit 2 saying %q", tc.env, tc.args, r.code, r.stderr, r.stdout, tc.want)
		}
	}
	// Zero where zero means something is taken.
	for _, args := range [][]string{{"--retention", "0"}, {"--janitor-interval", "0"}, {"--ttl", "0"}, {"--tenant-max-inflight", "0"}, {"--http-listen="}} {
		if r := runCLI(t, map[string]string{"SLOTD_STORE": "memory"}, append([]string{"serve", "--print-config"}, args...)...); r.code != exitOK {
			t.Errorf("serve %v: exit %d, %s", args, r.code, r.stderr)
		}
	}
}

// serve --print-config prints every setting once, as flags, variables and
// defaults make it, with the secrets redacted, and exits without listening
// or connecting anywhere.
func TestServePrintConfig(t *testing.T) {
	t.Parallel()
	// One address is both the database's and the gRPC listener's: serve
	// would fail to listen on it, and a connection to it would be seen.
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	addr := held.Addr().String()
	env := map[string]string{
		"SLOTD_DATABASE_URL": "postgres://slotd:s3cret-pa55%21@" + addr + "/slotd?sslmode=disable&application_name=slotd",
		"SLOTD_API_KEYS":     "bank:zq7-bank-secret-0123456, shop:zq7-shop-secret-0123456",
		"SLOTD_ADMIN_KEYS":   "zq7-bare-admin-secret-01,ops:zq7-ops-secret-0123456",
		"SLOTD_MAX_INFLIGHT": "100",
		"SLOTD_TTL":          "3h",
		"SLOTD_CLIENT_CLOCK": "trust",
		"SLOTD_MEMORY_LIMIT": "512MiB",
		"SLOTD_MCP":          "false",
	}
	r := runCLI(t, env, "serve", "--print-config", "--listen", addr, "--ttl", "2h", "--tenant-limits", "bank:60")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, secret := range []string{"s3cret", "pa55", "zq7-"} {
		if strings.Contains(r.stdout, secret) {
			t.Errorf("--print-config shows %q:\n%s", secret, r.stdout)
		}
	}
	for _, want := range []string{
		"SLOTD_DATABASE_URL=postgres://slotd:REDACTED@" + addr + "/slotd?sslmode=disable&application_name=slotd\n",
		"SLOTD_API_KEYS=bank:REDACTED,shop:REDACTED\n",
		"SLOTD_ADMIN_KEYS=REDACTED,ops:REDACTED\n",
		"SLOTD_LISTEN=" + addr + "\n",
		"SLOTD_MAX_INFLIGHT=100\n",
		"SLOTD_TTL=2h0m0s\n", // the flag over the variable
		"SLOTD_STALE_AFTER=30m0s\n",
		"SLOTD_MAX_ATTEMPTS=3\n",
		"# SLOTD_MCP: no /mcp\nSLOTD_MCP=false\n",
		"SLOTD_CLIENT_CLOCK=trust\n",
		"SLOTD_MEMORY_LIMIT=512MiB\n",
		"SLOTD_TENANT_LIMITS=bank:60\n",
		"# SLOTD_TENANT_MAX_INFLIGHT: --max-inflight divided evenly among the tenants of --api-keys\nSLOTD_TENANT_MAX_INFLIGHT=0\n",
		"SLOTD_STORE=postgres\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--print-config lacks %q:\n%s", want, r.stdout)
		}
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		if !strings.HasPrefix(l, "# ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != len(serveSettings) {
		t.Errorf("%d lines for %d settings:\n%s", len(lines), len(serveSettings), r.stdout)
	}
	for i, s := range serveSettings {
		if i < len(lines) && !strings.HasPrefix(lines[i], s.env+"=") {
			t.Errorf("line %d is %q, want %s", i+1, lines[i], s.env)
		}
	}
	held.(*net.TCPListener).SetDeadline(time.Now().Add(100 * time.Millisecond))
	if c, err := held.Accept(); err == nil {
		c.Close()
		t.Error("--print-config connected to the database")
	}
}

func TestRedactDatabaseURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://slotd:hunter2@db:5432/slotd":                       "postgres://slotd:REDACTED@db:5432/slotd",
		"postgresql://slotd@db/slotd?password=hunter2&sslmode=require": "postgresql://slotd@db/slotd?password=REDACTED&sslmode=require",
		"postgres://slotd@db/slotd":                                    "postgres://slotd@db/slotd",
		"host=db user=slotd password=hunter2 dbname=slotd":             "host=db user=slotd password=REDACTED dbname=slotd",
		"host=db password = 'hunter 2\\' x' dbname=slotd":              "host=db password = REDACTED dbname=slotd",
		"postgres://slotd:hunter2@[::1/slotd":                          "REDACTED",
	} {
		if got := redactDatabaseURL(in); got != want {
			t.Errorf("redactDatabaseURL(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(redactDatabaseURL(in), "hunter") {
			t.Errorf("redactDatabaseURL(%q) shows the password", in)
		}
	}
}
