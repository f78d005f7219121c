//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// lagSpell returns how long the lag scenario's spell named env lasts:
// short in `make chaos`; bench/lag.sh sets minutes.
func lagSpell(t *testing.T, env string, short time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		return short
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", env, v, err)
	}
	return d
}

// TestNoFalseLag: a steady 1,000 changes a second, then nothing, against
// a server that answers at once: the header never says countertop is
// behind, nor that the server has not answered, and the subscription is
// never dropped and made again (PSUBSCRIBE or SUBSCRIBE run once per
// master, in commandstats), while the rows follow Redis. A ping whose
// answer was lost used to leave the lag growing a second a second, then
// the server taken for silent and subscribed to again.
// LAG_BUSY and LAG_IDLE lengthen the two spells (see bench/lag.sh).
func TestNoFalseLag(t *testing.T) {
	busy := lagSpell(t, "LAG_BUSY", 10*time.Second)
	// Idle past the watchdog's patience (healthEvery, 5s, and a ping
	// period), so that a ping left out would end the subscription.
	idle := lagSpell(t, "LAG_IDLE", 8*time.Second)
	// The dashboard's own interval: a command is said to be unanswered
	// after an interval, and the suite's 200ms would take a busy CI
	// machine's hiccup for a silent server.
	options := func(mode model.WatchMode) redisclient.WatchOptions {
		o := watchOptions(mode)
		o.Interval = time.Second
		return o
	}
	// The two standalone servers side by side, then the cluster: three
	// floods at once would saturate a CI machine, and the lag it would
	// then measure would be real.
	t.Run("standalone", func(t *testing.T) {
		for _, mode := range []model.WatchMode{model.WatchEvents, model.WatchTracking} {
			t.Run(mode.String(), func(t *testing.T) {
				t.Parallel()
				srv := redistest.Start(t, serverArgs...)
				rdb := srv.Client(t)
				seed(t, rdb, "a", 50)
				v := startView(t, srv.URL(), false, options(mode))
				noFalseLag(t, v, rdb, mode, []*redistest.Server{srv}, busy, idle)
			})
		}
	})
	t.Run("cluster", func(t *testing.T) {
		c := redistest.StartCluster(t, 3, 0, "--notify-keyspace-events", "KEA")
		rdb := c.Client(t)
		seed(t, rdb, "a", 50)
		v := startView(t, c.URL(), true, options(model.WatchEvents))
		noFalseLag(t, v, rdb, model.WatchEvents, c.Masters(t), busy, idle)
	})
}

// noFalseLag runs the scenario on v, a view in mode of the masters, which
// rdb writes to.
func noFalseLag(t *testing.T, v *view, rdb redis.UniversalClient, mode model.WatchMode, masters []*redistest.Server, busy, idle time.Duration) {
	v.converge(rdb, "at start")
	waitUntil(t, "the feed to follow "+mode.String(), func() bool { return watchingIn(v.feedState(), mode) && v.answering() }, v.feedState)
	subs := subscribeCalls(t, masters)
	if subs < int64(len(masters)) {
		t.Fatalf("%d subscriptions made on %d masters before the traffic", subs, len(masters))
	}
	start := v.mark()

	written := traffic(t, rdb, busy)
	t.Logf("%s: %d INCRs in %v (%.0f a second)", t.Name(), written, busy, float64(written)/busy.Seconds())
	v.converge(rdb, "once the traffic stopped")
	busyEnd := v.mark()
	// Idle: the view stays as it is, and nothing is said of the server.
	deadline := time.Now().Add(idle)
	for time.Now().Before(deadline) {
		v.converge(rdb, "while idle")
		time.Sleep(time.Second) // a poll interval, not a synchronisation
	}
	end := v.mark()

	again := subscribeCalls(t, masters) - subs
	busyLag, busyCmds := v.healthBetween(start, busyEnd)
	idleLag, idleCmds := v.healthBetween(busyEnd, end)
	t.Logf("%s: %d resubscriptions; most behind said %v busy (in %d of %d Health), %v idle (%d of %d); countertop's commands a second to its busiest server, past the spell's first %v, busy mean %.0f max %.0f, idle mean %.0f max %.0f",
		t.Name(), again, busyLag.behind, busyLag.said, busyLag.of, idleLag.behind, idleLag.said, idleLag.of, rateWindow, busyCmds.mean, busyCmds.max, idleCmds.mean, idleCmds.max)
	if again != 0 {
		t.Errorf("the subscription was made again %d times, with nothing wrong with the server", again)
	}
	for _, l := range []lagSeen{busyLag, idleLag} {
		if l.behind > 0 {
			t.Errorf("the header said behind by %v at %s, on a server answering at once with rows matching it", l.behind, l.behindAt.Format("15:04:05.000"))
		}
		if l.silent != "" {
			t.Errorf("the header said %s had not answered, at %s (for at most %v)", l.silent, l.silentAt.Format("15:04:05.000"), l.silence)
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, st := range v.states[start.states:] {
		if !watchingIn(st, mode) || st.LastError != "" {
			t.Errorf("the feed went %q (%s), with nothing wrong", st.Mode, st.LastError)
			break
		}
	}
}

// traffic INCRs keys rl:lag:<0-99> 1,000 times a second for d, in a batch
// every 50ms, and returns how many it wrote.
func traffic(t *testing.T, rdb redis.UniversalClient, d time.Duration) int {
	t.Helper()
	ctx := context.Background()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	written := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		<-tick.C
		p := rdb.Pipeline()
		for range 50 {
			p.Incr(ctx, fmt.Sprintf("rl:lag:%d", written%100))
			written++
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatalf("the traffic: %v", err)
		}
	}
	return written
}

// subscribeCalls returns how many PSUBSCRIBE and SUBSCRIBE the masters ran.
func subscribeCalls(t *testing.T, masters []*redistest.Server) int64 {
	t.Helper()
	var n int64
	for _, m := range masters {
		calls := m.CommandCalls(t)
		n += calls["psubscribe"] + calls["subscribe"]
	}
	return n
}

// viewMark is where the view's records stood at a moment.
type viewMark struct {
	states, health int
	at             time.Time
}

// mark returns where the view's records stand now.
func (v *view) mark() viewMark {
	v.mu.Lock()
	defer v.mu.Unlock()
	return viewMark{len(v.states), len(v.health), time.Now()}
}

// lagSeen is the worst the header said between two marks: the most behind
// and when, and the first server said silent and when.
type lagSeen struct {
	behind   time.Duration
	behindAt time.Time
	silent   string
	silentAt time.Time
	silence  time.Duration // the longest said
	said     int           // Health that said behind, of
	of       int           // all received
}

// rate is the mean and the most of countertop's commands a second.
type rate struct{ mean, max float64 }

// rateWindow is more than the span over which the Health's commands a
// second are counted: a rate measured that long into a spell is the
// spell's alone.
const rateWindow = 6 * time.Second

// healthBetween returns the worst the Health received between from and to
// said, and the commands a second it gave from rateWindow after from.
func (v *view) healthBetween(from, to viewMark) (lagSeen, rate) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var l lagSeen
	var r rate
	rated := 0
	for _, h := range v.health[from.health:to.health] {
		if h.Behind > l.behind {
			l.behind, l.behindAt = h.Behind, h.At
		}
		if h.Behind > 0 {
			l.said++
		}
		l.of++
		if h.Silent != "" && l.silent == "" {
			l.silent, l.silentAt = h.Silent, h.At
		}
		if h.Silent != "" {
			l.silence = max(l.silence, h.At.Sub(h.Since))
		}
		if h.At.Sub(from.at) >= rateWindow {
			r.mean += h.Commands
			r.max = max(r.max, h.Commands)
			rated++
		}
	}
	if rated > 0 {
		r.mean /= float64(rated)
	}
	return l, r
}
