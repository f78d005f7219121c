package redisclient

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
)

// A hash whose fields carry TTLs of their own (Redis 7.4 and later,
// Valkey 9) is read field by field (model.Rows). Its fields are read as
// any hash's are (HGETALL of a small one), or, for a hash too large for
// that, listed a page at a time with HSCAN up to the most a key shows
// (Options.MaxFields); their TTLs are read with HPTTL, in batches. Every
// command is bounded whatever the hash's size, and each goes through the
// budget as every read does: a hash of a million fields costs what its
// shown fields cost, and its HLEN says how many more there are
// (Observation.NotShown). Only check counts those without a TTL
// (CountNotShown), a page at a time too.

// maxListPage is the most fields one HSCAN of a listing asks for (its
// COUNT), and hpttlBatch the most fields one HPTTL asks the TTLs of, so
// that Redis runs each in well under a millisecond, where a page four
// times larger held it up longer than that (BenchmarkHScanPages; the
// figures are in BENCHMARKS.md).
const (
	maxListPage = 250
	hpttlBatch  = 250
)

// maxCountedFields is the most fields check lists, beyond those shown, to
// count those without a TTL: a hash larger than that is said to be too
// large to count (Observation.NotShownNoTTL -1), rather than hold check
// up for minutes.
const maxCountedFields = 1_000_000

// fieldsShown is the most fields of one hash read field by field that a
// reading lists.
func (c *Client) fieldsShown() int { return cmp.Or(c.maxFields, model.DefaultMaxFields) }

// listPage is the COUNT of a listing's HSCAN: a page that holds what a key
// shows, or maxListPage.
func (c *Client) listPage() int64 { return int64(min(max(c.fieldsShown(), 10), maxListPage)) }

// fieldRead is one hash whose field TTLs fieldTTLs reads.
type fieldRead struct {
	i      int           // its index in the observations
	fields []model.Field // the fields whose TTLs are asked: all the hash's, the known ones, or those listed so far
	list   bool          // fields is a listing (HSCAN) of a hash too large to read whole
	cursor uint64        // the listing's next cursor; 0 once it is over
	pages  int           // HSCAN pages read
	ttls   []int64       // HPTTL's answers, in fields' order
	done   bool          // ttls are read, or the hash changed since it was read
}

// fieldTTLs reads the TTLs of the fields read of the hashes among obs[i],
// i in idx (all of a small hash's, the known names of a large one, and
// for the large ones listed what their listing finds, up to what a key
// shows), and reads a hash field by field (Observation.FieldTTLs) when
// one of them has a TTL, or its rule says its fields do
// (model.Rule.FieldTTLs). A server that does not know HPTTL has no field
// TTLs: the first refusal says so, and it is not asked again.
//
// The reads go in rounds, one pipeline each: the small hashes' HPTTL with
// the large ones' next HSCAN pages, then those pages' HPTTL. A hash of up
// to what a key shows costs one round, whatever its size.
func (c *Client) fieldTTLs(ctx context.Context, obs []model.Observation, idx []int, listed []fieldRead, where string) error {
	if c.noFieldTTL.Load() {
		return nil
	}
	var reads []fieldRead
	for _, i := range idx {
		if obs[i].Type == "hash" && len(obs[i].Fields) > 0 && !slices.ContainsFunc(listed, func(r fieldRead) bool { return r.i == i }) {
			reads = append(reads, fieldRead{i: i, fields: obs[i].Fields})
		}
	}
	reads = append(reads, listed...)
	if len(reads) == 0 {
		return nil
	}
	shown := c.fieldsShown()
	maxPages := shown/int(c.listPage()) + 4 // a sparse hash's pages may hold fewer than COUNT
	for {
		type sent struct {
			r    *fieldRead
			scan *redis.ScanCmd       // the listing's next page
			ttls []*redis.IntSliceCmd // or, once listed, its fields' TTLs
		}
		var round []sent
		for k := range reads {
			if !reads[k].done {
				round = append(round, sent{r: &reads[k]})
			}
		}
		if len(round) == 0 {
			break
		}
		err := c.rerouted(ctx, func() error {
			pipe := c.rdb.Pipeline()
			for k := range round {
				s := &round[k]
				key := obs[s.r.i].Key
				if s.r.list && s.r.cursor != 0 && len(s.r.fields) < shown && s.r.pages < maxPages {
					s.scan = pipe.HScan(ctx, key, s.r.cursor, "", c.listPage())
				} else {
					s.ttls = hpttl(ctx, pipe, key, s.r.fields)
				}
			}
			return execPipe(ctx, pipe)
		})
		if err != nil {
			return c.explainAt(err, where)
		}
		for _, s := range round {
			o := &obs[s.r.i]
			if s.scan != nil {
				names, cursor, err := s.scan.Result()
				if changed, err := answered(err); err != nil {
					return c.readError(o.Key, err, where)
				} else if changed {
					s.r.done = true
					continue
				}
				s.r.fields = append(s.r.fields, pairs(names)...)
				s.r.cursor, s.r.pages = cursor, s.r.pages+1
				continue
			}
			s.r.done = true
			ttls, err := joined(s.ttls)
			// A server that does not know HPTTL has no field TTLs; a user
			// who may not run it (an ACL from before Redis 7.4) reads
			// hashes whole, as on such a server, and repairs refuse a hash
			// a key's TTL (see expireScript): it is not asked again.
			if noFieldTTLs(err) {
				c.noFieldTTL.Store(true)
				return nil
			}
			if changed, err := answered(err); err != nil {
				return c.readError(o.Key, err, where)
			} else if !changed && len(ttls) == len(s.r.fields) {
				s.r.ttls = ttls
			}
		}
	}
	for k := range reads {
		r := &reads[k]
		if r.ttls == nil {
			continue
		}
		o := &obs[r.i]
		rule := c.ruleFor(o.Key)
		on := rule.FieldTTLs
		for j, ttl := range r.ttls {
			r.fields[j].PTTL = ttl
			on = on || ttl >= 0
		}
		if !on {
			continue // read as before field TTLs: a large hash by its known names
		}
		if rule.Field != "" {
			// The rule names the field that counts: its row alone, if the
			// hash has that field (else it reads as it did, without it).
			if j := slices.IndexFunc(r.fields, func(f model.Field) bool { return f.Name == rule.Field }); j >= 0 {
				o.Fields, o.FieldTTLs = []model.Field{r.fields[j]}, true
			}
			continue
		}
		o.FieldTTLs = true
		o.Fields = r.fields[:min(len(r.fields), shown)]
		if r.list {
			// Listed in HSCAN's order: shown in the names', as a small
			// hash's are, so that its rows keep their order.
			slices.SortFunc(o.Fields, func(a, b model.Field) int { return strings.Compare(a.Name, b.Name) })
		}
		if o.NotShown = max(0, o.Len-int64(len(o.Fields))); o.NotShown > 0 {
			o.NotShownNoTTL = -1 // counted by check alone (CountNotShown)
		}
	}
	return nil
}

// CountNotShown counts, for check, the fields of o, a hash read field by
// field with fields not shown (o.NotShown), that hold a number without a
// TTL, into o.NotShownNoTTL: it lists the hash a page at a time (HSCAN
// COUNT maxListPage) with each page's HPTTL in the same pipeline, so that no
// command holds Redis up whatever the hash's size, each pipeline paid from
// the budget of the key's server before its deadline starts (see
// prepaid), as a walk's SCAN is, and leaves the count -1 past maxCountedFields fields,
// or when the key is no longer a hash. The fields shown are not counted
// again; a field a listing gives twice (Redis may, while it rehashes) is
// counted once.
func (c *Client) CountNotShown(ctx context.Context, o *model.Observation) error {
	o.NotShownNoTTL = -1
	if o.NotShown <= 0 {
		o.NotShownNoTTL = 0
		return nil
	}
	shown := make(map[string]bool, len(o.Fields))
	for _, f := range o.Fields {
		shown[f.Name] = true
	}
	where := c.hostPort // the server that holds the key: in a cluster, its master
	if m := c.byMaster(ctx, []string{o.Key}); len(m) == 1 {
		where = m[0].addr
	}
	lost := map[string]bool{}
	cursor, listed, first := uint64(0), 0, true
	var page []model.Field // the page whose TTLs go with the next HSCAN
	for first || cursor != 0 || len(page) > 0 {
		if listed > maxCountedFields+len(shown) {
			return nil // too large to count: the count stays unknown
		}
		var scan *redis.ScanCmd
		var ttls []*redis.IntSliceCmd
		n := (len(page) + hpttlBatch - 1) / hpttlBatch // the HPTTLs, and the HSCAN
		if first || cursor != 0 {
			n++
		}
		err := c.rerouted(ctx, func() error {
			ctx, err := c.prepaid(ctx, where, n)
			if err != nil {
				return err
			}
			ctx, cancel := c.withPipelineTimeout(ctx)
			defer cancel()
			pipe := c.rdb.Pipeline()
			if len(page) > 0 {
				ttls = hpttl(ctx, pipe, o.Key, page)
			}
			if first || cursor != 0 {
				scan = pipe.HScan(ctx, o.Key, cursor, "", maxListPage)
			}
			return execPipe(ctx, pipe)
		})
		if err != nil {
			return c.explainAt(err, where)
		}
		if len(page) > 0 {
			got, err := joined(ttls)
			if changed, err := answered(err); err != nil {
				return c.readError(o.Key, err, where)
			} else if changed || len(got) != len(page) {
				return nil // no longer a hash: the count is unknown
			}
			for j, ttl := range got {
				if ttl == model.PTTLNoExpiry && model.ParseValue(page[j].Value).Kind != model.KindNone {
					lost[page[j].Name] = true
				}
			}
			page = nil
		}
		if scan != nil {
			names, next, err := scan.Result()
			if changed, err := answered(err); err != nil {
				return c.readError(o.Key, err, where)
			} else if changed {
				return nil
			}
			page = slices.DeleteFunc(pairs(names), func(f model.Field) bool { return shown[f.Name] })
			cursor, listed, first = next, listed+len(names)/2, false
		}
	}
	o.NotShownNoTTL = int64(len(lost))
	return nil
}

// hpttl queues the HPTTL of fields of key on pipe, hpttlBatch fields a
// command; given a client rather than a pipeline, it sends them.
func hpttl(ctx context.Context, pipe processor, key string, fields []model.Field) []*redis.IntSliceCmd {
	var cmds []*redis.IntSliceCmd
	for batch := range slices.Chunk(fields, hpttlBatch) {
		args := make([]any, 0, 4+len(batch))
		args = append(args, "hpttl", key, "FIELDS", len(batch))
		for _, f := range batch {
			args = append(args, f.Name)
		}
		cmd := redis.NewIntSliceCmd(ctx, args...)
		_ = pipe.Process(ctx, cmd)
		cmds = append(cmds, cmd)
	}
	return cmds
}

// joined is the answers of hpttl's commands, one after the other, or the
// first error.
func joined(cmds []*redis.IntSliceCmd) ([]int64, error) {
	var all []int64
	for _, cmd := range cmds {
		ttls, err := cmd.Result()
		if err != nil {
			return nil, err
		}
		all = append(all, ttls...)
	}
	return all, nil
}

// noFieldTTLs reports whether err says the server has no field TTLs to
// read: it does not know HPTTL, or this user may not run it.
func noFieldTTLs(err error) bool {
	if err == nil {
		return false
	}
	msg := strings.ToLower(err.Error())
	return strings.HasPrefix(msg, "err unknown command") || strings.HasPrefix(msg, "noperm")
}

// pairs is HSCAN's answer, field then value, as fields.
func pairs(names []string) []model.Field {
	fields := make([]model.Field, 0, len(names)/2)
	for j := 0; j+1 < len(names); j += 2 {
		fields = append(fields, model.Field{Name: names[j], Value: names[j+1]})
	}
	return fields
}
