package redisclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/big"
	"sync/atomic"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"
)

// BurstOptions says how many increments Burst fires, from how many
// connections, how fast.
type BurstOptions struct {
	Count   int     // increments in all, not per connection
	Clients int     // connections they are spread over, each its own (at least 1, at most Count)
	Rate    float64 // increments per second over all connections; 0 fires as fast as Redis answers
	Field   string  // the hash field to add to (HINCRBY), as IncrField does; "" for a string counter
}

// BurstResult is what a burst did, so that what was sent can be compared
// with what the counter shows.
type BurstResult struct {
	Sent          int               // increments Redis carried out
	Before, After model.Observation // the key before the first increment and after the last
	// Expected is Sent times the amount. Observed is After's value minus
	// Before's, a missing key counting as 0; nil when either is not a number.
	Expected, Observed *big.Rat
	// Expired is true when the key's window ran out during the burst (a
	// new window began, or the key is gone), so Observed misses what was
	// counted before.
	Expired bool
	// GaveTTL is true when an increment of the burst gave the key, which
	// existed without a TTL, its first one.
	GaveTTL bool

	tolerance *big.Rat // how far Observed may be from Expected (INCRBYFLOAT rounds)
}

// Agree reports whether Observed is Expected: exactly for integer
// increments; for INCRBYFLOAT, which rounds every result to 17 digits,
// within a billionth of the values' size.
func (r BurstResult) Agree() bool {
	if r.Observed == nil || r.Expected == nil {
		return false
	}
	diff := new(big.Rat).Sub(r.Observed, r.Expected)
	return diff.Abs(diff).Cmp(r.tolerance) <= 0
}

// Burst fires o.Count atomic increments of by on key (each as Incr does,
// with window), spread over o.Clients connections of their own that race
// each other, at o.Rate per second if set. It reads the key before and after
// so that the result shows whether every increment counted.
//
// Cancelling ctx stops the burst after the increments in flight, which are
// counted; Burst then returns what was done with ctx's error. The first
// error from Redis stops every connection and is returned with what was
// done until then.
func (c *Client) Burst(ctx context.Context, key string, by model.Amount, window time.Duration, o BurstOptions) (BurstResult, error) {
	shown := incrCommand(key, by)
	if o.Field != "" {
		shown = fieldIncrCommand(key, o.Field, by)
	}
	if err := c.writable(shown); err != nil {
		return BurstResult{}, err
	}
	if o.Count < 1 || o.Rate < 0 {
		return BurstResult{}, explained(fmt.Sprintf("a burst of %d increments at %v per second cannot be fired: give a count of at least 1 and a rate of 0 or more", o.Count, o.Rate), nil)
	}
	conns, err := c.connections(ctx, key, min(max(o.Clients, 1), o.Count))
	if err != nil {
		return BurstResult{}, err
	}
	defer func() {
		for _, conn := range conns {
			conn.Close()
		}
	}()
	before, err := c.burstRead(ctx, key, o.Field)
	if err != nil {
		return BurstResult{}, err
	}
	r := BurstResult{Before: before}

	var next, sent, started atomic.Int64
	var gaveTTL atomic.Bool
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	for _, conn := range conns {
		g.Go(func() error {
			for i := next.Add(1) - 1; i < int64(o.Count); i = next.Add(1) - 1 {
				if o.Rate > 0 && !sleepUntil(gctx, start.Add(time.Duration(float64(i)/o.Rate*float64(time.Second)))) {
					return nil
				}
				if gctx.Err() != nil {
					return nil
				}
				// An increment once sent is seen through, so that it is
				// counted: each is quick, and stopping waits for at most one
				// per connection.
				inc, s, err := c.incrOnce(context.WithoutCancel(gctx), conn, key, o.Field, by, window)
				if err != nil {
					return err
				}
				sent.Add(1)
				if s {
					started.Add(1)
				}
				if inc.GaveTTL {
					gaveTTL.Store(true)
				}
			}
			return nil
		})
	}
	err = g.Wait()
	if err == nil {
		err = ctx.Err()
	}

	r.Sent, r.GaveTTL = int(sent.Load()), gaveTTL.Load()
	after, readErr := c.burstRead(context.WithoutCancel(ctx), key, o.Field)
	if readErr != nil {
		if err == nil {
			err = readErr
		}
		return r, err
	}
	r.After = after
	// A key without a TTL before (or missing) gets one from the first
	// increment; any other window that starts means the old one ran out.
	windows := int64(0)
	if window > 0 && counterPTTL(r.Before, o.Field) < 0 {
		windows = 1
	}
	r.Expired = started.Load() > windows || r.Sent > 0 && counterPTTL(r.After, o.Field) == model.PTTLMissing
	r.compare(by, o.Field)
	return r, err
}

// incrOnce is one increment of a burst: of field of the hash key, or of
// the string key when field is "".
func (c *Client) incrOnce(ctx context.Context, rdb processor, key, field string, by model.Amount, window time.Duration) (model.Incremented, bool, error) {
	if field != "" {
		return c.incrField(ctx, rdb, key, field, by, window)
	}
	return c.incr(ctx, rdb, key, by, window)
}

// burstRead reads key before and after a burst: as Fetch does, and for a
// hash field burst with that field read by name (HGET, and its HPTTL where
// the hash's fields carry TTLs), which Fetch of a large hash reads only
// when a rule names it, or its listing finds it.
func (c *Client) burstRead(ctx context.Context, key, field string) (model.Observation, error) {
	read, err := c.Fetch(ctx, []string{key})
	if err != nil {
		return model.Observation{}, err
	}
	o := read[0]
	if _, read := o.FieldValue(field); field == "" || o.Type != "hash" || read {
		return o, nil
	}
	value, err := c.rdb.HGet(ctx, key, field).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return o, nil
	case err != nil:
		return o, c.readError(key, err, c.hostPort)
	}
	f := model.Field{Name: field, Value: value}
	if o.FieldTTLs {
		ttls, err := hpttl(ctx, c.rdb, key, []model.Field{f})[0].Result()
		if err != nil || len(ttls) != 1 {
			return o, c.readError(key, cmp.Or(err, errors.New("HPTTL answered no TTL")), c.hostPort)
		}
		f.PTTL = ttls[0]
	}
	o.Fields = append(o.Fields, f)
	return o, nil
}

// counterPTTL is the TTL of what a burst adds to: the key's, or, where the
// hash's fields carry TTLs of their own, field's (PTTLMissing when o does
// not hold it).
func counterPTTL(o model.Observation, field string) int64 {
	if field == "" || !o.FieldTTLs {
		return o.PTTL
	}
	return o.FieldPTTL(field)
}

// compare sets Expected, Observed and the tolerance for increments of by:
// INCRBYFLOAT's, for a decimal amount or a key that held a decimal.
func (r *BurstResult) compare(by model.Amount, field string) {
	amount, _ := new(big.Rat).SetString(by.String())
	r.Expected = amount.Mul(amount, big.NewRat(int64(r.Sent), 1))
	r.tolerance = new(big.Rat)
	before, okBefore := number(r.Before, field)
	after, okAfter := number(r.After, field)
	if !okBefore || !okAfter {
		return
	}
	r.Observed = new(big.Rat).Sub(after, before)
	raw, _, _ := counted(r.Before, field)
	if by.IsFloat || model.ParseValue(raw).Kind == model.KindFloat {
		size := new(big.Rat).Abs(r.Expected)
		for _, v := range []*big.Rat{before, after} {
			if abs := new(big.Rat).Abs(v); abs.Cmp(size) > 0 {
				size = abs
			}
		}
		r.tolerance.Mul(size, big.NewRat(1, 1e9))
	}
}

// number returns the value a burst adds to exactly (o's, or its field's),
// 0 for a missing key or field; ok is false when it is not a number.
func number(o model.Observation, field string) (n *big.Rat, ok bool) {
	raw, exists, ok := counted(o, field)
	switch {
	case !ok:
		return nil, false
	case !exists:
		return new(big.Rat), true
	}
	return new(big.Rat).SetString(raw)
}

// counted returns the text a burst adds to: a string key's, or field's of
// a hash, and whether it exists; ok is false when o is of another type.
func counted(o model.Observation, field string) (raw string, exists, ok bool) {
	switch {
	case o.PTTL == model.PTTLMissing:
		return "", false, true
	case field == "":
		return o.Raw, true, o.Type == "string"
	case o.Type != "hash":
		return "", false, false
	}
	raw, exists = o.FieldValue(field)
	return raw, exists, true
}

// connections opens n clients of exactly one connection each to the master
// of key (the one server, or in a cluster the master of key's slot) and
// checks each with PING, so that a race starts with every connection ready
// and a server at its maxclients limit says so before anything is sent.
func (c *Client) connections(ctx context.Context, key string, n int) ([]*redis.Client, error) {
	var master *redis.Client
	switch rdb := c.rdb.(type) {
	case *redis.ClusterClient:
		var err error
		if master, err = rdb.MasterForKey(ctx, key); err != nil {
			return nil, c.explain(err)
		}
	case *redis.Client: // a single server, or the failover client that dials the master behind Sentinel
		master = rdb
	}
	opt := *master.Options() // named as the master's connections are (see nameConn)
	opt.PoolSize, opt.MaxActiveConns, opt.MaxIdleConns, opt.MinIdleConns = 1, 1, 1, 0
	conns := make([]*redis.Client, 0, n)
	for range n {
		o := opt
		conn := redis.NewClient(&o)
		// The handshake and the PING count in the master's budget; the
		// increments, the user's writes, pass (see userWrite).
		conn.AddHook(c.budget.hook(c.budgetKey(opt.Addr)))
		conns = append(conns, conn)
		if err := conn.Ping(ctx).Err(); err != nil {
			for _, conn := range conns {
				conn.Close()
			}
			return nil, c.explain(err)
		}
	}
	return conns, nil
}

// sleepUntil waits until t and reports true, or false if ctx is done first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
