package redisclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// defaultDialTimeout bounds how long Connect waits for Redis to answer.
const defaultDialTimeout = 5 * time.Second

// Options says where Redis is and how to log in.
type Options struct {
	// URL is redis://[user:password@]host:port/db, or rediss:// for TLS;
	// or, to find the master through Sentinel,
	// redis+sentinel://[user:password@]host:port[,host:port...]/db?master_name=NAME
	// (rediss+sentinel:// for TLS), where the hosts are Sentinels and the
	// user and password are the master's.
	URL string
	// URLFrom names where URL came from, for the errors that say it does
	// not parse: "--url" (the default, when empty), "REDIS_URL", or a
	// place in the config file such as "countertop.toml:3: url".
	URLFrom  string
	Username string // overrides the URL's user when set
	Password string // overrides the URL's password when set
	// Cluster treats URL as a seed of a Redis Cluster. Without it, Connect
	// asks the server whether it is a cluster node.
	Cluster bool
	// SentinelMaster and SentinelAddrs (host:port) find the master through
	// Sentinel, as a redis+sentinel:// URL does, and override what such a
	// URL says. With a redis:// URL, its credentials, database and scheme
	// (rediss:// for TLS) apply to the master, and its host is not used.
	SentinelMaster string
	SentinelAddrs  []string
	// SentinelAuth is the Sentinels' own user and password, for Sentinels
	// that ask for one; Username and Password are the master's.
	SentinelAuth Auth
	TLS          TLSOptions
	// DialTimeout bounds each attempt to open a connection, TLS handshake
	// included (default 5s). Connect waits at most twice that for Redis to
	// answer.
	DialTimeout time.Duration
	ReadOnly    bool // refuse every write before it is sent (--read-only)
	// Rules say each key's window and hash field, which decide what is
	// read of a log (its hits inside the window) or of a large hash: the
	// same rules model.Read is given. nil: none known.
	Rules *model.Rules
	// MaxCommands bounds the commands countertop sends on its own (reads,
	// SCANs, pings, checks; not the user's writes) to each server, each
	// master of a cluster, a second (--max-commands); 0 is no bound.
	MaxCommands int
	// ClientName names every connection countertop opens (CLIENT SETNAME,
	// --client-name); "": the URL's client_name, else DefaultClientName.
	ClientName string
	// MaxFields is the most fields of one hash read field by field that a
	// reading lists (--max-fields); 0: model.DefaultMaxFields.
	MaxFields int
}

// Auth is an ACL user and password; an empty Username is the default user.
type Auth struct {
	Username, Password string
}

// The kinds of deployment a Client connects to.
const (
	standalone = "standalone"
	cluster    = "cluster"
	sentinel   = "sentinel"
)

// Client is a connection to one Redis deployment: a single server, a Redis
// Cluster, or a master behind Sentinel. It is safe for concurrent use.
type Client struct {
	rdb      redis.UniversalClient
	kind     string       // standalone, cluster or sentinel
	hostPort string       // names the server in errors
	addr     string       // where we are connected, for people
	topology string       // for FeedState.Topology
	readOnly bool         // see Options.ReadOnly
	rules    *model.Rules // see Options.Rules
	// maxFields is Options.MaxFields, or its default.
	maxFields int
	// pipelineTimeout bounds one pipeline of reads, retries included; 0:
	// none (the read timeout is off). See readTimeoutOf.
	pipelineTimeout time.Duration

	sentinel  *sentinelTarget         // the master and its Sentinels; nil unless kind is sentinel
	sentinels []*redis.SentinelClient // a client of each Sentinel, for Topology
	servers   *serverClients          // behind Sentinel, a client of each server that was master

	// In a cluster: each node's role as the topology was last read, by
	// address, and whether Connect has succeeded (from then on, a node
	// that cannot be reached was learned from the cluster, not from --url).
	roles     atomic.Pointer[map[string]nodeRole]
	connected atomic.Bool
	stalls    stalls  // masters that hang, tried in the background (see onMaster)
	budget    *budget // countertop's own commands to each server (see Options.MaxCommands)

	name    string                 // every connection's name (see nameConn)
	unnamed atomic.Pointer[string] // why a server refused the name (see Unnamed)

	done      chan struct{} // closed by Close
	closeOnce sync.Once

	// noReplicationInfo: a single server refused INFO replication (see
	// serverTopology); it is not asked again, so as not to fill its ACL LOG.
	noReplicationInfo atomic.Bool
	// noFieldTTL: the server does not know HPTTL (before Redis 7.4, Valkey
	// 8): no hash field has a TTL there, and reads stop asking (fieldTTLs).
	noFieldTTL atomic.Bool
}

// Connect parses o.URL, connects and checks with PING that Redis answers and
// accepts the credentials; a server that says it is a cluster node is
// connected to as the cluster. Its errors are one sentence for people.
// Once ctx is cancelled it returns at once, with ctx's error.
func Connect(ctx context.Context, o Options) (*Client, error) {
	// go-redis logs failed dials to stderr, which would scribble over the
	// dashboard; countertop reports errors itself.
	redis.SetLogger(silentLogger{})

	opt, target, err := parseOptions(o)
	if err != nil {
		return nil, err
	}
	c := &Client{readOnly: o.ReadOnly, rules: o.Rules, maxFields: cmp.Or(max(o.MaxFields, 0), model.DefaultMaxFields),
		pipelineTimeout: 2 * readTimeoutOf(opt), budget: newBudget(o.MaxCommands), done: make(chan struct{})}
	if c.name, err = clientName(o, opt.ClientName); err != nil {
		return nil, err
	}
	opt.ClientName, opt.OnConnect = "", c.nameConn // every client made from opt names its connections
	switch {
	case target != nil && o.Cluster:
		return nil, explained("--cluster and Sentinel do not go together: a Redis Cluster fails over by itself — drop --cluster, or the Sentinel settings", nil)
	case target != nil:
		c.useSentinel(opt, *target, o.SentinelAuth)
	case o.Cluster:
		if err := c.useCluster(opt); err != nil {
			return nil, err
		}
	default:
		single := *opt // NewClient fills in defaults, which useCluster must not inherit
		rdb := redis.NewClient(&single)
		rdb.AddHook(c.budget.hook(""))
		c.rdb, c.kind = rdb, standalone
		c.hostPort, c.addr = opt.Addr, opt.Addr+"/"+strconv.Itoa(opt.DB)
	}

	// go-redis notices a cancelled context between commands, not while it
	// waits for a reply (from a port that accepts and never answers, say):
	// closing the client ends that wait.
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	// The dial (TCP and TLS) takes at most DialTimeout; the first answer gets
	// as long again. A failed dial thus reports its own error (a TLS
	// handshake that timed out, say) before this deadline cuts it short.
	pingCtx, cancel := context.WithTimeout(ctx, 2*opt.DialTimeout)
	defer cancel()
	err = c.rdb.Ping(pingCtx).Err()
	if err == nil && c.kind == standalone {
		switch serverMode(pingCtx, c.rdb.(*redis.Client)) {
		case cluster:
			// A dashboard that read one node of a cluster would show a
			// fraction of the counters as if they were all.
			if !stop() { // cancelled: c is closed already
				return nil, c.explain(ctx.Err())
			}
			c.Close()
			o.Cluster = true
			return Connect(ctx, o)
		case sentinel:
			err = explained(fmt.Sprintf("%s is a Redis Sentinel, which holds no keys — connect through it with redis+sentinel://%s/0?master_name=NAME, or --sentinel-master NAME --sentinel %s", opt.Addr, opt.Addr, opt.Addr), nil)
		}
	}
	if err != nil {
		err = c.connectError(pingCtx, err)
	} else {
		// The topology is for people: a deployment whose shape cannot be
		// read (a user not allowed to ask) is still one to watch. A single
		// Redis's says whether it is a replica, and of which master.
		c.topology = c.kind
		if t, err := c.Topology(pingCtx); err == nil {
			c.topology = t.String()
		}
	}
	if stopped := stop(); !stopped || ctx.Err() != nil {
		// Cancelled, and any error came of that. A cancel that reached the
		// PING before the close above closes c here, in the background: a
		// Sentinel lookup under way holds go-redis's lock until its own
		// timeout, which the user who pressed ctrl+c should not wait out.
		if stopped {
			go c.Close()
		}
		return nil, c.explain(ctx.Err())
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	c.connected.Store(true)
	return c, nil
}

// readTimeoutOf returns how long go-redis waits for one reply with opt
// (its default when unset; 0 when the URL turned it off). A pipeline gets
// twice that, one retry's worth: go-redis tries a read that timed out
// again on a new connection, which a server that hangs without closing its
// connections still accepts, so the tries would add up to many timeouts.
func readTimeoutOf(opt *redis.Options) time.Duration {
	switch {
	case opt.ReadTimeout == 0:
		return 3 * time.Second
	case opt.ReadTimeout < 0:
		return 0
	}
	return opt.ReadTimeout
}

// parseOptions reads o into go-redis options for the master (or every node
// of a cluster) and, when o finds the master through Sentinel, the
// Sentinels to ask.
func parseOptions(o Options) (*redis.Options, *sentinelTarget, error) {
	opt, sentinels, err := readURL(o.URL, cmp.Or(o.URLFrom, "--url"))
	if err != nil {
		return nil, nil, err
	}
	if sentinels, err = sentinels.override(o.SentinelMaster, o.SentinelAddrs); err != nil {
		return nil, nil, err
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
	// No maintenance notifications (a Redis Cloud handshake): in its auto
	// mode go-redis sends CLIENT MAINT_NOTIFICATIONS on a new connection,
	// which a server without them refuses, and then turns the mode off in
	// options that a client shares with its Conns under separate locks, a
	// data race between a feed's connections.
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}

	if opt.TLSConfig != nil || o.TLS.enabled() {
		conf, err := tlsConfig(o.TLS, opt.TLSConfig)
		if err != nil {
			return nil, nil, err
		}
		plain := *opt
		plain.TLSConfig = nil
		opt.Dialer = tlsDialer(redis.NewDialer(&plain), conf)
		opt.TLSConfig = nil
	}
	return opt, sentinels, nil
}

// universalOptions are opt's settings for every connection of a cluster or
// Sentinel client, whose own addresses come from addrs.
func universalOptions(opt *redis.Options, addrs []string) *redis.UniversalOptions {
	return &redis.UniversalOptions{
		Addrs:                 addrs,
		ClientName:            opt.ClientName,
		OnConnect:             opt.OnConnect,
		DB:                    opt.DB,
		Dialer:                opt.Dialer,
		Protocol:              opt.Protocol,
		Username:              opt.Username,
		Password:              opt.Password,
		MaxRetries:            opt.MaxRetries,
		MinRetryBackoff:       opt.MinRetryBackoff,
		MaxRetryBackoff:       opt.MaxRetryBackoff,
		DialTimeout:           opt.DialTimeout,
		DialerRetries:         opt.DialerRetries,
		ReadTimeout:           opt.ReadTimeout,
		WriteTimeout:          opt.WriteTimeout,
		ContextTimeoutEnabled: opt.ContextTimeoutEnabled,
		PoolFIFO:              opt.PoolFIFO,
		PoolSize:              opt.PoolSize,
		PoolTimeout:           opt.PoolTimeout,
		MinIdleConns:          opt.MinIdleConns,
		MaxIdleConns:          opt.MaxIdleConns,
		MaxActiveConns:        opt.MaxActiveConns,
		ConnMaxIdleTime:       opt.ConnMaxIdleTime,
		ConnMaxLifetime:       opt.ConnMaxLifetime,
		DisableIdentity:       opt.DisableIdentity,
		// A Sentinel's failover client turns them off by itself.
		MaintNotificationsConfig: opt.MaintNotificationsConfig,
	}
}

// serverMode returns how the server behind rdb runs: standalone, cluster or
// sentinel. HELLO without arguments (which changes nothing) tells every
// user, whatever its ACL rules; a server without it (before Redis 6.2) is
// asked INFO cluster. A server that says neither (miniredis has no INFO
// cluster) is taken as standalone.
func serverMode(ctx context.Context, rdb *redis.Client) string {
	if hello, err := rdb.Do(ctx, "hello").Result(); err == nil {
		if mode := helloField(hello, "mode"); mode == cluster || mode == sentinel {
			return mode.(string)
		}
		return standalone
	}
	if info, err := rdb.Info(ctx, "cluster").Result(); err == nil && strings.Contains(info, "cluster_enabled:1") {
		return cluster
	}
	return standalone
}

// helloField returns field of a HELLO reply: a map in RESP3, a flat list of
// names and values in RESP2.
func helloField(reply any, field string) any {
	switch r := reply.(type) {
	case map[any]any:
		return r[field]
	case []any:
		for i := 0; i+1 < len(r); i += 2 {
			if r[i] == field {
				return r[i+1]
			}
		}
	}
	return nil
}

// connectError explains why Connect failed.
func (c *Client) connectError(ctx context.Context, err error) error {
	switch {
	case c.kind == sentinel && errors.Is(err, redis.Nil):
		// Sentinels answer GET-MASTER-ADDR-BY-NAME for an unknown name
		// with nil: PING itself never does.
		return explained(fmt.Sprintf("no Sentinel at %s knows a master named %q — check --sentinel-master, or master_name in --url", strings.Join(c.sentinel.addrs, ", "), c.sentinel.master), err)
	case c.kind == sentinel && isA[redis.Error](err):
		// go-redis does not say whether a Sentinel or the master replied,
		// nor which Sentinel.
		if refusal := c.sentinelRefusal(ctx); refusal != nil {
			return refusal
		}
	case c.kind == sentinel && unreachable(err):
		addr, why := "", "no answer in time"
		if op := as[*net.OpError](err); op.Addr != nil {
			addr = op.Addr.String()
			if !isTimeout(err) {
				why = strings.TrimPrefix(reason(op.Err), "connect: ")
			}
		}
		if addr == "" || slices.Contains(c.sentinel.addrs, addr) {
			return explained(fmt.Sprintf("no Sentinel answers at %s (%s) — check --sentinel, or the hosts of a redis+sentinel:// URL", strings.Join(c.sentinel.addrs, ", "), why), err)
		}
		return explained(fmt.Sprintf("the master Sentinel names for %q, %s, could not be reached (%s) — Sentinel may not have noticed it is down yet: try again in a moment", c.sentinel.master, addr, why), err)
	case c.kind == cluster && redis.HasErrorPrefix(err, "This instance has cluster support disabled"):
		return explained(fmt.Sprintf("%s is not a Redis Cluster node (cluster support is disabled there) — drop --cluster", c.hostPort), err)
	case redis.HasErrorPrefix(err, "SELECT is not allowed in cluster mode"):
		return errClusterDB(c.db(), err)
	}
	return c.explain(err)
}

// Addr returns where the client is connected, as host:port/db (the seed, for a
// cluster; the Sentinels, behind Sentinel), without credentials: safe to
// show.
func (c *Client) Addr() string { return c.addr }

// Universal returns the underlying go-redis client, for wiring and tests.
func (c *Client) Universal() redis.UniversalClient { return c.rdb }

// db returns the number of the database the client reads: keyspace channels
// are named after it.
func (c *Client) db() int {
	if rc, ok := c.rdb.(*redis.Client); ok {
		return rc.Options().DB
	}
	return 0 // a cluster has database 0 only
}

// Close closes every connection.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		if c.done != nil { // nil in a Client a test made itself
			close(c.done)
		}
	})
	for _, s := range c.sentinels {
		s.Close()
	}
	if c.servers != nil {
		c.servers.close()
	}
	return c.rdb.Close()
}

// silentLogger drops go-redis's internal log lines.
type silentLogger struct{}

func (silentLogger) Printf(context.Context, string, ...any) {}
