package console

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"
)

// The limiter remembers at most maxSources sources; addresses past it
// share one allowance, so that spraying addresses buys no more tries, and
// sources whose allowance is whole again are forgotten to make room.
func TestLimiterBounded(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	l := newLimiter(func() time.Time { return now })
	for i := range maxSources + 500 {
		src := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
		if l.wait(src) > 0 && i < maxSources+signinBurst {
			t.Fatalf("source %d waits before failing", i)
		}
		l.failed(src)
	}
	if n := l.size(); n != maxSources {
		t.Fatalf("%d sources remembered, want %d", n, maxSources)
	}
	if l.wait("192.0.2.1") == 0 {
		t.Errorf("a new source while full: no wait, want the shared allowance spent")
	}
	// Once their allowances are whole, old sources make room.
	now = now.Add(signinBurst * signinEvery)
	if l.wait("192.0.2.1") != 0 {
		t.Errorf("a new source after the allowances refilled waits")
	}
	l.failed("192.0.2.1")
	if n := l.size(); n != 1 {
		t.Errorf("%d sources remembered after the refill, want 1", n)
	}
}

func TestSource(t *testing.T) {
	for remote, want := range map[string]string{
		"203.0.113.7:80":             "203.0.113.7",
		"[2001:db8:a:b:c:d:e:f]:443": "2001:db8:a:b::/64",
		"[::ffff:203.0.113.7]:1":     "203.0.113.7",
		"no-port":                    "no-port",
		"[fe80::1%eth0]:1":           "fe80::1%eth0",
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		if got := source(r); got != want {
			t.Errorf("source(%q) = %q, want %q", remote, got, want)
		}
	}
}

// size is the sources remembered.
func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sources)
}
