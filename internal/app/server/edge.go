package server

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/slotd/slotd/internal/auth"
	"github.com/slotd/slotd/internal/certs"
	"github.com/slotd/slotd/problem"
)

// The bounds of every listener, so that no client, authenticated or not,
// can hold more of the process than they allow. docs/security.md lists
// them.
const (
	// MaxConnections bounds each listener's open connections; more wait
	// in the kernel's accept queue.
	MaxConnections = 1024
	// MaxStreamsPerConnection is the HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS
	// of every connection; api.Limits.MaxStreams bounds them all together.
	MaxStreamsPerConnection = 256
	// maxHTTPStreams is the HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS of the
	// HTTP listeners: each stream is a handler's goroutine, and a rapid
	// reset flood keeps every connection at the limit (at 100, 256
	// connections held 25 600 goroutines and slotd died at its memory
	// cap). HTTP/JSON clients rarely multiplex; one that needs more opens
	// more connections.
	maxHTTPStreams = 16
	// maxHeaderBytes bounds a request's headers (gRPC metadata included).
	maxHeaderBytes = 16 << 10
	// handshakeTimeout bounds a new connection's TLS handshake and HTTP/2
	// preface.
	handshakeTimeout = 5 * time.Second
	// maxIdle closes a connection with no call for this long.
	maxIdle = 5 * time.Minute
	// pingEvery and pingTimeout find dead peers: a ping after a quiet
	// minute, and the connection closed when it goes unanswered.
	pingEvery   = time.Minute
	pingTimeout = 20 * time.Second
	// minPingInterval is the least time between a client's pings; one that
	// pings more often is disconnected.
	minPingInterval = 10 * time.Second
	// streamWindow and connWindow are the HTTP/2 flow-control windows: what
	// a client may send on a stream, and on the whole connection, before
	// slotd has read it.
	streamWindow = 64 << 10
	connWindow   = 1 << 20
)

// ClientWindows are dial options giving a client slotd's own static
// flow-control windows, for clients in slotd's process (the bench's): no
// bandwidth-probing ping beside every round of data.
func ClientWindows() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithStaticStreamWindowSize(streamWindow), grpc.WithStaticConnWindowSize(connWindow)}
}

// transportOptions bound the gRPC transport: streams per connection,
// header size, handshakes, idle connections, keepalive pings.
func transportOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxConcurrentStreams(MaxStreamsPerConnection),
		grpc.MaxHeaderListSize(maxHeaderBytes),
		grpc.ConnectionTimeout(handshakeTimeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: maxIdle, Time: pingEvery, Timeout: pingTimeout}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: minPingInterval, PermitWithoutStream: true}),
		// Static flow-control windows: grpc-go otherwise estimates each
		// connection's bandwidth-delay product with a ping on every round
		// of data, and may grow a connection's window to 16 MiB. Turns are
		// a few KiB; requests are at most 2 MiB.
		grpc.StaticStreamWindowSize(streamWindow),
		grpc.StaticConnWindowSize(connWindow),
	}
}

// hardenHTTP bounds an HTTP server: header and body read times, the time
// to write an answer, idle connections, header size, and HTTP/2 streams and
// buffers. read bounds reading a request, longest the time a handler may
// take.
func hardenHTTP(srv *http.Server, read, longest time.Duration) {
	srv.ReadHeaderTimeout = min(5*time.Second, read)
	srv.ReadTimeout = read
	srv.WriteTimeout = longest + 5*time.Second
	srv.IdleTimeout = 2 * time.Minute
	srv.MaxHeaderBytes = maxHeaderBytes
	srv.HTTP2 = &http.HTTP2Config{
		MaxConcurrentStreams:          maxHTTPStreams,
		MaxDecoderHeaderTableSize:     4 << 10,
		MaxEncoderHeaderTableSize:     4 << 10,
		MaxReadFrameSize:              1 << 20,
		MaxReceiveBufferPerConnection: 4 << 20,
		MaxReceiveBufferPerStream:     1 << 20,
		SendPingTimeout:               pingTimeout,
		PingTimeout:                   pingTimeout,
	}
}

// listen binds addr with at most MaxConnections connections open at once.
func listen(addr string) (net.Listener, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return netutil.LimitListener(lis, MaxConnections), nil
}

// listenTLS is listen, speaking TLS when src is not nil.
func listenTLS(addr string, src *certs.Source, protos ...string) (net.Listener, error) {
	lis, err := listen(addr)
	if err != nil {
		return nil, err
	}
	return withTLS(lis, src, protos...), nil
}

// withTLS is lis speaking TLS when src is not nil.
func withTLS(lis net.Listener, src *certs.Source, protos ...string) net.Listener {
	if src == nil {
		return lis
	}
	return tls.NewListener(lis, src.ServerConfig(protos...))
}

// checkEdge loads the TLS files and refuses a set-up that would expose
// slotd: listeners beyond loopback without keys, or in plaintext unless the
// operator says TLS ends in front of slotd (AllowPlaintext).
func (s *Server) checkEdge(keys *auth.Keys) error {
	cfg := s.cfg
	addrs := []struct{ flag, addr string }{
		{"--listen", cfg.Listen}, {"--http-listen", cfg.HTTPListen}, {"--metrics-listen", cfg.MetricsListen},
	}
	if cfg.TLS.Enabled() {
		src, err := certs.Load(cfg.TLS, s.log)
		if err != nil {
			return err
		}
		s.certs = src
	} else if cfg.TLS.ClientCA != "" {
		return fmt.Errorf("--tls-client-ca needs --tls-cert and --tls-key")
	}
	for _, a := range addrs {
		if a.addr == "" {
			continue
		}
		if a.flag != "--metrics-listen" {
			if err := keys.CheckListen(a.addr); err != nil {
				return err
			}
		}
		if s.certs != nil || cfg.AllowPlaintext {
			continue
		}
		if ok, err := auth.Loopback(a.addr); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("%s %s is not a loopback address and slotd has no TLS certificate: "+
				"set --tls-cert and --tls-key, or --allow-plaintext when TLS ends in front of slotd", a.flag, a.addr)
		}
	}
	return nil
}

// refusal is the reason label of a call refused at the edge with a
// problem of kind k.
func refusal(k problem.Kind) string {
	switch k {
	case problem.KindUnauthenticated:
		return "unauthenticated"
	case problem.KindPermissionDenied:
		return "permission_denied"
	}
	return "overloaded"
}
