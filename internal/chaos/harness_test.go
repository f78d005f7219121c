package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// pattern is what every scenario watches; keys outside it are noise the
// view must leave out.
const pattern = "rl:*"

// convergeTimeout bounds how long a view may take to match Redis again after
// a fault: a few resync passes, with room for a loaded machine.
const convergeTimeout = 20 * time.Second

// row is what a user reads of one key: its type, its stored string, and
// whether it has a TTL. Two views agree when they hold the same rows.
type row struct {
	Type   string
	Raw    string
	HasTTL bool
}

func (r row) String() string { return fmt.Sprintf("%s %q ttl=%v", r.Type, r.Raw, r.HasTTL) }

// view is a model.Store fed by redisclient.Watch, as the dashboard wires
// them, with the feed's states kept so a scenario can ask what the header
// said along the way.
type view struct {
	t      *testing.T
	client *redisclient.Client

	mu     sync.Mutex
	store  *model.Store
	state  model.FeedState
	states []model.FeedState
	health []model.Health // every Health received, in order
	err    error          // what Watch returned, once it has
	done   chan struct{}
}

// watchingIn reports whether s says that the feed watches in mode, its
// subscriptions up.
func watchingIn(s model.FeedState, mode model.WatchMode) bool {
	return s.Mode == mode && s.Phase == model.FeedWatching
}

// watchOptions are the dashboard's options with short intervals, so that
// a scenario's resync passes come within seconds.
func watchOptions(mode model.WatchMode) redisclient.WatchOptions {
	return redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{pattern}, Interval: 200 * time.Millisecond},
		Mode:        mode,
		ResyncEvery: time.Second,
	}
}

// connect returns a redisclient for url, closed when the test ends.
func connect(t *testing.T, url string, cluster bool) *redisclient.Client {
	return connectRuled(t, url, cluster, nil)
}

// connectRuled is connect with rules, which say the windows of logs.
func connectRuled(t *testing.T, url string, cluster bool, rules *model.Rules) *redisclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := redisclient.Connect(ctx, redisclient.Options{URL: url, Cluster: cluster, Rules: rules})
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// startView watches url with o until the test ends.
func startView(t *testing.T, url string, cluster bool, o redisclient.WatchOptions) *view {
	t.Helper()
	return startRuledView(t, url, cluster, o, &model.Rules{})
}

// startRuledView is startView with rules, for the client and the store.
func startRuledView(t *testing.T, url string, cluster bool, o redisclient.WatchOptions, rules *model.Rules) *view {
	t.Helper()
	v := &view{t: t, client: connectRuled(t, url, cluster, rules), store: model.NewStore(rules), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	feed := make(chan model.Batch, 64)
	go func() {
		err := v.client.Watch(ctx, o, feed)
		v.mu.Lock()
		v.err = err
		v.mu.Unlock()
		close(feed)
	}()
	go func() {
		defer close(v.done)
		for b := range feed {
			v.mu.Lock()
			v.store.Apply(b)
			if b.State != nil {
				v.state = *b.State
				v.states = append(v.states, *b.State)
			}
			if b.Health != nil {
				v.health = append(v.health, *b.Health)
			}
			v.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-v.done
	})
	return v
}

// rows returns what the view shows.
func (v *view) rows() map[string]row {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := map[string]row{}
	for _, c := range v.store.Rows(0, v.store.Visible()) {
		out[c.Key] = row{Type: c.Type, Raw: c.Raw, HasTTL: c.PTTL >= 0}
	}
	return out
}

// feedState returns the feed's latest state.
func (v *view) feedState() model.FeedState {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.state
}

// sawState reports whether the feed ever sent a state for which ok holds.
func (v *view) sawState(ok func(model.FeedState) bool) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.ContainsFunc(v.states, ok)
}

// silentSince returns the first Health measured after since that names a
// server silent, and whether there is one.
func (v *view) silentSince(since time.Time) (model.Health, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, h := range v.health {
		if h.Silent != "" && h.At.After(since) {
			return h, true
		}
	}
	return model.Health{}, false
}

// answering reports whether the last Health received names no server
// silent.
func (v *view) answering() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.health) > 0 && v.health[len(v.health)-1].Silent == ""
}

// truth reads every key matching pattern straight from Redis with go-redis,
// on every master of a cluster, independently of redisclient.
func truth(ctx context.Context, rdb redis.UniversalClient) (map[string]row, error) {
	var mu sync.Mutex
	out := map[string]row{}
	read := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			key := iter.Val()
			typ, err := c.Type(ctx, key).Result()
			if err != nil {
				return err
			}
			if typ == "none" {
				continue
			}
			pttl, err := c.PTTL(ctx, key).Result()
			if err != nil {
				return err
			}
			r := row{Type: typ, HasTTL: pttl >= 0}
			if typ == "string" {
				r.Raw, err = c.Get(ctx, key).Result()
				if err == redis.Nil {
					continue // expired between TYPE and GET
				}
				if err != nil {
					return err
				}
			}
			mu.Lock()
			out[key] = r
			mu.Unlock()
		}
		return iter.Err()
	}
	var err error
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, read)
	case *redis.Client:
		err = read(ctx, c)
	default:
		err = fmt.Errorf("unexpected client %T", rdb)
	}
	return out, err
}

// diff describes how view and redis differ, "" when they agree.
func diff(view, redis map[string]row) string {
	var lines []string
	for k, r := range redis {
		if got, ok := view[k]; !ok {
			lines = append(lines, fmt.Sprintf("%q: missing from the view (Redis: %v)", k, r))
		} else if got != r {
			lines = append(lines, fmt.Sprintf("%q: view %v, Redis %v", k, got, r))
		}
	}
	for k, r := range view {
		if _, ok := redis[k]; !ok {
			lines = append(lines, fmt.Sprintf("%q: stale row %v, gone from Redis", k, r))
		}
	}
	slices.Sort(lines)
	if len(lines) > 10 {
		lines = append(lines[:10], fmt.Sprintf("... %d more", len(lines)-10))
	}
	return strings.Join(lines, "\n")
}

// converge waits until the view shows exactly what Redis holds, twice in a
// row (so a momentary match in passing does not count), and fails the test
// with the difference when it does not within convergeTimeout.
func (v *view) converge(rdb redis.UniversalClient, why string) {
	v.t.Helper()
	deadline := time.Now().Add(convergeTimeout)
	agreed := 0
	last := ""
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		want, err := truth(ctx, rdb)
		cancel()
		if err == nil {
			last = diff(v.rows(), want)
			if last == "" {
				if agreed++; agreed == 2 {
					return
				}
			} else {
				agreed = 0
			}
		} else {
			last = "reading Redis: " + err.Error()
		}
		if time.Now().After(deadline) {
			v.t.Fatalf("%s: the view does not match Redis after %v (feed: %+v):\n%s", why, convergeTimeout, v.feedState(), last)
		}
		time.Sleep(50 * time.Millisecond) // a poll interval, not a synchronisation
	}
}

// waitUntil polls cond until it holds, failing the test with what after
// convergeTimeout; the feed's state, when given, goes in the failure.
func waitUntil(t *testing.T, what string, cond func() bool, state ...func() model.FeedState) {
	t.Helper()
	deadline := time.Now().Add(convergeTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			last := ""
			for _, s := range state {
				last = fmt.Sprintf(" (feed: %+v)", s())
			}
			t.Fatalf("timed out after %v waiting for %s%s", convergeTimeout, what, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// seed writes n counters rl:<prefix><i> = i, with a TTL on the even ones,
// and one key outside the pattern.
func seed(t *testing.T, rdb redis.UniversalClient, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		key := fmt.Sprintf("rl:%s%d", prefix, i)
		var ttl time.Duration
		if i%2 == 0 {
			ttl = time.Hour
		}
		if err := rdb.Set(ctx, key, i, ttl).Err(); err != nil {
			t.Fatalf("seed %s: %v", key, err)
		}
	}
	if err := rdb.Set(ctx, "other:"+prefix, 1, 0).Err(); err != nil {
		t.Fatal(err)
	}
}
