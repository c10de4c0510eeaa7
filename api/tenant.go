package api

import "context"

type tenantKey struct{}

// WithTenant returns a context whose calls are scoped to tenant.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantFrom is the tenant a call is scoped to; "" when the server runs
// without API keys.
func TenantFrom(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}
