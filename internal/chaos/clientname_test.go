//go:build chaos

package chaos

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/cli"
	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// An operator looking at a production server must find countertop's
// connections in CLIENT LIST and tell its commands apart in SLOWLOG: every
// connection it opens is named, in every mode, on a cluster's every node
// and behind Sentinel, a burst's and the one-shot commands' included.

// client is one line of CLIENT LIST.
type client struct {
	id         int64
	addr, name string
}

// clients returns the connections of srv opened after the one numbered
// after (IDs only grow), but the one that asks.
func clients(t *testing.T, srv *redistest.Server, after int64) []client {
	t.Helper()
	var out []client
	for line := range strings.Lines(srv.Do(t, "CLIENT", "LIST").(string)) {
		f := map[string]string{}
		for kv := range strings.FieldsSeq(line) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		id, _ := strconv.ParseInt(f["id"], 10, 64)
		if id > after && f["cmd"] != "client|list" {
			out = append(out, client{id, f["addr"], f["name"]})
		}
	}
	return out
}

// lastID returns the ID of the newest connection of srv: those after it
// are countertop's.
func lastID(t *testing.T, srv *redistest.Server) int64 {
	t.Helper()
	var last int64
	for _, c := range clients(t, srv, 0) {
		last = max(last, c.id)
	}
	return last
}

// namings returns how many connections srv has accepted in all, and how
// many CLIENT SETNAME it has run: every connection countertop opens, the
// ones it has closed since included, names itself once.
func namings(t *testing.T, srv *redistest.Server) (connections, named int64) {
	t.Helper()
	for line := range strings.Lines(srv.Do(t, "INFO", "stats").(string)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_connections_received:"); ok {
			connections, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return connections, srv.CommandCalls(t)["client|setname"]
}

// checkNamed fails the test unless every connection of srv opened after
// the one numbered after is named name, and there are at least least.
func checkNamed(t *testing.T, srv *redistest.Server, after int64, name string, least int) {
	t.Helper()
	list := clients(t, srv, after)
	if len(list) < least {
		t.Errorf("%s: %d connections of countertop in CLIENT LIST, want %d or more: %v", srv.Addr, len(list), least, list)
	}
	for _, c := range list {
		if c.name != name {
			t.Errorf("%s: the connection from %s is named %q, want %q", srv.Addr, c.addr, c.name, name)
		}
	}
	t.Logf("%s: %d connections of countertop open", srv.Addr, len(list))
}

// checkAllNamed fails the test unless srv ran one CLIENT SETNAME per
// connection it accepted since connections and named were counted, the
// test's own namings not among them (it opens none).
func checkAllNamed(t *testing.T, srv *redistest.Server, connections, named int64) {
	t.Helper()
	c, n := namings(t, srv)
	if c-connections != n-named {
		t.Errorf("%s: %d connections opened, %d named", srv.Addr, c-connections, n-named)
	}
	t.Logf("%s: %d connections opened, as many named", srv.Addr, c-connections)
}

// burst fires a race of increments on key over three connections of
// their own, as the dashboard's burst and incr --count do.
func burst(t *testing.T, c *redisclient.Client, key string) {
	t.Helper()
	if _, err := c.Burst(context.Background(), key, model.Amount{Int: 1}, time.Minute, redisclient.BurstOptions{Count: 6, Clients: 3}); err != nil {
		t.Fatalf("burst: %v", err)
	}
}

func TestEveryConnectionIsNamed(t *testing.T) {
	name := redisclient.DefaultClientName()
	// Each mode holds its connections: the reads', and the subscription
	// (and in tracking mode the connection that asked for it).
	least := map[model.WatchMode]int{model.WatchPoll: 1, model.WatchEvents: 2, model.WatchTracking: 3}
	for _, mode := range []model.WatchMode{model.WatchPoll, model.WatchEvents, model.WatchTracking} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t, serverArgs...)
			srv.Do(t, "SET", "rl:a", "1")
			after := lastID(t, srv)
			connections, named := namings(t, srv)
			v := startView(t, srv.URL(), false, watchOptions(mode))
			waitUntil(t, "the view to follow in "+mode.String()+" mode", func() bool {
				_, ok := v.rows()["rl:a"]
				return ok && watchingIn(v.feedState(), mode)
			}, v.feedState)
			burst(t, v.client, "rl:a")
			checkNamed(t, srv, after, name, least[mode])
			checkAllNamed(t, srv, connections, named)
		})
	}

	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		c := redistest.StartCluster(t, 3, 0, "--notify-keyspace-events", "KEA")
		after := map[*redistest.Server]int64{}
		connections, named := map[*redistest.Server]int64{}, map[*redistest.Server]int64{}
		for _, n := range c.Nodes {
			after[n] = lastID(t, n)
			connections[n], named[n] = namings(t, n)
		}
		v := startView(t, c.URL(), true, watchOptions(model.WatchEvents))
		waitUntil(t, "the view to follow events", func() bool { return watchingIn(v.feedState(), model.WatchEvents) }, v.feedState)
		for i := range 6 { // keys on every master, most likely
			burst(t, v.client, "rl:"+strconv.Itoa(i))
		}
		for _, n := range c.Nodes {
			checkNamed(t, n, after[n], name, 2) // the reads', and the subscription
			checkAllNamed(t, n, connections[n], named[n])
		}
	})

	t.Run("sentinel", func(t *testing.T) {
		t.Parallel()
		master := redistest.Start(t, serverArgs...)
		replica := redistest.Start(t, serverArgs...)
		s := redistest.StartSentinel(t, master, replica)
		afterMaster, afterSentinel := lastID(t, master), lastID(t, s.Server)
		v := startView(t, s.URL(), false, watchOptions(model.WatchEvents))
		waitUntil(t, "the view to follow events", func() bool { return watchingIn(v.feedState(), model.WatchEvents) }, v.feedState)
		burst(t, v.client, "rl:a")
		checkNamed(t, master, afterMaster, name, 2)
		checkNamed(t, s.Server, afterSentinel, name, 1) // whom countertop asks where the master is
	})

	t.Run("one-shot commands", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t, serverArgs...)
		srv.Do(t, "SET", "rl:a", "1")
		srv.Do(t, "SET", "rl:b", "1") // no TTL: for repair
		config := filepath.Join(t.TempDir(), "countertop.toml")
		if err := os.WriteFile(config, []byte("[[rule]]\npattern = \"rl:*\"\nlimit = 10\nwindow = \"60s\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		const chosen = "chaos-oneshot-1"
		monitor := srv.Monitor(t)
		connections, named := namings(t, srv)
		for _, args := range [][]string{
			{"snapshot"},
			{"check"},
			{"incr", "rl:c"},
			{"incr", "rl:d", "--count", "6", "--clients", "3"},
			{"repair", "--yes"},
		} {
			var stdout, stderr bytes.Buffer
			args = append(args, "--config", config, "--url", srv.URL(), "--client-name", chosen)
			if code := cli.Run(args, &stdout, &stderr); code == 2 || stderr.Len() > 0 {
				t.Fatalf("countertop %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
			}
		}
		checkAllNamed(t, srv, connections, named)
		// Each CLIENT SETNAME gave the name chosen.
		_, now := namings(t, srv)
		for seen := int64(0); seen < now-named; {
			if args, _ := monitor.Next(t, "client"); len(args) == 3 && strings.EqualFold(args[1], "setname") {
				if args[2] != chosen {
					t.Errorf("a connection of a one-shot command was named %q, want %q", args[2], chosen)
				}
				seen++
			}
		}
	})
}
