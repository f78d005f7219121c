package model

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStoreAgreesWithModel drives a Store with random batches, sorts and
// filters, and checks every reader against a plain model: every key that
// passes the filter shown, each once, in order, IndexOf agreeing with Rows,
// and the counts.
//
// It runs with the real block sizes, where a few keys fit in one block and
// a new filter is applied at once; with blocks of two keys placed one by
// one, where every change splits, merges and moves keys between blocks;
// and with a filter applied a few keys a step, so that batches, sorts and
// other filters arrive while one is under way.
func TestStoreAgreesWithModel(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		size, share, step, atOnce int
	}{
		{"default", blockSize, rebuildShare, sweepStep, sortAtOnce},
		{"tiny blocks", 2, 1, sweepStep, sortAtOnce}, // a share of 1: never sort all again for moved keys
		{"filters in steps", 4, 1, 40, sortAtOnce},
		{"sorts in steps", 4, 1, 4, 8},                          // 8 keys numbered, counted or moved a step, while they change
		{"busy batches sorted in steps", 4, rebuildShare, 4, 8}, // most batches move more than 1/32 of the keys
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, seed := range []uint64{1, 40, 7} {
				s := NewStore(testRules())
				s.order.size, s.order.share, s.order.step, s.order.atOnce = tc.size, tc.share, tc.step, tc.atOnce
				checkAgainstModel(t, s, seed)
			}
		})
	}
}

func checkAgainstModel(t *testing.T, s *Store, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 2))
	live := map[string]bool{}
	filters := []string{"", "rl:", "rl:1", "rl:12", "r", "is:problem", "1 is:ok", "is:warn", "K", "k1", "1", "views 1", "1 views", "\\e", "rl: is:ok"}
	now := time.Duration(0)
	for step := range 400 {
		now += time.Duration(rng.IntN(1500)) * time.Millisecond
		if rng.IntN(20) == 0 {
			now += 70 * time.Second // long enough for rates to fade out
			s.QuietUntil(t0.Add(now))
		}
		var b Batch
		updatesOnly := rng.IntN(3) == 0 // new readings of known keys, which move no key in or out
		for range rng.IntN(30) {
			key := fmt.Sprintf("%s%d", []string{"rl:", "views:", "k", "RL:", "k\x1b", "q:"}[rng.IntN(6)], rng.IntN(60))
			if updatesOnly && !live[key] && !slices.ContainsFunc(testFields, func(f string) bool { return live[RowID(key, f)] }) {
				continue
			}
			op := rng.IntN(10)
			if updatesOnly {
				op = 3
			}
			switch op {
			case 0:
				b.Removed = append(b.Removed, key)
			case 1:
				b.Observed = append(b.Observed, Observation{Key: key, PTTL: PTTLMissing, At: t0.Add(now)})
			case 2:
				b.Observed = append(b.Observed, read(key, "text", PTTLNoExpiry, now))
			default:
				pttl := func() int64 {
					if rng.IntN(4) == 0 {
						return PTTLNoExpiry
					}
					return int64(rng.IntN(120_000))
				}
				if !strings.HasPrefix(key, "q:") {
					b.Observed = append(b.Observed, read(key, fmt.Sprint(rng.IntN(130)), pttl(), now))
					continue
				}
				// A hash, its fields' TTLs read: a row a field when one
				// has a TTL, else whole.
				o := Observation{Key: key, Type: "hash", PTTL: PTTLNoExpiry, At: t0.Add(now)}
				for _, f := range testFields {
					if rng.IntN(2) == 0 {
						o.Fields = append(o.Fields, Field{Name: f, Value: fmt.Sprint(rng.IntN(130)), PTTL: pttl()})
						o.FieldTTLs = o.FieldTTLs || o.Fields[len(o.Fields)-1].PTTL >= 0
					}
				}
				o.Len = int64(len(o.Fields))
				b.Observed = append(b.Observed, o)
			}
		}
		s.Apply(b)
		forget := func(key string) {
			delete(live, key)
			for _, f := range testFields {
				delete(live, RowID(key, f))
			}
		}
		for _, k := range b.Removed {
			forget(k)
		}
		for _, o := range b.Observed {
			forget(o.Key)
			for _, r := range Rows(&o) {
				live[RowID(r.Key, r.Field)] = o.PTTL != PTTLMissing && o.Type != ""
			}
		}
		switch rng.IntN(6) {
		case 0:
			s.SetSort(SortKey(rng.IntN(int(numSortKeys))))
		case 3:
			s.SetReverse(rng.IntN(2) == 0)
		case 1:
			s.SetFilter(filters[rng.IntN(len(filters))])
		case 2:
			// The rates of keys not read since fade; the quiet may run
			// ahead of the readings to come, which may be older.
			s.QuietUntil(t0.Add(now + time.Duration(rng.IntN(3000))*time.Millisecond))
		}
		for range rng.IntN(3) { // frames: a filter or a sort a step on, between changes
			s.Visible()
		}
		if rng.IntN(3) > 0 { // sometimes let changes pile up unread
			checkStoreModel(t, step, s, live)
		}
		if !s.Filtering() && s.order.passed.query != s.Filter() {
			t.Fatalf("step %d: not filtering, but showing %q for %q", step, s.order.passed.query, s.Filter())
		}
	}
}

// testFields are the fields of the hashes checkAgainstModel reads.
var testFields = []string{"a", "b", "B", "c1"}

func checkStoreModel(t *testing.T, step int, s *Store, live map[string]bool) {
	t.Helper()
	// A sort being worked out is seen through first. The rows are the
	// filter shown's, which the first read may change by a step; the reads
	// after it are checked with the filter held.
	checkOverview(t, step, s)
	// Two sorts at most: the one under way, and the one that its end
	// begins when the batches meanwhile moved more than 1/share of the keys.
	for reads := 0; s.Sorting(); reads++ {
		if reads > 4*s.Len()+40 {
			t.Fatalf("step %d: still sorting after %d reads", step, reads)
		}
		s.Visible()
	}
	s.Visible()
	defer func(step int) { s.order.step = step }(s.order.step)
	s.order.step = 0
	f := parseFilter(s.order.passed.query)
	var want []Counter
	var total int
	var byStatus [NumStatuses]int
	for key, ok := range live {
		if !ok {
			continue
		}
		c := mustGet(t, s, key)
		if c.ID() != key {
			t.Fatalf("step %d: Get(%q) is the row %q", step, key, c.ID())
		}
		total++
		byStatus[c.Status]++
		if f.statuses&(1<<c.Status) == 0 {
			continue
		}
		name := strings.ToLower(c.Name())
		if !slices.ContainsFunc(f.names, func(term string) bool { return !strings.Contains(name, term) }) {
			want = append(want, c)
		}
	}
	slices.SortFunc(want, func(a, b Counter) int { return modelCompare(s, a, b) })
	rows := s.Rows(0, s.Len()+1)
	if !slices.Equal(keys(rows), keys(want)) {
		t.Fatalf("step %d, sort %v, filter %q:\n rows %v\n want %v", step, s.Sort(), s.Filter(), keys(rows), keys(want))
	}
	for i, c := range rows {
		if got := s.IndexOf(c.ID()); got != i {
			t.Fatalf("step %d: IndexOf(%q) = %d, want %d", step, c.ID(), got, i)
		}
	}
	for _, offset := range []int{1, len(want) / 2, max(len(want)-1, 0)} {
		page := want[min(offset, len(want)):min(offset+3, len(want))]
		if got := s.Rows(offset, 3); !slices.Equal(keys(got), keys(page)) {
			t.Fatalf("step %d: Rows(%d, 3) = %v, want %v", step, offset, keys(got), keys(page))
		}
	}
	for key, ok := range live {
		if ok && !slices.ContainsFunc(want, func(c Counter) bool { return c.ID() == key }) && s.IndexOf(key) != -1 {
			t.Fatalf("step %d: IndexOf(%q) = %d for a filtered-out key", step, key, s.IndexOf(key))
		}
	}
	counts := s.Counts()
	if counts.Total != total || counts.Visible != len(want) || counts.ByStatus != byStatus || s.Len() != total {
		t.Fatalf("step %d: Counts %+v, want total %d visible %d by status %v", step, counts, total, len(want), byStatus)
	}
}
