package console_test

import (
	"context"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/slotd/slotd/internal/session"
)

var selValue = regexp.MustCompile(`name="sel" value="([^"]+)"`)

// picks are the sessions a list page offers to select.
func picks(body string) []string {
	var out []string
	for _, m := range selValue.FindAllStringSubmatch(body, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

func TestSessionsFilters(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "", "ops:"+adminKey, 3)
	start := f.now
	// acme: four disputes, two an hour old; beta: a flight search and a
	// dispute with a hostile conversation id.
	for i := range 4 {
		f.turn("acme", fmt.Sprintf("acme-conv-%d", i), "bank.open_dispute", "t", map[string]any{"reason": "fraud"})
		if i == 1 {
			f.now = f.now.Add(time.Hour)
		}
	}
	f.turn("beta", "beta-flights", "travel.search_flights", "t", map[string]any{})
	f.turn("beta", `<script>alert("x")</script>`, "bank.open_dispute", "t", map[string]any{"reason": "duplicate"})
	f.now = start.Add(time.Hour + time.Minute)
	srv := httptest.NewServer(f.console)
	defer srv.Close()
	c, _ := signedIn(t, srv)

	// rows reads every page of a listing, following its next link.
	rows := func(query string) (all []string, pages int) {
		t.Helper()
		u := srv.URL + "/console/sessions?" + query
		for pages = 1; ; pages++ {
			resp, body := get(t, c, u)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: %d\n%s", u, resp.StatusCode, body)
			}
			if strings.Contains(body, `<script>alert`) {
				t.Fatalf("%s: a conversation id is not escaped", u)
			}
			for _, p := range picks(body) {
				all = append(all, p[:strings.IndexByte(p, '/')])
			}
			m := regexp.MustCompile(`href="([^"]+)" id="next"`).FindStringSubmatch(body)
			if m == nil || pages > 10 {
				return all, pages
			}
			u = srv.URL + html.UnescapeString(m[1])
		}
	}
	for _, tc := range []struct {
		query string
		want  []string // tenants of the rows, in order of all pages
		pages int
	}{
		{"", []string{"acme", "acme", "acme", "acme", "beta", "beta"}, 2},
		{"tenant=beta", []string{"beta", "beta"}, 1},
		{"tool=bank.open_dispute&tenant=acme", []string{"acme", "acme", "acme", "acme"}, 2},
		{"tool=travel.search_flights", []string{"beta"}, 1},
		{"stale=30m", []string{"acme", "acme"}, 1},
		{"status=active&stale=2h", nil, 1},
		{"status=reset", nil, 1},
		// The prefix is the admin API's filter, taken literally: % and _
		// are no wildcards, and a page is full while more match.
		{"prefix=acme-conv-3", []string{"acme"}, 1},
		{"prefix=" + url.QueryEscape("acme%"), nil, 1},
		{"prefix=" + url.QueryEscape("acme_conv"), nil, 1},
		{"prefix=" + url.QueryEscape(`\`), nil, 1},
		{"prefix=" + url.QueryEscape("<script>"), []string{"beta"}, 1},
		{"prefix=acme-conv-", []string{"acme", "acme", "acme", "acme"}, 2},
		{"prefix=beta&tenant=beta", []string{"beta"}, 1},
		// Rows per page chosen in the filter, kept on the next link.
		{"prefix=acme-conv-&size=1", []string{"acme", "acme", "acme", "acme"}, 4},
		{"size=200", []string{"acme", "acme", "acme", "acme", "beta", "beta"}, 1},
		{"tenant=nobody", nil, 1},
	} {
		got, pages := rows(tc.query)
		slices.Sort(got)
		if !slices.Equal(got, tc.want) || pages != tc.pages {
			t.Errorf("sessions?%s: tenants %v over %d pages, want %v over %d", tc.query, got, pages, tc.want, tc.pages)
		}
	}
	for _, bad := range []string{"size=0", "size=201", "size=ten", "size=-1", "status=sleeping", "stale=-5m", "stale=forever", "page=not-a-token", "tenant=" + url.QueryEscape("a\x00b")} {
		resp, body := get(t, c, srv.URL+"/console/sessions?"+bad)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `role="alert"`) {
			t.Errorf("sessions?%s: %d, want 400 with the reason shown\n%s", bad, resp.StatusCode, body)
		}
	}

	// Sorted by last use: the newest first, or the oldest first.
	order := func(sort string) []string {
		_, body := get(t, c, srv.URL+"/console/sessions?tenant=acme&sort="+sort)
		return regexp.MustCompile(`>(acme-conv-\d)<`).FindAllString(body, -1)
	}
	if got := order(""); len(got) != 3 || got[0] != ">acme-conv-2<" {
		t.Errorf("newest first: %v", got)
	}
	if got := order("oldest"); len(got) != 3 || got[2] != ">acme-conv-2<" {
		t.Errorf("oldest first: %v", got)
	}
}

func TestBulkReset(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "", "ops:"+adminKey, 0)
	f.turn("acme", "a-1", "bank.open_dispute", "t", map[string]any{"reason": "fraud"})
	f.turn("acme", "a-2", "bank.open_dispute", "t", map[string]any{"reason": "fraud"})
	f.turn("beta/west", "b-1", "bank.open_dispute", "t", map[string]any{"reason": "fraud"})
	srv := httptest.NewServer(f.console)
	defer srv.Close()
	c, token := signedIn(t, srv)
	_, body := get(t, c, srv.URL+"/console/sessions?sort=oldest")
	all := picks(body)
	if len(all) != 3 {
		t.Fatalf("picks: %v", all)
	}
	// One session of acme and the one of beta/west.
	var chosen []string
	for _, p := range all {
		if strings.HasPrefix(p, "beta") || len(chosen) == 0 {
			chosen = append(chosen, p)
		}
	}
	// The first POST asks: how many, of which tenants.
	resp, body := post(t, c, srv.URL+"/console/sessions/reset", url.Values{"csrf": {token}, "sel": chosen})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Reset 2 session(s) of the tenants: acme, beta/west?") {
		t.Fatalf("confirmation: %d\n%s", resp.StatusCode, body)
	}
	if active := f.active(); len(active) != 3 {
		t.Fatalf("the confirmation page reset sessions: %d active", len(active))
	}
	resp, body = post(t, c, srv.URL+"/console/sessions/reset", url.Values{"csrf": {token}, "sel": chosen, "confirm": {"yes"}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Sessions reset: 2.") {
		t.Fatalf("reset: %d\n%s", resp.StatusCode, body)
	}
	active := f.active()
	if len(active) != 1 || active[0].Key.Tenant != "acme" {
		t.Fatalf("after the reset: %v active, want one of acme", active)
	}
	// Audited as the admin API's actions are: by the admin key's name.
	if n := strings.Count(f.logs.String(), `"msg":"reset session"`); n != 2 || !strings.Contains(f.logs.String(), `"tenant":"beta/west"`) ||
		strings.Count(f.logs.String(), `"by":"ops"`) < 3 {
		t.Errorf("the resets are not logged by ops, one each:\n%s", f.logs.String())
	}
	// Again: the ended sessions are refused one by one, and said so.
	resp, body = post(t, c, srv.URL+"/console/sessions/reset", url.Values{"csrf": {token}, "sel": chosen, "confirm": {"yes"}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Sessions reset: 0.") || strings.Count(body, "<li>") != 2 {
		t.Errorf("reset again: %d\n%s", resp.StatusCode, body)
	}
	// Hostile selections: not session ids, a tenant that is not there,
	// nothing at all, too many.
	for _, tc := range []struct {
		name   string
		sel    []string
		status int
		says   string
	}{
		{"not an id", []string{"acme/'; DROP TABLE sessions; --"}, http.StatusOK, "Sessions reset: 0."},
		{"other tenant", []string{"beta/west/" + strings.TrimPrefix(all[0], "acme/")}, http.StatusOK, "Sessions reset: 0."},
		{"none", nil, http.StatusBadRequest, "No session was selected."},
		{"too many", slices.Repeat([]string{all[0]}, session.MaxLimit+1), http.StatusBadRequest, "Too many"},
	} {
		resp, body := post(t, c, srv.URL+"/console/sessions/reset", url.Values{"csrf": {token}, "sel": tc.sel, "confirm": {"yes"}})
		if resp.StatusCode != tc.status || !strings.Contains(body, tc.says) || strings.Contains(strings.ToLower(body), "sql") {
			t.Errorf("%s: %d, want %d saying %q\n%s", tc.name, resp.StatusCode, tc.status, tc.says, body)
		}
	}
	if active := f.active(); len(active) != 1 {
		t.Errorf("hostile selections reset sessions: %d active", len(active))
	}
}

func (f *fixture) active() []*session.Session {
	f.t.Helper()
	list, _, err := f.engine.ListSessions(context.Background(), session.Filter{AnyTenant: true, Status: session.Active})
	if err != nil {
		f.t.Fatal(err)
	}
	return list
}

// The story shows why a slot has its value: each change in order, the
// correction old → new, and the sensitive value masked as the admin API
// masks it.
func TestStory(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "", "ops:"+adminKey, 0)
	f.turn("acme", "dispute-1", "bank.open_dispute", "turn-1", map[string]any{"reason": "fraud", "original_operation_id": "op-SECRET-77"})
	f.now = f.now.Add(time.Minute)
	resp := f.turn("acme", "dispute-1", "bank.open_dispute", "turn-2", map[string]any{"reason": "duplicate", "card_last4": "4455"})
	// The client retries turn-2 twice: both answered from the stored
	// response, and recorded on the turn.
	for range 2 {
		f.turn("acme", "dispute-1", "bank.open_dispute", "turn-2", map[string]any{"reason": "duplicate", "card_last4": "4455"})
	}
	balance := f.turn("acme", "dispute-1", "bank.check_balance", "turn-3", map[string]any{})
	srv := httptest.NewServer(f.console)
	defer srv.Close()
	c, _ := signedIn(t, srv)
	// The conversation alone: its most recently used session, and a link
	// to the dispute.
	if _, body := get(t, c, srv.URL+"/console/story?tenant=acme&conversation=dispute-1"); !strings.Contains(body, "<dd>bank.check_balance</dd>") ||
		!strings.Contains(body, "session="+resp.GetSession().GetId()) {
		t.Errorf("the conversation's story does not show its latest session with a link to the other:\n%s", body)
	}
	for _, q := range []string{"tenant=acme&conversation=dispute-1&tool=bank.open_dispute", "session=" + resp.GetSession().GetId()} {
		r, body := get(t, c, srv.URL+"/console/story?"+q)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("story?%s: %d\n%s", q, r.StatusCode, body)
		}
		for _, want := range []string{"turn-1", "turn-2", "dispute-1", "corrected", `&#34;fraud&#34;</code> → <code>&#34;duplicate&#34;`, "Changes: 2"} {
			if !strings.Contains(body, want) {
				t.Errorf("story?%s does not show %q\n%s", q, want, body)
			}
		}
		replays := regexp.MustCompile(`<p class="replays" data-replays="2" data-replayed-at="([0-9: -]{19})">Replayed 2 times, last at ([0-9: -]{19});`).FindAllStringSubmatch(body, -1)
		if len(replays) != 1 || replays[0][1] != replays[0][2] {
			t.Errorf("story?%s shows the replays of turn-2 as %q, want once, with the last time", q, replays)
		}
		if i, j := strings.Index(body, "turn-1"), strings.LastIndex(body, "turn-2"); i > j {
			t.Errorf("story?%s: turn-2 before turn-1", q)
		}
		if testing.Verbose() {
			t.Log(body)
		}
		if !strings.Contains(body, `id="others"`) || !strings.Contains(body, balance.GetSession().GetId()) || !strings.Contains(body, "bank.check_balance") {
			t.Errorf("story?%s does not link the conversation's other open session", q)
		}
		if strings.Contains(body, "op-SECRET-77") {
			t.Errorf("story?%s shows the sensitive value unmasked", q)
		}
	}
	// What each turn answered: a refused value's problem and the question
	// asked again with the allowed values; READY's idempotency key; the
	// sessions parked and the one resumed.
	refused := f.turn("acme", "dispute-2", "bank.open_dispute", "r-1", map[string]any{"reason": "chargeback"})
	ready := f.turn("acme", "balance-2", "bank.check_balance", "b-1", map[string]any{"card_last4": "•• 4417"})
	// The balance check used a while after the dispute, and the dispute a
	// while after that: the dispute is resumed.
	f.now = f.now.Add(10 * time.Minute)
	f.turn("acme", "dispute-1", "bank.check_balance", "turn-3b", map[string]any{})
	f.now = f.now.Add(10 * time.Minute)
	back := f.turn("acme", "dispute-1", "bank.open_dispute", "turn-4", map[string]any{})
	answers := func(id string) string {
		t.Helper()
		_, body := get(t, c, srv.URL+"/console/story?session="+id)
		return body
	}
	if body := answers(refused.GetSession().GetId()); refused.GetProblem() == nil || !strings.Contains(body, `<p class="problem">`+template.HTMLEscapeString(refused.GetProblem().GetTitle())) ||
		!strings.Contains(body, `<p class="question">Asked: <q>`+template.HTMLEscapeString(refused.GetQuestion().GetText())+`</q> · Allowed values: `+
			strings.Join(refused.GetQuestion().GetAllowedValues(), ", ")) || len(refused.GetQuestion().GetAllowedValues()) == 0 {
		t.Errorf("the refused reason's story does not show the problem %v and the question %v:\n%s", refused.GetProblem(), refused.GetQuestion(), body)
	}
	if key := ready.GetIdempotencyKey(); key == "" || !strings.Contains(answers(ready.GetSession().GetId()), `<p class="key">Idempotency key for the backend call: <code>`+key+`</code>`) {
		t.Errorf("the READY story does not show the idempotency key %q", key)
	}
	if body := answers(balance.GetSession().GetId()); len(balance.GetOpenSessions()) != 1 ||
		!strings.Contains(body, `<p class="parked">Parked meanwhile: bank.open_dispute</p>`) {
		t.Errorf("the balance check's story does not show the dispute parked (%v):\n%s", balance.GetOpenSessions(), body)
	}
	if body := answers(resp.GetSession().GetId()); len(back.GetOpenSessions()) != 1 || !back.GetResumed() ||
		strings.Count(body, `<p class="parked">Parked meanwhile: bank.check_balance</p>`) != 1 || strings.Count(body, `<p class="resumed">`) != 1 {
		t.Errorf("the dispute's story does not show turn-4 resumed (%v) with the balance check parked (%v):\n%s", back.GetResumed(), back.GetOpenSessions(), body)
	}
	// In Russian, the count's noun agrees with it.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/console/story?session="+resp.GetSession().GetId(), nil)
	req.Header.Set("Accept-Language", "ru-RU,ru;q=0.9")
	if r, err := c.Do(req); err != nil {
		t.Fatal(err)
	} else {
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if !strings.Contains(string(b), "Повторён 2 раза, последний раз в ") {
			t.Errorf("the Russian story does not say the replays with the count's noun:\n%s", b)
		}
	}
	for _, q := range []string{"", "conversation=nope&tenant=acme", "session=" + url.QueryEscape("1' OR '1'='1")} {
		if r, body := get(t, c, srv.URL+"/console/story?"+q); r.StatusCode == http.StatusOK || !strings.Contains(body, `role="alert"`) {
			t.Errorf("story?%s: %d, want a refusal shown", q, r.StatusCode)
		}
	}
}

// Every page: the CSP header, no inline script, no inline style, no
// event-handler attribute; assets small.
func TestPagesStrict(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "", "ops:"+adminKey, 0)
	r := f.turn("acme", "c-1", "bank.open_dispute", "t1", map[string]any{"reason": "fraud"})
	srv := httptest.NewServer(f.console)
	defer srv.Close()
	c, token := signedIn(t, srv)
	pages := map[string]string{}
	for _, path := range []string{"/console/signin", "/console/", "/console/sessions", "/console/contracts",
		"/console/story?session=" + r.GetSession().GetId(), "/console/nowhere", "/console/sessions?status=bad"} {
		resp, body := get(t, c, srv.URL+path)
		pages[path] = body
		if got := resp.Header.Get("Content-Security-Policy"); !strings.Contains(got, "script-src 'self'") ||
			!strings.Contains(got, "frame-ancestors 'none'") || strings.Contains(got, "unsafe") {
			t.Errorf("%s: CSP %q", path, got)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", path)
		}
	}
	_, pages["confirm"] = post(t, c, srv.URL+"/console/sessions/reset", url.Values{"csrf": {token}, "sel": {"acme/" + r.GetSession().GetId()}})
	_, pages["done"] = post(t, c, srv.URL+"/console/sessions/reset", url.Values{"csrf": {token}, "sel": {"acme/" + r.GetSession().GetId()}, "confirm": {"yes"}})
	for path, body := range pages {
		doc, err := html.Parse(strings.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		// The skip link comes first, to the main content.
		var first, skipTo *html.Node
		for n := range doc.Descendants() {
			if n.Type != html.ElementNode {
				continue
			}
			if first == nil && n.Parent != nil && n.Parent.Data == "body" {
				first = n
			}
			if n.Data == "main" && attr(n, "id") == "main" {
				skipTo = n
			}
			if n.Data == "script" && (n.FirstChild != nil || attr(n, "src") == "") {
				t.Errorf("%s: inline script", path)
			}
			if n.Data == "style" {
				t.Errorf("%s: inline style element", path)
			}
			for _, a := range n.Attr {
				if a.Key == "style" || strings.HasPrefix(a.Key, "on") || strings.HasPrefix(strings.TrimSpace(strings.ToLower(a.Val)), "javascript:") {
					t.Errorf("%s: <%s %s=%q>", path, n.Data, a.Key, a.Val)
				}
			}
		}
		if first == nil || first.Data != "a" || attr(first, "href") != "#main" || attr(first, "class") != "skip" || skipTo == nil {
			t.Errorf("%s: the page does not begin with a skip link to <main id=\"main\">", path)
		}
	}
	total := 0
	for _, a := range []string{"console.css", "console.js", "favicon.svg"} {
		resp, body := get(t, c, srv.URL+"/console/static/"+a)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d", a, resp.StatusCode)
		}
		total += len(body)
	}
	if total > 400<<10 {
		t.Errorf("assets are %d bytes, over 400 KB", total)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// The language comes from Accept-Language, and the switch overrides it.
func TestLanguage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "", "ops:"+adminKey, 0)
	srv := httptest.NewServer(f.console)
	defer srv.Close()
	c, _ := signedIn(t, srv)
	for _, tc := range []struct{ accept, want string }{
		{"ru-RU,ru;q=0.9,en;q=0.5", "Сессии"},
		{"uk", "Сесії"},
		{"de-DE, fr;q=0.5", "Sessions"},
		{"", "Sessions"},
		{";;;garbage==", "Sessions"},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/console/sessions", nil)
		req.Header.Set("Accept-Language", tc.accept)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if body := readAll(resp); !strings.Contains(body, "<h1>"+tc.want+"</h1>") {
			t.Errorf("Accept-Language %q: want %q", tc.accept, tc.want)
		}
	}
	// The switch keeps the page's query.
	_, body := get(t, c, srv.URL+"/console/sessions?tenant=acme&status=active")
	if !strings.Contains(body, `href="/console/sessions?lang=ru&amp;status=active&amp;tenant=acme"`) {
		t.Errorf("the switch to ru loses the query:\n%s", body)
	}
	// The switch: remembered, and the page without ?lang.
	resp, _ := get(t, c, srv.URL+"/console/sessions?lang=uk&tenant=acme")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/sessions?tenant=acme" {
		t.Fatalf("switch: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/console/sessions", nil)
	req.Header.Set("Accept-Language", "ru")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(resp); !strings.Contains(body, "<h1>Сесії</h1>") || !strings.Contains(body, `<html lang="uk">`) {
		t.Errorf("after switching to uk, with Accept-Language ru:\n%s", body)
	}
}

func readAll(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// Erasing from the story needs the conversation id typed again, and is
// recorded by the admin key's name.
func TestEraseFromStory(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "", "ops:"+adminKey, 0)
	f.turn("acme", "erase-me", "bank.open_dispute", "t1", map[string]any{"reason": "fraud"})
	f.turn("acme", "keep-me", "bank.open_dispute", "t1", map[string]any{"reason": "fraud"})
	srv := httptest.NewServer(f.console)
	defer srv.Close()
	c, token := signedIn(t, srv)
	resp, body := get(t, c, srv.URL+"/console/story?tenant=acme&conversation=erase-me")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `action="/console/story/erase"`) || !strings.Contains(body, `id="reset-one"`) {
		t.Fatalf("story: %d, no erase or reset form\n%s", resp.StatusCode, body)
	}
	for _, typed := range []string{"", "erase-m", "ERASE-ME", "erase-me ", "keep-me"} {
		resp, _ := post(t, c, srv.URL+"/console/story/erase", url.Values{"csrf": {token}, "tenant": {"acme"}, "conversation": {"erase-me"}, "typed": {typed}})
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("typed %q: %d, want 400", typed, resp.StatusCode)
		}
	}
	if n := len(f.active()); n != 2 {
		t.Fatalf("a mistyped erasure erased: %d sessions left", n)
	}
	if resp, _ := post(t, c, srv.URL+"/console/story/erase", url.Values{"tenant": {"acme"}, "conversation": {"erase-me"}, "typed": {"erase-me"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("erase without the CSRF token: %d", resp.StatusCode)
	}
	resp, body = post(t, c, srv.URL+"/console/story/erase", url.Values{"csrf": {token}, "tenant": {"acme"}, "conversation": {"erase-me"}, "typed": {"erase-me"}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Erased; sessions: 1.") || !strings.Contains(body, "by ops") || strings.Contains(body, "erase-me") {
		t.Fatalf("erase: %d\n%s", resp.StatusCode, body)
	}
	if active := f.active(); len(active) != 1 || active[0].Key.ConversationID != "keep-me" {
		t.Errorf("after the erasure: %v", active)
	}
	if resp, _ := get(t, c, srv.URL+"/console/story?tenant=acme&conversation=erase-me"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the erased story: %d, want 404", resp.StatusCode)
	}
	if !strings.Contains(f.logs.String(), `"msg":"erased conversation"`) || !strings.Contains(f.logs.String(), `"by":"ops"`) {
		t.Errorf("the erasure is not logged by ops:\n%s", f.logs.String())
	}
}

// The overview counts the active sessions idle past --stale-after, and
// links to them.
func TestOverviewStale(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "", "ops:"+adminKey, 0)
	f.turn("acme", "old-1", "bank.open_dispute", "t", map[string]any{"reason": "fraud"})
	f.turn("beta", "old-2", "bank.open_dispute", "t", map[string]any{"reason": "fraud"})
	f.now = f.now.Add(40 * time.Minute)
	f.turn("acme", "fresh", "bank.open_dispute", "t", map[string]any{"reason": "fraud"})
	srv := httptest.NewServer(f.console)
	defer srv.Close()
	c, _ := signedIn(t, srv)
	resp, body := get(t, c, srv.URL+"/console/")
	link := `<a id="stale" href="/console/sessions?stale=30m0s&amp;status=active">2</a>`
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, link) {
		t.Fatalf("overview: %d, want %s\n%s", resp.StatusCode, link, body)
	}
	_, body = get(t, c, srv.URL+"/console/sessions?stale=30m0s&status=active")
	if got := picks(body); len(got) != 2 {
		t.Errorf("the stale link lists %v", got)
	}
}

// The overview counts the active sessions whose ttl ends within the hour,
// by each tool's own ttl (the dispute's 24h, the card block's 2h), and
// links each tool's to them.
func TestOverviewExpiring(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "", "ops:"+adminKey, 0)
	f.turn("acme", "dispute-old", "bank.open_dispute", "t", map[string]any{"reason": "fraud"})
	f.turn("acme", "block-old", "bank.block_card", "t", map[string]any{})
	f.now = f.now.Add(22*time.Hour + 30*time.Minute)
	f.turn("beta", "block-mid", "bank.block_card", "t", map[string]any{})
	f.turn("beta", "dispute-mid", "bank.open_dispute", "t", map[string]any{"reason": "fraud"})
	f.now = f.now.Add(time.Hour + time.Minute)
	f.turn("beta", "block-new", "bank.block_card", "t", map[string]any{})
	srv := httptest.NewServer(f.console)
	defer srv.Close()
	c, _ := signedIn(t, srv)
	resp, body := get(t, c, srv.URL+"/console/")
	// block-old is long expired (23h30m idle, ttl 2h) but still active
	// until a turn or the sweep ends it: it counts too.
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `<p class="big" id="expiring">3</p>`) {
		t.Fatalf("overview: %d, want 3 expiring\n%s", resp.StatusCode, body)
	}
	for tool, want := range map[string]string{
		"bank.open_dispute": `/console/sessions?stale=23h0m0s&amp;status=active&amp;tool=bank.open_dispute">1<`,
		"bank.block_card":   `/console/sessions?stale=1h0m0s&amp;status=active&amp;tool=bank.block_card">2<`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("%s: no link %s", tool, want)
		}
	}
	_, body = get(t, c, srv.URL+"/console/sessions?stale=1h0m0s&status=active&tool=bank.block_card")
	if got := picks(body); len(got) != 2 {
		t.Errorf("the block_card link lists %v, want block-old and block-mid", got)
	}
}

// The contracts page shows each tool's lint findings, as `slotd contract
// lint` finds them in the loaded source, and its cost per provider.
func TestContractsLintAndCost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, err := os.ReadFile("../../../contracts/bank.check_balance.json")
	if err != nil {
		t.Fatal(err)
	}
	// The same tool under another name, its slot's description and
	// question taken out: two warnings.
	noted := strings.Replace(string(src), `"name": "bank.check_balance"`, `"name": "bank.check_note"`, 1)
	noted = regexp.MustCompile(`"description": "Last four digits[^"]*",`).ReplaceAllString(noted, "")
	for name, body := range map[string]string{"bank.check_balance.json": string(src), "bank.check_note.json": noted} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := newFixtureDir(t, dir, "", "ops:"+adminKey, 0)
	srv := httptest.NewServer(f.console)
	defer srv.Close()
	c, _ := signedIn(t, srv)
	resp, body := get(t, c, srv.URL+"/console/contracts")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("contracts: %d\n%s", resp.StatusCode, body)
	}
	section := func(tool string) string {
		i := strings.Index(body, `<section class="contract" id="`+tool+`">`)
		if i < 0 {
			t.Fatalf("no section of %s", tool)
		}
		j := strings.Index(body[i:], "</section>")
		return body[i : i+j]
	}
	clean, noisy := section("bank.check_balance"), section("bank.check_note")
	if !strings.Contains(clean, "lint-clean") || strings.Contains(clean, `class="warning"`) {
		t.Errorf("the shipped contract shows findings:\n%s", clean)
	}
	if !strings.Contains(noisy, `<li class="warning"><strong>warning</strong> <code>#/properties/card_last4</code>: no description`) {
		t.Errorf("the contract without a slot description shows no finding about it:\n%s", noisy)
	}
	// Costs: a row per provider, the figures of provider.Sizes.
	for _, prov := range []string{"openai", "openai-chat", "anthropic", "plain", "mcp"} {
		if !strings.Contains(clean, "<tr><td>"+prov+"</td><td>") {
			t.Errorf("no cost with %s", prov)
		}
	}
	if !regexp.MustCompile(`<tr><td>openai</td><td>506</td><td>127</td></tr>`).MatchString(clean) {
		t.Errorf("the cost with openai is not the measured 506 bytes, ~127 tokens:\n%s", clean)
	}
	if !strings.Contains(body, `id="cost-total"`) {
		t.Errorf("no total cost")
	}
	// Each slot's label and question in every language.
	if !strings.Contains(clean, `<dt>ru</dt><dd lang="ru">карта — <q>`) || !strings.Contains(clean, `<dt>uk</dt><dd lang="uk">картка — <q>`) {
		t.Errorf("the card slot's Russian and Ukrainian label and question are not shown:\n%s", clean)
	}
	// Each contract links to the playground with its tool picked.
	for _, tool := range []string{"bank.check_balance", "bank.check_note"} {
		m := regexp.MustCompile(`<a class="try" href="([^"]+)">`).FindStringSubmatch(section(tool))
		if m == nil {
			t.Errorf("the section of %s has no playground link", tool)
			continue
		}
		_, play := get(t, c, srv.URL+html.UnescapeString(m[1]))
		if !strings.Contains(play, `<option value="`+tool+`" selected>`) {
			t.Errorf("the playground link of %s (%s) does not pick it:\n%s", tool, m[1], play)
		}
	}
}

var playAction = regexp.MustCompile(`<strong id="play-action">([^<]+)</strong>`)

// A playground dialogue with the dispute, as JSON arguments, to READY: it
// runs on the console's own memory store, in a conversation of the
// playground tenant, and leaves the server's store as it was.
func TestPlaygroundToReady(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "", "ops:"+adminKey, 0)
	f.turn("acme", "real-1", "bank.open_dispute", "t", map[string]any{"reason": "fraud"})
	srv := httptest.NewServer(f.console)
	defer srv.Close()
	c, token := signedIn(t, srv)
	_, body := get(t, c, srv.URL+"/console/playground?tool=bank.open_dispute")
	conv := regexp.MustCompile(`name="conversation" value="(play-[^"]+)"`).FindStringSubmatch(body)
	if conv == nil {
		t.Fatalf("no playground conversation:\n%s", body)
	}
	send := func(args, confirm string) (int, string, string) {
		t.Helper()
		resp, body := post(t, c, srv.URL+"/console/playground", url.Values{"csrf": {token}, "conversation": {conv[1]},
			"tool": {"bank.open_dispute"}, "arguments": {args}, "confirmation": {confirm}, "locale": {"en"}})
		m := playAction.FindStringSubmatch(body)
		if m == nil {
			return resp.StatusCode, "", body
		}
		return resp.StatusCode, m[1], body
	}
	steps := []struct{ args, confirm, want string }{
		{`{"card_last4": "карта •• 4417", "operation_date": "2026-01-10"}`, "", "ask"},
		{`{"amount": "1 200,50 ₽", "reason": "fraud"}`, "", "ask for approval"},
		{`{}`, "yes", "ready"},
	}
	var last string
	for i, s := range steps {
		status, action, body := send(s.args, s.confirm)
		if status != http.StatusOK || action != s.want {
			t.Fatalf("turn %d: %d %q, want %q\n%s", i+1, status, action, s.want, body)
		}
		last = body
	}
	// The answer is shown as the story: three turns, the slots filled.
	for _, want := range []string{`id="steps"`, "4417", `&#34;1200.50&#34;`, `&#34;fraud&#34;`} {
		if !strings.Contains(last, want) {
			t.Errorf("the playground's story lacks %q", want)
		}
	}
	if n := strings.Count(last, `<p class="step">`); n != 3 {
		t.Errorf("the playground's story shows %d turns, want 3", n)
	}
	// Bad input is refused, shown, never a crash.
	for _, bad := range []url.Values{
		{"arguments": {`{"amount": `}},
		{"arguments": {`[1, 2]`}},
		{"arguments": {`{} {}`}},
		{"conversation": {"real-1"}},
		{"tool": {"bank.no_such_tool"}},
	} {
		form := url.Values{"csrf": {token}, "conversation": {conv[1]}, "tool": {"bank.open_dispute"}, "arguments": {"{}"}}
		for k, v := range bad {
			form[k] = v
		}
		if resp, body := post(t, c, srv.URL+"/console/playground", form); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `role="alert"`) {
			t.Errorf("playground with %v: %d, want 400 with the reason shown", bad, resp.StatusCode)
		}
	}
	if resp, _ := post(t, c, srv.URL+"/console/playground", url.Values{"conversation": {conv[1]}, "tool": {"bank.open_dispute"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("playground without the CSRF token: %d, want 403", resp.StatusCode)
	}
	// The server's store holds the real conversation only.
	list, _, err := f.engine.ListSessions(context.Background(), session.Filter{AnyTenant: true})
	if err != nil || len(list) != 1 || list[0].Key.Tenant != "acme" {
		t.Errorf("the server's store after the playground: %d sessions, %v", len(list), err)
	}
}
