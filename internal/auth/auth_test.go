package auth

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"

	"github.com/slotd/slotd/problem"
)

const (
	bankKey  = "bank-key-0123456789abcdef"
	shopKey  = "shop-key-0123456789abcdef"
	adminKey = "admin-key-0123456789abcdef"
)

func testKeys(t *testing.T) *Keys {
	t.Helper()
	k, err := Parse(" bank:"+bankKey+", shop:"+shopKey+" ", "ops:"+adminKey)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestParseRefusesBadKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ api, admin string }{
		{"bank", ""},
		{":" + bankKey, ""},
		{"bank:", ""},
		{"bank:short", ""},
		{"bank:" + bankKey + ",shop:" + bankKey, ""},
		{"", "short"},
		{"bank:" + bankKey, bankKey},
	} {
		if _, err := Parse(tc.api, tc.admin); err == nil {
			t.Errorf("Parse(%q, %q) accepted", tc.api, tc.admin)
		}
	}
}

// Parse's errors say the variable, the entry, the format and the minimum
// length, and never the key.
func TestParseErrorsExplain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		api, admin string
		want       []string
	}{
		{"bank:" + bankKey + ",shop", "", []string{"SLOTD_API_KEYS", "entry 2", "tenant:key", "16 characters"}},
		{"bank:tooshort-9", "", []string{"SLOTD_API_KEYS", "entry 1", `"bank"`, "10 characters", "at least 16"}},
		{"", adminKey + ",ops:tooshort-9", []string{"SLOTD_ADMIN_KEYS", "entry 2", "at least 16"}},
		{"bank:" + bankKey, bankKey, []string{"SLOTD_ADMIN_KEYS", "listed twice"}},
	} {
		_, err := Parse(tc.api, tc.admin)
		if err == nil {
			t.Errorf("Parse(%q, %q) accepted", tc.api, tc.admin)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Parse(%q, %q): %q does not say %q", tc.api, tc.admin, err, w)
			}
		}
		for _, secret := range []string{bankKey, adminKey, "tooshort-9"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("Parse(%q, %q): %q shows a key", tc.api, tc.admin, err)
			}
		}
	}
	k, err := Parse("", "ops:"+adminKey)
	if err != nil || k.TenantKeys() != 0 || !k.Enabled() {
		t.Errorf("admin keys alone: %v, %d tenant keys; want keys on and none for tenants", err, k.TenantKeys())
	}
	if testKeys(t).TenantKeys() != 2 {
		t.Errorf("TenantKeys of bank and shop = %d, want 2", testKeys(t).TenantKeys())
	}
}

func TestAuthorize(t *testing.T) {
	t.Parallel()
	k := testKeys(t)
	const turn = "/slotd.v1.SlotService/Turn"
	const list = "/slotd.v1.AdminService/ListSessions"
	for _, tc := range []struct {
		name, method, header string
		wantKind             problem.Kind
		wantTenant           string
	}{
		{"tenant key", turn, "Bearer " + bankKey, 0, "bank"},
		{"other tenant", turn, "Bearer " + shopKey, 0, "shop"},
		{"lower-case scheme", turn, "bearer " + shopKey, 0, "shop"},
		{"no key", turn, "", problem.KindUnauthenticated, ""},
		{"wrong key", turn, "Bearer " + bankKey + "x", problem.KindUnauthenticated, ""},
		{"basic scheme", turn, "Basic " + bankKey, problem.KindUnauthenticated, ""},
		{"tenant key on admin", list, "Bearer " + bankKey, problem.KindPermissionDenied, ""},
		{"admin key on admin", list, "Bearer " + adminKey, 0, ""},
		{"admin key on tenant RPC", turn, "Bearer " + adminKey, problem.KindPermissionDenied, ""},
		{"health needs no key", "/grpc.health.v1.Health/Check", "", 0, ""},
		{"two keys", turn, "Bearer " + bankKey + "\nBearer " + shopKey, problem.KindUnauthenticated, ""},
		{"the same key twice", turn, "Bearer " + bankKey + "\nBearer " + bankKey, problem.KindUnauthenticated, ""},
		{"a bad key, then a good one", turn, "Bearer nope\nBearer " + bankKey, problem.KindUnauthenticated, ""},
		{"scheme without a key", turn, "Bearer ", problem.KindUnauthenticated, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := metadata.MD{}
			for _, h := range strings.Split(tc.header, "\n") {
				if h != "" {
					md.Append("authorization", h)
				}
			}
			got, err := k.Authorize(context.Background(), md, tc.method)
			var pe *problem.Error
			switch {
			case tc.wantKind == 0 && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantKind != 0 && !errors.As(err, &pe):
				t.Fatalf("err = %v, want a %s problem", err, tc.wantKind)
			case tc.wantKind != 0:
				if pe.Kind != tc.wantKind || pe.Problem.Retryable || !pe.Problem.OwnerActionRequired {
					t.Errorf("problem = %+v, want %s, not retryable, owner action", pe, tc.wantKind)
				}
			default:
				if From(got).Tenant != tc.wantTenant {
					t.Errorf("tenant = %q, want %q", From(got).Tenant, tc.wantTenant)
				}
			}
		})
	}
}

func TestWithoutKeysEverythingIsTheDefaultTenantOnLoopback(t *testing.T) {
	t.Parallel()
	k, err := Parse("", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := k.Authorize(context.Background(), nil, "/slotd.v1.AdminService/ListSessions")
	if err != nil || From(ctx).Tenant != "" || !From(ctx).Admin {
		t.Fatalf("no keys: %v, %+v", err, From(ctx))
	}
	for _, addr := range []string{"127.0.0.1:50051", "[::1]:50051", "localhost:1", "127.0.0.2:9"} {
		if err := k.CheckListen(addr); err != nil {
			t.Errorf("CheckListen(%s): %v", addr, err)
		}
	}
	for _, addr := range []string{"0.0.0.0:50051", ":50051", "10.0.0.5:50051", "[::]:50051", "example.com:1"} {
		if err := k.CheckListen(addr); err == nil {
			t.Errorf("CheckListen(%s) accepted a non-loopback address without keys", addr)
		}
	}
	if err := testKeys(t).CheckListen("0.0.0.0:50051"); err != nil {
		t.Errorf("with keys any address is fine: %v", err)
	}
}

// An admin principal is named by its entry's name, or by a fingerprint of
// its key that holds no part of the key; never by the key.
func TestAdminPrincipalNames(t *testing.T) {
	t.Parallel()
	const named, unnamed = "0123456789abcdef-named", "fedcba9876543210-plain"
	k, err := Parse("", "oncall:"+named+","+unnamed)
	if err != nil {
		t.Fatal(err)
	}
	if who, ok := k.Lookup(named); !ok || who.Name != "oncall" {
		t.Errorf("the named key's principal = %+v, %v; want the name oncall", who, ok)
	}
	who, ok := k.Lookup(unnamed)
	if !ok || !strings.HasPrefix(who.Name, "key-") || len(who.Name) != len("key-")+8 || strings.Contains(unnamed, who.Name[4:]) {
		t.Errorf("the unnamed key's principal = %+v, %v; want key- and 8 hex digits of its hash", who, ok)
	}
	if p, _ := (&Keys{}).Check(nil); p.Name != LoopbackName {
		t.Errorf("a server without keys names its principal %q, want %q", p.Name, LoopbackName)
	}
}
