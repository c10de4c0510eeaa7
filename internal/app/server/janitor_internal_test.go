package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/metrics"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
)

// janitorStore answers the janitor's batches as told: full ones (a backlog
// larger than a sweep), a failure, or the memory store's own answer.
type janitorStore struct {
	session.Store
	full bool
	err  error
	// calls counts the batches asked for.
	calls int
}

func (s *janitorStore) batch() ([]string, error) {
	s.calls++
	if s.err != nil {
		return nil, s.err
	}
	if !s.full {
		return nil, nil
	}
	ids := make([]string, session.DefaultLimit)
	for i := range ids {
		ids[i] = fmt.Sprintf("s-%d-%d", s.calls, i)
	}
	return ids, nil
}

func (s *janitorStore) EndSessions(context.Context, session.Filter, bool, session.EndFunc) ([]string, error) {
	return s.batch()
}

func (s *janitorStore) Purge(context.Context, session.Filter, bool) ([]string, error) {
	return s.batch()
}

func TestJanitorMetrics(t *testing.T) {
	t.Parallel()
	srv, err := New(Config{Listen: "127.0.0.1:0", Store: "memory", Contracts: "../../../contracts", Retention: time.Hour},
		slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.lis.Close(); srv.close() })
	st := &janitorStore{Store: memstore.New()}
	srv.engine = session.NewEngine(st, srv.engine.Contracts(), session.Config{TTL: time.Hour})
	sample := func(name, label, value string) float64 {
		t.Helper()
		fams, err := srv.obs.m.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			if f.GetName() != name {
				continue
			}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == label && l.GetValue() == value {
						return m.GetCounter().GetValue()
					}
				}
				if label == "" {
					return m.GetGauge().GetValue()
				}
			}
		}
		t.Fatalf("no %s{%s=%q}", name, label, value)
		return 0
	}
	want := func(what string, got, want float64) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	const last = "slotd_janitor_last_success_timestamp_seconds"
	want("last success before any sweep", sample(last, "", ""), 0)

	// Nothing to do: a success.
	before := time.Now()
	srv.sweep(context.Background(), time.Now())
	want("ok sweeps", sample("slotd_janitor_sweeps_total", "result", metrics.SweepOK), 1)
	if ts := sample(last, "", ""); ts < float64(before.Unix()) || ts > float64(time.Now().Unix()+1) {
		t.Errorf("last success = %v, want about %v", ts, before.Unix())
	}

	// More than a sweep may do: a backlog, and the sweep stays bounded.
	st.full, st.calls = true, 0
	srv.sweep(context.Background(), time.Now())
	want("backlog sweeps", sample("slotd_janitor_sweeps_total", "result", metrics.SweepBacklog), 1)
	tools := len(srv.engine.Contracts().All())
	if st.calls != (tools+1)*maxBatches {
		t.Errorf("a sweep asked for %d batches, want %d (%d per tool and for the purge)", st.calls, (tools+1)*maxBatches, maxBatches)
	}
	want("expired", sample("slotd_janitor_sessions_total", "op", "expired"), float64(tools*maxBatches*session.DefaultLimit))
	want("purged", sample("slotd_janitor_sessions_total", "op", "purged"), float64(maxBatches*session.DefaultLimit))

	// A store that fails: an error, and the last success stays where it was.
	ok := sample(last, "", "")
	st.full, st.err = false, errors.New("connection refused")
	srv.sweep(context.Background(), time.Now())
	want("error sweeps", sample("slotd_janitor_sweeps_total", "result", metrics.SweepError), 1)
	want("last success after a failed sweep", sample(last, "", ""), ok)

	// The shutdown cuts a sweep short: no error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st.err = context.Canceled
	srv.sweep(ctx, time.Now())
	want("error sweeps after a shutdown", sample("slotd_janitor_sweeps_total", "result", metrics.SweepError), 1)
}
