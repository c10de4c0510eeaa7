package api

import (
	"context"

	"github.com/slotd/slotd/internal/auth"
)

// TenantFrom is the tenant a call is scoped to; "" when the server runs
// without API keys.
func TenantFrom(ctx context.Context) string { return auth.From(ctx).Tenant }
