// Package console is the ops console: slotd's sessions, a conversation's
// story and the contracts, as server-rendered pages at /console/ on the
// HTTP listener. It signs operators in with an admin key, holds their
// sign-ins in memory, and does everything through api.AdminService in
// slotd's process, so that a console action is the admin API's action,
// logged and recorded under the admin key's name.
package console

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/status"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/auth"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/problem"
)

// Path is where the console is served.
const Path = "/console/"

// CSP is the console's Content-Security-Policy: its own scripts, styles
// and images only, never inline script, never in a frame.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// maxForm bounds a form's body: a selection of MaxLimit sessions fits.
const maxForm = 64 << 10

//go:embed templates/*.html static/*
var assets embed.FS

// Config is what the console needs of the server.
type Config struct {
	// Admin does every action.
	Admin *api.AdminService
	// Engine gives the contracts.
	Engine *session.Engine
	// Keys signs operators in; without keys only loopback clients may.
	Keys *auth.Keys
	// Metrics are read for the overview; nil shows none.
	Metrics prometheus.Gatherer
	// StaleAfter is the idle time the overview counts a session stale after.
	StaleAfter time.Duration
	// TTL is the idle time sessions expire after, unless their contract
	// sets its own; the overview counts those about to. None when 0.
	TTL time.Duration
	// SignInTTL is how long a sign-in lasts; DefaultSignInTTL when 0.
	SignInTTL time.Duration
	// OnRefuse is told of each refused sign-in: "unauthenticated" (a key
	// that is none of the server's), "permission_denied" (a tenant's
	// key; a keyless server's non-loopback client) or "rate_limited" (a
	// source past its refused sign-ins, limit.go).
	OnRefuse func(reason string)
	// PageSize is the sessions a page lists; DefaultPageSize when 0.
	PageSize int
	// BehindTLS marks cookies Secure on plaintext requests too: TLS ends
	// in front of slotd.
	BehindTLS bool
	Log       *slog.Logger
	Clock     func() time.Time
}

// DefaultSignInTTL is how long a sign-in lasts unless configured.
const DefaultSignInTTL = 8 * time.Hour

// Console serves the pages.
type Console struct {
	cfg     Config
	pages   map[string]*template.Template
	static  http.Handler
	signins *signins
	limit   *limiter
	turns   *sampler
	play    struct {
		mu     sync.Mutex
		turns  int
		engine *session.Engine
		slots  *api.SlotService
		admin  *api.AdminService
	}
	mux *http.ServeMux
}

// New builds the console.
func New(cfg Config) (*Console, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = DefaultPageSize
	}
	if cfg.SignInTTL <= 0 {
		cfg.SignInTTL = DefaultSignInTTL
	}
	c := &Console{cfg: cfg, pages: map[string]*template.Template{}, signins: newSignins(cfg.SignInTTL, cfg.Clock),
		limit: newLimiter(cfg.Clock),
		turns: newSampler(cfg.Metrics)}
	for _, name := range []string{"signin", "overview", "sessions", "confirm", "done", "story", "erased", "contracts", "playground", "error"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/storybody.html", "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		c.pages[name] = t
	}
	static, err := fs.Sub(assets, "static")
	if err != nil {
		return nil, err
	}
	c.static = http.StripPrefix(Path+"static/", http.FileServerFS(static))
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path+"static/", c.serveStatic)
	mux.HandleFunc("GET "+Path+"signin", c.signInPage)
	mux.HandleFunc("POST "+Path+"signin", c.signIn)
	mux.Handle("POST "+Path+"signout", c.operator(c.signOut))
	mux.Handle("GET "+Path+"{$}", c.operator(c.overview))
	mux.Handle("GET "+Path+"sessions", c.operator(c.sessions))
	mux.Handle("POST "+Path+"sessions/reset", c.operator(c.reset))
	mux.Handle("GET "+Path+"story", c.operator(c.story))
	mux.Handle("POST "+Path+"story/erase", c.operator(c.erase))
	mux.Handle("GET "+Path+"contracts", c.operator(c.contracts))
	mux.Handle("GET "+Path+"playground", c.operator(c.playgroundPage))
	mux.Handle("POST "+Path+"playground", c.operator(c.playgroundTurn))
	mux.HandleFunc(Path, func(w http.ResponseWriter, r *http.Request) {
		c.render(w, r, http.StatusNotFound, "error", &page{Error: "console.not_found"})
	})
	c.mux = mux
	return c, nil
}

// Run samples the turn count each minute for the overview until ctx ends.
func (c *Console) Run(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	c.turns.sample(c.cfg.Clock())
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.turns.sample(c.cfg.Clock())
		}
	}
}

// ServeHTTP sets the headers every answer carries, takes the language
// switch, and routes.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if l := r.URL.Query().Get("lang"); l != "" && r.Method == http.MethodGet {
		// The switch: remembered in a cookie, then the page without it.
		if lang, ok := langCode(l); ok {
			http.SetCookie(w, &http.Cookie{Name: langCookie, Value: lang.String(), Path: Path, MaxAge: 365 * 24 * 3600,
				HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteStrictMode})
		}
		q := r.URL.Query()
		q.Del("lang")
		u := *r.URL
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return
	}
	c.mux.ServeHTTP(w, r)
}

func (c *Console) serveStatic(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=3600")
	c.static.ServeHTTP(w, r)
}

// loopback reports a request from the machine itself.
func loopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// failure is what an action's error says on a page: the problem the admin
// API would answer with, by its title and detail, never SQL or sockets.
func (c *Console) failure(ctx context.Context, err error) string {
	st := status.Convert(api.Status(ctx, c.cfg.Log, err))
	for _, d := range st.Details() {
		if pb, ok := d.(*slotdv1.Problem); ok {
			p := api.ProblemOf(pb)
			if p.Detail != "" {
				return p.Title + ": " + p.Detail
			}
			return p.Title
		}
	}
	var pe *problem.Error
	if errors.As(err, &pe) {
		return pe.Problem.Title
	}
	return "internal error"
}

// cut shortens s for a table cell.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

var funcs = template.FuncMap{
	"cut":   cut,
	"lower": strings.ToLower,
	"join":  func(s []string) string { return strings.Join(s, ", ") },
}
