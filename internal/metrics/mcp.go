package metrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// CompleteTool is the tool label of slotd_complete, the MCP tool that
// records a backend call's outcome.
const CompleteTool = "slotd_complete"

// MCP is what the /mcp endpoint adds to the turn metrics it gets from the
// in-process SlotService it calls: tool calls by outcome, the forms it
// showed users and how they answered, and the MCP sessions it holds.
type MCP struct {
	m         *Metrics
	calls     *prometheus.CounterVec
	seconds   *prometheus.HistogramVec
	elicits   *prometheus.CounterVec
	refused   *prometheus.CounterVec
	evicted   prometheus.Counter
	forms     prometheus.Gauge
	formsOff  *prometheus.CounterVec
	sessionFn atomic.Pointer[func() int]
	cap       prometheus.Gauge
}

func newMCP(m *Metrics) *MCP {
	x := &MCP{m: m}
	x.calls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_mcp_tool_calls_total",
		Help: "MCP tools/call requests, by tool (the contract's name, slotd_complete, or other) and outcome: the action answered (ASK, RECONFIRM, CONFIRM, READY, REPAIR, RESUME, HANDOFF, CANCELLED), FORM for a stateless call answered with a form for the client to show, for slotd_complete COMPLETED, RETRY or HANDOFF, or ERROR for a system failure.",
	}, []string{"tool", "outcome"})
	x.seconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "slotd_mcp_tool_call_duration_seconds",
		Help:    "Time to answer an MCP tools/call, forms the user filled in included, by tool.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
	}, []string{"tool"})
	x.elicits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_mcp_elicitations_total",
		Help: "Forms slotd asked an MCP client to show its user, by tool, kind (slots, confirm) and result (accept, decline, cancel, error: the client failed or the user did not answer in time).",
	}, []string{"tool", "kind", "result"})
	x.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_mcp_refused_requests_total",
		Help: "Requests to /mcp refused before the MCP server read them, by reason (admin_key, sessions_full: the global session cap, tenant_sessions_full: the tenant's session cap with none of its sessions idle, batch: a JSON-RPC batch the protocol version removed or with more than one initialize, method).",
	}, []string{"reason"})
	x.evicted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "slotd_mcp_sessions_evicted_total",
		Help: "MCP sessions closed to make room for a new session of the same tenant at its cap (its least recently used idle one).",
	})
	x.forms = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "slotd_mcp_forms_waiting",
		Help: "MCP tool calls waiting on a form the user has not answered yet.",
	})
	x.formsOff = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotd_mcp_forms_refused_total",
		Help: "Forms not shown because as many already wait, by reason (tenant: the tenant's cap, session: the session's); the call hands its question to the model instead.",
	}, []string{"reason"})
	sessions := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "slotd_mcp_sessions",
		Help: "MCP sessions this process holds (protocol versions with sessions).",
	}, func() float64 {
		if fn := x.sessionFn.Load(); fn != nil {
			return float64((*fn)())
		}
		return 0
	})
	x.cap = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "slotd_mcp_sessions_max",
		Help: "The bound on MCP sessions held at once, of all tenants (--mcp-max-sessions); 0 while MCP is off.",
	})
	m.reg.MustRegister(x.calls, x.seconds, x.elicits, x.refused, x.evicted, x.forms, x.formsOff, sessions, x.cap)
	for _, r := range []string{"admin_key", "sessions_full", "tenant_sessions_full", "batch", "method"} {
		x.refused.WithLabelValues(r)
	}
	for _, r := range []string{"tenant", "session"} {
		x.formsOff.WithLabelValues(r)
	}
	return x
}

// MCP is the /mcp endpoint's collectors.
func (m *Metrics) MCP() *MCP { return m.mcp }

func (x *MCP) tool(name string) string {
	if name == CompleteTool {
		return name
	}
	return x.m.Tool(name)
}

// Call observes one tools/call: the contract's name (or CompleteTool), its
// outcome and how long it took.
func (x *MCP) Call(tool, outcome string, d time.Duration) {
	t := x.tool(tool)
	x.calls.WithLabelValues(t, outcome).Inc()
	x.seconds.WithLabelValues(t).Observe(d.Seconds())
}

// Elicitation counts a form shown to a user: kind is slots or confirm,
// result accept, decline, cancel or error.
func (x *MCP) Elicitation(tool, kind, result string) {
	x.elicits.WithLabelValues(x.tool(tool), kind, result).Inc()
}

// Refused counts a request refused before the MCP server read it.
func (x *MCP) Refused(reason string) { x.refused.WithLabelValues(reason).Inc() }

// SessionEvicted counts a session closed for a new one of its tenant.
func (x *MCP) SessionEvicted() { x.evicted.Inc() }

// FormWaiting adds delta to the tool calls waiting on a form.
func (x *MCP) FormWaiting(delta int) { x.forms.Add(float64(delta)) }

// FormRefused counts a form not shown: reason is tenant or session.
func (x *MCP) FormRefused(reason string) { x.formsOff.WithLabelValues(reason).Inc() }

// CountSessions sets how the sessions gauge learns its value.
func (x *MCP) CountSessions(fn func() int) { x.sessionFn.Store(&fn) }

// SessionCap exports the bound on sessions, so that an alert can compare
// slotd_mcp_sessions with it.
func (x *MCP) SessionCap(n int) { x.cap.Set(float64(n)) }
