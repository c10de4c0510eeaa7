package metrics

import "github.com/prometheus/client_golang/prometheus"

// Edge is what the HTTP listener reports of connections that have not
// authenticated a request yet: how many it holds, and how many it closed
// at once for being over their budget.
type Edge struct {
	unauth  prometheus.Gauge
	refused *prometheus.CounterVec
	resets  prometheus.Counter
}

// NewEdge makes the HTTP listener's collectors on m's registry; call it
// once per Metrics.
func NewEdge(m *Metrics) *Edge {
	e := &Edge{
		unauth: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "slotd_http_unauthenticated_connections",
			Help: "Connections to the HTTP listener that have not authenticated a request yet.",
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slotd_http_refused_connections_total",
			Help: "Connections to the HTTP listener closed as they were accepted, by the unauthenticated budget they were over (source: their address's, total: the listener's).",
		}, []string{"budget"}),
	}
	e.resets = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "slotd_http_reset_flood_connections_total",
		Help: "HTTP/2 connections to the HTTP listener closed for cancelling more streams than their budget (rapid reset).",
	})
	m.reg.MustRegister(e.unauth, e.refused, e.resets)
	for _, b := range []string{"source", "total"} {
		e.refused.WithLabelValues(b)
	}
	return e
}

// Unauthenticated adds d to the unauthenticated connections held.
func (e *Edge) Unauthenticated(d int) { e.unauth.Add(float64(d)) }

// RefusedConnection counts a connection closed for being over budget
// ("source" or "total").
func (e *Edge) RefusedConnection(budget string) { e.refused.WithLabelValues(budget).Inc() }

// ResetConnection counts a connection closed for cancelling too many
// streams.
func (e *Edge) ResetConnection() { e.resets.Inc() }
