package model

import (
	"strconv"
	"testing"
	"time"
)

// overviewByScan is Overview worked out from every entry, as the Store's
// counts must always say.
func overviewByScan(s *Store) Overview {
	o := Overview{Total: len(s.entries)}
	for i := range s.entries {
		e := &s.entries[i]
		o.ByStatus[e.status]++
		if b := s.percentBucket(e); b == noPercent {
			o.NoPercent++
		} else {
			o.ByPercent[b]++
		}
	}
	return o
}

// checkOverview fails when the Store's counts disagree with its entries.
func checkOverview(t *testing.T, step int, s *Store) {
	t.Helper()
	if got, want := s.Overview(), overviewByScan(s); got != want {
		t.Fatalf("step %d: Overview() = %+v, its entries say %+v", step, got, want)
	}
}

// percents is a ByPercent from bucket: count pairs.
func percentsOf(pairs ...int) [NumPercentBuckets]int {
	var b [NumPercentBuckets]int
	for i := 0; i < len(pairs); i += 2 {
		b[pairs[i]] = pairs[i+1]
	}
	return b
}

// The overview follows each key as it is read again, changes status or
// type, and goes: a frame reads the counts, never the keys.
func TestStoreOverview(t *testing.T) {
	rules := &Rules{
		List: []Rule{
			{Pattern: "rl:*", Limit: 100, Window: time.Minute, ExpectTTL: true},
			{Pattern: "bucket:*", Limit: 10, Window: time.Minute, ExpectTTL: true, Layout: LayoutBucket},
			{Pattern: "views:*", ExpectTTL: false}, // no limit: no share of one
		},
		Fallback: Rule{Limit: 10, ExpectTTL: true},
	}
	type want struct {
		byStatus  map[Status]int
		byPercent [NumPercentBuckets]int
		none      int
	}
	for _, tc := range []struct {
		name    string
		batches []Batch
		filter  string
		want    want
	}{
		{
			name:    "empty",
			batches: nil,
			want:    want{},
		},
		{
			name: "each tenth of the limit, its edges in the bucket they start",
			batches: []Batch{{Observed: []Observation{
				read("rl:a", "0", 5000, 0), read("rl:b", "9", 5000, 0), read("rl:c", "10", 5000, 0),
				read("rl:d", "79", 5000, 0), read("rl:e", "80", 5000, 0), read("rl:f", "99", 5000, 0),
				read("rl:g", "99.99", 5000, 0), read("rl:h", "100", 5000, 0), read("rl:i", "250", 5000, 0),
				read("rl:neg", "-3", 5000, 0), // a DECR past 0: below the first tenth, counted in it
			}}},
			want: want{
				byStatus:  map[Status]int{StatusOK: 5, StatusWarn: 3, StatusOver: 2},
				byPercent: percentsOf(0, 3, 1, 1, 7, 1, 8, 1, 9, 2, 10, 2),
			},
		},
		{
			name: "a new value moves its key to another bucket",
			batches: []Batch{
				{Observed: []Observation{read("rl:a", "5", 5000, 0), read("rl:b", "5", 5000, 0)}},
				{Observed: []Observation{read("rl:a", "55", 4000, time.Second)}},
				{Observed: []Observation{read("rl:a", "85", 3000, 2*time.Second)}},
			},
			want: want{byStatus: map[Status]int{StatusOK: 1, StatusWarn: 1}, byPercent: percentsOf(0, 1, 8, 1)},
		},
		{
			name: "an older reading changes nothing",
			batches: []Batch{
				{Observed: []Observation{read("rl:a", "55", 5000, time.Second)}},
				{Observed: []Observation{read("rl:a", "95", 5000, 0)}},
			},
			want: want{byStatus: map[Status]int{StatusOK: 1}, byPercent: percentsOf(5, 1)},
		},
		{
			name: "a lost TTL changes the status, not the bucket",
			batches: []Batch{
				{Observed: []Observation{read("rl:a", "100", 5000, 0), read("rl:b", "30", 5000, 0)}},
				{Observed: []Observation{read("rl:a", "100", PTTLNoExpiry, time.Second), read("rl:b", "30", PTTLNoExpiry, time.Second)}},
			},
			want: want{byStatus: map[Status]int{StatusStuck: 1, StatusNoExpiry: 1}, byPercent: percentsOf(3, 1, 10, 1)},
		},
		{
			name: "a key that stops being a number leaves the histogram, and comes back",
			batches: []Batch{
				{Observed: []Observation{read("rl:a", "42", 5000, 0), read("rl:b", "42", 5000, 0)}},
				{Observed: []Observation{read("rl:a", "text", 5000, time.Second), {Key: "rl:b", Type: "hash", PTTL: 5000, At: t0.Add(time.Second)}}},
				{Observed: []Observation{read("rl:a", "61", 5000, 2*time.Second)}},
			},
			want: want{byStatus: map[Status]int{StatusOK: 1, StatusNotCounter: 1}, byPercent: percentsOf(6, 1), none: 1},
		},
		{
			name: "removed keys leave every count, however they go",
			batches: []Batch{
				{Observed: []Observation{read("rl:a", "95", 5000, 0), read("rl:b", "100", PTTLNoExpiry, 0), read("rl:c", "12", 5000, 0), read("views:x", "7", PTTLNoExpiry, 0)}},
				{Removed: []string{"rl:a", "rl:nothing"}},
				{Observed: []Observation{{Key: "rl:b", PTTL: PTTLMissing, At: t0.Add(time.Second)}, {Key: "views:x", Type: "none", At: t0.Add(time.Second)}}},
			},
			want: want{byStatus: map[Status]int{StatusOK: 1}, byPercent: percentsOf(1, 1)},
		},
		{
			name: "a bucket counts the share of its tokens used",
			batches: []Batch{{Observed: []Observation{
				read("bucket:full", "10", 5000, 0), read("bucket:half", "5", 5000, 0), read("bucket:empty", "0", 5000, 0),
			}}},
			want: want{byStatus: map[Status]int{StatusOK: 2, StatusOver: 1}, byPercent: percentsOf(0, 1, 5, 1, 10, 1)},
		},
		{
			name: "keys without a limit are counted apart; the fallback's limit counts",
			batches: []Batch{{Observed: []Observation{
				read("views:home", "123456", PTTLNoExpiry, 0), read("other", "9", 5000, 0),
			}}},
			want: want{byStatus: map[Status]int{StatusOK: 1, StatusWarn: 1}, byPercent: percentsOf(9, 1), none: 1},
		},
		{
			name: "the filter hides rows, not counts",
			batches: []Batch{{Observed: []Observation{
				read("rl:a", "95", 5000, 0), read("rl:b", "5", 5000, 0), read("views:home", "1", PTTLNoExpiry, 0),
			}}},
			filter: "is:warn",
			want:   want{byStatus: map[Status]int{StatusOK: 2, StatusWarn: 1}, byPercent: percentsOf(0, 1, 9, 1), none: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(rules)
			s.SetFilter(tc.filter)
			for i, b := range tc.batches {
				s.Apply(b)
				checkOverview(t, i, s)
			}
			o := s.Overview()
			var byStatus [NumStatuses]int
			total := 0
			for st, n := range tc.want.byStatus {
				byStatus[st] = n
				total += n
			}
			if o.Total != total || o.ByStatus != byStatus || o.ByPercent != tc.want.byPercent || o.NoPercent != tc.want.none {
				t.Errorf("Overview() = %+v\nwant total %d, statuses %v, percents %v, none %d", o, total, byStatus, tc.want.byPercent, tc.want.none)
			}
			if o.Limited() != total-tc.want.none {
				t.Errorf("Limited() = %d, want %d", o.Limited(), total-tc.want.none)
			}
		})
	}
}

// An extending counter is counted as such, and in its bucket.
func TestStoreOverviewExtending(t *testing.T) {
	s := NewStore(testRules())
	// INCR then EXPIRE 10 without NX: each reading finds the deadline
	// moved on by the two seconds since the last, for longer than the
	// rule's minute.
	for i := range 36 {
		v := strconv.FormatFloat(90+0.25*float64(i), 'f', -1, 64)
		s.Apply(Batch{Observed: []Observation{read("rl:pushed", v, 10_000, time.Duration(i)*2*time.Second)}})
	}
	if c := mustGet(t, s, "rl:pushed"); c.Status != StatusExtending {
		t.Fatalf("status %v, want extending", c.Status)
	}
	o := s.Overview()
	if o.ByStatus[StatusExtending] != 1 || o.ByPercent[9] != 1 || o.Total != 1 {
		t.Errorf("Overview() = %+v, want one extending key in the 90-100%% bucket", o)
	}
	checkOverview(t, 0, s)
}

// BenchmarkStoreOverview is what a frame of the overview panel asks of a
// Store of a million keys.
func BenchmarkStoreOverview(b *testing.B) {
	const n = 1_000_000
	s := fillStore(n)
	b.ReportAllocs()
	b.ResetTimer()
	var o Overview
	for b.Loop() {
		o = s.Overview()
	}
	if o.Total != n {
		b.Fatalf("Total = %d", o.Total)
	}
}

// BenchmarkPercentBucket is what the overview adds to each reading Apply
// takes: the key's bucket before and after it, so twice this a reading.
func BenchmarkPercentBucket(b *testing.B) {
	const n = 100_000
	s := fillStore(n)
	b.ResetTimer()
	sum := 0
	for b.Loop() {
		for i := range s.entries {
			sum += s.percentBucket(&s.entries[i])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/key")
	if sum == 0 {
		b.Fatal("every key in the first bucket")
	}
}
