package mcp

import (
	"container/list"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/slotd/slotd/internal/metrics"
	"github.com/slotd/slotd/internal/setting"
)

// Limits bound what MCP clients hold of the process: sessions (some 50 KiB
// and a goroutine each) and tool calls waiting on a form (a handler and a
// connection each), per tenant and in all, so that one tenant cannot take
// the endpoint from the others. docs/security.md lists them.
type Limits struct {
	// MaxSessions bounds the sessions held at once; a new one past it is
	// refused with 503 until others close.
	MaxSessions int
	// MaxTenantSessions bounds one tenant's sessions; past it the tenant's
	// least recently used idle session is closed for the new one, and when
	// none is idle the new one is refused with 429.
	MaxTenantSessions int
	// SessionIdle closes a session no request has used for this long.
	SessionIdle time.Duration
	// MaxTenantForms and MaxSessionForms bound the tool calls waiting on a
	// form, per tenant and per session; a call past them hands its question
	// to the model instead.
	MaxTenantForms  int
	MaxSessionForms int
	// FormTimeout bounds the time a user has to answer one form.
	FormTimeout time.Duration
	// MaxBodyBytes bounds a request's body; the server sets it to its
	// HTTP listener's bound, which the edge in front of the endpoint
	// enforces first.
	MaxBodyBytes int
	// CallTimeout bounds each in-process call to SlotService; the server
	// sets it to its calls' default deadline.
	CallTimeout time.Duration
}

// The defaults of Limits.
const (
	DefaultMaxSessions       = 10000
	DefaultMaxTenantSessions = 1000
	DefaultSessionIdle       = 30 * time.Minute
	DefaultMaxTenantForms    = 64
	DefaultMaxSessionForms   = 4
	DefaultFormTimeout       = 2 * time.Minute
	DefaultMaxBodyBytes      = 1 << 20
	DefaultCallTimeout       = 10 * time.Second
)

// WithDefaults is l with its zero fields set to the defaults.
func (l Limits) WithDefaults() Limits {
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	set(&l.MaxSessions, DefaultMaxSessions)
	set(&l.MaxTenantSessions, DefaultMaxTenantSessions)
	set(&l.MaxTenantForms, DefaultMaxTenantForms)
	set(&l.MaxSessionForms, DefaultMaxSessionForms)
	set(&l.MaxBodyBytes, DefaultMaxBodyBytes)
	if l.SessionIdle == 0 {
		l.SessionIdle = DefaultSessionIdle
	}
	if l.FormTimeout == 0 {
		l.FormTimeout = DefaultFormTimeout
	}
	if l.CallTimeout == 0 {
		l.CallTimeout = DefaultCallTimeout
	}
	return l
}

// Validate says which limit, after WithDefaults, is out of range (a
// *setting.Error), or nil.
func (l Limits) Validate() error {
	return setting.First(
		setting.AtLeast("MaxSessions", l.MaxSessions, 1),
		setting.AtLeast("MaxTenantSessions", l.MaxTenantSessions, 1),
		setting.Positive("SessionIdle", l.SessionIdle),
		setting.AtLeast("MaxTenantForms", l.MaxTenantForms, 1),
		setting.AtLeast("MaxSessionForms", l.MaxSessionForms, 1),
		setting.Positive("FormTimeout", l.FormTimeout),
		setting.AtLeast("MaxBodyBytes", l.MaxBodyBytes, 1),
		setting.Positive("CallTimeout", l.CallTimeout),
	)
}

// Why places refuses a session or a form.
const (
	fullTenant  = "tenant"
	fullAll     = "global"
	fullSession = "session"
)

// places accounts for the sessions and waiting forms of each tenant. A
// session takes its place when the request that may open it arrives, before
// the SDK makes it, so that no request (a batch included) opens one past a
// cap.
type places struct {
	lim Limits
	m   *metrics.MCP

	mu      sync.Mutex
	total   int // places taken, opened sessions and requests opening one
	byID    map[string]*place
	tenants map[string]*tenantPlaces
}

type tenantPlaces struct {
	sessions int
	forms    int
	// idle are the tenant's sessions with no request in flight, least
	// recently used first: the order of eviction.
	idle list.List
}

// place is one session's, from the request that opens it to its close.
type place struct {
	tenant string
	id     string             // "" until the session is made
	sess   *sdk.ServerSession // nil until the session is made
	busy   int                // requests in flight
	forms  int                // tool calls waiting on a form
	elem   *list.Element      // in tenantPlaces.idle while idle
	timer  *time.Timer        // closes the session when it stays idle
	gone   bool
}

func newPlaces(lim Limits, m *metrics.MCP) *places {
	return &places{lim: lim, m: m, byID: map[string]*place{}, tenants: map[string]*tenantPlaces{}}
}

func (ps *places) tenant(name string) *tenantPlaces {
	t := ps.tenants[name]
	if t == nil {
		t = &tenantPlaces{}
		ps.tenants[name] = t
	}
	return t
}

// open takes a place for a session the request may open, busy until done.
// A tenant at its cap, or at the global one, gives up its least recently
// used idle session first; nil and why (fullTenant, fullAll) when it has
// none idle.
func (ps *places) open(tenant string) (*place, string) {
	ps.mu.Lock()
	t := ps.tenant(tenant)
	var evicted *place
	if t.sessions >= ps.lim.MaxTenantSessions || ps.total >= ps.lim.MaxSessions {
		front := t.idle.Front()
		if front == nil {
			why := fullAll
			if t.sessions >= ps.lim.MaxTenantSessions {
				why = fullTenant
			}
			ps.mu.Unlock()
			return nil, why
		}
		evicted = front.Value.(*place)
		ps.dropLocked(evicted)
	}
	p := &place{tenant: tenant, busy: 1}
	t = ps.tenant(tenant)
	t.sessions++
	ps.total++
	ps.mu.Unlock()
	if evicted != nil {
		ps.m.SessionEvicted()
		ps.close(evicted)
	}
	return p, ""
}

// made binds a place to the session its request opened.
func (ps *places) made(p *place, sess *sdk.ServerSession) {
	ps.mu.Lock()
	if p.gone {
		// The request ended before the session was made.
		ps.mu.Unlock()
		sess.Close()
		return
	}
	p.id, p.sess = sess.ID(), sess
	ps.byID[p.id] = p
	ps.mu.Unlock()
}

// use marks the session's place busy for a request; nil when the session
// is not one of this tenant's (the SDK answers that request).
func (ps *places) use(id, tenant string) *place {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.byID[id]
	if p == nil || p.tenant != tenant {
		return nil
	}
	if p.busy == 0 {
		ps.tenant(p.tenant).idle.Remove(p.elem)
		p.elem = nil
		p.timer.Stop()
	}
	p.busy++
	return p
}

// done ends a request on the place: the last one makes the session idle,
// closed after SessionIdle unless another request comes. A place whose
// request made no session is given back.
func (ps *places) done(p *place) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p.busy--
	if p.gone || p.busy > 0 {
		return
	}
	if p.sess == nil {
		ps.dropLocked(p)
		return
	}
	p.elem = ps.tenant(p.tenant).idle.PushBack(p)
	if p.timer == nil {
		p.timer = time.AfterFunc(ps.lim.SessionIdle, func() { ps.expire(p) })
	} else {
		p.timer.Reset(ps.lim.SessionIdle)
	}
}

// expire closes a session that stayed idle.
func (ps *places) expire(p *place) {
	ps.mu.Lock()
	if p.gone || p.busy > 0 {
		ps.mu.Unlock()
		return
	}
	ps.dropLocked(p)
	ps.mu.Unlock()
	ps.close(p)
}

// drop gives back the place of a session the client closed (DELETE).
func (ps *places) drop(p *place) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.dropLocked(p)
}

func (ps *places) dropLocked(p *place) {
	if p.gone {
		return
	}
	p.gone = true
	t := ps.tenants[p.tenant]
	if p.elem != nil {
		t.idle.Remove(p.elem)
		p.elem = nil
	}
	if p.timer != nil {
		p.timer.Stop()
	}
	if p.id != "" {
		delete(ps.byID, p.id)
	}
	t.sessions--
	t.forms -= p.forms
	ps.total--
	if t.sessions == 0 && t.forms == 0 {
		delete(ps.tenants, p.tenant)
	}
}

func (ps *places) close(p *place) {
	if p != nil && p.sess != nil {
		_ = p.sess.Close()
	}
}

// form takes a place for a tool call of the session waiting on a form; the
// release func gives it back; "" and why (fullTenant, fullSession) when
// the tenant or the session has as many waiting as it may.
func (ps *places) form(id string) (release func(), why string) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.byID[id]
	if p == nil {
		return nil, fullSession
	}
	t := ps.tenant(p.tenant)
	switch {
	case t.forms >= ps.lim.MaxTenantForms:
		return nil, fullTenant
	case p.forms >= ps.lim.MaxSessionForms:
		return nil, fullSession
	}
	t.forms++
	p.forms++
	ps.m.FormWaiting(1)
	return func() {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		ps.m.FormWaiting(-1)
		if p.gone {
			return
		}
		p.forms--
		t.forms--
	}, ""
}

// count is the sessions held, of every tenant.
func (ps *places) count() int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return len(ps.byID)
}
