package redisclient

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"
)

// defaultBatchSize is how many keys one pipeline reads (two commands
// each): few round trips, and replies that stay small.
const defaultBatchSize = 500

// Fetch reads the value and TTL of keys, in pipelines of 500 keys (never a
// round trip per key), and returns them in the order of keys, or an error.
// A key of another type than string comes back with that Type, no Raw, and
// what its layout needs read of it (see fetchCollections); a key that no
// longer exists comes back with Type "none" and PTTL model.PTTLMissing.
func (c *Client) Fetch(ctx context.Context, keys []string) ([]model.Observation, error) {
	where := c.hostPort
	if groups := c.byMaster(ctx, keys); len(groups) == 1 {
		where = groups[0].addr // a cluster's master, which errors name
	}
	obs := make([]model.Observation, 0, len(keys))
	err := c.fetchInOrder(ctx, keys, defaultBatchSize, where, func(batch []model.Observation) error {
		obs = append(obs, batch...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return obs, nil
}

// fetchAhead is how many pipelines fetch keeps in flight: while Redis
// answers one, the client writes the next and parses the last, so neither
// side waits for the other. Redis still runs them one at a time.
const fetchAhead = 2

// fetch reads keys batchSize at a time and calls fn with each batch, one
// call at a time. An error from fn stops it and is returned as it is.
//
// In a cluster each master's keys are read on their own, mastersAtOnce
// masters at a time (see byMaster): a master that is down, or hangs, holds
// up its own keys only, and fn gets the others' as they come; the error,
// once every master is done, is fn's, else that of the first master that
// failed (by address).
// Elsewhere, the batches come in key order, from the calling goroutine.
func (c *Client) fetch(ctx context.Context, keys []string, batchSize int, fn func([]model.Observation) error) error {
	groups := c.byMaster(ctx, keys)
	switch len(groups) {
	case 0:
		return c.fetchInOrder(ctx, keys, batchSize, c.hostPort, fn)
	case 1:
		return c.onMaster(ctx, groups[0].addr, func() error { return c.fetchInOrder(ctx, keys, batchSize, groups[0].addr, fn) })
	}
	// A master's failure must not stop the others' reads, so the group has
	// no context of its own: only fn's error cancels, and each master's
	// error waits in errs for the address order.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex // one call to fn at a time, and none after it failed
	var fnErr error
	errs := make([]error, len(groups))
	var g errgroup.Group
	g.SetLimit(mastersAtOnce)
	for i, group := range groups {
		g.Go(func() error {
			errs[i] = c.onMaster(ctx, group.addr, func() error {
				return c.fetchInOrder(ctx, group.keys, batchSize, group.addr, func(obs []model.Observation) error {
					mu.Lock()
					defer mu.Unlock()
					if fnErr == nil {
						if fnErr = fn(obs); fnErr != nil {
							cancel()
						}
					}
					return fnErr
				})
			})
			return nil
		})
	}
	_ = g.Wait() // every goroutine returns nil
	if fnErr != nil {
		return fnErr
	}
	return cmp.Or(errs...)
}

// masterKeys are the keys one master serves.
type masterKeys struct {
	addr string
	keys []string
}

// mastersAtOnce is how many masters fetch reads at once: each has up to
// fetchAhead pipelines in flight, whose replies (values up to model.MaxRaw) are
// held meanwhile. A master that hangs holds one place until it times out.
const mastersAtOnce = 4

// byMaster splits keys by the master that serves them, as the cluster's
// slot map (as go-redis holds it) says, in the masters' address order; nil
// for a single server, or when the slot map cannot be read (the reads then
// say why).
func (c *Client) byMaster(ctx context.Context, keys []string) []masterKeys {
	cc, ok := c.rdb.(*redis.ClusterClient)
	if !ok {
		return nil
	}
	byAddr := map[string][]string{}
	for _, k := range keys {
		n, err := cc.MasterForKey(ctx, k)
		if err != nil {
			return nil
		}
		addr := n.Options().Addr
		byAddr[addr] = append(byAddr[addr], k)
	}
	groups := make([]masterKeys, 0, len(byAddr))
	for _, addr := range slices.Sorted(maps.Keys(byAddr)) {
		groups = append(groups, masterKeys{addr, byAddr[addr]})
	}
	return groups
}

// fetchInOrder reads keys as fetch does, in key order, from the calling
// goroutine.
func (c *Client) fetchInOrder(ctx context.Context, keys []string, batchSize int, where string, fn func([]model.Observation) error) error {
	type result struct {
		obs []model.Observation
		err error
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx) // first to run on return: stops the reads still going
	defer cancel()

	// Each chunk's result arrives on its own channel, queued in key order;
	// the queue's room bounds how far reads run ahead of fn.
	queue := make(chan chan result, fetchAhead-1)
	wg.Go(func() {
		defer close(queue)
		for chunk := range slices.Chunk(keys, batchSize) {
			done := make(chan result, 1)
			select {
			case queue <- done:
			case <-ctx.Done():
				return
			}
			wg.Go(func() {
				ctx, err := c.prepaid(ctx, where, 2*len(chunk)) // GETRANGE and PTTL
				if err != nil {
					done <- result{nil, err}
					return
				}
				ctx, cancel := c.withPipelineTimeout(ctx)
				defer cancel()
				obs, err := c.fetchChunk(ctx, c.rdb, chunk, where)
				done <- result{obs, err}
			})
		}
	})
	for done := range queue {
		r := <-done
		if r.err != nil {
			return r.err
		}
		if err := fn(r.obs); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// withPipelineTimeout returns ctx bounded by c.pipelineTimeout, if any.
func (c *Client) withPipelineTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.pipelineTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, c.pipelineTimeout)
}

// fetchChunk reads keys in one pipeline of GETRANGE and PTTL on node (the
// deployment's client, or a master of a cluster that serves every key),
// plus one of TYPE for the keys that GETRANGE found are not strings, and
// what their layouts need (fetchCollections): a chunk of strings alone
// costs one round trip, whatever else the keyspace holds.
func (c *Client) fetchChunk(ctx context.Context, node redis.Cmdable, keys []string, where string) ([]model.Observation, error) {
	values := make([]*redis.StringCmd, len(keys))
	pttls := make([]*redis.Cmd, len(keys))
	err := c.rerouted(ctx, func() error {
		pipe := node.Pipeline()
		for i, k := range keys {
			values[i] = pipe.GetRange(ctx, k, 0, model.MaxRaw-1)
			pttls[i] = pipe.Do(ctx, "pttl", k)
		}
		// Errors are read per command below: WRONGTYPE is an answer, not a
		// failure.
		return execPipe(ctx, pipe)
	})
	if err != nil {
		return nil, c.explainAt(err, where)
	}
	at := time.Now()

	obs := make([]model.Observation, len(keys))
	var others []int // indexes of keys that hold another type
	for i, k := range keys {
		pttl, err := pttls[i].Int64()
		if err != nil {
			return nil, c.readError(k, err, where)
		}
		obs[i] = model.Observation{Key: k, Type: "string", PTTL: pttl, At: at}
		switch raw, err := values[i].Result(); {
		case err == nil:
			// As long as was asked: the string may go on.
			obs[i].Raw, obs[i].RawCut = raw, len(raw) == model.MaxRaw
		case redis.HasErrorPrefix(err, "WRONGTYPE"):
			others = append(others, i)
		default:
			return nil, c.readError(k, err, where)
		}
		if pttl == model.PTTLMissing {
			obs[i].Type = "none"
		}
	}
	if len(others) > 0 {
		if err := c.fetchTypes(ctx, obs, others, where); err != nil {
			return nil, err
		}
	}
	return obs, nil
}

// fetchTypes sets the Type of obs[i] for each i in idx with one pipeline of
// TYPE, then reads what the layouts of those types need. A key deleted
// since its PTTL was read is marked missing.
func (c *Client) fetchTypes(ctx context.Context, obs []model.Observation, idx []int, where string) error {
	types := make([]*redis.StatusCmd, len(idx))
	err := c.rerouted(ctx, func() error {
		pipe := c.rdb.Pipeline()
		for j, i := range idx {
			types[j] = pipe.Type(ctx, obs[i].Key)
		}
		return execPipe(ctx, pipe)
	})
	if err != nil {
		return c.explainAt(err, where)
	}
	for j, i := range idx {
		if err := types[j].Err(); err != nil {
			return c.readError(obs[i].Key, err, where)
		}
		obs[i].Type = types[j].Val()
		if obs[i].Type == "none" {
			obs[i].PTTL = model.PTTLMissing
		}
	}
	return c.fetchCollections(ctx, obs, idx, where)
}

// execPipe runs pipe and returns the pipeline's own failure: nil when each
// command got its answer, even an error reply (read per command). go-redis
// puts a broken connection's error on every command, but not an error
// reply to the connection's own set-up (AUTH refused once the password
// changed, the user switched off): nothing was sent, the commands hold
// neither value nor error, and only Exec's error says why.
//
// A command that could not reach its master is the pipeline's failure too:
// it is worth a new slot map (see rerouted).
func execPipe(ctx context.Context, pipe redis.Pipeliner) error {
	cmds, err := pipe.Exec(ctx)
	for _, cmd := range cmds {
		if err := cmd.Err(); unreachable(err) {
			return err
		}
	}
	if err == nil || slices.ContainsFunc(cmds, func(cmd redis.Cmder) bool { return cmd.Err() != nil }) {
		return nil
	}
	return err
}

// readError explains err, the error of a read of key sent to the server at
// where. A key the ACL user may not read is named, and so is the way out: a
// pattern that leaves it out. (Leaving it out here would hide a counter
// without a word.)
func (c *Client) readError(key string, err error, where string) error {
	if redis.HasErrorPrefix(err, "NOPERM") && strings.Contains(strings.ToLower(err.Error()), "key") {
		return explained(fmt.Sprintf("the Redis user may not read %s on %s (%s) — watch only keys it may read with --pattern, or grant it with ACL SETUSER",
			model.Printable(key), where, reason(err)), err)
	}
	return c.explainAt(err, where)
}
