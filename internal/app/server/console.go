package server

import (
	"net/http"

	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/app/console"
	"github.com/slotd/slotd/internal/auth"
	"github.com/slotd/slotd/problem"
)

// mountConsole serves the ops console (internal/app/console) at /console/ on
// the gateway's listener. It stands beside the edge, not behind it: a
// browser brings no Authorization header, so the console signs operators
// in with an admin key itself and keeps every page but the sign-in page
// and its assets behind that. With the console off, /console/ is 404.
func (s *Server) mountConsole(keys *auth.Keys) error {
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		api.WriteProblem(w, http.StatusNotFound, problem.NoRoute("the console is off (--console=false)").Problem)
	})
	if !s.cfg.DisableConsole {
		c, err := console.New(console.Config{
			Admin: api.NewAdminService(s.engine, s.log, s.cfg.Session.Clock), Engine: s.engine, Keys: keys,
			Metrics: s.obs.m.Registry(), StaleAfter: s.cfg.Session.StaleAfter, TTL: s.cfg.Session.TTL, BehindTLS: s.cfg.AllowPlaintext,
			OnRefuse: func(reason string) { s.obs.m.Refused("console", reason) },
			Log:      s.log, Clock: s.cfg.Session.Clock,
		})
		if err != nil {
			return err
		}
		s.console, h = c, c
	}
	mux := http.NewServeMux()
	mux.Handle(console.Path, h)
	mux.Handle("/", s.gw.http.Handler)
	s.gw.http.Handler = mux
	return nil
}
