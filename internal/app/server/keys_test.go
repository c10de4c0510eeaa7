package server_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

// Admin keys without a tenant key leave no call that may take a turn:
// serve says so loudly when it starts, and not otherwise.
func TestAdminKeysAloneWarn(t *testing.T) {
	t.Parallel()
	const warning = "ADMIN KEYS WITHOUT TENANT KEYS"
	for _, tc := range []struct {
		name, api, admin string
		warn             bool
	}{
		{"admin keys alone", "", "ops:ops-admin-key-0123456789", true},
		{"admin and tenant keys", "bank:bank-key-0123456789abc", "ops:ops-admin-key-0123456789", false},
		{"tenant keys alone", "bank:bank-key-0123456789abc", "", false},
		{"no keys", "", "", false},
	} {
		var logs servertest.LogBuffer
		srv, err := server.New(server.Config{Listen: "127.0.0.1:0", HTTPListen: "", MetricsListen: "", Contracts: "../../../contracts",
			Store: "memory", APIKeys: tc.api, AdminKeys: tc.admin}, slog.New(slog.NewJSONHandler(&logs, nil)))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// Run on a done context: stop at once and release the listener.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := srv.Run(ctx); err != nil {
			t.Errorf("%s: Run: %v", tc.name, err)
		}
		got := strings.Contains(logs.String(), warning)
		if got != tc.warn {
			t.Errorf("%s: warned %v, want %v; the log:\n%s", tc.name, got, tc.warn, logs.String())
		}
		if tc.warn && (!strings.Contains(logs.String(), `"level":"WARN"`) || !strings.Contains(logs.String(), "SLOTD_API_KEYS")) {
			t.Errorf("%s: the warning is not a WARN naming SLOTD_API_KEYS:\n%s", tc.name, logs.String())
		}
		for _, secret := range []string{"0123456789"} {
			if strings.Contains(logs.String(), secret) {
				t.Errorf("%s: the log shows a key:\n%s", tc.name, logs.String())
			}
		}
	}
}
