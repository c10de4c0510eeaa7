package server

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/app/mcp"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/setting"
)

// WithDefaults returns a copy, filling the components' Configs too, and
// Validate names a component's setting by its path.
func TestConfigWithDefaultsAndValidate(t *testing.T) {
	t.Parallel()
	in := Config{Store: "memory"}
	got := in.WithDefaults()
	if in.Listen != "" || in.Session.Clock != nil || in.MCP.MaxSessions != 0 {
		t.Errorf("WithDefaults changed its receiver: %+v", in)
	}
	if got.Listen == "" || got.Session.MaxAttempts == 0 || got.Session.Clock == nil || got.Limits.MaxInFlight != api.DefaultMaxInFlight ||
		got.MCP.MaxBodyBytes != maxHTTPBody || got.MCP.CallTimeout != got.Limits.DefaultDeadline || got.HTTPMaxUnauthConns != 512 {
		t.Errorf("WithDefaults = %+v", got)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate of the defaults: %v", err)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Store: "memory", Session: session.Config{MaxOpenSessions: -1}}, "Session.MaxOpenSessions"},
		{Config{Store: "memory", Limits: api.Limits{MaxInFlight: -1}}, "Limits.MaxInFlight"},
		{Config{Store: "memory", MCP: mcp.Limits{FormTimeout: -time.Second}}, "MCP.FormTimeout"},
		{Config{Store: "memory", HTTPMaxUnauthConns: -1}, "HTTPMaxUnauthConns"},
		{Config{Store: "postgres"}, "DatabaseURL"},
		{Config{Store: "mysql"}, "Store"},
	} {
		err := tc.cfg.WithDefaults().Validate()
		var bad *setting.Error
		if !errors.As(err, &bad) || bad.Field != tc.want {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", tc.cfg, err, tc.want)
		}
		if _, err := New(tc.cfg, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error naming %s", tc.cfg, err, tc.want)
		}
	}
}
