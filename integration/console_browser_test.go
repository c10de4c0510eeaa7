package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/slotd/slotd/internal/testkit/dbtest"
)

// chromiumPath is Debian's chromium, which the browser test drives.
const chromiumPath = "/usr/bin/chromium"

// TestConsoleInBrowser drives chromium through the ops console of a slotd
// on Postgres. The main flow is by keyboard alone (Tab, Enter and Space,
// no mouse): sign in with the admin key (a tenant's key refused first),
// check the overview's figures against the turns sent, skip to the
// content, filter the sessions by a conversation id prefix, reset one from
// the list, open the other's story and reset it there, each with its
// confirmation; every element Tab reaches shows a focus outline. The
// browser reports no error, CSP violations included, on any page.
func TestConsoleInBrowser(t *testing.T) {
	// Its own slotd, database and chromium: nothing shared with the other
	// tests.
	t.Parallel()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the console's browser test needs Debian's chromium at %s (apt-get install -y chromium): %v", chromiumPath, err)
	}
	p := startProcess(t, "--store", "postgres", "--database-url", dbtest.NewDatabase(t),
		"--api-keys", "bank:"+bankKey, "--admin-keys", "ops:"+adminKey)
	base := "http://" + p.httpAddr
	turns := []string{
		// A balance check READY at once: first-attempt validity 100%.
		`{"conversation_id":"balance-1","tool":"bank.check_balance","turn_id":"b1","arguments":{"card_last4":"4417"}}`,
		// The README's dispute, then a changed amount (irreversible: it
		// waits for re-confirmation) and the reason.
		`{"conversation_id":"chat-42","tool":"bank.open_dispute","turn_id":"chat-42/1","locale":"ru","time_zone":"Europe/Moscow",
		  "arguments":{"card_last4":"•• 4417","operation_date":"вчера","amount":"1 200,50 ₽"}}`,
		`{"conversation_id":"chat-42","tool":"bank.open_dispute","turn_id":"chat-42/2","locale":"ru","time_zone":"Europe/Moscow",
		  "arguments":{"amount":"1 250 ₽","reason":"duplicate"}}`,
		// A reason outside the list (refused, the allowed values
		// given) and the date corrected.
		`{"conversation_id":"chat-42","tool":"bank.open_dispute","turn_id":"chat-42/3","locale":"ru","time_zone":"Europe/Moscow",
		  "arguments":{"reason":"chargeback","operation_date":"позавчера"}}`,
	}
	// The client retries the dispute's first turn: a replay, recorded.
	replay := len(turns)
	turns = append(turns, turns[1])
	for i, conv := range []string{"browser-a", "browser-b"} {
		turns = append(turns, fmt.Sprintf(`{"conversation_id":%q,"tool":"bank.open_dispute","turn_id":"t%d","arguments":{"reason":"fraud"}}`, conv, i))
	}
	// sent is the turns applied by tool and action ("bank.open_dispute
	// ask"), as the overview should count them: the replay is not one.
	sent := map[string]int{}
	for i, body := range turns {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/turn", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+bankKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var in struct{ Tool string }
		var out struct{ Action string }
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != nil || json.Unmarshal([]byte(body), &in) != nil {
			t.Fatalf("turn %s: %d, %v", body, resp.StatusCode, err)
		}
		if i != replay {
			sent[in.Tool+" "+strings.ToLower(strings.TrimPrefix(out.Action, "ACTION_"))]++
		}
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumPath), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.Flag("headless", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()

	var mu sync.Mutex
	var problems []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				problems = append(problems, "console.error")
			}
		case *cdplog.EventEntryAdded:
			// The refused sign-in answers 403, as it should.
			if ev.Entry.Level == cdplog.LevelError && ev.Entry.URL != base+"/console/signin" {
				problems = append(problems, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		}
	})
	// Kept after the test, for a person to look at.
	shots, err := os.MkdirTemp("", "slotd-console-screenshots-")
	if err != nil {
		t.Fatal(err)
	}
	shot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var b []byte
			if err := chromedp.FullScreenshot(&b, 100).Do(ctx); err != nil { // 100: PNG
				return err
			}
			return os.WriteFile(filepath.Join(shots, name+".png"), b, 0o644)
		})
	}
	// axe-core, from the committed lockfile, injected into each page.
	axeDir := npmExample(t, "integration/testdata/axe")
	if lic, err := os.ReadFile(filepath.Join(axeDir, "node_modules", "axe-core", "LICENSE")); err != nil || !strings.Contains(string(lic), "Mozilla Public License") {
		t.Fatalf("axe-core's license is not where npm puts it: %v", err)
	}
	axeSrc, err := os.ReadFile(filepath.Join(axeDir, "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	violations := map[string][]string{}
	pages := map[string]string{}
	// check runs axe on the page and keeps its serious and critical
	// violations, and the page's HTML for the card number scan.
	check := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var loaded bool
			if err := chromedp.Evaluate(string(axeSrc)+";true", &loaded).Do(ctx); err != nil {
				return fmt.Errorf("axe on %s: %w", name, err)
			}
			var found []string
			run := `axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
				.filter(v => v.impact === "serious" || v.impact === "critical")
				.map(v => v.impact + " " + v.id + ": " + v.nodes.map(n => n.target.join(" ")).join(", ")))`
			if err := chromedp.Evaluate(run, &found, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
				return p.WithAwaitPromise(true)
			}).Do(ctx); err != nil {
				return fmt.Errorf("axe on %s: %w", name, err)
			}
			if len(found) > 0 {
				violations[name] = found
			}
			var html string
			if err := chromedp.OuterHTML("html", &html, chromedp.ByQuery).Do(ctx); err != nil {
				return err
			}
			pages[name] = html
			return shot(name).Do(ctx)
		})
	}
	var refused, confirm, done, status, story, dispute, tools string
	var playActions [3]string
	// posted clicks sel, which posts the playground's form, and waits for
	// the page the post answers with: the page it left is marked, so that
	// its own #answer is never taken for the new one's.
	posted := func(sel string) chromedp.Action {
		return chromedp.Tasks{
			chromedp.Evaluate(`document.body.insertAdjacentHTML("beforeend", '<i id="slotd-left" hidden></i>')`, nil),
			chromedp.Click(sel, chromedp.ByID),
			chromedp.WaitNotPresent("#slotd-left", chromedp.ByID),
		}
	}

	// The keyboard: focused checks the element that has the focus; left
	// presses a key there and waits for the page it leads to (the page
	// left is marked, as in posted); tabTo presses Tab until sel has the
	// focus, and notes each element on the way that shows no outline.
	focused := func(sel string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var ok bool
			if err := chromedp.Evaluate(fmt.Sprintf(`document.activeElement !== null && document.activeElement.matches(%q)`, sel), &ok).Do(ctx); err != nil {
				return err
			}
			if !ok {
				var at string
				_ = chromedp.Evaluate(`document.activeElement ? document.activeElement.outerHTML.slice(0, 120) : "nothing"`, &at).Do(ctx)
				return fmt.Errorf("the focus is on %s, want %s", at, sel)
			}
			return nil
		})
	}
	left := func(key string) chromedp.Action {
		return chromedp.Tasks{
			chromedp.Evaluate(`document.body.insertAdjacentHTML("beforeend", '<i id="slotd-left" hidden></i>')`, nil),
			chromedp.KeyEvent(key),
			chromedp.WaitNotPresent("#slotd-left", chromedp.ByID),
			chromedp.WaitReady("main", chromedp.ByQuery),
		}
	}
	var unoutlined []string
	tabTo := func(sel string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			for range 300 {
				if err := chromedp.KeyEvent(kb.Tab).Do(ctx); err != nil {
					return err
				}
				var at struct {
					Match, Outlined bool
					HTML            string
				}
				if err := chromedp.Evaluate(fmt.Sprintf(`(() => { const e = document.activeElement, s = getComputedStyle(e);
					return {Match: e.matches(%q), Outlined: s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 2,
						HTML: e.outerHTML.slice(0, 120)}; })()`, sel), &at).Do(ctx); err != nil {
					return err
				}
				if !at.Outlined {
					unoutlined = append(unoutlined, at.HTML)
				}
				if at.Match {
					return nil
				}
			}
			return fmt.Errorf("Tab never reaches %s", sel)
		})
	}
	var skipVisible bool
	var filtered, activeLeft []*cdp.Node
	var confirmStory, doneStory, pickedTool string
	type row struct{ Tool, Action, Turns string }
	var toolActions, actionBars []row
	var perMinute, perHour int
	err = chromedp.Run(ctx,
		cdplog.Enable(),
		chromedp.Navigate(base+"/console/"),
		chromedp.WaitVisible("#key", chromedp.ByID),
		check("signin"),
		// A tenant's key is refused; the key field has the focus on
		// arrival, so the keys are typed into it.
		focused("#key"),
		chromedp.KeyEvent(bankKey),
		left("\r"),
		chromedp.WaitVisible(`p[role="alert"]`, chromedp.ByQuery),
		chromedp.Text(`p[role="alert"]`, &refused, chromedp.ByQuery),
		// The admin key opens the console.
		focused("#key"),
		chromedp.KeyEvent(adminKey),
		left("\r"),
		chromedp.WaitVisible("#turns", chromedp.ByID),
		chromedp.Text("#tools", &tools, chromedp.ByID),
		chromedp.Evaluate(`[...document.querySelectorAll("#tool-actions tbody tr")].map(r => ({Tool: r.dataset.tool, Action: r.dataset.action, Turns: r.dataset.turns}))`, &toolActions),
		chromedp.Evaluate(`[...document.querySelectorAll("#per-minute rect")].reduce((n, r) => n + Number(r.dataset.turns), 0)`, &perMinute),
		chromedp.Evaluate(`[...document.querySelectorAll("#per-hour rect")].reduce((n, r) => n + Number(r.dataset.turns), 0)`, &perHour),
		chromedp.Evaluate(`[...document.querySelectorAll("#actions rect")].map(r => ({Action: r.dataset.action, Turns: r.dataset.turns}))`, &actionBars),
		check("overview"),
		tabTo(`header nav a[href="/console/sessions"]`),
		left("\r"),
		chromedp.WaitVisible("#reset", chromedp.ByID),
		check("sessions"),
		// The first Tab reaches the skip link, shown while it has the
		// focus; Enter moves the focus to the content, past the header.
		tabTo("a.skip"),
		chromedp.Evaluate(`document.activeElement.getBoundingClientRect().top >= 0`, &skipVisible),
		chromedp.KeyEvent("\r"),
		focused("main"),
		tabTo(`input[name="prefix"]`),
		chromedp.KeyEvent("browser-"),
		left("\r"),
		chromedp.WaitVisible("#reset", chromedp.ByID),
		chromedp.Nodes(`input[name="sel"]`, &filtered, chromedp.ByQueryAll),
		// Reset one from the list: Space ticks its box.
		tabTo(`input[name="sel"]`),
		chromedp.KeyEvent(" "),
		tabTo("#reset"),
		left("\r"),
		chromedp.WaitVisible("#confirm", chromedp.ByID),
		chromedp.Text("#confirm-text", &confirm, chromedp.ByID),
		check("confirm"),
		tabTo("#confirm"),
		left("\r"),
		chromedp.WaitVisible("#done", chromedp.ByID),
		chromedp.Text("#done", &done, chromedp.ByID),
		// Back to the filtered list; the other conversation's story, and
		// its reset from there.
		tabTo(`main a[href^="/console/sessions?"]`),
		left("\r"),
		chromedp.WaitVisible("#reset", chromedp.ByID),
		chromedp.Nodes(`tr[data-status="active"] input[name="sel"]`, &activeLeft, chromedp.ByQueryAll),
		tabTo(`tr[data-status="active"] a`),
		left("\r"),
		chromedp.WaitVisible("#steps", chromedp.ByID),
		tabTo("#reset-one"),
		left("\r"),
		chromedp.WaitVisible("#confirm", chromedp.ByID),
		chromedp.Text("#confirm-text", &confirmStory, chromedp.ByID),
		tabTo("#confirm"),
		left("\r"),
		chromedp.WaitVisible("#done", chromedp.ByID),
		chromedp.Text("#done", &doneStory, chromedp.ByID),
		chromedp.Navigate(base+"/console/sessions?status=reset"),
		chromedp.WaitVisible("#reset", chromedp.ByID),
		chromedp.Text("table.list tbody", &status, chromedp.ByQuery),
		// A reset session's story: its turn, and the slot cleared.
		tabTo(`table.list tbody a`),
		left("\r"),
		chromedp.WaitVisible("#steps", chromedp.ByID),
		chromedp.Text("#steps", &story, chromedp.ByID),
		check("story"),
		chromedp.Navigate(base+"/console/story?tenant=bank&conversation=chat-42"),
		chromedp.WaitVisible("#steps", chromedp.ByID),
		chromedp.Text("main", &dispute, chromedp.ByQuery),
		check("dispute"),
		chromedp.Navigate(base+"/console/contracts"),
		chromedp.WaitVisible("#bank\\.open_dispute", chromedp.ByQuery),
		check("contracts"),
		// A playground dialogue to READY, from the contract's link.
		tabTo(`#bank\.open_dispute a.try`),
		left("\r"),
		chromedp.WaitVisible("#arguments", chromedp.ByID),
		chromedp.Value("#tool", &pickedTool, chromedp.ByID),
		check("playground"),
		chromedp.SetValue("#arguments", `{"card_last4": "•• 4417", "operation_date": "2026-01-10"}`, chromedp.ByID),
		posted("#send"),
		chromedp.WaitVisible("#answer", chromedp.ByID),
		chromedp.Text("#play-action", &playActions[0], chromedp.ByID),
		chromedp.SetValue("#arguments", `{"amount": "1 200,50 ₽", "reason": "fraud"}`, chromedp.ByID),
		posted("#send"),
		chromedp.WaitVisible("#answer", chromedp.ByID),
		chromedp.Text("#play-action", &playActions[1], chromedp.ByID),
		chromedp.SetValue("#arguments", `{}`, chromedp.ByID),
		chromedp.Click("#confirm-yes", chromedp.ByID),
		posted("#send"),
		chromedp.WaitVisible("#answer", chromedp.ByID),
		chromedp.Text("#play-action", &playActions[2], chromedp.ByID),
		check("playground-ready"),
	)
	if err != nil {
		t.Fatalf("browser: %v (log: %s)", err, p.log)
	}
	t.Logf("screenshots in %s", shots)
	if playActions != [3]string{"ask", "ask for approval", "ready"} {
		t.Errorf("the playground dialogue answered %q, want ask, ask for approval, ready", playActions)
	}
	if !strings.Contains(tools, "bank.check_balance") || !strings.Contains(tools, "100.0%") {
		t.Errorf("the overview's tools do not show the balance check's first-attempt validity:\n%s", tools)
	}
	if !strings.Contains(dispute, "Replayed 1 time, last at ") {
		t.Errorf("the dispute's story does not show the replay of chat-42/1:\n%s", dispute)
	}
	if !strings.Contains(refused, "tenant") {
		t.Errorf("the tenant's key was not refused as one: %q", refused)
	}
	if !strings.Contains(story, "filled") || !strings.Contains(story, "cleared") || !strings.Contains(story, `"fraud"`) {
		t.Errorf("the story of the reset session does not show the slot filled, then cleared: %q", story)
	}
	for _, want := range []string{"4417", "waits for re-confirmation", `"1200.50"`, `"1250.00"`, "chat-42/2", "ask",
		"corrected", "refused", "chat-42/3", "Asked:"} {
		if !strings.Contains(dispute, want) {
			t.Errorf("the dispute's story does not show %q:\n%s", want, dispute)
		}
	}
	if len(filtered) != 2 || len(activeLeft) != 1 {
		t.Errorf("the sessions of the prefix browser- are %d, %d active after a reset; want 2, 1", len(filtered), len(activeLeft))
	}
	for _, c := range []string{confirm, confirmStory} {
		if !strings.Contains(c, "Reset 1 session(s) of the tenants: bank?") {
			t.Errorf("confirmation: %q", c)
		}
	}
	for _, d := range []string{done, doneStory} {
		if !strings.Contains(d, "Sessions reset: 1.") {
			t.Errorf("after the reset: %q", d)
		}
	}
	if strings.Count(status, "browser-") != 2 {
		t.Errorf("sessions with status reset: %q, want both of the prefix browser-", status)
	}
	if !skipVisible {
		t.Errorf("the skip link is not shown when it has the focus")
	}
	if len(unoutlined) > 0 {
		t.Errorf("elements Tab reached without a visible focus outline: %q", unoutlined)
	}
	if pickedTool != "bank.open_dispute" {
		t.Errorf("the contract's playground link picks %q, want bank.open_dispute", pickedTool)
	}
	// The overview counts the turns this test sent, by tool and action,
	// in its table and its action chart.
	shown, bars, byAction := map[string]int{}, map[string]int{}, map[string]int{}
	for _, r := range toolActions {
		n, _ := strconv.Atoi(r.Turns)
		shown[r.Tool+" "+r.Action] = n
	}
	for _, r := range actionBars {
		bars[r.Action], _ = strconv.Atoi(r.Turns)
	}
	for k, n := range sent {
		byAction[k[strings.IndexByte(k, ' ')+1:]] += n
	}
	total := 0
	for _, n := range sent {
		total += n
	}
	if perMinute != total || perHour != total {
		t.Errorf("the overview's charts count %d turns per minute and %d per hour, want the %d the test sent", perMinute, perHour, total)
	}
	if !maps.Equal(shown, sent) || !maps.Equal(bars, byAction) {
		t.Errorf("the overview counts turns by tool and action %v and by action %v; the test sent %v, by action %v", shown, bars, sent, byAction)
	}
	// Checked through the admin API too.
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/admin/sessions?status=SESSION_STATUS_RESET", nil)
	req.Header.Set("Authorization", "Bearer "+adminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Sessions []json.RawMessage `json:"sessions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Sessions) != 2 {
		t.Errorf("the admin API lists %d reset sessions (%v), want 2", len(list.Sessions), err)
	}
	// The HTTP gateway takes the conversation id prefix as a query
	// parameter, literally: "browser_" is no wildcard for "browser-".
	for prefix, want := range map[string]int{"browser-": 2, "browser_": 0} {
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/admin/sessions?conversation_prefix="+url.QueryEscape(prefix), nil)
		req.Header.Set("Authorization", "Bearer "+adminKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		list.Sessions = nil
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if err != nil || len(list.Sessions) != want {
			t.Errorf("the admin API lists %d sessions of the prefix %q (%v), want %d", len(list.Sessions), prefix, err, want)
		}
	}
	// The PAN test's spellings sent, then every page scanned: no card
	// number in any.
	for i, sp := range cardSpellings() {
		args, _ := json.Marshal(map[string]any{"card_last4": sp.text, "reason": sp.text, "amount": sp.text})
		body := fmt.Sprintf(`{"conversation_id":"cards-%d","tool":"bank.open_dispute","turn_id":"c%d","arguments":%s}`, i%4, i, args)
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/turn", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+bankKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	const selsJS = `[...document.querySelectorAll('input[name="sel"]')].map(b => b.value)`
	var pagesSeen [][]string
	err = chromedp.Run(ctx,
		chromedp.Navigate(base+"/console/"), chromedp.WaitVisible("#turns", chromedp.ByID), check("cards-overview"),
		// The sessions of the prefix, three a page: paged through by
		// the next link.
		chromedp.Navigate(base+"/console/sessions?prefix=cards-&size=3"), chromedp.WaitVisible("#reset", chromedp.ByID), check("cards-sessions"),
		chromedp.ActionFunc(func(ctx context.Context) error {
			for range 20 {
				var rows []string
				var more bool
				if err := chromedp.Evaluate(selsJS, &rows).Do(ctx); err != nil {
					return err
				}
				pagesSeen = append(pagesSeen, rows)
				if err := chromedp.Evaluate(`document.getElementById("next") !== null`, &more).Do(ctx); err != nil || !more {
					return err
				}
				if err := chromedp.Run(ctx, tabTo("#next"), left("\r"), chromedp.WaitVisible("#reset", chromedp.ByID)); err != nil {
					return err
				}
			}
			return fmt.Errorf("the next links go on past 20 pages")
		}),
		chromedp.Navigate(base+"/console/story?tenant=bank&conversation=cards-0"), chromedp.WaitVisible("#steps", chromedp.ByID), check("cards-story-0"),
		chromedp.Navigate(base+"/console/story?tenant=bank&conversation=cards-1"), chromedp.WaitVisible("#steps", chromedp.ByID), check("cards-story-1"),
		chromedp.Navigate(base+"/console/story?tenant=bank&conversation=cards-2"), chromedp.WaitVisible("#steps", chromedp.ByID), check("cards-story-2"),
		chromedp.Navigate(base+"/console/story?tenant=bank&conversation=cards-3"), chromedp.WaitVisible("#steps", chromedp.ByID), check("cards-story-3"),
	)
	if err != nil {
		t.Fatalf("browser, after the card spellings: %v", err)
	}
	// Every session of the prefix once, as the admin API lists them, and
	// every conversation's.
	req, _ = http.NewRequest(http.MethodGet, base+"/v1/admin/sessions?page_size=200&conversation_prefix=cards-", nil)
	req.Header.Set("Authorization", "Bearer "+adminKey)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var cards struct {
		Sessions []struct {
			Tenant  string
			Session struct {
				ID             string `json:"id"`
				ConversationID string `json:"conversation_id"`
			}
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&cards)
	resp.Body.Close()
	var want, seen, convs []string
	for _, c := range cards.Sessions {
		want = append(want, c.Tenant+"/"+c.Session.ID)
		convs = append(convs, c.Session.ConversationID)
	}
	for _, page := range pagesSeen {
		if len(page) > 3 {
			t.Errorf("a page of three shows %d sessions", len(page))
		}
		seen = append(seen, page...)
	}
	slices.Sort(want)
	slices.Sort(seen)
	if err != nil || len(pagesSeen) < 2 || !slices.Equal(seen, want) ||
		!slices.Equal(slices.Compact(slices.Sorted(slices.Values(convs))), []string{"cards-0", "cards-1", "cards-2", "cards-3"}) {
		t.Errorf("paged three at a time, the prefix cards- showed %d sessions over %d pages; the admin API lists %d of the conversations %q (%v)",
			len(seen), len(pagesSeen), len(want), slices.Compact(slices.Sorted(slices.Values(convs))), err)
	}
	for name, html := range pages {
		if l := leaks(html); len(l) > 0 {
			t.Errorf("the %s page shows a card number: %q", name, l)
		}
	}
	if !regexp.MustCompile(`turn <code>c\d+</code>`).MatchString(pages["cards-story-0"]) {
		t.Errorf("the story of the card spellings does not show their turns")
	}
	for name, v := range violations {
		t.Errorf("axe on the %s page: %q", name, v)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("the browser reported errors: %q", problems)
	}
	if b, _ := os.ReadFile(p.log); !strings.Contains(string(b), `"reset session"`) || !strings.Contains(string(b), `"by":"ops"`) {
		t.Errorf("the reset is not logged by ops:\n%s", tail(string(b), 2000))
	}
}
