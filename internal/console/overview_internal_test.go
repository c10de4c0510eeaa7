package console

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The overview's figures come from the process's own metrics: the action
// mix from slotd_turn_actions_total, p99 from the histogram's buckets, and
// turns per minute from the differences of minute samples.
func TestSamplerFigures(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	actions := prometheus.NewCounterVec(prometheus.CounterOpts{Name: actionsMetric}, []string{"tool", "action"})
	seconds := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: durationMetric, Buckets: []float64{.005, .01, .05, .1}},
		[]string{"tool", "action"})
	reg.MustRegister(actions, seconds)
	s := newSampler(reg)
	if d, _ := s.p99(); d != 0 || len(s.actions()) != 0 {
		t.Fatalf("without turns: p99 %v, actions %v", d, s.actions())
	}
	start := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	s.sample(start)
	actions.WithLabelValues("a", "ASK").Add(7)
	actions.WithLabelValues("b", "ASK").Add(3)
	actions.WithLabelValues("a", "READY").Add(2)
	for range 98 {
		seconds.WithLabelValues("a", "ASK").Observe(.004)
	}
	seconds.WithLabelValues("b", "READY").Observe(.04)
	seconds.WithLabelValues("b", "READY").Observe(.09)
	s.sample(start.Add(time.Minute))
	actions.WithLabelValues("a", "ASK").Add(5)
	s.sample(start.Add(2 * time.Minute))

	got := s.actions()
	if len(got) != 2 || got[0] != (counted{"ask", 15}) || got[1] != (counted{"ready", 2}) {
		t.Errorf("actions %v, want ask 15, ready 2", got)
	}
	// 100 turns: the 99th is the one of 0.04 s, in the 0.05 s bucket.
	if d, above := s.p99(); d != 50*time.Millisecond || above {
		t.Errorf("p99 %v (above %v), want 50ms", d, above)
	}
	seconds.WithLabelValues("b", "READY").Observe(3)
	seconds.WithLabelValues("b", "READY").Observe(3)
	if d, above := s.p99(); d != 100*time.Millisecond || !above {
		t.Errorf("p99 past the last bucket: %v (above %v), want > 100ms", d, above)
	}
	per := s.perMinute()
	if len(per) != 2 || per[0].turns != 12 || per[1].turns != 5 {
		t.Errorf("per minute %v, want 12 then 5", per)
	}
	for i := range 2 * window {
		s.sample(start.Add(time.Duration(3+i) * time.Minute))
	}
	if n := len(s.perMinute()); n != window {
		t.Errorf("%d minutes kept, want %d", n, window)
	}
}
