package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/client"
	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/certs"
	"github.com/slotd/slotd/internal/certs/certstest"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

// TLS and mutual TLS on every listener, with certificates made in the test
// and real handshakes.

type tlsServer struct {
	inst      *instance
	dir       string
	certFile  string
	keyFile   string
	caFile    string // client CAs; "" without mTLS
	httpAddr  string
	metricsAt string
}

// startTLS runs slotd with a server certificate signed by serverCA and,
// when clientCA is not nil, mTLS requiring certificates clientCA signed.
func startTLS(t *testing.T, serverCA, clientCA *certstest.CA) *tlsServer {
	t.Helper()
	ts := &tlsServer{dir: t.TempDir()}
	ts.certFile, ts.keyFile = serverCA.Server(t, "slotd").Write(t, ts.dir, "server")
	files := certs.Files{Cert: ts.certFile, Key: ts.keyFile}
	if clientCA != nil {
		ts.caFile = clientCA.Write(t, ts.dir, "clients")
		files.ClientCA = ts.caFile
	}
	cfg := server.Config{Listen: "127.0.0.1:0", HTTPListen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0",
		Contracts: contractsDir(t), Store: "memory", TLS: files, Session: session.Config{TrustClientClock: true}, APIKeys: "bank:" + bankKey}
	srv, err := server.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	servertest.Run(t, srv.Run)
	ts.inst = &instance{srv: srv}
	ts.httpAddr, ts.metricsAt = srv.HTTPAddr(), srv.MetricsAddr()
	return ts
}

// clientTLS trusts the given CAs and presents leaf when it is not nil.
func clientTLS(t *testing.T, leaf *certstest.Leaf, cas ...*certstest.CA) *tls.Config {
	c := &tls.Config{RootCAs: certstest.Pool(cas...), MinVersion: tls.VersionTLS12}
	if leaf != nil {
		c.Certificates = []tls.Certificate{leaf.TLS(t)}
	}
	return c
}

// turnOver plays one turn over gRPC with cfg; the error is the call's.
func turnOver(t *testing.T, addr string, cfg *tls.Config) error {
	t.Helper()
	c, err := client.New(addr, client.WithTLS(cfg), client.WithAPIKey(bankKey),
		client.WithRetry(client.RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.Turn(ctx, "tls-chat", "bank.open_dispute", map[string]any{"card_last4": "•• 4417"})
	return err
}

// getOver GETs an HTTPS URL with cfg and returns the status, or the error.
func getOver(t *testing.T, url string, cfg *tls.Config) (int, error) {
	t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}}
	defer hc.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+bankKey)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

func TestTLSOnEveryListener(t *testing.T) {
	t.Parallel()
	ca := certstest.NewCA(t, "slotd test CA")
	ts := startTLS(t, ca, nil)
	ok := clientTLS(t, nil, ca)
	if err := turnOver(t, ts.inst.srv.Addr(), ok); err != nil {
		t.Fatalf("a turn over TLS: %v", err)
	}
	for _, url := range []string{"https://" + ts.httpAddr + "/v1/contracts", "https://" + ts.metricsAt + "/metrics"} {
		if code, err := getOver(t, url, ok); err != nil || code != http.StatusOK {
			t.Errorf("GET %s over TLS: %d, %v; want 200", url, code, err)
		}
	}
	// A client that does not trust the CA, or speaks plaintext, gets nowhere.
	other := certstest.NewCA(t, "another CA")
	if err := turnOver(t, ts.inst.srv.Addr(), clientTLS(t, nil, other)); err == nil {
		t.Error("a client trusting another CA completed a turn")
	}
	conn, err := grpc.NewClient(ts.inst.srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := slotdv1.NewSlotServiceClient(conn).ListContracts(ctx, &slotdv1.ListContractsRequest{}); err == nil {
		t.Error("a plaintext gRPC client was served by a TLS listener")
	}
	if resp, err := http.Get("http://" + ts.httpAddr + "/v1/contracts"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("a plaintext HTTP client was served by the TLS gateway")
		}
	}
	// TLS 1.1 is refused.
	old := clientTLS(t, nil, ca)
	old.MinVersion, old.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
	if _, err := getOver(t, "https://"+ts.httpAddr+"/v1/contracts", old); err == nil {
		t.Error("a TLS 1.1 client was served")
	}
}

func TestMutualTLSRefusesMissingAndForeignCertificates(t *testing.T) {
	t.Parallel()
	serverCA, clientCA, foreign := certstest.NewCA(t, "server CA"), certstest.NewCA(t, "client CA"), certstest.NewCA(t, "foreign CA")
	ts := startTLS(t, serverCA, clientCA)
	good, alien := clientCA.Client(t, "orchestrator"), foreign.Client(t, "intruder")
	cases := []struct {
		name string
		leaf *certstest.Leaf
		ok   bool
	}{
		{"no client certificate", nil, false},
		{"a certificate of a foreign CA", &alien, false},
		{"a certificate of the client CA", &good, true},
	}
	for _, tc := range cases {
		cfg := clientTLS(t, tc.leaf, serverCA)
		err := turnOver(t, ts.inst.srv.Addr(), cfg)
		if (err == nil) != tc.ok {
			t.Errorf("gRPC, %s: %v, want ok=%v", tc.name, err, tc.ok)
		}
		for _, url := range []string{"https://" + ts.httpAddr + "/v1/contracts", "https://" + ts.metricsAt + "/metrics"} {
			code, err := getOver(t, url, cfg)
			if tc.ok && (err != nil || code != http.StatusOK) || !tc.ok && err == nil {
				t.Errorf("GET %s, %s: %d, %v; want ok=%v", url, tc.name, code, err, tc.ok)
			}
		}
	}
	// A server certificate used as a client's is refused too: its key usage
	// is not client authentication.
	server := clientCA.Server(t, "not a client")
	if err := turnOver(t, ts.inst.srv.Addr(), clientTLS(t, &server, serverCA)); err == nil {
		t.Error("a server certificate was accepted as a client certificate")
	}
}

// servedBy is the serial of the certificate the server shows.
func servedBy(t *testing.T, addr string, pool *x509.CertPool) (string, error) {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}})
	if err != nil {
		return "", err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
}

func TestCertificatesAreReloadedWhenTheirFilesChange(t *testing.T) {
	t.Parallel()
	ca1, ca2 := certstest.NewCA(t, "CA of 2026"), certstest.NewCA(t, "CA of 2027")
	clients1, clients2 := certstest.NewCA(t, "client CA 1"), certstest.NewCA(t, "client CA 2")
	ts := startTLS(t, ca1, clients1)
	addr := ts.inst.srv.Addr()
	c1, c2 := clients1.Client(t, "orchestrator 1"), clients2.Client(t, "orchestrator 2")
	if err := turnOver(t, addr, clientTLS(t, &c1, ca1)); err != nil {
		t.Fatalf("before the rotation: %v", err)
	}

	// Rotate the server certificate to one of another CA, and the client
	// CAs to another CA, as a certificate manager would: new files renamed
	// over the old ones.
	next := ca2.Server(t, "slotd next")
	next.Write(t, ts.dir, "server")
	clients2.Write(t, ts.dir, "clients")
	deadline := time.Now().Add(10 * time.Second)
	for {
		serial, err := servedBy(t, addr, certstest.Pool(ca2))
		if err == nil && serial == next.Cert.SerialNumber.String() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the rotation the server still shows its old certificate: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, url := range []string{"https://" + ts.httpAddr + "/v1/contracts", "https://" + ts.metricsAt + "/metrics"} {
		if code, err := getOver(t, url, clientTLS(t, &c2, ca2)); err != nil || code != http.StatusOK {
			t.Errorf("GET %s after the rotation: %d, %v", url, code, err)
		}
	}
	if err := turnOver(t, addr, clientTLS(t, &c2, ca2)); err != nil {
		t.Errorf("after the rotation, with the new CAs: %v", err)
	}
	if err := turnOver(t, addr, clientTLS(t, &c1, ca2)); err == nil {
		t.Error("after the rotation, a client certificate of the old client CA was accepted")
	}
	if err := turnOver(t, addr, clientTLS(t, &c2, ca1)); err == nil {
		t.Error("after the rotation, a client trusting only the old server CA completed a turn")
	}

	// A half-written file keeps the certificate being served.
	writeRaw(t, ts.certFile, "-----BEGIN CERTIFICATE-----\nnot yet")
	time.Sleep(1500 * time.Millisecond)
	if err := turnOver(t, addr, clientTLS(t, &c2, ca2)); err != nil {
		t.Errorf("with a broken certificate file: %v, want the last good certificate served", err)
	}
}

// Plaintext beyond loopback is refused at start, on every listener, unless
// the operator says TLS ends in front of slotd.
func TestPlaintextBeyondLoopbackIsRefused(t *testing.T) {
	t.Parallel()
	ca := certstest.NewCA(t, "CA")
	dir := t.TempDir()
	certFile, keyFile := ca.Server(t, "slotd").Write(t, dir, "server")
	contracts := contractsDir(t)
	for _, tc := range []struct {
		name  string
		edit  func(*server.Config)
		start bool
	}{
		{"gRPC on all addresses", func(c *server.Config) { c.Listen = "0.0.0.0:0" }, false},
		{"the gateway on all addresses", func(c *server.Config) { c.HTTPListen = "0.0.0.0:0" }, false},
		{"metrics on all addresses", func(c *server.Config) { c.MetricsListen = "0.0.0.0:0" }, false},
		{"all on all addresses, TLS in front", func(c *server.Config) {
			c.Listen, c.HTTPListen, c.MetricsListen, c.AllowPlaintext = "0.0.0.0:0", "0.0.0.0:0", "0.0.0.0:0", true
		}, true},
		{"all on all addresses over TLS", func(c *server.Config) {
			c.Listen, c.HTTPListen, c.MetricsListen = "0.0.0.0:0", "0.0.0.0:0", "0.0.0.0:0"
			c.TLS = certs.Files{Cert: certFile, Key: keyFile}
		}, true},
		{"loopback in plaintext", func(*server.Config) {}, true},
		{"a key without its certificate", func(c *server.Config) { c.TLS = certs.Files{Key: keyFile} }, false},
		{"a certificate with another's key", func(c *server.Config) {
			_, otherKey := ca.Server(t, "other").Write(t, t.TempDir(), "other")
			c.TLS = certs.Files{Cert: certFile, Key: otherKey}
		}, false},
		{"a client CA without a certificate", func(c *server.Config) { c.TLS = certs.Files{ClientCA: certFile} }, false},
	} {
		cfg := server.Config{Listen: "127.0.0.1:0", HTTPListen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0",
			Contracts: contracts, Store: "memory", APIKeys: "bank:" + bankKey}
		tc.edit(&cfg)
		srv, err := server.New(cfg, slog.New(slog.DiscardHandler))
		if tc.start != (err == nil) {
			t.Errorf("%s: server.New: %v, want started=%v", tc.name, err, tc.start)
		}
		if err == nil {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_ = srv.Run(ctx)
		} else if !tc.start && strings.Contains(tc.name, "all addresses") && !strings.Contains(err.Error(), "--allow-plaintext") {
			t.Errorf("%s: %v; want the error to name --allow-plaintext", tc.name, err)
		}
	}
}

func writeRaw(t *testing.T, name, content string) {
	t.Helper()
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, name); err != nil {
		t.Fatal(err)
	}
}

// TestTLSSuitesOnEveryListener asks each listener for one suite at a time
// with openssl s_client, as a scanner does, against an RSA certificate (the
// suites named in audits are RSA ones): TLS 1.2 with ECDHE and AEAD, and
// TLS 1.3, are accepted; CBC suites with SHA-1 MACs, and RSA key exchange,
// are refused everywhere.
func TestTLSSuitesOnEveryListener(t *testing.T) {
	t.Parallel()
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Fatal("this test asks for TLS suites with openssl s_client, which is not on PATH")
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "rsa.crt"), filepath.Join(dir, "rsa.key")
	if out, err := exec.Command(openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=slotd",
		"-addext", "subjectAltName=IP:127.0.0.1", "-keyout", keyFile, "-out", certFile).CombinedOutput(); err != nil {
		t.Fatalf("openssl req: %v\n%s", err, out)
	}
	cfg := server.Config{Listen: "127.0.0.1:0", HTTPListen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0",
		Contracts: contractsDir(t), Store: "memory", TLS: certs.Files{Cert: certFile, Key: keyFile}, APIKeys: "bank:" + bankKey}
	srv, err := server.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	servertest.Run(t, srv.Run)
	cases := []struct {
		args []string
		ok   bool
	}{
		{[]string{"-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256"}, true},
		{[]string{"-tls1_2", "-cipher", "ECDHE-RSA-CHACHA20-POLY1305"}, true},
		{[]string{"-tls1_3"}, true},
		{[]string{"-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA"}, false},
		{[]string{"-tls1_2", "-cipher", "ECDHE-RSA-AES256-SHA"}, false},
		{[]string{"-tls1_2", "-cipher", "AES256-SHA:@SECLEVEL=0"}, false},
		{[]string{"-tls1_2", "-cipher", "AES128-GCM-SHA256"}, false},
		{[]string{"-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA256"}, false},
		{[]string{"-tls1_1", "-cipher", "ECDHE-RSA-AES128-SHA:@SECLEVEL=0"}, false},
	}
	for _, l := range []struct{ name, addr string }{{"gRPC", srv.Addr()}, {"HTTP", srv.HTTPAddr()}, {"metrics", srv.MetricsAddr()}} {
		for _, tc := range cases {
			args := append([]string{"s_client", "-connect", l.addr, "-servername", "slotd"}, tc.args...)
			cmd := exec.Command(openssl, args...)
			cmd.Stdin = strings.NewReader("")
			out, err := cmd.CombinedOutput()
			if accepted := err == nil; accepted != tc.ok {
				t.Errorf("%s listener, openssl s_client %s: accepted=%v, want %v\n%s", l.name, strings.Join(tc.args, " "), accepted, tc.ok, tail(string(out), 600))
			}
		}
	}
}
