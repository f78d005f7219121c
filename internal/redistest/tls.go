package redistest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Certs are PEM files for a TLS setup, made by NewCerts: a CA, a server
// certificate for 127.0.0.1 and a client certificate, both signed by the CA.
type Certs struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string

	client tls.Certificate // ClientCert and ClientKey, loaded
	pool   *x509.CertPool  // holds CA
	// expired: the server certificate is, and the harness's own clients
	// (Do, Client, the start-up PING) skip verifying it.
	expired bool
}

// NewCerts generates a CA and the certificates it signs into t.TempDir(),
// valid for an hour.
func NewCerts(t testing.TB) *Certs {
	t.Helper()
	return newCerts(t, time.Now().Add(time.Hour))
}

// ExpiredCerts is NewCerts with a server certificate that expired an hour
// ago: a client that trusts the CA still refuses it.
func ExpiredCerts(t testing.TB) *Certs {
	t.Helper()
	c := newCerts(t, time.Now().Add(-time.Hour))
	c.expired = true
	return c
}

func newCerts(t testing.TB, serverNotAfter time.Time) *Certs {
	t.Helper()
	dir := t.TempDir()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "countertop test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	c := &Certs{CA: writePEM(t, dir, "ca.crt", "CERTIFICATE", caDER), pool: x509.NewCertPool()}
	c.pool.AddCert(ca)
	issue := func(name string, serial int64, notAfter time.Time, usage ...x509.ExtKeyUsage) (certPath, keyPath string) {
		key := newKey(t)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    time.Now().Add(-2 * time.Hour),
			NotAfter:     notAfter,
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  usage,
			IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return writePEM(t, dir, name+".crt", "CERTIFICATE", der), writePEM(t, dir, name+".key", "PRIVATE KEY", keyDER)
	}
	// Nodes of a TLS cluster present the server certificate to each other
	// as clients too.
	c.ServerCert, c.ServerKey = issue("server", 2, serverNotAfter, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
	c.ClientCert, c.ClientKey = issue("client", 3, time.Now().Add(time.Hour), x509.ExtKeyUsageClientAuth)
	if c.client, err = tls.LoadX509KeyPair(c.ClientCert, c.ClientKey); err != nil {
		t.Fatal(err)
	}
	return c
}

// StartTLS is Start for a server that listens only with TLS (on Port, with
// certificates from NewCerts, kept in the server's TLS field). When
// requireClientCert is set, it refuses clients without a certificate its CA
// signed, as mutual TLS setups do. Do and Client connect with TLS and the
// client certificate.
func StartTLS(t testing.TB, requireClientCert bool, args ...string) *Server {
	t.Helper()
	return StartTLSWith(t, NewCerts(t), requireClientCert, args...)
}

// StartTLSWith is StartTLS with certificates of the caller's (say,
// ExpiredCerts).
func StartTLSWith(t testing.TB, c *Certs, requireClientCert bool, args ...string) *Server {
	t.Helper()
	args = append(c.serverArgs(requireClientCert), args...)
	return launch(t, &Server{args: args, Password: argValue(args, "--requirepass"), TLS: c})
}

// serverArgs are redis-server's TLS flags for c's server certificate.
func (c *Certs) serverArgs(requireClientCert bool) []string {
	auth := "no"
	if requireClientCert {
		auth = "yes"
	}
	return []string{
		"--tls-cert-file", c.ServerCert,
		"--tls-key-file", c.ServerKey,
		"--tls-ca-cert-file", c.CA,
		"--tls-auth-clients", auth,
	}
}

// clientConfig trusts the CA and presents the client certificate.
func (c *Certs) clientConfig() *tls.Config {
	return &tls.Config{RootCAs: c.pool, Certificates: []tls.Certificate{c.client}, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12,
		InsecureSkipVerify: c.expired} // #nosec G402 -- only the test harness's clients, of a server it started
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writePEM(t testing.TB, dir, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
