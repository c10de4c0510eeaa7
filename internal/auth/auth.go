// Package auth decides who a call is: a tenant (by API key), an operator
// (by admin key), or, on a server without keys, the default tenant on
// loopback. Keys are compared in constant time and never logged.
package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"slices"
	"strings"

	"google.golang.org/grpc/metadata"

	"github.com/slotd/slotd/problem"
)

// Principal is who a call is made by.
type Principal struct {
	// Tenant scopes every conversation the call touches.
	Tenant string
	// Admin calls may use AdminService.
	Admin bool
	// Name names an admin principal in the records of what it did (an
	// erasure): the name of a "name:key" entry of SLOTD_ADMIN_KEYS, else
	// "key-" and the first 8 hex digits of the key's SHA-256, which tells
	// keys apart without giving any away; "loopback" on a server without
	// keys. Never the key.
	Name string
}

// LoopbackName is the Name of the principal of a server without keys.
const LoopbackName = "loopback"

type key struct {
	digest [32]byte
	who    Principal
}

// Keys is the set of keys a server accepts. The zero value accepts every
// call as the default tenant, with admin rights: a server without keys must
// listen on loopback only (see CheckListen).
type Keys struct {
	keys    []key
	tenants int // how many of keys are tenant keys
}

// MinKeyLength is the shortest key accepted, in bytes.
const MinKeyLength = 16

// Parse reads SLOTD_API_KEYS ("tenant:key,tenant:key") and SLOTD_ADMIN_KEYS
// ("key,key" or "name:key,name:key"). Its errors name the variable and the
// entry by position, never the key.
func Parse(apiKeys, adminKeys string) (*Keys, error) {
	k := &Keys{}
	for i, item := range split(apiKeys) {
		tenant, secret, ok := strings.Cut(item, ":")
		if !ok || tenant == "" || secret == "" {
			return nil, fmt.Errorf("SLOTD_API_KEYS: entry %d is not tenant:key (the format is tenant:key,tenant:key, each key at least %d characters)", i+1, MinKeyLength)
		}
		if err := k.add(secret, Principal{Tenant: tenant}); err != nil {
			return nil, fmt.Errorf("SLOTD_API_KEYS: entry %d (tenant %q): %w", i+1, tenant, err)
		}
		k.tenants++
	}
	for i, item := range split(adminKeys) {
		secret, name := item, ""
		if n, s, ok := strings.Cut(item, ":"); ok {
			secret, name = s, n
		}
		if name == "" {
			d := sha256.Sum256([]byte(secret))
			name = fmt.Sprintf("key-%x", d[:4])
		}
		if err := k.add(secret, Principal{Admin: true, Name: name}); err != nil {
			return nil, fmt.Errorf("SLOTD_ADMIN_KEYS: entry %d: %w", i+1, err)
		}
	}
	return k, nil
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

func (k *Keys) add(secret string, who Principal) error {
	if len(secret) < MinKeyLength {
		return fmt.Errorf("the key has %d characters; a key has at least %d", len(secret), MinKeyLength)
	}
	d := sha256.Sum256([]byte(secret))
	for _, existing := range k.keys {
		if existing.digest == d {
			return fmt.Errorf("the key is listed twice (keys are unique across SLOTD_API_KEYS and SLOTD_ADMIN_KEYS)")
		}
	}
	k.keys = append(k.keys, key{digest: d, who: who})
	return nil
}

// Enabled reports whether any key is configured.
func (k *Keys) Enabled() bool { return k != nil && len(k.keys) > 0 }

// TenantKeys is how many tenant keys are configured. With admin keys and
// none of these, no call can take a turn: a turn needs a tenant's key.
func (k *Keys) TenantKeys() int {
	if k == nil {
		return 0
	}
	return k.tenants
}

// Tenants are the tenants the keys name, each once, in the order of
// their first key.
func (k *Keys) Tenants() []string {
	var out []string
	if k == nil {
		return out
	}
	for _, kk := range k.keys {
		if !kk.who.Admin && !slices.Contains(out, kk.who.Tenant) {
			out = append(out, kk.who.Tenant)
		}
	}
	return out
}

// Lookup finds the principal of a bearer key. Every configured key is
// compared, in constant time, whatever matches first.
func (k *Keys) Lookup(secret string) (Principal, bool) {
	d := sha256.Sum256([]byte(secret))
	var found Principal
	ok := 0
	for _, kk := range k.keys {
		if subtle.ConstantTimeCompare(d[:], kk.digest[:]) == 1 {
			found = kk.who
			ok = 1
		}
	}
	return found, ok == 1
}

// CheckListen refuses a non-loopback address when no key is configured.
func (k *Keys) CheckListen(addr string) error {
	if k.Enabled() {
		return nil
	}
	ok, err := Loopback(addr)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("without SLOTD_API_KEYS slotd listens on loopback only; %q is not a loopback address", addr)
	}
	return nil
}

// Loopback reports whether a listen address is on loopback only
// (127.0.0.0/8, ::1, localhost).
func Loopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

type principalKey struct{}

// From is the principal of a call; the default tenant when the server has no
// keys.
func From(ctx context.Context) Principal {
	p, _ := ctx.Value(principalKey{}).(Principal)
	return p
}

// With returns ctx carrying p, for embedding and tests.
func With(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// adminPrefix is the method prefix of AdminService.
const adminPrefix = "/slotd.v1.AdminService/"

// publicMethods need no key: health checks and reflection.
func public(method string) bool {
	return strings.HasPrefix(method, "/grpc.health.v1.") || strings.HasPrefix(method, "/grpc.reflection.")
}

// Authorize decides a call to method made with the request headers md,
// before its request is read: unauthenticated calls cost no decoding.
func (k *Keys) Authorize(ctx context.Context, md metadata.MD, method string) (context.Context, error) {
	if public(method) {
		return ctx, nil
	}
	if !k.Enabled() {
		return With(ctx, Principal{Admin: true, Name: LoopbackName}), nil
	}
	who, err := k.Check(md.Get("authorization"))
	if err != nil {
		return nil, err
	}
	return k.Allow(ctx, who, method)
}

// Allow admits a principal that Check found to a method: an admin key to
// AdminService, a tenant's key to the rest. It returns ctx carrying who.
// A call authenticated before it reached its service (an HTTP request, at
// the gateway's edge) is admitted by Allow alone.
func (k *Keys) Allow(ctx context.Context, who Principal, method string) (context.Context, error) {
	if public(method) {
		return ctx, nil
	}
	if !k.Enabled() {
		return With(ctx, Principal{Admin: true, Name: LoopbackName}), nil
	}
	admin := strings.HasPrefix(method, adminPrefix)
	switch {
	case admin && !who.Admin:
		return nil, problem.PermissionDenied("AdminService needs an admin key")
	case !admin && who.Admin:
		return nil, problem.PermissionDenied("an admin key cannot act for a tenant; use the tenant's key")
	}
	return With(ctx, who), nil
}

// Check finds the principal of the values of a request's authorization
// headers: exactly one, "Bearer <key>", with a configured key. On a server
// without keys anyone is the default tenant with admin rights.
func (k *Keys) Check(authorization []string) (Principal, error) {
	if !k.Enabled() {
		return Principal{Admin: true, Name: LoopbackName}, nil
	}
	switch len(authorization) {
	case 0:
		return Principal{}, problem.Unauthenticated("send authorization: Bearer <key>")
	case 1:
	default:
		return Principal{}, problem.Unauthenticated("send one authorization header, not several")
	}
	secret, ok := bearer(authorization[0])
	if !ok {
		return Principal{}, problem.Unauthenticated("send authorization: Bearer <key>")
	}
	who, ok := k.Lookup(secret)
	if !ok {
		return Principal{}, problem.Unauthenticated("the key is not valid")
	}
	return who, nil
}

func bearer(v string) (string, bool) {
	scheme, secret, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	secret = strings.TrimSpace(secret)
	return secret, secret != ""
}
