package console

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The overview reads the process's own metrics (slotd_turn_actions_total
// and slotd_turn_duration_seconds): what this replica served since it
// started, not the whole fleet's.
const (
	actionsMetric  = "slotd_turn_actions_total"
	durationMetric = "slotd_turn_duration_seconds"
	// window is how many minutes of turns the overview draws.
	window = 60
)

// sampler keeps the turn count of each of the last window minutes.
type sampler struct {
	g       prometheus.Gatherer
	mu      sync.Mutex
	samples []sample
}

type sample struct {
	at    time.Time
	turns float64
}

func newSampler(g prometheus.Gatherer) *sampler { return &sampler{g: g} }

// sample records the turns counted so far.
func (s *sampler) sample(now time.Time) {
	if s.g == nil {
		return
	}
	total := 0.0
	for _, a := range s.actions() {
		total += a.value
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples = append(s.samples, sample{at: now, turns: total})
	if len(s.samples) > window+1 {
		s.samples = slices.Delete(s.samples, 0, len(s.samples)-window-1)
	}
}

// perMinute is the turns of each sampled minute, oldest first.
func (s *sampler) perMinute() []sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sample
	for i := 1; i < len(s.samples); i++ {
		out = append(out, sample{at: s.samples[i].at, turns: max(0, s.samples[i].turns-s.samples[i-1].turns)})
	}
	return out
}

type counted struct {
	label string
	value float64
}

func (s *sampler) families() []*dto.MetricFamily {
	if s.g == nil {
		return nil
	}
	fams, _ := s.g.Gather()
	return fams
}

// actions is the turns by action, most first.
func (s *sampler) actions() []counted {
	by := map[string]float64{}
	for _, f := range s.families() {
		if f.GetName() != actionsMetric {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "action" {
					by[strings.ToLower(l.GetValue())] += m.GetCounter().GetValue()
				}
			}
		}
	}
	var out []counted
	for k, v := range by {
		out = append(out, counted{k, v})
	}
	slices.SortFunc(out, func(a, b counted) int {
		return cmp.Or(cmp.Compare(b.value, a.value), cmp.Compare(a.label, b.label))
	})
	return out
}

// p99 is the 99th percentile turn time over every tool and action, from
// the histogram's buckets (the upper bound of the bucket it falls in, as
// Prometheus' histogram_quantile would, without interpolation); 0 without
// turns. above says it is past the largest bucket, which is returned.
func (s *sampler) p99() (d time.Duration, above bool) {
	buckets := map[float64]uint64{}
	var count uint64
	for _, f := range s.families() {
		if f.GetName() != durationMetric {
			continue
		}
		for _, m := range f.GetMetric() {
			h := m.GetHistogram()
			count += h.GetSampleCount()
			for _, b := range h.GetBucket() {
				buckets[b.GetUpperBound()] += b.GetCumulativeCount()
			}
		}
	}
	if count == 0 {
		return 0, false
	}
	bounds := slices.Sorted(func(yield func(float64) bool) {
		for b := range buckets {
			if !yield(b) {
				return
			}
		}
	})
	rank := uint64(math.Ceil(0.99 * float64(count)))
	for _, b := range bounds {
		d = time.Duration(b * float64(time.Second))
		if buckets[b] >= rank {
			return d, false
		}
	}
	return d, true
}
