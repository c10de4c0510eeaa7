package main

import (
	"strings"
	"testing"

	"github.com/slotd/slotd/internal/server"
)

// serve -h prints no secret: the database URL and the keys come from the
// environment without becoming flag defaults.
func TestServeUsageHoldsNoSecret(t *testing.T) {
	t.Setenv("SLOTD_DATABASE_URL", "postgres://slotd:s3cret-pa55@db.internal:5432/slotd")
	t.Setenv("SLOTD_API_KEYS", "bank:zq7-bank-secret-0123456")
	t.Setenv("SLOTD_ADMIN_KEYS", "ops:zq7-ops-secret-0123456")
	var cfg server.Config
	fs, parse := serveFlags(&cfg)
	var out strings.Builder
	fs.SetOutput(&out)
	fs.PrintDefaults()
	for _, secret := range []string{"s3cret", "zq7-", "db.internal"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("serve -h shows %q:\n%s", secret, out.String())
		}
	}
	if err := parse(nil); err != nil {
		t.Fatal(err)
	}
	if cfg.DatabaseURL == "" || cfg.APIKeys == "" || cfg.AdminKeys == "" {
		t.Errorf("the environment's secrets were not read: %+v", cfg)
	}
	if cfg.TrustClientClock {
		t.Error("serve trusts client clocks by default; want a window")
	}
	if err := parse([]string{"--client-clock", "sometimes"}); err == nil {
		t.Error("--client-clock sometimes was accepted")
	}
}

func TestServeMCPFlag(t *testing.T) {
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
		t.Setenv("SLOTD_MCP", tc.env)
		var cfg server.Config
		_, parse := serveFlags(&cfg)
		if err := parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if cfg.DisableMCP != tc.off {
			t.Errorf("SLOTD_MCP=%q %v: DisableMCP %v, want %v", tc.env, tc.args, cfg.DisableMCP, tc.off)
		}
	}
}
