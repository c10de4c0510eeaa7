package server

import (
	"context"
	"time"

	"github.com/slotd/slotd/internal/metrics"
	"github.com/slotd/slotd/internal/session"
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

// sweep runs once and reports its result in the metrics: an error, a
// backlog left for the next tick, or all done.
func (s *Server) sweep(ctx context.Context, now time.Time) {
	j := s.obs.m.Janitor()
	result := metrics.SweepOK
	for _, c := range s.engine.Contracts().All() {
		_, ttl := s.engine.Lifetimes(c.Name)
		if ttl <= 0 {
			continue
		}
		n, err := batches(func() (int, error) {
			ids, err := s.engine.Expire(ctx, session.Filter{AnyTenant: true, Tool: c.Name,
				IdleBefore: now.Add(-ttl), Limit: session.DefaultLimit}, now)
			if len(ids) > 0 {
				j.Expired(len(ids))
				s.log.Info("janitor: expired sessions", "tool", c.Name, "count", len(ids))
			}
			return len(ids), err
		})
		if err != nil {
			s.log.Warn("janitor: expire failed", "tool", c.Name, "err", safeErr(err))
			result = metrics.SweepError
		} else if n == maxBatches && result == metrics.SweepOK {
			result = metrics.SweepBacklog
		}
	}
	if s.cfg.Retention > 0 {
		n, err := batches(func() (int, error) {
			ids, err := s.engine.Purge(ctx, session.Filter{AnyTenant: true, EndedBefore: now.Add(-s.cfg.Retention),
				Limit: session.DefaultLimit}, false)
			if len(ids) > 0 {
				j.Purged(len(ids))
				s.log.Info("janitor: purged sessions", "count", len(ids))
			}
			return len(ids), err
		})
		if err != nil {
			s.log.Warn("janitor: purge failed", "err", safeErr(err))
			result = metrics.SweepError
		} else if n == maxBatches && result == metrics.SweepOK {
			result = metrics.SweepBacklog
		}
	}
	if ctx.Err() != nil {
		return // cut short by the shutdown: no result
	}
	// The wall clock, not the server's: Prometheus compares it with its own.
	j.Swept(result, time.Now())
}

// batches runs batch until one comes back short of a full batch, fails, or
// maxBatches ran; it returns how many full batches it ran.
func batches(batch func() (int, error)) (int, error) {
	full := 0
	for full < maxBatches {
		n, err := batch()
		if err != nil {
			return full, err
		}
		if n < session.DefaultLimit {
			break
		}
		full++
	}
	return full, nil
}
