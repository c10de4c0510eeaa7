package console

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"golang.org/x/text/language"

	"github.com/slotd/slotd/internal/phrase"
)

// page is what every template gets: the language, the operator, the CSRF
// token for its forms, and the page's own data.
type page struct {
	Lang    phrase.Language
	User    string
	CSRF    string
	Keyless bool
	// Error is a phrase key of what went wrong, shown above the page.
	Error string
	// Problem is an action's refusal in the admin API's words.
	Problem string
	// Nav is the page's place in the menu.
	Nav  string
	Data any

	signinID string
	here     *url.URL
}

// LangLink is this page in language l: the switch keeps the page's query.
func (p *page) LangLink(l phrase.Language) string {
	if p.here == nil {
		return "?lang=" + l.String()
	}
	q := p.here.Query()
	q.Set("lang", l.String())
	return p.here.Path + "?" + q.Encode()
}

// T is the phrase of key in the page's language; args are name, value
// pairs for its placeholders.
func (p *page) T(key string, args ...any) string {
	a := phrase.Args{}
	for i := 0; i+1 < len(args); i += 2 {
		a[fmt.Sprint(args[i])] = args[i+1]
	}
	return phrase.Text(p.Lang, key, a)
}

// Count is n and the noun of key in the form that follows n: "2 times",
// "2 раза".
func (p *page) Count(key string, n int) string {
	return strconv.Itoa(n) + " " + phrase.Count(p.Lang, key, n)
}

// Langs are the languages of the switch.
func (p *page) Langs() []phrase.Language {
	return []phrase.Language{phrase.English, phrase.Russian, phrase.Ukrainian}
}

var matcher = language.NewMatcher([]language.Tag{language.English, language.Russian, language.Ukrainian})

// langCode is the language of a code of the switch.
func langCode(code string) (phrase.Language, bool) {
	for _, l := range []phrase.Language{phrase.English, phrase.Russian, phrase.Ukrainian} {
		if l.String() == code {
			return l, true
		}
	}
	return phrase.English, false
}

// lang is the page's language: the switch's cookie, else the browser's
// Accept-Language, else English.
func lang(r *http.Request) phrase.Language {
	if ck, err := r.Cookie(langCookie); err == nil {
		if l, ok := langCode(ck.Value); ok {
			return l
		}
	}
	tags, _, err := language.ParseAcceptLanguage(r.Header.Get("Accept-Language"))
	if err != nil || len(tags) == 0 {
		return phrase.English
	}
	_, i, _ := matcher.Match(tags...)
	return []phrase.Language{phrase.English, phrase.Russian, phrase.Ukrainian}[i]
}

// render writes a page, whole or not at all: a template that fails is an
// error page, never half a page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) {
	p.Lang, p.here = lang(r), r.URL
	if r.Method != http.MethodGet {
		// A POST's page is not one to come back to.
		p.here = &url.URL{Path: Path}
	}
	var b bytes.Buffer
	if err := c.pages[name].Execute(&b, p); err != nil {
		c.cfg.Log.ErrorContext(r.Context(), "console page failed", "page", name, "err", err)
		http.Error(w, "the page could not be shown", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
