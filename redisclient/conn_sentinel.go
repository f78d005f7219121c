package redisclient

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// defaultSentinelPort is where a Sentinel listens when its address gives
// no port.
const defaultSentinelPort = "26379"

// sentinelSchemes maps the schemes of Sentinel URLs to those of the master
// they lead to.
var sentinelSchemes = map[string]string{"redis+sentinel": "redis", "rediss+sentinel": "rediss"}

// sentinelTarget is a master found through Sentinel.
type sentinelTarget struct {
	master string   // the name the Sentinels know it by
	addrs  []string // the Sentinels, host:port
}

// parseSentinelURL reads
// redis+sentinel://[user:password@]host:port[,host:port...]/db?master_name=NAME
// into the Sentinels and a URL for the master that redis.ParseURL reads:
// the same scheme (without +sentinel), credentials, database and options,
// with the first Sentinel standing in for the host that ParseURL requires.
// A URL of another scheme is returned as it is, with no target.
func parseSentinelURL(raw string) (string, *sentinelTarget, error) {
	scheme, rest, _ := strings.Cut(raw, "://")
	nodeScheme, ok := sentinelSchemes[strings.ToLower(scheme)]
	if !ok {
		return raw, nil, nil
	}
	// url.Parse cannot read a list of hosts: take them out first.
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	at := strings.LastIndex(authority, "@")
	userinfo, hosts := authority[:at+1], authority[at+1:]
	var s sentinelTarget
	for h := range strings.SplitSeq(hosts, ",") {
		addr, err := sentinelAddr(h)
		if err != nil {
			return "", nil, err
		}
		s.addrs = append(s.addrs, addr)
	}
	u, err := url.Parse(nodeScheme + "://" + userinfo + s.addrs[0] + tail)
	if err != nil {
		return "", nil, err
	}
	q := u.Query()
	s.master = q.Get("master_name")
	q.Del("master_name")
	u.RawQuery = q.Encode()
	return u.String(), &s, nil
}

// sentinelAddr checks a Sentinel's address, host[:port], and gives it the
// default port when it has none.
func sentinelAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil { // no port
		host, port = strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"), defaultSentinelPort
	}
	if n, err := strconv.Atoi(port); host == "" || err != nil || n < 1 || n > 65535 {
		return "", explained(fmt.Sprintf("%q is not a Sentinel address: write it as host:port, like 10.0.0.5:26379", addr), nil)
	}
	return net.JoinHostPort(host, port), nil
}

// override applies the --sentinel-master and --sentinel settings, which
// beat what the URL says. It returns nil when neither the URL nor they say
// to go through Sentinel.
func (s *sentinelTarget) override(master string, addrs []string) (*sentinelTarget, error) {
	if s == nil && master == "" && len(addrs) == 0 {
		return nil, nil
	}
	var t sentinelTarget
	if s != nil {
		t = *s
	}
	if master != "" {
		t.master = master
	}
	if len(addrs) > 0 {
		t.addrs = nil
		for _, a := range addrs {
			addr, err := sentinelAddr(a)
			if err != nil {
				return nil, err
			}
			t.addrs = append(t.addrs, addr)
		}
	}
	switch {
	case t.master == "":
		return nil, explained("Sentinel needs the name of the master to follow: pass --sentinel-master NAME, or add ?master_name=NAME to the redis+sentinel:// URL", nil)
	case len(t.addrs) == 0:
		return nil, explained("Sentinel needs the address of a Sentinel: pass --sentinel HOST:PORT, or give it in a redis+sentinel://HOST:PORT/0?master_name=NAME URL", nil)
	}
	return &t, nil
}

// useSentinel makes c a client of the master that the Sentinels know as
// s.master. go-redis's failover client asks them where the master is,
// listens for their +switch-master news, and reconnects to the new master
// after a failover. The Sentinels are reached with opt's TLS and timeouts
// but not its credentials, which are the master's: with auth, for
// Sentinels that ask for their own.
func (c *Client) useSentinel(opt *redis.Options, s sentinelTarget, auth Auth) {
	uo := universalOptions(opt, s.addrs)
	uo.MasterName = s.master
	uo.SentinelUsername, uo.SentinelPassword = auth.Username, auth.Password
	rdb := redis.NewFailoverClient(uo.Failover())
	rdb.AddHook(c.budget.hook(""))
	c.rdb = rdb
	for _, addr := range s.addrs {
		c.sentinels = append(c.sentinels, redis.NewSentinelClient(&redis.Options{
			Addr:                  addr,
			OnConnect:             opt.OnConnect,
			Username:              auth.Username,
			Password:              auth.Password,
			Dialer:                opt.Dialer,
			DialTimeout:           opt.DialTimeout,
			DialerRetries:         opt.DialerRetries,
			ContextTimeoutEnabled: opt.ContextTimeoutEnabled,
		}))
	}
	c.kind, c.sentinel = sentinel, &s
	c.servers = &serverClients{opt: opt, hook: c.budget.hook(""), byAddr: make(map[string]*redis.Client)}
	c.hostPort = "master " + s.master
	c.addr = strings.Join(s.addrs, ",") + "/" + strconv.Itoa(opt.DB)
}

// sentinelRefusal asks each Sentinel where the master is, and explains the
// first that refuses countertop's credentials for it, or that is not a
// Sentinel at all (nil when none does).
func (c *Client) sentinelRefusal(ctx context.Context) error {
	for i, sc := range c.sentinels {
		err := sc.GetMasterAddrByName(ctx, c.sentinel.master).Err()
		switch addr := c.sentinel.addrs[i]; {
		case reply("unknown command")(err):
			return explained(fmt.Sprintf("%s is not a Sentinel (it does not know the SENTINEL command) — give the Sentinels' addresses (--sentinel, or the hosts of a redis+sentinel:// URL), not a Redis server's", addr), err)
		case isNoAuth(err):
			return explained(fmt.Sprintf("the Sentinel at %s requires a password — give it in REDIS_SENTINEL_PASSWORD (or sentinel_password in the config file)", addr), err)
		case isWrongPass(err):
			return explained(fmt.Sprintf("the Sentinel at %s rejected the username or password — check REDIS_SENTINEL_USERNAME and REDIS_SENTINEL_PASSWORD", addr), err)
		}
	}
	return nil
}

// sentinelMaster returns a client of the server that the Sentinels name as
// the master now, asking them in turn until one answers.
func (c *Client) sentinelMaster(ctx context.Context) (*redis.Client, error) {
	var err error
	for i, sc := range c.sentinels {
		var hostPort []string
		if hostPort, err = sc.GetMasterAddrByName(ctx, c.sentinel.master).Result(); err == nil {
			if len(hostPort) >= 2 {
				return c.servers.get(net.JoinHostPort(hostPort[0], hostPort[1])), nil
			}
			// Whatever answers there does not speak Sentinel as Redis does.
			err = explained(fmt.Sprintf("the Sentinel at %s did not answer with a host and a port for master %q (it sent %d values) — check that --sentinel, or the hosts of a redis+sentinel:// URL, are Sentinels",
				c.sentinel.addrs[i], c.sentinel.master, len(hostPort)), nil)
		}
	}
	return nil, c.explain(err)
}

// serverClients are clients of the servers that have been the master behind
// Sentinel, by address. Keyspace notifications must be subscribed to on the
// master itself: the failover client's subscriptions stay on the old master
// after a failover, where they hear only what is replicated to it, or
// nothing once it is gone.
type serverClients struct {
	opt  *redis.Options // the master's options, with any address
	hook redis.Hook     // the master's budget (see budget), on each

	mu     sync.Mutex
	byAddr map[string]*redis.Client
}

// get returns the client of the server at addr, made on first use.
func (s *serverClients) get(addr string) *redis.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	rdb, ok := s.byAddr[addr]
	if !ok {
		opt := *s.opt
		opt.Addr = addr
		rdb = redis.NewClient(&opt)
		rdb.AddHook(s.hook)
		s.byAddr[addr] = rdb
	}
	return rdb
}

// close closes every client made.
func (s *serverClients) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rdb := range s.byAddr {
		rdb.Close()
	}
}

// sentinelTopology asks the Sentinels, in turn until one answers, for the
// master and its replicas.
func (c *Client) sentinelTopology(ctx context.Context) (Topology, error) {
	var err error
	for _, sc := range c.sentinels {
		var master map[string]string
		var replicas []map[string]string
		if master, err = sc.Master(ctx, c.sentinel.master).Result(); err != nil {
			continue
		}
		if replicas, err = sc.Replicas(ctx, c.sentinel.master).Result(); err != nil {
			continue
		}
		t := Topology{Kind: sentinel, Name: c.sentinel.master, Masters: []Node{sentinelNode(master)}}
		for _, r := range replicas {
			t.Replicas = append(t.Replicas, sentinelNode(r))
		}
		t.sort()
		return t, nil
	}
	return Topology{}, c.explain(err)
}

// sentinelNode returns a server as SENTINEL MASTER or REPLICAS describes it:
// down when the Sentinel thinks so or has lost its connection.
func sentinelNode(fields map[string]string) Node {
	n := Node{Addr: net.JoinHostPort(fields["ip"], fields["port"]), Up: true}
	for f := range strings.SplitSeq(fields["flags"], ",") {
		switch f {
		case "s_down", "o_down", "disconnected":
			n.Up = false
		}
	}
	return n
}
