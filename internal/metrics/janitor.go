package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Janitor results of one sweep.
const (
	// SweepOK is a sweep that ended and purged all it found.
	SweepOK = "ok"
	// SweepBacklog is a sweep that stopped at its bound of batches with
	// more to do: the janitor is behind when every sweep says so.
	SweepBacklog = "backlog"
	// SweepError is a sweep that a store error stopped.
	SweepError = "error"
)

// Janitor is what the janitor reports, so that an operator sees it fall
// behind or fail without reading its log lines.
type Janitor struct {
	sweeps      *prometheus.CounterVec
	lastSuccess prometheus.Gauge
	sessions    *prometheus.CounterVec
}

func newJanitor(reg prometheus.Registerer) *Janitor {
	j := &Janitor{
		sweeps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slotd_janitor_sweeps_total",
			Help: "Janitor sweeps, by result (ok; backlog: stopped at its bound of batches with more to do; error: a store error stopped it).",
		}, []string{"result"}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "slotd_janitor_last_success_timestamp_seconds",
			Help: "Unix time of the end of the last janitor sweep that met no error (0: none yet).",
		}),
		sessions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slotd_janitor_sessions_total",
			Help: "Sessions the janitor ended past their ttl (expired) or deleted past the retention (purged).",
		}, []string{"op"}),
	}
	reg.MustRegister(j.sweeps, j.lastSuccess, j.sessions)
	for _, r := range []string{SweepOK, SweepBacklog, SweepError} {
		j.sweeps.WithLabelValues(r)
	}
	for _, op := range []string{"expired", "purged"} {
		j.sessions.WithLabelValues(op)
	}
	return j
}

// Janitor is the janitor's collectors.
func (m *Metrics) Janitor() *Janitor { return m.janitor }

// Expired counts sessions the janitor ended past their ttl.
func (j *Janitor) Expired(n int) { j.sessions.WithLabelValues("expired").Add(float64(n)) }

// Purged counts sessions the janitor deleted past the retention.
func (j *Janitor) Purged(n int) { j.sessions.WithLabelValues("purged").Add(float64(n)) }

// Swept counts a sweep that ended at end with result (SweepOK,
// SweepBacklog, SweepError); a backlog is a success too, since the next
// sweep goes on with it.
func (j *Janitor) Swept(result string, end time.Time) {
	j.sweeps.WithLabelValues(result).Inc()
	if result != SweepError {
		j.lastSuccess.Set(float64(end.UnixNano()) / 1e9)
	}
}
