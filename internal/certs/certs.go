// Package certs owns slotd's TLS material: the server's certificate and key
// and, for mutual TLS, the CAs whose client certificates it accepts, all
// read from files and read again when the files change, so that a
// certificate is rotated without a restart.
package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// Files name the PEM files of a server's TLS set-up. ClientCA is empty for
// TLS without client certificates.
type Files struct {
	Cert, Key, ClientCA string
}

// Enabled reports whether TLS is configured.
func (f Files) Enabled() bool { return f.Cert != "" || f.Key != "" }

// recheck is how often the files' modification times are looked at; a
// handshake never waits on more than a few stat calls.
const recheck = time.Second

// Source serves the current certificate and client CAs to TLS handshakes.
type Source struct {
	files Files
	log   *slog.Logger

	mu      sync.Mutex
	checked time.Time
	stamp   string // the files' sizes and modification times, as last loaded
	cert    *tls.Certificate
	cas     *x509.CertPool
}

// Load reads the files; a missing file, a key that does not fit the
// certificate or a CA file without certificates is an error.
func Load(f Files, log *slog.Logger) (*Source, error) {
	switch {
	case f.Cert == "" || f.Key == "":
		return nil, errors.New("TLS needs both a certificate (--tls-cert) and its key (--tls-key)")
	case log == nil:
		log = slog.Default()
	}
	s := &Source{files: f, log: log}
	stamp, err := f.stamp()
	if err != nil {
		return nil, err
	}
	if err := s.load(stamp); err != nil {
		return nil, err
	}
	s.checked = time.Now()
	return s, nil
}

// ServerConfig is the TLS configuration of every slotd listener (gRPC,
// HTTP, metrics) speaking nextProtos ("h2", "http/1.1"): TLS 1.3, or TLS 1.2
// with the suites of suites12 only. It takes the certificate and the client
// CAs as they are when each handshake starts. With client CAs, a client
// certificate is required and verified.
func (s *Source) ServerConfig(nextProtos ...string) *tls.Config {
	c := serverBase(nextProtos)
	c.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		cert, cas := s.current()
		c := serverBase(nextProtos)
		c.Certificates = []tls.Certificate{*cert}
		if cas != nil {
			c.ClientCAs, c.ClientAuth = cas, tls.RequireAndVerifyClientCert
		}
		return c, nil
	}
	return c
}

// suites12 are the TLS 1.2 suites a listener accepts: ECDHE key exchange
// (forward secrecy) with an AEAD cipher. Go's defaults add CBC suites with
// SHA-1 MACs; TLS 1.3's suites are all AEAD and not configurable.
var suites12 = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// serverBase is what every listener's configuration holds, before the
// certificate: the versions, the suites and the application protocols.
func serverBase(nextProtos []string) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, CipherSuites: suites12, NextProtos: nextProtos}
}

// current reloads the files when they changed since they were last loaded
// (looking at most once a second) and returns what to serve. A file caught
// half-written keeps the previous material until the next look.
func (s *Source) current() (*tls.Certificate, *x509.CertPool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Since(s.checked) >= recheck {
		s.checked = time.Now()
		if stamp, err := s.files.stamp(); err == nil && stamp != s.stamp {
			if err := s.load(stamp); err != nil {
				s.log.Warn("TLS files changed but do not load; serving the previous certificate", "err", err.Error())
			} else {
				s.log.Info("TLS certificate reloaded", "cert", s.files.Cert)
			}
		}
	}
	return s.cert, s.cas
}

// load reads the files; the caller holds s.mu or owns s.
func (s *Source) load(stamp string) error {
	cert, err := tls.LoadX509KeyPair(s.files.Cert, s.files.Key)
	if err != nil {
		return fmt.Errorf("TLS certificate %s and key %s: %w", s.files.Cert, s.files.Key, err)
	}
	var cas *x509.CertPool
	if s.files.ClientCA != "" {
		pem, err := os.ReadFile(s.files.ClientCA)
		if err != nil {
			return fmt.Errorf("TLS client CA: %w", err)
		}
		cas = x509.NewCertPool()
		if !cas.AppendCertsFromPEM(pem) {
			return fmt.Errorf("TLS client CA %s holds no PEM certificate", s.files.ClientCA)
		}
	}
	s.cert, s.cas, s.stamp = &cert, cas, stamp
	return nil
}

// stamp identifies the files' contents by size and modification time.
func (f Files) stamp() (string, error) {
	out := ""
	for _, name := range []string{f.Cert, f.Key, f.ClientCA} {
		if name == "" {
			continue
		}
		fi, err := os.Stat(name)
		if err != nil {
			return "", fmt.Errorf("TLS file: %w", err)
		}
		out += fmt.Sprintf("%s:%d:%d;", name, fi.Size(), fi.ModTime().UnixNano())
	}
	return out, nil
}

// ClientConfig is a client's TLS configuration: the CA file to trust
// (the system's roots when empty), and a client certificate for mutual TLS
// (none when certFile is empty).
func ClientConfig(caFile, certFile, keyFile, serverName string) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("TLS CA: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS CA %s holds no PEM certificate", caFile)
		}
	}
	if certFile != "" || keyFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}
