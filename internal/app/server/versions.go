package server

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/slotd/slotd/internal/session"
)

// useVersions makes the engine serve every stored version of a tool's
// contract, when the store keeps versions, and replay the conversations
// it stores.
func (s *Server) useVersions() {
	if vs, ok := s.store.(session.VersionStore); ok {
		s.versions = session.NewVersions(vs, s.engine.Contracts())
		s.engine.UseVersions(s.versions)
	}
	if rs, ok := s.store.(session.ReplaySource); ok {
		s.engine.UseReplaySource(rs)
	}
}

// registerVersions writes the contracts this replica loaded to the store
// (contract_versions), so that any replica can serve a session of them,
// and logs each tool's version.
func (s *Server) registerVersions(ctx context.Context) error {
	if s.versions == nil {
		return nil
	}
	stored, err := s.versions.Register(ctx, replicaName(s.cfg.Listen), time.Now().UTC())
	if err != nil {
		return fmt.Errorf("contract versions: %w", err)
	}
	names := make([]string, 0, len(stored))
	for _, v := range stored {
		names = append(names, v.Tool+"@"+v.Version)
	}
	s.log.Info("contract versions registered", "versions", strings.Join(names, " "))
	return nil
}

// replicaName names this process in contract_versions: its host, listen
// address and process id.
func replicaName(listen string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s %s pid %d", host, listen, os.Getpid())
}
