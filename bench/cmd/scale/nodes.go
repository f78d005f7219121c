package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/countertop/countertop/redisclient"
)

// targetNodesRatio is issue 33's target (item 7): several servers, or the
// masters of a cluster, cost no more than one Redis holding them all,
// within this much of their summed Redis time.
const targetNodesRatio = 1.3

// A fleet is the Redis nodes a snapshot reads: one server, the masters of
// a cluster (given one node of it as -url), or several servers (-url
// given again), each node with a client of its own for its figures.
type fleet struct {
	nodes   []*redis.Client
	cluster bool
}

// newFleet connects to the nodes of urls: the masters of the cluster when
// urls is one node of a cluster, else each server.
func newFleet(ctx context.Context, urls []string) (*fleet, error) {
	fl := &fleet{}
	for _, u := range urls {
		opt, err := redis.ParseURL(u)
		if err != nil {
			fl.Close()
			return nil, err
		}
		fl.nodes = append(fl.nodes, redis.NewClient(opt))
	}
	if len(urls) > 1 {
		return fl, nil
	}
	info, err := fl.nodes[0].Info(ctx, "cluster").Result()
	if err != nil {
		fl.Close()
		return nil, fmt.Errorf("cannot reach the benchmark Redis: %w", err)
	}
	if !strings.Contains(info, "cluster_enabled:1") {
		return fl, nil
	}
	seed := fl.nodes[0].Options()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{seed.Addr}, Username: seed.Username, Password: seed.Password})
	defer cc.Close()
	var mu sync.Mutex
	var masters []string
	err = cc.ForEachMaster(ctx, func(_ context.Context, n *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		masters = append(masters, n.Options().Addr)
		return nil
	})
	fl.Close()
	if err != nil {
		return nil, err
	}
	slices.Sort(masters)
	fl = &fleet{cluster: true}
	for _, addr := range masters {
		opt := *seed
		opt.Addr = addr
		fl.nodes = append(fl.nodes, redis.NewClient(&opt))
	}
	return fl, nil
}

func (fl *fleet) Close() {
	for _, n := range fl.nodes {
		n.Close()
	}
}

// several reports whether the fleet has more than one node.
func (fl *fleet) several() bool { return len(fl.nodes) > 1 }

// what names the fleet for the report: "one Redis", "3 masters of a
// cluster", "3 servers".
func (fl *fleet) what() string {
	switch {
	case fl.cluster:
		return fmt.Sprintf("%d masters of a cluster", len(fl.nodes))
	case fl.several():
		return fmt.Sprintf("%d servers", len(fl.nodes))
	}
	return "one Redis"
}

// alone is the fleet of its i-th node alone (a master of the cluster
// still, walked as snapshot walks one).
func (fl *fleet) alone(i int) *fleet { return &fleet{nodes: fl.nodes[i : i+1], cluster: fl.cluster} }

// dbSize is the number of keys the nodes hold together.
func (fl *fleet) dbSize(ctx context.Context) (int64, error) {
	var n int64
	for _, node := range fl.nodes {
		size, err := node.DBSize(ctx).Result()
		if err != nil {
			return 0, fmt.Errorf("cannot reach the benchmark Redis at %s: %w", node.Options().Addr, err)
		}
		n += size
	}
	return n, nil
}

// each runs do on every node, one after another.
func (fl *fleet) each(ctx context.Context, do func(ctx context.Context, node *redis.Client) error) error {
	for _, node := range fl.nodes {
		if err := do(ctx, node); err != nil {
			return fmt.Errorf("%s: %w", node.Options().Addr, err)
		}
	}
	return nil
}

// stats reads every node's figures.
func (fl *fleet) stats(ctx context.Context) ([]serverStats, error) {
	var all []serverStats
	err := fl.each(ctx, func(ctx context.Context, node *redis.Client) error {
		s, err := readStats(ctx, node)
		all = append(all, s)
		return err
	})
	return all, err
}

// measure runs do and sets what each node did meanwhile (nodes) and all
// of them together (server) in its run.
func (fl *fleet) measure(ctx context.Context, do func() (snapshotRun, error)) (snapshotRun, error) {
	before, err := fl.stats(ctx)
	if err != nil {
		return snapshotRun{}, err
	}
	r, err := do()
	if err != nil {
		return snapshotRun{}, err
	}
	after, err := fl.stats(ctx)
	if err != nil {
		return snapshotRun{}, err
	}
	for i := range after {
		d := after[i].since(before[i])
		r.nodes = append(r.nodes, d)
		if i == 0 {
			r.server = d
		} else {
			r.server = r.server.plus(d)
		}
	}
	return r, nil
}

// slowlog is slowlog over every node.
func (fl *fleet) slowlog(ctx context.Context) (int, string, error) {
	var n int
	var all []string
	err := fl.each(ctx, func(ctx context.Context, node *redis.Client) error {
		count, which, err := slowlog(ctx, node)
		n += count
		if count > 0 {
			all = append(all, which)
		}
		return err
	})
	return n, strings.Join(all, "; "), err
}

// discardAll is discard for every server of urls side by side, each
// with its own client, as snapshot reads them: the reads alone.
func discardAll(ctx context.Context, fl *fleet, cfg config) (snapshotRun, error) {
	var clients []*redisclient.Client
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	for _, u := range cfg.urls {
		c, err := redisclient.Connect(ctx, redisclient.Options{URL: u, Password: fl.nodes[0].Options().Password, Rules: cfg.rules()})
		if err != nil {
			return snapshotRun{}, err
		}
		clients = append(clients, c)
	}
	return fl.measure(ctx, func() (snapshotRun, error) {
		start := time.Now()
		var g errgroup.Group
		for _, c := range clients {
			g.Go(func() error { return discard(ctx, c, cfg) })
		}
		err := g.Wait()
		return snapshotRun{wall: time.Since(start)}, err
	})
}

// medianAlone is, for each node, the figures of the bare client's reads of
// it alone (its runs in alone) with the median Redis time (commandstats):
// what its reads cost it with no other node of the fleet on its core, as
// a Redis holding them all would spend on its part of the keys.
func medianAlone(alone [][]snapshotRun) []serverStats {
	var stats []serverStats
	for _, runs := range alone {
		runs = slices.Clone(runs)
		slices.SortFunc(runs, func(a, b snapshotRun) int {
			return cmp.Compare(a.server.time(readCommands...), b.server.time(readCommands...))
		})
		stats = append(stats, runs[len(runs)/2].server)
	}
	return stats
}

// reportNodes prints, for a fleet of several nodes, the snapshot's cost
// on each node and against their summed time alone (issue 33's target).
func (f *figures) reportNodes(w io.Writer) {
	med := f.snapshots[len(f.snapshots)/2]
	var sum, slowest, cpu time.Duration
	for _, a := range f.alone {
		sum += a.time(readCommands...)
		slowest = max(slowest, a.time(readCommands...))
		cpu += a.cpu
	}
	fmt.Fprintf(w, "    each node, in the median run: Redis time (commandstats), Redis CPU; then the Redis time of the same\n")
	fmt.Fprintf(w, "    reads by the bare client with that node alone (median of %d), which no other node's work inflates\n", len(f.snapshots))
	for i, n := range med.nodes {
		fmt.Fprintf(w, "      %-22s %s, CPU %s; alone %s, CPU %s\n", f.fleet.nodes[i].Options().Addr, secs(n.time(readCommands...)), secs(n.cpu),
			secs(f.alone[i].time(readCommands...)), secs(f.alone[i].cpu))
	}
	ratio := float64(med.wall) / float64(sum)
	fmt.Fprintf(w, "    summed Redis time alone    %s (slowest node %s); their CPU alone %s, in the run %s\n", secs(sum), secs(slowest), secs(cpu), secs(med.server.cpu))
	fmt.Fprintf(w, "    wall / summed time alone   %.2fx    target <= %.1fx   %s\n", ratio, targetNodesRatio, verdict(ratio <= targetNodesRatio))
	fmt.Fprintf(w, "    wall / slowest node alone  %.2fx    (1.0 is for nodes on cores of their own; here they share them)\n", float64(med.wall)/float64(slowest))
	if len(f.bares) > 0 {
		b := f.bares[len(f.bares)/2]
		fmt.Fprintf(w, "    the bare client reading every node at once: wall %s, %.2fx the summed time alone\n", secs(b.wall), float64(b.wall)/float64(sum))
	}
}
