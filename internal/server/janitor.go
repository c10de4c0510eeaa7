package server

import (
	"context"
	"time"

	"github.com/slotd/slotd/session"
)

// janitor expires sessions past their tool's ttl and purges sessions ended
// longer ago than the retention, in bounded batches. Several replicas may run
// it at once: each batch skips what another holds.
func (s *Server) janitor(ctx context.Context) {
	if s.cfg.JanitorInterval <= 0 {
		return
	}
	t := time.NewTicker(s.cfg.JanitorInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		select {
		case <-s.migrated:
		default:
			continue
		}
		s.sweep(ctx, s.now())
	}
}

// maxBatches bounds one sweep, so that a backlog is worked off over several
// ticks instead of one long burst.
const maxBatches = 20

func (s *Server) sweep(ctx context.Context, now time.Time) {
	for _, c := range s.engine.Contracts().All() {
		_, ttl := s.engine.Lifetimes(c.Name)
		if ttl <= 0 {
			continue
		}
		for i := 0; i < maxBatches; i++ {
			ids, err := s.engine.Expire(ctx, session.Filter{AnyTenant: true, Tool: c.Name,
				IdleBefore: now.Add(-ttl), Limit: session.DefaultLimit}, now)
			if err != nil {
				s.log.Warn("janitor: expire failed", "tool", c.Name, "err", safeErr(err))
				break
			}
			if len(ids) > 0 {
				s.log.Info("janitor: expired sessions", "tool", c.Name, "count", len(ids))
			}
			if len(ids) < session.DefaultLimit {
				break
			}
		}
	}
	if s.cfg.Retention <= 0 {
		return
	}
	for i := 0; i < maxBatches; i++ {
		ids, err := s.engine.Purge(ctx, session.Filter{AnyTenant: true, EndedBefore: now.Add(-s.cfg.Retention),
			Limit: session.DefaultLimit}, false)
		if err != nil {
			s.log.Warn("janitor: purge failed", "err", safeErr(err))
			return
		}
		if len(ids) > 0 {
			s.log.Info("janitor: purged sessions", "count", len(ids))
		}
		if len(ids) < session.DefaultLimit {
			return
		}
	}
}
