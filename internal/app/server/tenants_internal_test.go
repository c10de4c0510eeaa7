package server

import (
	"strings"
	"testing"

	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/auth"
)

func TestTenantLimits(t *testing.T) {
	t.Parallel()
	keys, err := auth.Parse("bank:bank-key-0123456789abcdef,shop:shop-key-0123456789abcdef,bank:bank-key-2-0123456789abcdef,"+
		"cafe:cafe-key-0123456789abcdef", "ops-admin-key-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tenantLimits(api.Limits{MaxInFlight: 300, MaxRunning: 8}, " bank:64 , shop: 16", keys)
	if err != nil {
		t.Fatal(err)
	}
	// Three tenants (bank has two keys, the admin key none).
	if got.TenantMaxInFlight != 100 || got.TenantMaxRunning != 2 || got.TenantLimits["bank"] != 64 ||
		got.TenantLimits["shop"] != 16 || len(got.TenantLimits) != 2 {
		t.Errorf("limits = %+v, want 100 in flight and 2 running each, bank 64 and shop 16", got)
	}
	if got, _ := tenantLimits(api.Limits{TenantMaxInFlight: 7}, "", keys); got.TenantMaxInFlight != 7 || got.TenantLimits != nil {
		t.Errorf("--tenant-max-inflight 7 became %+v", got)
	}
	if got, _ := tenantLimits(api.Limits{}, "", nil); got.TenantMaxInFlight != api.DefaultMaxInFlight {
		t.Errorf("without keys a tenant's share = %d, want all %d", got.TenantMaxInFlight, api.DefaultMaxInFlight)
	}
	for _, bad := range []string{"bank", "bank:", ":5", "bank:0", "bank:-3", "bank:1e3", "bank:64,bank:8",
		"ops:5", "Bank:5", "bank:99999999999999999999999", "bank:64,,shop:x"} {
		_, err := tenantLimits(api.Limits{}, bad, keys)
		if err == nil {
			t.Errorf("SLOTD_TENANT_LIMITS=%q accepted", bad)
			continue
		}
		if !strings.HasPrefix(err.Error(), "SLOTD_TENANT_LIMITS: entry ") || strings.Contains(err.Error(), "99999999999999999999999") {
			t.Errorf("SLOTD_TENANT_LIMITS=%q: %v", bad, err)
		}
	}
}
