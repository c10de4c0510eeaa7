// Package metrics owns slotd's Prometheus collectors: how long turns take
// and what they answer, what the model's arguments were like (first-attempt
// validity, re-asks, repairs, refused values), how sessions end, the gRPC
// server's calls and the Postgres pool. It is fed at the edges — the gRPC
// adapter's observer reports each turn with its session.Facts, and a
// wrapper of the session.Store reports every commit written — never from
// inside the engine, whose merge and clarify stay pure.
//
// Every label value is a name the contracts define or a fixed word, never a
// value a caller sent: a tool the catalog lacks is counted as "other", so
// no request can grow the number of series.
package metrics

import (
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/session"
)

// OtherTool is the tool label of a turn naming a tool the catalog lacks.
const OtherTool = "other"

// ErrorAction is the action label of a turn that failed with a gRPC error.
const ErrorAction = "ERROR"

// LatencyBuckets are the turn latency histogram's buckets in seconds: fine
// below 20 ms, where a healthy turn lands.
var LatencyBuckets = []float64{.00025, .0005, .001, .002, .003, .005, .0075, .01, .015, .02, .03, .05, .1, .25, .5, 1, 2.5, 5}

// Metrics is one slotd's collectors, on a registry of its own so that
// several servers can live in one process (tests, the bench).
type Metrics struct {
	reg *prometheus.Registry
	// tools are the catalog's tools, each with its place in the turn
	// series' tables (OtherTool's is after them).
	tools map[string]int

	// GRPC is the gRPC server's call metrics
	// (grpc_server_handled_total, grpc_server_handling_seconds, ...).
	GRPC *grpcprom.ServerMetrics

	turnSeconds *prometheus.HistogramVec
	actions     *prometheus.CounterVec
	// The two series every turn observes, by tool and action.
	turnSecondsOf *bySeries[prometheus.Observer]
	actionsOf     *bySeries[prometheus.Counter]
	replays       *prometheus.CounterVec
	failures      *prometheus.CounterVec
	inFlight      prometheus.Gauge
	unreplicated  prometheus.Counter
	ready         *prometheus.CounterVec
	reasks        *prometheus.CounterVec
	repairs       *prometheus.CounterVec
	rejected      *prometheus.CounterVec
	resumes       *prometheus.CounterVec
	ended         *prometheus.CounterVec
	fallbacks     *prometheus.CounterVec

	handoffs         *prometheus.CounterVec
	attemptsValid    *prometheus.HistogramVec
	outputViolations *prometheus.CounterVec
	backendFailures  *prometheus.CounterVec
	refused          *prometheus.CounterVec

	mcp     *MCP
	janitor *Janitor
}

// BackendSlot is the slot label of a hand-off because the backend call
// failed past retrying, not because of a slot.
const BackendSlot = "_backend"

// New makes the collectors for a catalog of tools and registers them with
// the Go runtime's and the process's.
func New(tools []string) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), tools: map[string]int{}}
	for _, t := range tools {
		if _, ok := m.tools[t]; !ok && t != OtherTool {
			m.tools[t] = len(m.tools)
		}
	}
	m.GRPC = grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(grpcprom.WithHistogramBuckets(LatencyBuckets)))
	m.turnSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "slotd_turn_duration_seconds",
		Help:    "Time to answer a turn, from the call's arrival to its response, by tool and action (ERROR when the call failed).",
		Buckets: LatencyBuckets,
	}, []string{"tool", "action"})
	m.actions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_turn_actions_total",
		Help: "Turns applied, by tool and the action they answered (ASK, RECONFIRM, CONFIRM, READY, REPAIR, RESUME, CANCELLED); replays are not counted.",
	}, []string{"tool", "action"})
	m.replays = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_turn_replays_total",
		Help: "Turns answered from the stored response because their turn_id was seen before (client retries).",
	}, []string{"tool"})
	m.failures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_turn_failures_total",
		Help: "Turns that failed with a gRPC error, by tool and gRPC code.",
	}, []string{"tool", "code"})
	m.unreplicated = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "slotd_turns_not_replicated_total",
		Help: "Turns answered UNAVAILABLE because Postgres committed them with a warning: not known to be replicated to the synchronous standby (a cancelled wait for it). Counted among slotd_turn_failures_total{code=\"Unavailable\"} too.",
	})
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "slotd_turns_in_flight",
		Help: "Turns being answered right now.",
	})
	m.ready = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_sessions_ready_total",
		Help: "Sessions that answered READY for the first time, by tool; first_attempt=\"true\" when no turn before refused a value or answered REPAIR. First-attempt validity = first_attempt=\"true\" / all.",
	}, []string{"tool", "first_attempt"})
	m.reasks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_reasks_total",
		Help: "Questions asked again about the slot the previous turn asked about, by tool and slot.",
	}, []string{"tool", "slot"})
	m.repairs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_repairs_total",
		Help: "Violations of the contract's cross-field rules answered with REPAIR, by tool and field (_root for a rule of the whole object).",
	}, []string{"tool", "field"})
	m.rejected = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_rejected_values_total",
		Help: "Argument values refused and not stored, by tool and the normalizer of their slot (schema when it has none, unknown_argument for a name the contract lacks).",
	}, []string{"tool", "normalizer"})
	m.resumes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_stale_resumes_total",
		Help: "Turns that found their session idle past stale_after and asked whether to go on (RESUME).",
	}, []string{"tool"})
	m.ended = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_sessions_ended_total",
		Help: "Sessions ended, by tool and status (completed, failed, cancelled, abandoned, expired, reset): expiries and resets among them.",
	}, []string{"tool", "status"})
	m.fallbacks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_fallbacks_total",
		Help: "Sessions that ended without ever answering READY, by tool and how they ended.",
	}, []string{"tool", "status"})

	m.handoffs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_handoffs_total",
		Help: "Conversations handed to a person, by tool and the slot that reached its max_attempts (_backend when the backend call failed past retrying).",
	}, []string{"tool", "slot"})
	m.attemptsValid = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "slotd_attempts_until_valid",
		Help:    "Attempts a slot took until its value was accepted (1: the first), by tool and slot.",
		Buckets: []float64{1, 2, 3, 4, 5},
	}, []string{"tool", "slot"})
	m.outputViolations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_output_contract_violations_total",
		Help: "Backend results that broke the tool's output contract (x-slotd.output), by tool.",
	}, []string{"tool"})
	m.backendFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_backend_failures_total",
		Help: "Backend call failures reported through CompleteSession, by tool and kind (timeout, unavailable, rate_limited, unauthorized, internal).",
	}, []string{"tool", "kind"})

	m.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_refused_calls_total",
		Help: "Calls refused before any work was done, by listener (grpc, http, console: a refused sign-in) and reason (unauthenticated, permission_denied, overloaded; rate_limited: a console sign-in from an address past its refused sign-ins; tenant_share: the tenant had its share of the in-flight turns). Turns over HTTP and MCP are shed under grpc, by the gateway's gRPC server.",
	}, []string{"listener", "reason"})
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.GRPC, m.turnSeconds, m.actions, m.replays, m.failures, m.inFlight, m.unreplicated, m.ready,
		m.reasks, m.repairs, m.rejected, m.resumes, m.ended, m.fallbacks,
		m.handoffs, m.attemptsValid, m.outputViolations, m.backendFailures, m.refused,
	)
	m.mcp = newMCP(m)
	m.janitor = newJanitor(m.reg)
	m.turnSecondsOf = newBySeries(len(m.tools)+1, func(tool, action string) prometheus.Observer {
		return m.turnSeconds.WithLabelValues(tool, action)
	})
	m.actionsOf = newBySeries(len(m.tools)+1, func(tool, action string) prometheus.Counter {
		return m.actions.WithLabelValues(tool, action)
	})
	for _, l := range []string{"grpc", "http"} {
		for _, r := range []string{"unauthenticated", "permission_denied", "overloaded"} {
			m.refused.WithLabelValues(l, r)
		}
	}
	m.refused.WithLabelValues("grpc", "tenant_share")
	// Series a rate is taken of exist from the start, at zero.
	for t := range m.tools {
		m.ready.WithLabelValues(t, "true")
		m.ready.WithLabelValues(t, "false")
		m.resumes.WithLabelValues(t)
		m.replays.WithLabelValues(t)
	}
	return m
}

// Refused counts a call refused before any work was done: listener is grpc
// or http, reason one of unauthenticated, permission_denied, overloaded,
// tenant_share.
func (m *Metrics) Refused(listener, reason string) { m.refused.WithLabelValues(listener, reason).Inc() }

// Registry is the registry the collectors are on.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Tool is the label for a tool name: itself when the catalog has it, else
// OtherTool.
func (m *Metrics) Tool(name string) string {
	if _, ok := m.tools[name]; ok {
		return name
	}
	return OtherTool
}

// Turn is one turn as the gRPC adapter answered it.
type Turn struct {
	// Tool is the requested tool; Metrics turns it into a label.
	Tool string
	// Action is the action answered; "" when the call failed.
	Action string
	// Code is the gRPC code name of a failed call.
	Code string
	// NotReplicated is a failed call whose commit is not known to be
	// replicated (pgstore.NotReplicated).
	NotReplicated bool
	Duration      time.Duration
	Replayed      bool
	// Facts are the engine's facts of an applied turn; none for a replay
	// or a failure.
	Facts session.Facts
}

// TurnStarted counts a turn in flight until TurnDone reports it.
func (m *Metrics) TurnStarted() { m.inFlight.Inc() }

// TurnDone observes a turn that TurnStarted counted.
func (m *Metrics) TurnDone(t Turn) {
	m.inFlight.Dec()
	tool := m.Tool(t.Tool)
	action := t.Action
	if action == "" {
		action = ErrorAction
		m.failures.WithLabelValues(tool, t.Code).Inc()
		if t.NotReplicated {
			m.unreplicated.Inc()
		}
	}
	series := m.series(tool, action)
	m.turnSecondsOf.get(series, tool, action).Observe(t.Duration.Seconds())
	switch {
	case t.Action == "":
		return
	case t.Replayed:
		m.replays.WithLabelValues(tool).Inc()
		return
	}
	m.actionsOf.get(series, tool, action).Inc()
	if action == "RESUME" {
		m.resumes.WithLabelValues(tool).Inc()
	}
	f := t.Facts
	for _, r := range f.Rejected {
		m.rejected.WithLabelValues(tool, r.Normalizer).Inc()
	}
	if len(f.Repaired) > 0 { // the iterator allocates, even over nothing
		for _, field := range slices.Compact(slices.Sorted(slices.Values(f.Repaired))) {
			m.repairs.WithLabelValues(tool, field).Inc()
		}
	}
	if f.Reasked != "" {
		m.reasks.WithLabelValues(tool, f.Reasked).Inc()
	}
	if f.FirstReady {
		m.ready.WithLabelValues(tool, strconv.FormatBool(f.FirstAttempt)).Inc()
	}
	if f.HandedOff != "" {
		m.handoffs.WithLabelValues(tool, f.HandedOff).Inc()
	}
	for _, v := range f.Valid {
		m.attemptsValid.WithLabelValues(tool, v.Slot).Observe(float64(v.Attempts))
	}
}

// Completion is one CompleteSession as the gRPC adapter answered it.
type Completion struct {
	Tool string
	// FailureKind is the backend failure reported, "" for a result.
	FailureKind string
	// OutputInvalid: the backend's result broke the output contract.
	OutputInvalid bool
	// HandedOff: the answer was HANDOFF.
	HandedOff bool
}

// CompletionDone observes a CompleteSession that succeeded.
func (m *Metrics) CompletionDone(c Completion) {
	tool := m.Tool(c.Tool)
	if c.FailureKind != "" {
		m.backendFailures.WithLabelValues(tool, c.FailureKind).Inc()
	}
	if c.OutputInvalid {
		m.outputViolations.WithLabelValues(tool).Inc()
	}
	if c.HandedOff {
		m.handoffs.WithLabelValues(tool, BackendSlot).Inc()
	}
}

// sessionEnded observes a session a written commit ended.
func (m *Metrics) sessionEnded(s *session.Session) {
	tool, status := m.Tool(s.Tool), string(s.Status)
	m.ended.WithLabelValues(tool, status).Inc()
	if !s.Marks.Ready {
		m.fallbacks.WithLabelValues(tool, status).Inc()
	}
}

// turnActions are the action labels of the turn metrics: every action a
// turn answers, and ErrorAction.
var turnActions = []string{
	string(clarify.Ask), string(clarify.Reconfirm), string(clarify.Confirm), string(clarify.Ready),
	string(clarify.Repair), string(clarify.Resume), string(clarify.Handoff), string(clarify.Cancelled), ErrorAction,
}

// bySeries holds a vector's children by tool and action, each made on its
// first use (so a series appears when it is first observed, as with
// WithLabelValues) and then read with one atomic load: without the
// vector's lock, whose reader count every turn on every core would write,
// and without hashing the labels. A label outside the catalog and
// turnActions goes to the vector as before.
type bySeries[T any] struct {
	cells []atomic.Pointer[T]
	child func(tool, action string) T
}

func newBySeries[T any](tools int, child func(tool, action string) T) *bySeries[T] {
	return &bySeries[T]{cells: make([]atomic.Pointer[T], tools*len(turnActions)), child: child}
}

// series is the place of a tool label and an action in the tables, or -1
// for an action outside turnActions.
func (m *Metrics) series(tool, action string) int {
	ai := slices.Index(turnActions, action)
	if ai < 0 {
		return -1
	}
	ti, ok := m.tools[tool]
	if !ok { // OtherTool: m.Tool made the label
		ti = len(m.tools)
	}
	return ti*len(turnActions) + ai
}

// get is the series at place i (Metrics.series) of tool and action. Two
// turns making the same series at once both get the vector's one child.
func (c *bySeries[T]) get(i int, tool, action string) T {
	if i < 0 {
		return c.child(tool, action)
	}
	cell := &c.cells[i]
	if p := cell.Load(); p != nil {
		return *p
	}
	v := c.child(tool, action)
	cell.Store(&v)
	return v
}
