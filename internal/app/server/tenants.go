package server

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/auth"
)

// tenantLimits fills the tenants' shares of the in-flight turns, and of
// those that run at once (MaxRunning, divided evenly among the tenants the
// keys name): each tenant's share is TenantMaxInFlight, by default
// MaxInFlight divided evenly among the tenants (so every tenant keeps its
// places whatever the others send), and SLOTD_TENANT_LIMITS
// ("tenant:n,tenant:n") overrides it for the tenants it names. A tenant
// it names must have a key: a misspelt name would otherwise leave the
// tenant it meant at the default without a word.
func tenantLimits(limits api.Limits, overrides string, keys *auth.Keys) (api.Limits, error) {
	if limits.MaxInFlight <= 0 {
		limits.MaxInFlight = api.DefaultMaxInFlight
	}
	tenants := keys.Tenants()
	if limits.TenantMaxInFlight <= 0 {
		limits.TenantMaxInFlight = max(1, limits.MaxInFlight/max(1, len(tenants)))
	}
	if limits.MaxRunning <= 0 {
		limits.MaxRunning = 4 * runtime.GOMAXPROCS(0)
	}
	limits.TenantMaxRunning = max(1, limits.MaxRunning/max(1, len(tenants)))
	items := split(overrides)
	if len(items) == 0 {
		return limits, nil
	}
	limits.TenantLimits = make(map[string]int, len(items))
	for i, item := range items {
		tenant, n, ok := strings.Cut(item, ":")
		v, err := strconv.Atoi(strings.TrimSpace(n))
		tenant = strings.TrimSpace(tenant)
		switch {
		case !ok || tenant == "" || err != nil || v < 1:
			return limits, fmt.Errorf("SLOTD_TENANT_LIMITS: entry %d is not tenant:n with n at least 1 (the format is tenant:n,tenant:n)", i+1)
		case !slices.Contains(tenants, tenant):
			return limits, fmt.Errorf("SLOTD_TENANT_LIMITS: entry %d names tenant %q, which has no key in SLOTD_API_KEYS", i+1, tenant)
		}
		if _, dup := limits.TenantLimits[tenant]; dup {
			return limits, fmt.Errorf("SLOTD_TENANT_LIMITS: entry %d names tenant %q again", i+1, tenant)
		}
		limits.TenantLimits[tenant] = v
	}
	return limits, nil
}

func split(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
