package main

import (
	"strings"
	"testing"

	"github.com/slotd/slotd/internal/app/server"
)

// parseServe parses serve's flags and environment as slotd serve does.
func parseServe(t *testing.T, env map[string]string, args ...string) (server.Config, error) {
	t.Helper()
	var sc serveConfig
	fs := newFlags("slotd serve")
	finish := serveFlags(fs, &sc)
	if _, err := fs.parse(args, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		return sc.Config, err
	}
	err := finish()
	return sc.Config, err
}

// serve --help prints no secret: the database URL and the keys come from
// the environment without becoming flag defaults.
func TestServeUsageHoldsNoSecret(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"SLOTD_DATABASE_URL": "postgres://slotd:s3cret-pa55@db.internal:5432/slotd",
		"SLOTD_API_KEYS":     "bank:zq7-bank-secret-0123456",
		"SLOTD_ADMIN_KEYS":   "ops:zq7-ops-secret-0123456",
	}
	r := runCLI(t, env, "serve", "--help")
	for _, secret := range []string{"s3cret", "zq7-", "db.internal"} {
		if strings.Contains(r.stdout, secret) {
			t.Errorf("serve --help shows %q:\n%s", secret, r.stdout)
		}
	}
	cfg, err := parseServe(t, env)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DatabaseURL != env["SLOTD_DATABASE_URL"] || cfg.APIKeys != env["SLOTD_API_KEYS"] || cfg.AdminKeys != env["SLOTD_ADMIN_KEYS"] {
		t.Errorf("the environment's secrets were not read: %+v", cfg)
	}
	if cfg.Session.TrustClientClock {
		t.Error("serve trusts client clocks by default; want a window")
	}
	if cfg, err = parseServe(t, env, "--database-url", "postgres://127.0.0.1/other"); err != nil || cfg.DatabaseURL != "postgres://127.0.0.1/other" {
		t.Errorf("--database-url did not win over SLOTD_DATABASE_URL: %q, %v", cfg.DatabaseURL, err)
	}
}

func TestServeMCPFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  string
		args []string
		off  bool
	}{
		{"", nil, false},
		{"false", nil, true},
		{"", []string{"--mcp=false"}, true},
		{"false", []string{"--mcp=true"}, false},
	} {
		cfg, err := parseServe(t, map[string]string{"SLOTD_MCP": tc.env, "SLOTD_STORE": "memory"}, tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.DisableMCP != tc.off {
			t.Errorf("SLOTD_MCP=%q %v: DisableMCP %v, want %v", tc.env, tc.args, cfg.DisableMCP, tc.off)
		}
	}
}

// An empty string variable is a value (SLOTD_HTTP_LISTEN= serves no
// gateway); an empty number or duration is no value.
func TestServeEmptyVariables(t *testing.T) {
	t.Parallel()
	cfg, err := parseServe(t, map[string]string{"SLOTD_HTTP_LISTEN": "", "SLOTD_TTL": "", "SLOTD_MAX_ATTEMPTS": "", "SLOTD_STORE": "memory"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTPListen != "" || cfg.Session.TTL == 0 || cfg.Session.MaxAttempts != 3 {
		t.Errorf("http-listen %q, ttl %v, max-attempts %d; want none, the default 24h and 3", cfg.HTTPListen, cfg.Session.TTL, cfg.Session.MaxAttempts)
	}
}
