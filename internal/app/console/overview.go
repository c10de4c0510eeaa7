package console

import (
	"cmp"
	"math"
	"slices"
	"strconv"
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
	readyMetric    = "slotd_sessions_ready_total"
	reasksMetric   = "slotd_reasks_total"
	handoffsMetric = "slotd_handoffs_total"
	// window is how many minutes of turns the hour's chart draws.
	window = 60
	// day is how many minute samples are kept: the day's chart, by hour.
	day = 24 * 60
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
	if len(s.samples) > day+1 {
		s.samples = slices.Delete(s.samples, 0, len(s.samples)-day-1)
	}
}

// perMinute is the turns of each sampled minute of the last hour, oldest
// first.
func (s *sampler) perMinute() []sample {
	all := s.minutes()
	return all[max(0, len(all)-window):]
}

// minutes is the turns of each sampled minute of the last day.
func (s *sampler) minutes() []sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sample
	for i := 1; i < len(s.samples); i++ {
		out = append(out, sample{at: s.samples[i].at, turns: max(0, s.samples[i].turns-s.samples[i-1].turns)})
	}
	return out
}

// sofar is the turns since the last sample, at now: the minute under way,
// so that the charts show turns before a minute has been sampled. None
// before the first sample.
func (s *sampler) sofar(now time.Time) (sample, bool) {
	total := 0.0
	for _, a := range s.actions() {
		total += a.value
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) == 0 || !now.After(s.samples[len(s.samples)-1].at) {
		return sample{}, false
	}
	return sample{at: now, turns: max(0, total-s.samples[len(s.samples)-1].turns)}, true
}

// withSofar is the charts' minutes and hours with the minute under way
// added at its end: a bar of its own, and counted in its hour.
func withSofar(mins, hours []sample, cur sample) ([]sample, []sample) {
	mins = append(mins, cur)
	h := cur.at.Add(-time.Nanosecond).Truncate(time.Hour)
	if n := len(hours); n > 0 && hours[n-1].at.Equal(h) {
		hours = slices.Clone(hours)
		hours[n-1].turns += cur.turns
	} else {
		hours = append(hours, sample{at: h, turns: cur.turns})
	}
	return mins[max(0, len(mins)-window):], hours[max(0, len(hours)-24):]
}

// perHour is the turns of each hour of the last day that has samples,
// oldest first, each at the start of its hour.
func (s *sampler) perHour() []sample {
	var out []sample
	for _, m := range s.minutes() {
		// A sample counts the minute before it.
		h := m.at.Add(-time.Nanosecond).Truncate(time.Hour)
		if n := len(out); n > 0 && out[n-1].at.Equal(h) {
			out[n-1].turns += m.turns
			continue
		}
		out = append(out, sample{at: h, turns: m.turns})
	}
	return out[max(0, len(out)-24):]
}

// toolFigures are a tool's figures since the process started.
type toolFigures struct {
	Tool string
	// Ready is the sessions that answered READY; FirstAttempt of them
	// with no refused value or REPAIR on the way.
	Ready, FirstAttempt float64
	Reasks, Handoffs    float64
	// Validity is FirstAttempt / Ready as a percentage, "—" without READY.
	Validity string
}

// tools is each tool's first-attempt validity, re-asks and hand-offs,
// from slotd_sessions_ready_total, slotd_reasks_total and
// slotd_handoffs_total, by tool name.
func (s *sampler) tools() []toolFigures {
	by := map[string]*toolFigures{}
	get := func(m *dto.Metric) *toolFigures {
		tool := ""
		for _, l := range m.GetLabel() {
			if l.GetName() == "tool" {
				tool = l.GetValue()
			}
		}
		if by[tool] == nil {
			by[tool] = &toolFigures{Tool: tool}
		}
		return by[tool]
	}
	for _, f := range s.families() {
		for _, m := range f.GetMetric() {
			v := m.GetCounter().GetValue()
			switch f.GetName() {
			case readyMetric:
				t := get(m)
				t.Ready += v
				for _, l := range m.GetLabel() {
					if l.GetName() == "first_attempt" && l.GetValue() == "true" {
						t.FirstAttempt += v
					}
				}
			case reasksMetric:
				get(m).Reasks += v
			case handoffsMetric:
				get(m).Handoffs += v
			}
		}
	}
	var out []toolFigures
	for _, t := range by {
		t.Validity = "—"
		if t.Ready > 0 {
			t.Validity = strconv.FormatFloat(100*t.FirstAttempt/t.Ready, 'f', 1, 64) + "%"
		}
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b toolFigures) int { return cmp.Compare(a.Tool, b.Tool) })
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

// toolAction is the turns of one tool that answered one action.
type toolAction struct {
	Tool, Action string
	Turns        float64
}

// toolActions is the turns by tool and action, from
// slotd_turn_actions_total, by tool name and then action.
func (s *sampler) toolActions() []toolAction {
	var out []toolAction
	for _, f := range s.families() {
		if f.GetName() != actionsMetric {
			continue
		}
		for _, m := range f.GetMetric() {
			var ta toolAction
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "tool":
					ta.Tool = l.GetValue()
				case "action":
					ta.Action = strings.ToLower(l.GetValue())
				}
			}
			if ta.Turns = m.GetCounter().GetValue(); ta.Turns > 0 {
				out = append(out, ta)
			}
		}
	}
	slices.SortFunc(out, func(a, b toolAction) int {
		return cmp.Or(cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Action, b.Action))
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
