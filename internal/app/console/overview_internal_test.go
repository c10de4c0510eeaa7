package console

import (
	"slices"
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
	// By tool and action, a series never counted left out.
	actions.WithLabelValues("b", "REPAIR")
	want := []toolAction{{"a", "ask", 12}, {"a", "ready", 2}, {"b", "ask", 3}}
	if got := s.toolActions(); !slices.Equal(got, want) {
		t.Errorf("by tool and action %v, want %v", got, want)
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
	// The minute under way: a bar of its own, counted in its hour.
	actions.WithLabelValues("b", "ASK").Add(4)
	if _, ok := s.sofar(start.Add(2 * time.Minute)); ok {
		t.Errorf("a minute under way at the last sample's time")
	}
	cur, ok := s.sofar(start.Add(2*time.Minute + 20*time.Second))
	if !ok || cur.turns != 4 {
		t.Errorf("the minute under way: %v, %v; want 4 turns", cur, ok)
	}
	mins, hours := withSofar(s.perMinute(), s.perHour(), cur)
	if len(mins) != 3 || mins[2].turns != 4 || len(hours) != 1 || hours[0].turns != 21 {
		t.Errorf("with the minute under way: minutes %v, hours %v; want 12, 5, 4 in one hour of 21", mins, hours)
	}
	for i := range 2 * window {
		s.sample(start.Add(time.Duration(3+i) * time.Minute))
	}
	if n := len(s.perMinute()); n != window {
		t.Errorf("%d minutes kept, want %d", n, window)
	}
}

// Per tool: first-attempt validity from slotd_sessions_ready_total, the
// re-asks and hand-offs summed over slots; and the day's chart sums the
// minutes of each hour.
func TestSamplerTools(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	actions := prometheus.NewCounterVec(prometheus.CounterOpts{Name: actionsMetric}, []string{"tool", "action"})
	ready := prometheus.NewCounterVec(prometheus.CounterOpts{Name: readyMetric}, []string{"tool", "first_attempt"})
	reasks := prometheus.NewCounterVec(prometheus.CounterOpts{Name: reasksMetric}, []string{"tool", "slot"})
	handoffs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: handoffsMetric}, []string{"tool", "slot"})
	reg.MustRegister(actions, ready, reasks, handoffs)
	ready.WithLabelValues("bank.open_dispute", "true").Add(3)
	ready.WithLabelValues("bank.open_dispute", "false").Add(1)
	ready.WithLabelValues("bank.block_card", "false").Add(2)
	ready.WithLabelValues("travel.search_flights", "true")
	reasks.WithLabelValues("bank.open_dispute", "amount").Add(4)
	reasks.WithLabelValues("bank.open_dispute", "reason").Add(1)
	handoffs.WithLabelValues("bank.block_card", "_backend").Add(2)
	handoffs.WithLabelValues("bank.open_dispute", "amount").Add(1)
	s := newSampler(reg)
	got := map[string]toolFigures{}
	for _, f := range s.tools() {
		got[f.Tool] = f
	}
	for tool, want := range map[string]toolFigures{
		"bank.open_dispute":     {Tool: "bank.open_dispute", Ready: 4, FirstAttempt: 3, Reasks: 5, Handoffs: 1, Validity: "75.0%"},
		"bank.block_card":       {Tool: "bank.block_card", Ready: 2, Handoffs: 2, Validity: "0.0%"},
		"travel.search_flights": {Tool: "travel.search_flights", Validity: "—"},
	} {
		if got[tool] != want {
			t.Errorf("%s: %+v, want %+v", tool, got[tool], want)
		}
	}

	start := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	for i := range 3*60 + 1 {
		actions.WithLabelValues("a", "ASK").Add(float64(i % 3))
		s.sample(start.Add(time.Duration(i) * time.Minute))
	}
	hours := s.perHour()
	if len(hours) != 3 || !hours[0].at.Equal(start) || hours[2].at != start.Add(2*time.Hour) {
		t.Fatalf("per hour %v, want 10:00, 11:00, 12:00", hours)
	}
	for _, h := range hours {
		if h.turns != 60 {
			t.Errorf("hour %v: %v turns, want 60", h.at, h.turns)
		}
	}
	for i := range 2 * day {
		s.sample(start.Add(time.Duration(200+i) * time.Minute))
	}
	if n := len(s.minutes()); n != day {
		t.Errorf("%d minutes kept, want %d", n, day)
	}
	if n := len(s.perHour()); n != 24 {
		t.Errorf("%d hours drawn, want a day's", n)
	}
}
