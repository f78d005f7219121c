// Package redisclient is everything in countertop that talks to Redis:
// connecting, discovering keys with SCAN, fetching their values and TTLs in
// pipelines, and polling them into model.Batches for the dashboard. Errors it
// returns are explained for people (see Explain) and never carry passwords.
package redisclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// defaultDialTimeout bounds how long Connect waits for Redis to answer.
const defaultDialTimeout = 5 * time.Second

// Options says where Redis is and how to log in.
type Options struct {
	URL      string // redis://[user:password@]host:port/db, or rediss:// for TLS
	Username string // overrides the URL's user when set
	Password string // overrides the URL's password when set
	Cluster  bool   // treat URL as a Redis Cluster seed (not supported yet)
	TLS      TLSOptions
	// DialTimeout bounds each attempt to open a connection, TLS handshake
	// included (default 5s). Connect waits at most twice that for Redis to
	// answer.
	DialTimeout time.Duration
	ReadOnly    bool // refuse every write before it is sent (--read-only)
}

// TLSOptions are the TLS files and switches. Any of them turns TLS on, as
// does a rediss:// URL.
type TLSOptions struct {
	CAFile     string // PEM CA bundle that signed the server's certificate
	CertFile   string // PEM client certificate, for servers that require one
	KeyFile    string // its private key
	SkipVerify bool   // accept any server certificate (testing only)
}

func (t TLSOptions) enabled() bool {
	return t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" || t.SkipVerify
}

// Client is a connection to one Redis deployment. It is safe for concurrent
// use.
type Client struct {
	rdb      redis.UniversalClient
	hostPort string // names the server in errors
	addr     string // hostPort/db, for people
	topology string // for FeedState.Topology
	readOnly bool   // see Options.ReadOnly
}

// Connect parses o.URL, connects and checks with PING that Redis answers and
// accepts the credentials. Its errors are one sentence for people.
func Connect(ctx context.Context, o Options) (*Client, error) {
	// go-redis logs failed dials to stderr, which would scribble over the
	// dashboard; countertop reports errors itself.
	redis.SetLogger(silentLogger{})

	opt, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, Explain(newURLError(o.URL, err), "")
	}
	if o.Username != "" {
		opt.Username = o.Username
	}
	if o.Password != "" {
		opt.Password = o.Password
	}
	if o.DialTimeout > 0 {
		opt.DialTimeout = o.DialTimeout
	}
	if opt.DialTimeout <= 0 { // unset, or disabled in the URL: never wait forever
		opt.DialTimeout = defaultDialTimeout
	}
	// Cancelling the caller's context (quitting the dashboard) must abort a
	// command in flight, not wait for the read timeout.
	opt.ContextTimeoutEnabled = true
	// One dial attempt per command try: the poller has its own backoff, and
	// a person waiting on a wrong port wants the answer at once.
	opt.DialerRetries = 1

	if opt.TLSConfig != nil || o.TLS.enabled() {
		conf, err := tlsConfig(o.TLS, opt.TLSConfig)
		if err != nil {
			return nil, err
		}
		plain := *opt
		plain.TLSConfig = nil
		opt.Dialer = tlsDialer(redis.NewDialer(&plain), conf)
		opt.TLSConfig = nil
	}

	rdb, err := newUniversal(opt, o.Cluster)
	if err != nil {
		return nil, err
	}
	c := &Client{rdb: rdb, hostPort: opt.Addr, addr: opt.Addr + "/" + strconv.Itoa(opt.DB), topology: "standalone", readOnly: o.ReadOnly}
	// The dial (TCP and TLS) takes at most DialTimeout; the first answer gets
	// as long again. A failed dial thus reports its own error (a TLS
	// handshake that timed out, say) before this deadline cuts it short.
	pingCtx, cancel := context.WithTimeout(ctx, 2*opt.DialTimeout)
	defer cancel()
	if err := rdb.Ping(pingCtx).Err(); err != nil {
		rdb.Close()
		return nil, c.explain(err)
	}
	return c, nil
}

// newUniversal builds the go-redis client for opt. It is the one place that
// chooses the kind of deployment, so Cluster and Sentinel slot in here.
func newUniversal(opt *redis.Options, cluster bool) (redis.UniversalClient, error) {
	if cluster {
		return nil, explained("Redis Cluster is not supported yet — connect to a single node, without --cluster", nil)
	}
	return redis.NewClient(opt), nil
}

// Addr is where the client is connected, as host:port/db, without
// credentials: safe to show.
func (c *Client) Addr() string { return c.addr }

// Universal is the underlying go-redis client, for wiring and tests.
func (c *Client) Universal() redis.UniversalClient { return c.rdb }

// explain is Explain for errors from this client's server.
func (c *Client) explain(err error) error { return Explain(err, c.hostPort) }

// Close closes every connection.
func (c *Client) Close() error { return c.rdb.Close() }

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

// silentLogger drops go-redis's internal log lines.
type silentLogger struct{}

func (silentLogger) Printf(context.Context, string, ...any) {}
