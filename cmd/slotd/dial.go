package main

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/slotd/slotd/internal/certs"
)

// dialFlags are how a command reaches a running slotd over TLS.
type dialFlags struct {
	tls                       bool
	ca, cert, key, serverName string
}

// addDialFlags registers the TLS flags of a command that talks to slotd.
func addDialFlags(fs *flags) *dialFlags {
	d := &dialFlags{}
	fs.Bool(&d.tls, "tls", "SLOTD_TLS", false, "speak TLS to slotd, trusting the system's CAs unless --tls-ca is given")
	fs.String(&d.ca, "tls-ca", "SLOTD_TLS_CA", "", "PEM CA certificates to trust for slotd's certificate; implies --tls")
	fs.String(&d.cert, "tls-client-cert", "SLOTD_TLS_CLIENT_CERT", "", "PEM client certificate, for a slotd that requires one (mutual TLS); implies --tls")
	fs.String(&d.key, "tls-client-key", "SLOTD_TLS_CLIENT_KEY", "", "PEM private key of --tls-client-cert")
	fs.String(&d.serverName, "tls-server-name", "SLOTD_TLS_SERVER_NAME", "", "the name slotd's certificate must hold, when not the address's host")
	return d
}

// credentials are the transport credentials the flags ask for: TLS when
// any TLS flag is set, plaintext otherwise.
func (d *dialFlags) credentials() (grpc.DialOption, error) {
	if !d.tls && d.ca == "" && d.cert == "" && d.key == "" && d.serverName == "" {
		return grpc.WithTransportCredentials(insecure.NewCredentials()), nil
	}
	cfg, err := certs.ClientConfig(d.ca, d.cert, d.key, d.serverName)
	if err != nil {
		return nil, err
	}
	return grpc.WithTransportCredentials(credentials.NewTLS(cfg)), nil
}
