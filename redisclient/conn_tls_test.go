package redisclient_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/redisclient"
)

func TestConnectTLS(t *testing.T) {
	t.Parallel()
	s := redistest.StartTLS(t, true)
	plain := redistest.Start(t)
	f, other := s.TLS, redistest.NewCerts(t)
	full := redisclient.TLSOptions{CAFile: f.CA, CertFile: f.ClientCert, KeyFile: f.ClientKey}

	t.Run("trusted, with client certificate", func(t *testing.T) {
		for _, o := range []redisclient.Options{
			{URL: "rediss://" + s.Addr, TLS: full},
			{URL: "redis://" + s.Addr, TLS: full}, // a TLS flag turns TLS on
			{URL: "rediss://" + s.Addr, TLS: redisclient.TLSOptions{SkipVerify: true, CertFile: f.ClientCert, KeyFile: f.ClientKey}},
		} {
			c, err := redisclient.Connect(context.Background(), o)
			if err != nil {
				t.Fatalf("Connect(%s, %+v): %v", o.URL, o.TLS, err)
			}
			c.Close()
		}
	})

	for _, tc := range []struct {
		name string
		o    redisclient.Options
		want string
	}{
		{"plain client to TLS port", redisclient.Options{URL: "redis://" + s.Addr},
			s.Addr + " closed the connection — if that port expects TLS, use rediss://"},
		{"TLS client to plain port", redisclient.Options{URL: "rediss://" + plain.Addr, TLS: full, DialTimeout: 300 * time.Millisecond},
			"the TLS handshake with " + plain.Addr + " did not complete — if that port speaks plain Redis, use redis://"},
		{"unknown CA", redisclient.Options{URL: "rediss://" + s.Addr},
			"the TLS certificate of " + s.Addr + " is not trusted (x509: certificate signed by unknown authority) — pass the CA that signed it with --tls-ca"},
		{"no client certificate", redisclient.Options{URL: "rediss://" + s.Addr, TLS: redisclient.TLSOptions{CAFile: f.CA}},
			s.Addr + " refused the TLS connection (tls: certificate required) — if it requires a client certificate"},
		{"client certificate from another CA", redisclient.Options{URL: "rediss://" + s.Addr, TLS: redisclient.TLSOptions{CAFile: f.CA, CertFile: other.ClientCert, KeyFile: other.ClientKey}},
			s.Addr + " refused the TLS connection (tls: unknown certificate authority) — if it requires a client certificate, pass one its CA signed"},
		{"missing CA file", redisclient.Options{URL: "rediss://" + s.Addr, TLS: redisclient.TLSOptions{CAFile: f.CA + ".missing"}},
			"could not read the TLS CA file: open " + f.CA + ".missing: no such file or directory: check --tls-ca"},
		{"CA file is not PEM", redisclient.Options{URL: "rediss://" + s.Addr, TLS: redisclient.TLSOptions{CAFile: f.ClientKey}},
			"holds no PEM certificate: check --tls-ca"},
		{"certificate without key", redisclient.Options{URL: "rediss://" + s.Addr, TLS: redisclient.TLSOptions{CertFile: f.ClientCert}},
			"a TLS client certificate needs both --tls-cert and --tls-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkSentence(t, connectErr(t, tc.o), tc.want, "")
		})
	}
}

// A certificate from the right CA can still be refused: when it has
// expired, or names another host than the one dialled. Passing the CA again
// would not help, and the sentence says what would.
func TestConnectTLSCertificateNotForNow(t *testing.T) {
	t.Parallel()
	s := redistest.StartTLS(t, false)
	_, port, _ := net.SplitHostPort(s.Addr)
	checkSentence(t, connectErr(t, redisclient.Options{URL: "rediss://localhost:" + port, TLS: redisclient.TLSOptions{CAFile: s.TLS.CA}}),
		"the TLS certificate of localhost:"+port+" is not for the host in --url (x509: certificate is not valid for any names, but wanted to match localhost) — connect by a name the certificate lists", "")

	old := redistest.StartTLSWith(t, redistest.ExpiredCerts(t), false)
	checkSentence(t, connectErr(t, redisclient.Options{URL: old.URL(), TLS: redisclient.TLSOptions{CAFile: old.TLS.CA}}),
		"the TLS certificate of "+old.Addr+" is not valid now (x509: certificate has expired or is not yet valid: current time ", "")
}

func TestConnectTLSWithoutClientCert(t *testing.T) {
	t.Parallel()
	s := redistest.StartTLS(t, false)
	c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: s.URL(), TLS: redisclient.TLSOptions{CAFile: s.TLS.CA}})
	if err != nil {
		t.Fatalf("Connect with the CA only, to a server that asks no client certificate: %v", err)
	}
	c.Close()
}
