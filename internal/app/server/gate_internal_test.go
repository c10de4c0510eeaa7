package server

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/metrics"
)

// TestGateBudgets dials a gated listener from two loopback addresses: the
// per-source budget closes a source's connections past it while another
// source still gets in, the total budget closes anyone's, and a connection
// leaves its budget once it authenticates a request or closes.
func TestGateBudgets(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := newGate(2, 3, metrics.NewEdge(metrics.New(nil)))
	lis := g.listener(raw)
	defer lis.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	// dial connects from ip and reports whether the server kept the
	// connection (a refused one is reset at once).
	dial := func(ip string) (net.Conn, bool) {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		c, err := d.Dial("tcp", raw.Addr().String())
		if err != nil {
			return nil, false // reset before the dial returned
		}
		_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		_, err = c.Read(make([]byte, 1))
		var ne net.Error
		return c, errors.As(err, &ne) && ne.Timeout()
	}
	server := func() net.Conn {
		select {
		case c := <-accepted:
			return c
		case <-time.After(time.Second):
			t.Fatal("no connection accepted")
			return nil
		}
	}

	c1, ok1 := dial("127.0.0.1")
	s1 := server()
	_, ok2 := dial("127.0.0.1")
	server()
	if _, ok := dial("127.0.0.1"); !ok1 || !ok2 || ok {
		t.Fatalf("a source's connections kept: %v %v %v, want the third over its budget of 2 closed", ok1, ok2, ok)
	}
	if _, ok := dial("127.0.0.2"); !ok {
		t.Fatal("another source was refused while within both budgets")
	}
	s3 := server()
	if _, ok := dial("127.0.0.3"); ok {
		t.Fatal("a connection past the total budget of 3 was kept")
	}
	// One authenticates, one closes: two places come free.
	authenticated(connContext(context.Background(), s1))
	authenticated(connContext(context.Background(), s1)) // once only
	s3.Close()
	c1.Close()
	if _, ok := dial("127.0.0.1"); !ok {
		t.Fatal("a source whose connection authenticated was refused")
	}
	server()
	if _, ok := dial("127.0.0.3"); !ok {
		t.Fatal("a place freed by a closed connection was not given")
	}
	server()
	if _, ok := dial("127.0.0.4"); ok {
		t.Fatal("a connection past the total budget of 3 was kept")
	}
}
