package redisclient

import (
	"context"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
)

// clientNames returns the name of each connection CLIENT LIST shows but
// the one that asks, by its address.
func clientNames(t *testing.T, s *redistest.Server) map[string]string {
	t.Helper()
	names := map[string]string{}
	for line := range strings.Lines(s.Do(t, "CLIENT", "LIST").(string)) {
		fields := map[string]string{}
		for f := range strings.FieldsSeq(line) {
			k, v, _ := strings.Cut(f, "=")
			fields[k] = v
		}
		if fields["cmd"] != "client|list" {
			names[fields["addr"]] = fields["name"]
		}
	}
	return names
}

// ownCalls returns how many commands s ran or refused in all but the
// user's writes (see userWrites), which the budget lets pass uncounted: a
// command Redis does not know (CLIENT SETINFO before Redis 7.2, which
// go-redis sends) counts only among its errors.
func ownCalls(t *testing.T, s *redistest.Server) int64 {
	t.Helper()
	var n int64
	for name, calls := range s.CommandCalls(t) {
		if base, _, _ := strings.Cut(name, "|"); !userWrites[base] {
			n += calls
		}
	}
	return n + info(t, s, "errorstats", "errorstat_ERR:count")
}

// info returns the number field of INFO section, 0 when there is none.
func info(t *testing.T, s *redistest.Server, section, field string) int64 {
	t.Helper()
	for line := range strings.Lines(s.Do(t, "INFO", section).(string)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+"="); ok {
			v, _, _ = strings.Cut(v, ",")
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// Every connection countertop opens carries its name, so that an operator
// finds it in CLIENT LIST and tells its commands apart in SLOWLOG: the
// pool's, a keyspace subscription's, a tracking subscription and its
// tracking connection, a burst's; and every command that names them
// counts in the budget, as all countertop sends on its own does.
func TestEveryConnectionIsNamedAndCounted(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	s.Do(t, "SET", "rl:a", "1")
	ctx := context.Background()
	const name = "countertop-test-7"
	setnames := func() int64 { return s.CommandCalls(t)["client|setname"] }
	connections := func() int64 { return info(t, s, "stats", "total_connections_received") }
	namedBefore, connectedBefore, ranBefore := setnames(), connections(), ownCalls(t, s)

	c, err := Connect(ctx, Options{URL: s.URL(), ClientName: name, MaxCommands: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	budget := c.budget.server("")
	if _, err := c.Fetch(ctx, []string{"rl:a"}); err != nil {
		t.Fatal(err)
	}
	r := c.newReader(PollOptions{Patterns: []string{"rl:*"}}.withDefaults(), nil)
	o := WatchOptions{PollOptions: r.o}.withDefaults()
	node := c.rdb.(*redis.Client)
	events, err := eventsKind.watcher(r, o).push.open(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	defer events.close()
	tracking, err := trackingKind.watcher(r, o).push.open(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	defer tracking.close()

	names := clientNames(t, s)
	if len(names) < 4 { // the pool's, the two subscriptions and the tracking connection
		t.Errorf("CLIENT LIST shows %d connections of countertop: %v", len(names), names)
	}
	for addr, got := range names {
		if got != name {
			t.Errorf("the connection from %s is named %q, want %q (CLIENT LIST: %v)", addr, got, name, names)
		}
	}
	// The test's own commands since ranBefore are in the count: the two
	// INFOs of ownCalls, and CLIENT LIST.
	if ran, sent := ownCalls(t, s)-ranBefore-3, budget.sent.Load(); sent != ran {
		t.Errorf("Redis ran %d of countertop's own commands, the budget counted %d", ran, sent)
	}

	// A burst's connections, each its own, are named and count too: the
	// budget counts at least their handshakes and PINGs, beside the
	// increments (the user's writes, which it lets pass).
	const clients = 3
	sentBefore := budget.sent.Load()
	if _, err := c.Burst(ctx, "rl:a", model.Amount{Int: 1}, time.Minute, BurstOptions{Count: 2 * clients, Clients: clients}); err != nil {
		t.Fatal(err)
	}
	if sent := budget.sent.Load() - sentBefore; sent < clients*3 {
		t.Errorf("a burst over %d connections counted %d commands in the budget, want at least a HELLO, CLIENT SETNAME and PING each", clients, sent)
	}
	if named, connected := setnames()-namedBefore, connections()-connectedBefore; named != connected {
		t.Errorf("countertop opened %d connections and named %d", connected, named)
	}
	if why := c.Unnamed(); why != "" {
		t.Errorf("Unnamed() = %q, want \"\"", why)
	}
}

// A user the server does not allow CLIENT SETNAME (as the README's users
// were before countertop named its connections) still reads the counters
// and subscribes: the name is for people. Unnamed says why there is none,
// and what to grant.
func TestARefusedNameCostsNothingButTheName(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	s.Do(t, "ACL", "SETUSER", "watcher", "on", ">pw", "~*", "&*", "+@all", "-client|setname")
	s.Do(t, "SET", "rl:a", "1")
	ctx := context.Background()
	c, err := Connect(ctx, Options{URL: s.URL(), Username: "watcher", Password: "pw", ClientName: "countertop-eu-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if obs, err := c.Fetch(ctx, []string{"rl:a"}); err != nil || obs[0].Raw != "1" {
		t.Fatalf("Fetch: %v, %v", obs, err)
	}
	r := c.newReader(PollOptions{Patterns: []string{"rl:*"}}.withDefaults(), nil)
	sub, err := eventsKind.watcher(r, WatchOptions{PollOptions: r.o}.withDefaults()).push.open(ctx, c.rdb.(*redis.Client))
	if err != nil {
		t.Fatalf("a subscription whose name is refused: %v", err)
	}
	sub.close()
	want := "countertop's connections show unnamed in CLIENT LIST and SLOWLOG: CLIENT SETNAME countertop-eu-1 was refused (NOPERM"
	if why := c.Unnamed(); !strings.HasPrefix(why, want) || !strings.HasSuffix(why, "— grant it with ACL SETUSER <user> +client|setname") {
		t.Errorf("Unnamed() = %q, want %q... — grant it with ACL SETUSER <user> +client|setname", why, want)
	}
}

// The default name tells two countertops apart: its host and process; a
// name Redis would refuse is refused before anything is sent, in a
// sentence that says where it came from.
func TestClientNames(t *testing.T) {
	t.Parallel()
	if name := DefaultClientName(); !strings.HasPrefix(name, "countertop-") || !strings.HasSuffix(name, "-"+strconv.Itoa(os.Getpid())) || checkClientName(name) != nil {
		t.Errorf("DefaultClientName() = %q, want countertop-HOST-%d", name, os.Getpid())
	}
	s := redistest.Start(t)
	url := s.URL()
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{URL: url}, DefaultClientName()},
		{Options{URL: url + "?client_name=from-url"}, "from-url"},
		{Options{URL: url + "?client_name=from-url", ClientName: "from-flag"}, "from-flag"},
		{Options{URL: url, ClientName: "two words"}, `--client-name: "two words" cannot name a Redis connection: CLIENT SETNAME takes no spaces, newlines or other special characters — use letters, digits and punctuation, like countertop-eu-1`},
		{Options{URL: url + "?client_name=a%0Ab", URLFrom: "REDIS_URL"}, `REDIS_URL (client_name): "a\nb" cannot name a Redis connection: CLIENT SETNAME takes no spaces, newlines or other special characters — use letters, digits and punctuation, like countertop-eu-1`},
	} {
		t.Run("url"+strings.TrimPrefix(tc.o.URL, url)+" flag "+tc.o.ClientName, func(t *testing.T) {
			c, err := Connect(context.Background(), tc.o)
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				if names := clientNames(t, s); !slices.Contains(slices.Collect(maps.Values(names)), c.Name()) {
					t.Errorf("%s: no connection in CLIENT LIST is named %q: %v", tc.o.URL, c.Name(), names)
				}
				got = c.Name()
				c.Close()
			}
			if got != tc.want {
				t.Errorf("%s, --client-name %q: %q, want %q", tc.o.URL, tc.o.ClientName, got, tc.want)
			}
		})
	}
}

// No client countertop makes (of a server, a cluster's nodes, the servers
// behind Sentinel, which take parseOptions's options) negotiates
// maintenance notifications: a server without them refuses the handshake
// on each new client, and go-redis's fallback then writes to options a
// client shares with its Conns, a data race between a feed's connections.
func TestNoMaintenanceNotifications(t *testing.T) {
	t.Parallel()
	opt, _, err := parseOptions(Options{URL: "redis://127.0.0.1:1/0"})
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]*maintnotifications.Config{
		"server":  opt.MaintNotificationsConfig,
		"cluster": universalOptions(opt, []string{opt.Addr}).Cluster().MaintNotificationsConfig,
	} {
		if cfg == nil || cfg.Mode != maintnotifications.ModeDisabled {
			t.Errorf("%s: maintenance notifications are %v, want %q", name, cfg, maintnotifications.ModeDisabled)
		}
	}
}
