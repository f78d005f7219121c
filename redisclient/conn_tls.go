package redisclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
)

// TLSOptions are the TLS files and switches. Any of them turns TLS on, as
// does a rediss:// URL.
type TLSOptions struct {
	CAFile     string // PEM CA bundle that signed the server's certificate
	CertFile   string // PEM client certificate, for servers that require one
	KeyFile    string // its private key
	SkipVerify bool   // accept any server certificate (testing only)
}

// enabled reports whether t turns TLS on.
func (t TLSOptions) enabled() bool {
	return t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" || t.SkipVerify
}

// tlsConfig builds the TLS configuration from the files and switches in t,
// on top of what a rediss:// URL asked for (base, possibly nil). ServerName
// is left empty: tlsDialer takes it from each address it dials.
func tlsConfig(t TLSOptions, base *tls.Config) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.SkipVerify}
	if base != nil && base.InsecureSkipVerify {
		conf.InsecureSkipVerify = true
	}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, explained(fmt.Sprintf("could not read the TLS CA file: %v: check --tls-ca", err), err)
		}
		conf.RootCAs = x509.NewCertPool()
		if !conf.RootCAs.AppendCertsFromPEM(pem) {
			return nil, explained(fmt.Sprintf("the TLS CA file %s holds no PEM certificate: check --tls-ca", t.CAFile), nil)
		}
	}
	if t.CertFile != "" || t.KeyFile != "" {
		if t.CertFile == "" || t.KeyFile == "" {
			return nil, explained("a TLS client certificate needs both --tls-cert and --tls-key", nil)
		}
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, explained(fmt.Sprintf("could not load the TLS client certificate: %v: check --tls-cert and --tls-key", err), err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

// tlsDialer wraps dial with a TLS handshake of its own, so that a handshake
// failure is told apart from Redis's own errors (see handshakeError), and so
// that each address is verified against its own host name.
func tlsDialer(dial func(context.Context, string, string) (net.Conn, error), conf *tls.Config) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c := conf.Clone()
		if host, _, err := net.SplitHostPort(addr); err == nil {
			c.ServerName = host
		}
		tc := tls.Client(conn, c)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, &handshakeError{err: err}
		}
		return tc, nil
	}
}

// handshakeError is a TLS handshake that failed, told apart from the
// network and Redis errors that can also follow a dial.
type handshakeError struct{ err error }

func (e *handshakeError) Error() string { return "tls handshake: " + e.err.Error() }

func (e *handshakeError) Unwrap() error { return e.err }
