package server

import (
	"net/http"
	"runtime/debug"

	"github.com/slotd/slotd/internal/app/mcp"
	"github.com/slotd/slotd/internal/auth"
)

// mountMCP serves the MCP endpoint (internal/app/mcp) at /mcp on the gateway's
// listener, behind the same edge, calling slotd's services in the process
// (local.go).
func (s *Server) mountMCP(keys *auth.Keys) error {
	if s.cfg.DisableMCP {
		return nil
	}
	version := "dev"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	h, err := mcp.New(mcp.Config{
		Slots: s.local.SlotClient(), Contracts: s.engine.Contracts(),
		Keys: keys, Metrics: s.obs.m, Log: s.log, Version: version, Limits: s.cfg.MCP,
	})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(mcp.Path, edge(keys, s.obs.m, h, false))
	mux.Handle("/", s.gw.http.Handler)
	s.gw.http.Handler = mux
	return nil
}
