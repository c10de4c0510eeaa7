package server

import (
	"net/http"
	"runtime/debug"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
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
		Slots: slotdv1.NewSlotServiceClient(s.local), Contracts: s.engine.Contracts(),
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
