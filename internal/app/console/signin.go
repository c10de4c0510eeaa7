package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/slotd/slotd/internal/auth"
)

const (
	// sessionCookie holds a sign-in's random id; the sign-in itself (who,
	// its CSRF token, when it ends) stays in the process.
	sessionCookie = "slotd_console"
	// preCookie holds the CSRF token of the sign-in form, before there is
	// a sign-in to hold it.
	preCookie  = "slotd_console_signin"
	langCookie = "slotd_console_lang"
	// maxSignins bounds the sign-ins held; past it the oldest goes.
	maxSignins = 1000
)

// signin is one operator's signed-in browser.
type signin struct {
	who      auth.Principal
	csrf     string
	expires  time.Time
	loopback bool // signed in without a key, from loopback
}

// signins are the console's sign-ins, by id, in memory: a restart signs
// everyone out.
type signins struct {
	mu    sync.Mutex
	byID  map[string]*signin
	ttl   time.Duration
	clock func() time.Time
}

func newSignins(ttl time.Duration, clock func() time.Time) *signins {
	return &signins{byID: map[string]*signin{}, ttl: ttl, clock: clock}
}

// token is 32 random bytes, URL-safe.
func token() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *signins) add(who auth.Principal, fromLoopback bool) (string, *signin) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock()
	if len(s.byID) >= maxSignins {
		var oldest string
		for id, si := range s.byID {
			if !si.expires.After(now) {
				delete(s.byID, id)
			} else if oldest == "" || si.expires.Before(s.byID[oldest].expires) {
				oldest = id
			}
		}
		if len(s.byID) >= maxSignins {
			delete(s.byID, oldest)
		}
	}
	id := token()
	si := &signin{who: who, csrf: token(), expires: now.Add(s.ttl), loopback: fromLoopback}
	s.byID[id] = si
	return id, si
}

func (s *signins) get(id string) *signin {
	s.mu.Lock()
	defer s.mu.Unlock()
	si, ok := s.byID[id]
	if !ok {
		return nil
	}
	if !si.expires.After(s.clock()) {
		delete(s.byID, id)
		return nil
	}
	return si
}

func (s *signins) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, id)
}

// secure reports whether cookies are marked Secure: under TLS, slotd's
// own or one that ends in front of slotd (--allow-plaintext).
func (c *Console) secure(r *http.Request) bool { return r.TLS != nil || c.cfg.BehindTLS }

func same(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// operator lets a signed-in operator through to h, with the admin
// principal on the request's context, and checks the CSRF token of every
// POST. Others go to the sign-in page.
func (c *Console) operator(h func(http.ResponseWriter, *http.Request, *page)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var si *signin
		var id string
		if ck, err := r.Cookie(sessionCookie); err == nil {
			id = ck.Value
			si = c.signins.get(id)
		}
		if si != nil && si.loopback && !loopback(r) {
			si = nil
		}
		if si == nil {
			if r.Method != http.MethodGet {
				c.render(w, r, http.StatusForbidden, "error", &page{Error: "console.signed_out"})
				return
			}
			http.Redirect(w, r, Path+"signin", http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodPost && !same(r.PostFormValue("csrf"), si.csrf) {
			c.render(w, r, http.StatusForbidden, "error", &page{Error: "console.csrf"})
			return
		}
		p := &page{User: si.who.Name, CSRF: si.csrf, signinID: id}
		h(w, r.WithContext(auth.With(r.Context(), si.who)), p)
	})
}

func (c *Console) signInPage(w http.ResponseWriter, r *http.Request) {
	pre := token()
	http.SetCookie(w, &http.Cookie{Name: preCookie, Value: pre, Path: Path, MaxAge: 3600,
		HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteStrictMode})
	c.render(w, r, http.StatusOK, "signin", &page{CSRF: pre, Keyless: !c.cfg.Keys.Enabled()})
}

// signIn takes an admin key from the form (or, on a server without keys,
// a loopback client's word) and starts a sign-in. Tenant keys never open
// the console.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	ck, err := r.Cookie(preCookie)
	if err != nil || !same(r.PostFormValue("csrf"), ck.Value) {
		c.render(w, r, http.StatusForbidden, "error", &page{Error: "console.csrf"})
		return
	}
	src := source(r)
	refuse := func(status int, why string) {
		c.cfg.Log.WarnContext(r.Context(), "console sign-in refused", "reason", why)
		if c.cfg.OnRefuse != nil {
			reason := "permission_denied"
			switch status {
			case http.StatusUnauthorized:
				reason = "unauthenticated"
			case http.StatusTooManyRequests:
				reason = "rate_limited"
			}
			c.cfg.OnRefuse(reason)
		}
		if status != http.StatusTooManyRequests {
			c.limit.failed(src)
		}
		pre := token()
		http.SetCookie(w, &http.Cookie{Name: preCookie, Value: pre, Path: Path, MaxAge: 3600,
			HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteStrictMode})
		c.render(w, r, status, "signin", &page{CSRF: pre, Keyless: !c.cfg.Keys.Enabled(), Error: "console.signin." + why})
	}
	if wait := c.limit.wait(src); wait > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(int(wait.Seconds())+1))
		refuse(http.StatusTooManyRequests, "too_many")
		return
	}
	var who auth.Principal
	keyless := !c.cfg.Keys.Enabled()
	switch {
	case keyless && !loopback(r):
		refuse(http.StatusForbidden, "not_loopback")
		return
	case keyless:
		who = auth.Principal{Admin: true, Name: auth.LoopbackName}
	default:
		p, ok := c.cfg.Keys.Lookup(r.PostFormValue("key"))
		switch {
		case !ok:
			refuse(http.StatusUnauthorized, "bad_key")
			return
		case !p.Admin:
			refuse(http.StatusForbidden, "tenant_key")
			return
		}
		who = p
	}
	id, _ := c.signins.add(who, keyless)
	c.cfg.Log.InfoContext(r.Context(), "console sign-in", "by", who.Name)
	http.SetCookie(w, &http.Cookie{Name: preCookie, Value: "", Path: Path, MaxAge: -1})
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: Path, MaxAge: int(c.cfg.SignInTTL.Seconds()),
		HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, Path, http.StatusSeeOther)
}

func (c *Console) signOut(w http.ResponseWriter, r *http.Request, p *page) {
	c.signins.remove(p.signinID)
	c.cfg.Log.InfoContext(r.Context(), "console sign-out", "by", p.User)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: Path, MaxAge: -1,
		HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, Path+"signin", http.StatusSeeOther)
}
