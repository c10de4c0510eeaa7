package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

// The console's sign-in page and assets are the HTTP listener's only
// paths open without a key; with --console=false /console/ is 404, and
// every other path needs a key as before.
func TestConsoleMount(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		srv, err := server.New(server.Config{Listen: "127.0.0.1:0", HTTPListen: "127.0.0.1:0", MetricsListen: "",
			Contracts: "../../../contracts", Store: "memory", APIKeys: "acme:acme-key-0123456789abc",
			AdminKeys: "ops:ops-admin-key-0123456789", DisableConsole: !on}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		servertest.Run(t, srv.Run)
		base := "http://" + srv.HTTPAddr()
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		status := func(method, path string) (int, string) {
			t.Helper()
			req, _ := http.NewRequest(method, base+path, nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
			return resp.StatusCode, resp.Header.Get("Content-Security-Policy")
		}
		want := map[string]int{"/console/signin": 200, "/console/static/console.css": 200, "/console/": 303, "/console/sessions": 303}
		if !on {
			want = map[string]int{"/console/signin": 404, "/console/static/console.css": 404, "/console/": 404, "/console/sessions": 404}
		}
		for path, code := range want {
			got, csp := status(http.MethodGet, path)
			if got != code {
				t.Errorf("console %v: GET %s: %d, want %d", on, path, got, code)
			}
			if on && !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("console %v: GET %s: CSP %q", on, path, csp)
			}
		}
		// The rest of the listener still needs a key.
		for _, path := range []string{"/v1/contracts", "/mcp", "/consolex", "/v1/console/signin"} {
			if got, _ := status(http.MethodGet, path); got != http.StatusUnauthorized {
				t.Errorf("console %v: GET %s without a key: %d, want 401", on, path, got)
			}
		}
	}
}
