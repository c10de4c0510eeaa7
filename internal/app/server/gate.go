package server

import (
	"context"
	"crypto/tls"
	"net"
	"sync"

	"golang.org/x/time/rate"

	"github.com/slotd/slotd/internal/metrics"
)

// gate bounds the HTTP listener's connections that have not authenticated
// a request yet, per source address and in all, so that connections
// without a key (sending their headers slowly, or nothing) cannot take the
// listener's connections from clients that have one. A connection over
// either budget is closed as it is accepted; one that authenticates a
// request leaves the budget for good.
type gate struct {
	perSource, total int
	m                *metrics.Edge

	mu       sync.Mutex
	held     int
	bySource map[string]int
}

func newGate(perSource, total int, m *metrics.Edge) *gate {
	return &gate{perSource: perSource, total: total, m: m, bySource: map[string]int{}}
}

// enter counts a new connection from src; false (and the budget's name)
// when it is over one.
func (g *gate) enter(src string) (bool, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.held >= g.total:
		return false, "total"
	case g.bySource[src] >= g.perSource:
		return false, "source"
	}
	g.held++
	g.bySource[src]++
	g.m.Unauthenticated(1)
	return true, ""
}

func (g *gate) leave(src string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held--
	if g.bySource[src]--; g.bySource[src] == 0 {
		delete(g.bySource, src)
	}
	g.m.Unauthenticated(-1)
}

// listener gates the connections lis accepts.
func (g *gate) listener(lis net.Listener) net.Listener { return &gateListener{Listener: lis, g: g} }

type gateListener struct {
	net.Listener
	g *gate
}

// Accept returns the next connection within the budgets, closing the ones
// over them with a reset (no TIME_WAIT left behind for a flood).
func (l *gateListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		src := sourceOf(c.RemoteAddr())
		ok, budget := l.g.enter(src)
		if ok {
			return &gatedConn{Conn: c, g: l.g, src: src}, nil
		}
		l.g.m.RefusedConnection(budget)
		if tc, ok := c.(interface{ SetLinger(int) error }); ok {
			_ = tc.SetLinger(0)
		}
		c.Close()
	}
}

// sourceOf is the budget's key of a peer: its IP address.
func sourceOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// gatedConn is a connection counted in the gate until it authenticates a
// request or closes, whichever comes first.
type gatedConn struct {
	net.Conn
	g    *gate
	src  string
	once sync.Once

	// resets are the streams the client cancelled (HTTP/2), made once one
	// is.
	resetsOnce sync.Once
	resets     *rate.Limiter
}

func (c *gatedConn) release() { c.once.Do(func() { c.g.leave(c.src) }) }

func (c *gatedConn) Close() error {
	c.release()
	return c.Conn.Close()
}

// connKey is the context key of a request's gatedConn. net/http gives a
// handler no other way to its connection than the context ConnContext
// makes (http.Server.ConnContext).
type connKey struct{}

// connContext is the http.Server's ConnContext: it puts the connection's
// gatedConn (under TLS, the one beneath) where authenticated can find it.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if gc, ok := c.(*gatedConn); ok {
		return context.WithValue(ctx, connKey{}, gc)
	}
	return ctx
}

// The streams a client may cancel on one HTTP/2 connection: a burst, then
// a steady rate. A stream cancelled at once still costs slotd its
// handler's goroutine and request (an HTTP/2 rapid reset), and slotd cannot
// see RST_STREAM frames, only requests whose context ended before their
// handler did; a client past this is cut off.
const (
	maxResetBurst  = 100
	maxResetPerSec = 10
)

// cancelled counts a request whose client cancelled it before its answer
// and closes its connection when it is past the reset budget.
func cancelled(ctx context.Context) {
	gc, ok := ctx.Value(connKey{}).(*gatedConn)
	if !ok {
		return
	}
	gc.resetsOnce.Do(func() { gc.resets = rate.NewLimiter(maxResetPerSec, maxResetBurst) })
	if !gc.resets.Allow() {
		gc.g.m.ResetConnection()
		gc.Close()
	}
}

// authenticated takes the connection of a request that authenticated out
// of the gate's budget.
func authenticated(ctx context.Context) {
	if gc, ok := ctx.Value(connKey{}).(*gatedConn); ok {
		gc.release()
	}
}
