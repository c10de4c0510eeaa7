package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// PoolStats is a snapshot of a database connection pool (pgxpool.Stat's
// numbers), so that this package needs no driver.
type PoolStats struct {
	AcquiredConns, IdleConns, TotalConns, MaxConns, ConstructingConns int32
	// Cumulative since the pool opened.
	AcquireCount, EmptyAcquireCount, CanceledAcquireCount, NewConnsCount int64
	AcquireDuration                                                      time.Duration
}

// WatchPool exports the pool's numbers, read from stat at every scrape.
func (m *Metrics) WatchPool(stat func() PoolStats) {
	m.reg.MustRegister(&poolCollector{stat: stat})
}

var (
	poolGauges = map[string]*prometheus.Desc{
		"acquired":     prometheus.NewDesc("slotd_pg_pool_acquired_conns", "Postgres connections in use.", nil, nil),
		"idle":         prometheus.NewDesc("slotd_pg_pool_idle_conns", "Postgres connections idle in the pool.", nil, nil),
		"total":        prometheus.NewDesc("slotd_pg_pool_total_conns", "Postgres connections open.", nil, nil),
		"max":          prometheus.NewDesc("slotd_pg_pool_max_conns", "The pool's bound on connections (pool_max_conns).", nil, nil),
		"constructing": prometheus.NewDesc("slotd_pg_pool_constructing_conns", "Postgres connections being opened.", nil, nil),
	}
	poolAcquires         = prometheus.NewDesc("slotd_pg_pool_acquires_total", "Connections acquired from the pool.", nil, nil)
	poolEmptyAcquires    = prometheus.NewDesc("slotd_pg_pool_empty_acquires_total", "Acquires that had to wait because no connection was idle: a pool too small for the load shows here.", nil, nil)
	poolCanceledAcquires = prometheus.NewDesc("slotd_pg_pool_canceled_acquires_total", "Acquires given up because the call's context ended.", nil, nil)
	poolNewConns         = prometheus.NewDesc("slotd_pg_pool_new_conns_total", "Connections opened.", nil, nil)
	poolAcquireSeconds   = prometheus.NewDesc("slotd_pg_pool_acquire_seconds_total", "Time spent acquiring connections.", nil, nil)
)

type poolCollector struct{ stat func() PoolStats }

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range poolGauges {
		ch <- d
	}
	for _, d := range []*prometheus.Desc{poolAcquires, poolEmptyAcquires, poolCanceledAcquires, poolNewConns, poolAcquireSeconds} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stat()
	gauge := func(name string, v int32) {
		ch <- prometheus.MustNewConstMetric(poolGauges[name], prometheus.GaugeValue, float64(v))
	}
	gauge("acquired", s.AcquiredConns)
	gauge("idle", s.IdleConns)
	gauge("total", s.TotalConns)
	gauge("max", s.MaxConns)
	gauge("constructing", s.ConstructingConns)
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	counter(poolAcquires, float64(s.AcquireCount))
	counter(poolEmptyAcquires, float64(s.EmptyAcquireCount))
	counter(poolCanceledAcquires, float64(s.CanceledAcquireCount))
	counter(poolNewConns, float64(s.NewConnsCount))
	counter(poolAcquireSeconds, s.AcquireDuration.Seconds())
}
