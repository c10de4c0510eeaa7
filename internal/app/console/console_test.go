package console_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/app/console"
	"github.com/slotd/slotd/internal/auth"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
)

const (
	adminKey  = "ops-admin-key-0123456789"
	tenantKey = "acme-tenant-key-0123456789"
)

// logs is a log the test reads while the console writes it.
type logs struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fixture is a console over a memory store, with the turns a test makes
// through the SlotService as tenants.
type fixture struct {
	t       *testing.T
	engine  *session.Engine
	slots   *api.SlotService
	console *console.Console
	logs    *logs
	now     time.Time
	mu      sync.Mutex
	refused map[string]int
}

func newFixture(t *testing.T, apiKeys, adminKeys string, pageSize int) *fixture {
	t.Helper()
	return newFixtureDir(t, "../../../contracts", apiKeys, adminKeys, pageSize)
}

// newFixtureDir is newFixture with the contracts of dir.
func newFixtureDir(t *testing.T, dir, apiKeys, adminKeys string, pageSize int) *fixture {
	t.Helper()
	cat, err := contract.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, logs: &logs{}, now: time.Now(), refused: map[string]int{}}
	clock := func() time.Time { return f.now }
	f.engine = session.NewEngine(memstore.New(), cat, session.Config{Clock: clock})
	keys, err := auth.Parse(apiKeys, adminKeys)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewJSONHandler(f.logs, nil))
	f.slots = api.NewSlotService(f.engine)
	f.console, err = console.New(console.Config{Admin: api.NewAdminService(f.engine, log, clock), Engine: f.engine,
		Keys: keys, StaleAfter: 30 * time.Minute, TTL: 48 * time.Hour, PageSize: pageSize, Log: log, Clock: clock,
		OnRefuse: func(reason string) { f.mu.Lock(); f.refused[reason]++; f.mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// turn takes a turn of a tenant's conversation.
func (f *fixture) turn(tenant, conv, tool, turnID string, args map[string]any) *slotdv1.TurnResponse {
	f.t.Helper()
	st, err := structpb.NewStruct(args)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx := auth.With(context.Background(), auth.Principal{Tenant: tenant})
	resp, err := f.slots.Turn(ctx, &slotdv1.TurnRequest{ConversationId: conv, Tool: tool, TurnId: turnID, Arguments: st, Locale: "en"})
	if err != nil {
		f.t.Fatalf("turn %s of %s/%s: %v", turnID, tenant, conv, err)
	}
	return resp
}

// browser is a client with a cookie jar that does not follow redirects.
func browser(t *testing.T, srv *httptest.Server) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := *srv.Client()
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func post(t *testing.T, c *http.Client, u string, form url.Values) (*http.Response, string) {
	t.Helper()
	resp, err := c.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func csrf(t *testing.T, body string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token in the page:\n%s", body)
	}
	return m[1]
}

// signIn signs c in with key and returns the sign-in's response.
func signIn(t *testing.T, c *http.Client, base, key string) (*http.Response, string) {
	t.Helper()
	_, body := get(t, c, base+"/console/signin")
	return post(t, c, base+"/console/signin", url.Values{"csrf": {csrf(t, body)}, "key": {key}})
}

// signedIn is a client signed in with the admin key, and a CSRF token of
// its sign-in.
func signedIn(t *testing.T, srv *httptest.Server) (*http.Client, string) {
	t.Helper()
	c := browser(t, srv)
	if resp, body := signIn(t, c, srv.URL, adminKey); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in with the admin key: %d\n%s", resp.StatusCode, body)
	}
	_, body := get(t, c, srv.URL+"/console/sessions")
	return c, csrf(t, body)
}

func sessionCookie(resp *http.Response) *http.Cookie {
	for _, ck := range resp.Cookies() {
		if ck.Name == "slotd_console" && ck.Value != "" {
			return ck
		}
	}
	return nil
}

func TestSignIn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "acme:"+tenantKey, "ops:"+adminKey, 0)
	srv := httptest.NewServer(f.console)
	defer srv.Close()
	c := browser(t, srv)

	// No key: every page leads to the sign-in page, which needs none.
	for _, path := range []string{"/console/", "/console/sessions", "/console/story?session=x", "/console/contracts"} {
		resp, _ := get(t, c, srv.URL+path)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/signin" {
			t.Errorf("GET %s without signing in: %d to %q, want 303 to the sign-in page", path, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	resp, body := get(t, c, srv.URL+"/console/signin")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `name="key"`) {
		t.Fatalf("sign-in page: %d\n%s", resp.StatusCode, body)
	}

	for _, tc := range []struct {
		name, key, says string
		status          int
	}{
		{"wrong key", "not-a-key-of-this-server", "not valid", http.StatusUnauthorized},
		{"empty key", "", "not valid", http.StatusUnauthorized},
		{"tenant key", tenantKey, "tenant", http.StatusForbidden},
		{"admin key with spaces", " " + adminKey + " ", "not valid", http.StatusUnauthorized},
		{"markup", `"><script>alert(1)</script>`, "not valid", http.StatusUnauthorized},
	} {
		resp, body := signIn(t, c, srv.URL, tc.key)
		if resp.StatusCode != tc.status || !strings.Contains(body, tc.says) || sessionCookie(resp) != nil {
			t.Errorf("%s: %d, cookie %v, want %d saying %q\n%s", tc.name, resp.StatusCode, sessionCookie(resp), tc.status, tc.says, body)
		}
		if strings.Contains(body, "<script>alert") {
			t.Errorf("%s: the page echoes the key", tc.name)
		}
		if resp, _ := get(t, c, srv.URL+"/console/sessions"); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("%s: the sessions page opened: %d", tc.name, resp.StatusCode)
		}
	}
	f.mu.Lock()
	if f.refused["unauthenticated"] != 4 || f.refused["permission_denied"] != 1 {
		t.Errorf("refused sign-ins counted %v, want 4 unauthenticated and 1 permission_denied", f.refused)
	}
	f.mu.Unlock()
	if strings.Contains(f.logs.String(), tenantKey) || strings.Contains(f.logs.String(), adminKey) {
		t.Errorf("a key is in the log:\n%s", f.logs.String())
	}

	resp, _ = signIn(t, c, srv.URL, adminKey)
	ck := sessionCookie(resp)
	if resp.StatusCode != http.StatusSeeOther || ck == nil {
		t.Fatalf("admin key: %d, cookie %v", resp.StatusCode, ck)
	}
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.MaxAge <= 0 || ck.MaxAge > 8*3600 || ck.Path != "/console/" || ck.Secure {
		t.Errorf("session cookie %+v: want HttpOnly, SameSite=Strict, expiring within 8h, path /console/, not Secure over plaintext", ck)
	}
	if len(ck.Value) < 40 || strings.Contains(ck.Value, adminKey) {
		t.Errorf("session cookie value %q is no random id", ck.Value)
	}
	if resp, body := get(t, c, srv.URL+"/console/"); resp.StatusCode != http.StatusOK || !strings.Contains(body, "ops") {
		t.Fatalf("overview after signing in: %d\n%s", resp.StatusCode, body)
	}
	if !strings.Contains(f.logs.String(), `"msg":"console sign-in","by":"ops"`) {
		t.Errorf("the sign-in is not logged by the key's name:\n%s", f.logs.String())
	}

	// A cookie that is no sign-in's opens nothing.
	other := browser(t, srv)
	u, _ := url.Parse(srv.URL + "/console/")
	other.Jar.SetCookies(u, []*http.Cookie{{Name: "slotd_console", Value: ck.Value + "x", Path: "/console/"}})
	if resp, _ := get(t, other, srv.URL+"/console/sessions"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("forged cookie: %d, want the sign-in page", resp.StatusCode)
	}

	// Sign-out ends the sign-in on the server, not only in this browser.
	_, body = get(t, c, srv.URL+"/console/sessions")
	if resp, _ := post(t, c, srv.URL+"/console/signout", url.Values{"csrf": {csrf(t, body)}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", resp.StatusCode)
	}
	other.Jar.SetCookies(u, []*http.Cookie{{Name: "slotd_console", Value: ck.Value, Path: "/console/"}})
	if resp, _ := get(t, other, srv.URL+"/console/sessions"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the cookie of a signed-out sign-in still opens the console: %d", resp.StatusCode)
	}
}

// Under TLS the session cookie is Secure; and a sign-in ends when its time
// is up.
func TestSignInSecureAndExpiring(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "acme:"+tenantKey, "ops:"+adminKey, 0)
	srv := httptest.NewUnstartedServer(f.console)
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	defer srv.Close()
	c := browser(t, srv)
	resp, _ := signIn(t, c, srv.URL, adminKey)
	if ck := sessionCookie(resp); ck == nil || !ck.Secure || !ck.HttpOnly {
		t.Fatalf("cookie under TLS: %+v, want Secure and HttpOnly", ck)
	}
	if resp, _ := get(t, c, srv.URL+"/console/sessions"); resp.StatusCode != http.StatusOK {
		t.Fatalf("signed in: %d", resp.StatusCode)
	}
	f.now = f.now.Add(console.DefaultSignInTTL + time.Second)
	if resp, _ := get(t, c, srv.URL+"/console/sessions"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("a sign-in older than %s still opens the console: %d", console.DefaultSignInTTL, resp.StatusCode)
	}
}

// Every POST needs the sign-in's CSRF token: the sign-in form's own, the
// reset, the sign-out.
func TestCSRF(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "acme:"+tenantKey, "ops:"+adminKey, 0)
	f.turn("acme", "conv-1", "bank.open_dispute", "t1", map[string]any{"reason": "fraud"})
	srv := httptest.NewServer(f.console)
	defer srv.Close()

	// A sign-in form posted without the form's token (another site's form).
	c := browser(t, srv)
	if resp, _ := post(t, c, srv.URL+"/console/signin", url.Values{"key": {adminKey}}); resp.StatusCode != http.StatusForbidden || sessionCookie(resp) != nil {
		t.Errorf("sign-in without its CSRF token: %d, want 403 and no cookie", resp.StatusCode)
	}

	c, token := signedIn(t, srv)
	_, body := get(t, c, srv.URL+"/console/sessions")
	sel := regexp.MustCompile(`name="sel" value="([^"]+)"`).FindStringSubmatch(body)
	if sel == nil {
		t.Fatalf("no session to pick:\n%s", body)
	}
	// Another token: the last character changed (never to itself).
	other := token[:len(token)-1] + map[bool]string{true: "B", false: "A"}[strings.HasSuffix(token, "A")]
	for _, tc := range []struct {
		name string
		form url.Values
	}{
		{"no token", url.Values{"sel": {sel[1]}, "confirm": {"yes"}}},
		{"empty token", url.Values{"sel": {sel[1]}, "confirm": {"yes"}, "csrf": {""}}},
		{"another token", url.Values{"sel": {sel[1]}, "confirm": {"yes"}, "csrf": {other}}},
		{"two tokens, the first wrong", url.Values{"sel": {sel[1]}, "confirm": {"yes"}, "csrf": {"x", token}}},
	} {
		if resp, _ := post(t, c, srv.URL+"/console/sessions/reset", tc.form); resp.StatusCode != http.StatusForbidden {
			t.Errorf("reset, %s: %d, want 403", tc.name, resp.StatusCode)
		}
	}
	if resp, _ := post(t, c, srv.URL+"/console/signout", nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("sign-out without a token: %d, want 403", resp.StatusCode)
	}
	list, _, err := f.engine.ListSessions(context.Background(), session.Filter{AnyTenant: true, Status: session.Active})
	if err != nil || len(list) != 1 {
		t.Fatalf("a POST without its token reset a session: %d active, %v", len(list), err)
	}
	// A GET never changes anything.
	if resp, _ := get(t, c, srv.URL+"/console/sessions/reset?sel="+url.QueryEscape(sel[1])+"&confirm=yes&csrf="+token); resp.StatusCode == http.StatusOK {
		t.Errorf("GET reset answered 200")
	}
}

// A server without keys lets only loopback clients in, as the admin API.
func TestKeylessLoopbackOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "", "", 0)
	do := func(remote string, r *http.Request) *httptest.ResponseRecorder {
		r.RemoteAddr = remote
		w := httptest.NewRecorder()
		f.console.ServeHTTP(w, r)
		return w
	}
	for _, remote := range []string{"203.0.113.7:4242", "[2001:db8::1]:4242", "10.0.0.2:1", "garbage"} {
		w := do(remote, httptest.NewRequest(http.MethodGet, "/console/signin", nil))
		pre := w.Result().Cookies()[0]
		r := httptest.NewRequest(http.MethodPost, "/console/signin", strings.NewReader("csrf="+csrf(t, w.Body.String())))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.AddCookie(pre)
		w = do(remote, r)
		if w.Code != http.StatusForbidden || sessionCookie(w.Result()) != nil {
			t.Errorf("keyless sign-in from %s: %d, want 403 and no cookie", remote, w.Code)
		}
	}
	for _, remote := range []string{"127.0.0.1:4242", "[::1]:4242"} {
		w := do(remote, httptest.NewRequest(http.MethodGet, "/console/signin", nil))
		pre := w.Result().Cookies()[0]
		r := httptest.NewRequest(http.MethodPost, "/console/signin", strings.NewReader("csrf="+csrf(t, w.Body.String())))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.AddCookie(pre)
		w = do(remote, r)
		ck := sessionCookie(w.Result())
		if w.Code != http.StatusSeeOther || ck == nil {
			t.Fatalf("keyless sign-in from %s: %d, want a sign-in", remote, w.Code)
		}
		// The same cookie from elsewhere opens nothing.
		r = httptest.NewRequest(http.MethodGet, "/console/sessions", nil)
		r.AddCookie(ck)
		if w := do("198.51.100.1:80", r); w.Code != http.StatusSeeOther {
			t.Errorf("a keyless sign-in's cookie from a remote address: %d, want the sign-in page", w.Code)
		}
		r = httptest.NewRequest(http.MethodGet, "/console/sessions", nil)
		r.AddCookie(ck)
		if w := do(remote, r); w.Code != http.StatusOK {
			t.Errorf("a keyless sign-in's cookie from %s: %d, want 200", remote, w.Code)
		}
	}
}

// A form past 64 KiB is not read: its token with it, so it is refused.
func TestFormBound(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "", "ops:"+adminKey, 0)
	srv := httptest.NewServer(f.console)
	defer srv.Close()
	c, token := signedIn(t, srv)
	big := url.Values{"csrf": {token}, "sel": {strings.Repeat("a", 70<<10)}}
	if resp, _ := post(t, c, srv.URL+"/console/sessions/reset", big); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a 70 KiB form: %d, want 403", resp.StatusCode)
	}
	if resp, _ := post(t, c, srv.URL+"/console/sessions/reset", url.Values{"csrf": {token}, "sel": {"x/y"}}); resp.StatusCode != http.StatusOK {
		t.Errorf("a small form: %d, want the confirmation", resp.StatusCode)
	}
}

// Refused sign-ins are limited per address: past ten, even the admin key
// is refused until the address has waited; other addresses are not held
// up, and an IPv6 machine cannot step around it within its /64.
func TestSignInRateLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "acme:"+tenantKey, "ops:"+adminKey, 0)
	try := func(remote, key string) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest(http.MethodGet, "/console/signin", nil)
		r.RemoteAddr = remote
		w := httptest.NewRecorder()
		f.console.ServeHTTP(w, r)
		pre := w.Result().Cookies()[0]
		form := url.Values{"csrf": {csrf(t, w.Body.String())}, "key": {key}}
		r = httptest.NewRequest(http.MethodPost, "/console/signin", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.AddCookie(pre)
		r.RemoteAddr = remote
		w = httptest.NewRecorder()
		f.console.ServeHTTP(w, r)
		return w
	}
	// Good sign-ins take nothing from the allowance.
	for range 15 {
		if w := try("203.0.113.9:1000", adminKey); w.Code != http.StatusSeeOther {
			t.Fatalf("the admin key: %d", w.Code)
		}
	}
	for i := range 10 {
		key := fmt.Sprintf("guess-%d-%s", i, adminKey[:6])
		if i%2 == 1 {
			key = tenantKey
		}
		if w := try("203.0.113.9:1000", key); w.Code == http.StatusTooManyRequests {
			t.Fatalf("refused try %d already limited", i+1)
		}
	}
	for _, key := range []string{"guess-11", adminKey} {
		w := try("203.0.113.9:4000", key)
		if w.Code != http.StatusTooManyRequests || sessionCookie(w.Result()) != nil || w.Header().Get("Retry-After") == "" ||
			!strings.Contains(w.Body.String(), "Too many refused sign-ins") {
			t.Errorf("try past the limit with %q: %d, Retry-After %q, want 429 with no cookie\n%s", key[:5], w.Code, w.Header().Get("Retry-After"), w.Body.String())
		}
	}
	if w := try("198.51.100.4:1", adminKey); w.Code != http.StatusSeeOther {
		t.Errorf("another address with the admin key: %d, want a sign-in", w.Code)
	}
	// One more try after signinEvery.
	f.mu.Lock()
	f.now = f.now.Add(31 * time.Second)
	f.mu.Unlock()
	if w := try("203.0.113.9:1000", "guess-12"); w.Code != http.StatusUnauthorized {
		t.Errorf("after 31s a wrong key: %d, want 401", w.Code)
	}
	if w := try("203.0.113.9:1000", adminKey); w.Code != http.StatusTooManyRequests {
		t.Errorf("the try after it: %d, want 429", w.Code)
	}
	f.mu.Lock()
	f.now = f.now.Add(31 * time.Second)
	f.mu.Unlock()
	if w := try("203.0.113.9:1000", adminKey); w.Code != http.StatusSeeOther {
		t.Errorf("after waiting, the admin key: %d, want a sign-in", w.Code)
	}
	// IPv6: the addresses of one /64 share an allowance.
	for i := range 10 {
		try(fmt.Sprintf("[2001:db8:1:2::%x]:443", i+1), "guess")
	}
	if w := try("[2001:db8:1:2:ffff::1]:443", adminKey); w.Code != http.StatusTooManyRequests {
		t.Errorf("another address of the /64: %d, want 429", w.Code)
	}
	if w := try("[2001:db8:1:3::1]:443", adminKey); w.Code != http.StatusSeeOther {
		t.Errorf("another /64: %d, want a sign-in", w.Code)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refused["rate_limited"] != 4 {
		t.Errorf("rate-limited sign-ins counted %d, want 4 (%v)", f.refused["rate_limited"], f.refused)
	}
}
