package redisclient

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
)

// ruleFor is the rule that applies to key, with the window its keys have
// (model.Rules.Effective), as model.Read will take it: a log's window and a
// hash's field decide what is read of them. The zero Rule without rules.
func (c *Client) ruleFor(key string) model.Rule {
	if c.rules == nil {
		return model.Rule{}
	}
	return c.rules.Effective(c.rules.Match(key))
}

// collectionCmds holds one key's commands of the first round of
// fetchCollections: the size and both ends of a collection.
type collectionCmds struct {
	len      *redis.IntCmd
	top, low *redis.ZSliceCmd          // zset: the highest and the lowest score
	head     *redis.StringCmd          // list: LINDEX 0
	tail     *redis.StringCmd          // list: LINDEX -1
	fields   *redis.MapStringStringCmd // second round: HGETALL
	known    *redis.SliceCmd           // second round: HMGET
	names    []string                  // the names HMGET asked
	list     *redis.ScanCmd            // second round, where fields may have TTLs: the first page of a large hash's fields (HSCAN)
	lists    bool                      // a large hash whose fields are listed where they may have TTLs: no rule names its field
	count    *redis.IntCmd             // second round: ZCOUNT
	from     *redis.ZSliceCmd          // second round, for a live feed: the oldest entry inside the window (ZRANGE BYSCORE)
	entries  *redis.StringSliceCmd     // second round: LRANGE
	start    float64                   // the score from which an entry is in the window
}

// fetchCollections completes the observations obs[i], i in idx, of keys
// that TYPE found are not strings, with what model.Read needs of each
// layout (model.Observation): the size and both ends of a collection in
// one pipeline, then what those say is worth reading, in a second, each
// command bounded whatever the collection's size (model.MaxHashFields,
// model.MaxListScan; ZCOUNT is O(log n)). Every read path comes here, so
// that a key reads the same in the dashboard, a snapshot and a cluster.
//
// A key whose type changed between the rounds (WRONGTYPE) is left with
// what was read of it before; its next read finds what it has become.
func (c *Client) fetchCollections(ctx context.Context, obs []model.Observation, idx []int, where string) error {
	cmds := make([]collectionCmds, len(idx))
	var first []int // positions in idx of the keys read in the first round
	for j, i := range idx {
		o := &obs[i]
		o.Newest, o.Oldest, o.InWindow, o.InWindowFrom = math.NaN(), math.NaN(), -1, math.NaN()
		switch o.Type {
		case "hash", "zset", "list", "set", "stream":
			first = append(first, j)
		}
	}
	if len(first) == 0 {
		return nil
	}
	err := c.rerouted(ctx, func() error {
		pipe := c.rdb.Pipeline()
		for _, j := range first {
			k, cmd := obs[idx[j]].Key, &cmds[j]
			switch obs[idx[j]].Type {
			case "hash":
				cmd.len = pipe.HLen(ctx, k)
			case "zset":
				cmd.len = pipe.ZCard(ctx, k)
				cmd.top = pipe.ZRangeWithScores(ctx, k, -1, -1)
				cmd.low = pipe.ZRangeWithScores(ctx, k, 0, 0)
			case "list":
				cmd.len = pipe.LLen(ctx, k)
				cmd.head = pipe.LIndex(ctx, k, 0)
				cmd.tail = pipe.LIndex(ctx, k, -1)
			case "set":
				cmd.len = pipe.SCard(ctx, k)
			case "stream":
				cmd.len = pipe.XLen(ctx, k)
			}
		}
		return execPipe(ctx, pipe)
	})
	if err != nil {
		return c.explainAt(err, where)
	}

	var second []int
	for _, j := range first {
		o, cmd := &obs[idx[j]], &cmds[j]
		n, err := cmd.len.Result()
		if changed, err := answered(err); err != nil {
			return c.readError(o.Key, err, where)
		} else if changed {
			continue
		}
		if n == 0 { // deleted since TYPE: Redis keeps no empty collection
			o.Type, o.PTTL = "none", model.PTTLMissing
			continue
		}
		o.Len = n
		var ok bool
		switch o.Type {
		case "zset":
			if o.Newest, err = topScore(cmd.top); err == nil {
				o.Oldest, err = topScore(cmd.low)
			}
		case "list":
			if o.Newest, err = entryScore(cmd.head); err == nil {
				o.Oldest, err = entryScore(cmd.tail)
			}
		}
		if changed, err := answered(err); err != nil {
			return c.readError(o.Key, err, where)
		} else if changed {
			o.Newest, o.Oldest = math.NaN(), math.NaN()
			continue
		}
		rule := c.ruleFor(o.Key)
		switch o.Type {
		case "hash":
			if n > model.MaxHashFields {
				// A rule's field is read by name whatever the hash holds
				// besides; else its fields may be listed.
				cmd.names, cmd.lists = model.KnownHashFields(rule.Field), rule.Field == ""
			}
			ok = true
		case "zset", "list":
			// The newest entry's magnitude gives the unit of every score.
			cmd.start, ok = model.LogWindowStart(max(o.Newest, o.Oldest), rule.Window, o.At)
			ok = ok && (o.Type == "zset" || n <= model.MaxListScan)
		}
		if ok {
			second = append(second, j)
		}
	}
	if len(second) == 0 {
		return nil
	}
	falls := wantsFalls(ctx)
	lists := !c.noFieldTTL.Load()
	err = c.rerouted(ctx, func() error {
		pipe := c.rdb.Pipeline()
		for _, j := range second {
			k, cmd := obs[idx[j]].Key, &cmds[j]
			switch obs[idx[j]].Type {
			case "hash":
				if cmd.names == nil {
					cmd.fields = pipe.HGetAll(ctx, k)
					break
				}
				cmd.known = pipe.HMGet(ctx, k, cmd.names...)
				if lists && cmd.lists {
					// Its fields may carry TTLs of their own: they are
					// listed a page at a time (see fieldTTLs), never read
					// whole.
					cmd.list = pipe.HScan(ctx, k, 0, "", c.listPage())
				}
			case "zset":
				from := "(" + strconv.FormatFloat(cmd.start, 'f', -1, 64)
				cmd.count = pipe.ZCount(ctx, k, from, "+inf")
				if falls {
					// ZRANGE BYSCORE (Redis 6.2) rather than ZRANGEBYSCORE, so
					// that the ACL rule +zrange allows it.
					cmd.from = pipe.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: k, Start: from, Stop: "+inf", ByScore: true, Count: 1})
				}
			case "list":
				cmd.entries = pipe.LRange(ctx, k, 0, model.MaxListScan-1)
			}
		}
		return execPipe(ctx, pipe)
	})
	if err != nil {
		return c.explainAt(err, where)
	}
	var listed []fieldRead // the large hashes whose fields were listed
	for _, j := range second {
		o, cmd := &obs[idx[j]], &cmds[j]
		var err error
		if cmd.list != nil {
			if names, cursor, err := cmd.list.Result(); err == nil {
				listed = append(listed, fieldRead{i: idx[j], fields: pairs(names), cursor: cursor, pages: 1, list: true})
			}
			// An error (WRONGTYPE, a refusal) leaves the hash read as
			// before field TTLs: HMGET's answer says the rest.
		}
		switch {
		case cmd.fields != nil:
			var m map[string]string
			if m, err = cmd.fields.Result(); err == nil {
				o.Fields = fieldsOf(m)
			}
		case cmd.known != nil:
			var vals []any
			if vals, err = cmd.known.Result(); err == nil {
				o.Fields = knownFields(cmd.names, vals)
			}
		case cmd.count != nil:
			o.InWindow, err = cmd.count.Result()
			if cmd.from != nil {
				// Refused (before Redis 6.2, or by an ACL), it leaves
				// InWindowFrom unknown: the log is then read again every
				// interval (model.LogFalls), not failed.
				o.InWindowFrom, _ = topScore(cmd.from)
			}
		case cmd.entries != nil:
			var entries []string
			if entries, err = cmd.entries.Result(); err == nil {
				o.InWindow = model.CountInWindow(entries, cmd.start)
				o.InWindowFrom = model.OldestInWindow(entries, cmd.start)
			}
		}
		if _, err := answered(err); err != nil {
			return c.readError(o.Key, err, where)
		}
	}
	return c.fieldTTLs(ctx, obs, idx, listed, where)
}

// fallsKey marks a context whose reads are a live feed's: they read, with
// a sorted-set log's count, its oldest entry inside the window, which says
// when the count falls with no write (model.LogFalls). A poll or a
// snapshot reads the count again instead, and spares the command.
type fallsKey struct{}

// withFalls returns ctx, marked so that reads under it read when logs'
// counts fall.
func withFalls(ctx context.Context) context.Context { return context.WithValue(ctx, fallsKey{}, true) }

// wantsFalls reports whether ctx was marked by withFalls.
func wantsFalls(ctx context.Context) bool { return ctx.Value(fallsKey{}) != nil }

// answered sorts a command's error: nil, or WRONGTYPE (the key changed
// type since TYPE: changed is true, and the read of it stops there), or
// an error that fails the read (returned).
func answered(err error) (changed bool, fail error) {
	switch {
	case err == nil:
		return false, nil
	case redis.HasErrorPrefix(err, "WRONGTYPE"):
		return true, nil
	}
	return false, err
}

// topScore is the score of the one entry ZRANGE i i WITHSCORES returned;
// NaN when the set was empty by then.
func topScore(cmd *redis.ZSliceCmd) (float64, error) {
	zs, err := cmd.Result()
	if err != nil || len(zs) == 0 {
		return math.NaN(), err
	}
	return zs[0].Score, nil
}

// entryScore is a list's entry (LINDEX) read as a score would be
// (model.ParseScore); NaN when there is none, or it is no number.
func entryScore(cmd *redis.StringCmd) (float64, error) {
	s, err := cmd.Result()
	if err == redis.Nil {
		return math.NaN(), nil
	}
	if err != nil {
		return math.NaN(), err
	}
	return model.ParseScore(s), nil
}

// fieldsOf is HGETALL's answer as fields in name order: a map has none,
// and the same hash must read the same each time.
func fieldsOf(m map[string]string) []model.Field {
	fs := make([]model.Field, 0, len(m))
	for name, v := range m {
		fs = append(fs, model.Field{Name: name, Value: v})
	}
	slices.SortFunc(fs, func(a, b model.Field) int { return strings.Compare(a.Name, b.Name) })
	return fs
}

// knownFields is HMGET's answer for names as the fields that exist, in
// the order asked.
func knownFields(names []string, vals []any) []model.Field {
	var fs []model.Field
	for i, v := range vals {
		if s, ok := v.(string); ok && i < len(names) {
			fs = append(fs, model.Field{Name: names[i], Value: s})
		}
	}
	return fs
}
