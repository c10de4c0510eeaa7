package console

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Refused sign-ins are limited per source: a source may fail signinBurst
// times in a row, then once each signinEvery. A source that is out of
// tries is refused before its key is looked at, so that guessing keys
// from one address goes no faster than that, the right key included.
const (
	signinBurst = 10
	signinEvery = 30 * time.Second
	// maxSources bounds the sources remembered. Past it, sources not yet
	// remembered share one allowance: many addresses buy no more tries.
	maxSources = 4096
)

// bucket is a source's allowance of refused sign-ins: tries at since.
type bucket struct {
	tries float64
	since time.Time
}

// left is the bucket's tries at now.
func (b bucket) left(now time.Time) float64 {
	return min(signinBurst, b.tries+float64(now.Sub(b.since))/float64(signinEvery))
}

// limiter holds the buckets of the sources that failed lately.
type limiter struct {
	mu       sync.Mutex
	sources  map[string]bucket
	overflow bucket
	clock    func() time.Time
}

func newLimiter(clock func() time.Time) *limiter {
	return &limiter{sources: map[string]bucket{}, overflow: bucket{tries: signinBurst}, clock: clock}
}

// source is who a request comes from: its IP address, an IPv6 one by
// its /64, which one machine usually holds whole.
func source(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return ip.String()
}

// wait is how long src must wait before its next try; 0 when it may try.
func (l *limiter) wait(src string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock()
	b, ok := l.sources[src]
	if !ok {
		if len(l.sources) < maxSources {
			return 0
		}
		b = l.overflow
	}
	if left := b.left(now); left < 1 {
		return time.Duration((1 - left) * float64(signinEvery))
	}
	return 0
}

// failed takes a try from src.
func (l *limiter) failed(src string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock()
	b, ok := l.sources[src]
	if !ok && len(l.sources) >= maxSources {
		// Full: forget the sources whose allowance is whole again.
		for s, o := range l.sources {
			if o.left(now) >= signinBurst {
				delete(l.sources, s)
			}
		}
	}
	if !ok && len(l.sources) >= maxSources {
		l.overflow = bucket{tries: max(0, l.overflow.left(now)-1), since: now}
		return
	}
	if !ok {
		b = bucket{tries: signinBurst, since: now}
	}
	l.sources[src] = bucket{tries: max(0, b.left(now)-1), since: now}
}
