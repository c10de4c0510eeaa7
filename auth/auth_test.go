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

func TestAuthorize(t *testing.T) {
	t.Parallel()
	k := testKeys(t)
	const turn = "/slotd.v1.SlotService/Turn"
	const list = "/slotd.v1.AdminService/ListSessions"
	for _, tc := range []struct {
		name, method, header string
		wantCode             string
		wantTenant           string
	}{
		{"tenant key", turn, "Bearer " + bankKey, "", "bank"},
		{"other tenant", turn, "Bearer " + shopKey, "", "shop"},
		{"lower-case scheme", turn, "bearer " + shopKey, "", "shop"},
		{"no key", turn, "", "Unauthenticated", ""},
		{"wrong key", turn, "Bearer " + bankKey + "x", "Unauthenticated", ""},
		{"basic scheme", turn, "Basic " + bankKey, "Unauthenticated", ""},
		{"tenant key on admin", list, "Bearer " + bankKey, "PermissionDenied", ""},
		{"admin key on admin", list, "Bearer " + adminKey, "", ""},
		{"admin key on tenant RPC", turn, "Bearer " + adminKey, "PermissionDenied", ""},
		{"health needs no key", "/grpc.health.v1.Health/Check", "", "", ""},
		{"two keys", turn, "Bearer " + bankKey + "\nBearer " + shopKey, "Unauthenticated", ""},
		{"the same key twice", turn, "Bearer " + bankKey + "\nBearer " + bankKey, "Unauthenticated", ""},
		{"a bad key, then a good one", turn, "Bearer nope\nBearer " + bankKey, "Unauthenticated", ""},
		{"scheme without a key", turn, "Bearer ", "Unauthenticated", ""},
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
			case tc.wantCode == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantCode != "" && !errors.As(err, &pe):
				t.Fatalf("err = %v, want a %s problem", err, tc.wantCode)
			case tc.wantCode != "":
				if pe.Code != tc.wantCode || pe.Problem.Retryable || !pe.Problem.OwnerActionRequired {
					t.Errorf("problem = %+v, want %s, not retryable, owner action", pe, tc.wantCode)
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
