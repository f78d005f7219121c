package model

import (
	"cmp"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func testRules() *Rules {
	return &Rules{
		List: []Rule{
			{Pattern: "rl:*", Limit: 100, Window: time.Minute, ExpectTTL: true},
			{Pattern: "views:*", ExpectTTL: false},
		},
		Fallback: Rule{Limit: 10, ExpectTTL: true},
	}
}

// read is an observation of a string key at t0+at.
func read(key, raw string, pttl int64, at time.Duration) Observation {
	return Observation{Key: key, Type: "string", Raw: raw, PTTL: pttl, At: t0.Add(at)}
}

func keys(rows []Counter) []string {
	out := make([]string, len(rows))
	for i, c := range rows {
		out[i] = c.Key
	}
	return out
}

func mustGet(t *testing.T, s *Store, key string) Counter {
	t.Helper()
	c, ok := s.Get(key)
	if !ok {
		t.Fatalf("Get(%q): missing", key)
	}
	return c
}

func TestStoreApplyClassifies(t *testing.T) {
	s := NewStore(testRules())
	n := s.Apply(Batch{Observed: []Observation{
		read("rl:ok", "12", 30_000, 0),
		read("rl:stuck", "100", PTTLNoExpiry, 0),
		read("rl:float", "99.5", 1_000, 0),
		read("views:home", "123456", PTTLNoExpiry, 0),
		read("other", "hello", 5_000, 0),
		{Key: "rl:hash", Type: "hash", PTTL: 5_000, At: t0},
	}})
	if n != 6 || s.Len() != 6 {
		t.Fatalf("Apply = %d, Len = %d; want 6, 6", n, s.Len())
	}

	c := mustGet(t, s, "rl:ok")
	if c.Raw != "12" || c.Value.Kind != KindInt || c.Value.Int != 12 || c.Type != "string" ||
		c.PTTL != 30_000 || !c.ObservedAt.Equal(t0) || c.Rule != 0 || c.Status != StatusOK || c.Rate != 0 {
		t.Errorf("rl:ok = %+v", c)
	}
	if rule, listed := s.RuleOf(c); !listed || rule.Pattern != "rl:*" {
		t.Errorf("RuleOf(rl:ok) = %+v, %v", rule, listed)
	}
	for key, want := range map[string]Status{
		"rl:stuck":   StatusStuck,
		"rl:float":   StatusWarn,
		"views:home": StatusOK, // views expect no TTL and have no limit
		"other":      StatusNotCounter,
		"rl:hash":    StatusNotCounter,
	} {
		if got := mustGet(t, s, key).Status; got != want {
			t.Errorf("%s: status %v, want %v", key, got, want)
		}
	}
	if c := mustGet(t, s, "other"); c.Rule != -1 || c.Raw != "hello" {
		t.Errorf("other = %+v", c)
	}
	if c := mustGet(t, s, "rl:float"); c.Value.Float != 99.5 || c.Raw != "99.5" {
		t.Errorf("rl:float = %+v", c)
	}
	if _, ok := s.Get("nope"); ok {
		t.Error("Get(nope) found a key")
	}
}

func TestStoreRemoves(t *testing.T) {
	s := NewStore(testRules())
	var batch Batch
	for i := range 10 {
		batch.Observed = append(batch.Observed, read(fmt.Sprintf("rl:%d", i), fmt.Sprint(i), 60_000, 0))
	}
	s.Apply(batch)

	n := s.Apply(Batch{
		Removed: []string{"rl:0", "rl:5", "never-seen"},
		Observed: []Observation{
			{Key: "rl:9", PTTL: PTTLMissing, At: t0.Add(time.Second)},               // read after it expired
			{Key: "rl:3", Type: "none", PTTL: PTTLMissing, At: t0.Add(time.Second)}, // TYPE said none
			{Key: "rl:4", Type: "none", At: t0.Add(time.Second)},
		},
	})
	if n != 5 {
		t.Errorf("Apply = %d, want 5 (unknown keys do not count)", n)
	}
	want := []string{"rl:1", "rl:2", "rl:6", "rl:7", "rl:8"}
	if got := keys(s.Rows(0, 100)); !slices.Equal(got, want) {
		t.Errorf("rows = %v, want %v", got, want)
	}
	for _, key := range want { // every survivor still holds its own value
		if c := mustGet(t, s, key); c.Raw != strings.TrimPrefix(key, "rl:") {
			t.Errorf("%s holds %q", key, c.Raw)
		}
	}
	if c := s.Counts(); c.Total != 5 || c.ByStatus[StatusOK] != 5 {
		t.Errorf("Counts = %+v", c)
	}
}

// A key read and removed in one batch was read after it came back.
func TestStoreRemovalBeforeReading(t *testing.T) {
	s := NewStore(testRules())
	s.Apply(Batch{Observed: []Observation{read("rl:a", "5", 1000, 0)}})
	s.Apply(Batch{Removed: []string{"rl:a"}, Observed: []Observation{read("rl:a", "1", PTTLNoExpiry, time.Second)}})
	if c := mustGet(t, s, "rl:a"); c.Raw != "1" || c.Status != StatusNoExpiry {
		t.Errorf("rl:a = %+v", c)
	}
}

func TestStoreApplyCountsChanges(t *testing.T) {
	s := NewStore(testRules())
	s.Apply(Batch{Observed: []Observation{read("rl:a", "5", 60_000, 0)}})
	steps := []struct {
		name string
		o    Observation
		want int
	}{
		{"the same reading, its TTL counting down", read("rl:a", "5", 59_000, time.Second), 0},
		{"network jitter in the TTL", read("rl:a", "5", 58_300, 2*time.Second), 0},
		{"a new value", read("rl:a", "6", 57_000, 3*time.Second), 1},
		{"the TTL set again", read("rl:a", "6", 60_000, 4*time.Second), 1},
		{"the TTL lost", read("rl:a", "6", PTTLNoExpiry, 5*time.Second), 1},
		{"an older reading, arriving late", read("rl:a", "1", 60_000, 4500*time.Millisecond), 0},
		{"another type", Observation{Key: "rl:a", Type: "list", PTTL: PTTLNoExpiry, At: t0.Add(6 * time.Second)}, 1},
	}
	for _, st := range steps {
		if got := s.Apply(Batch{Observed: []Observation{st.o}}); got != st.want {
			t.Errorf("%s: Apply = %d, want %d", st.name, got, st.want)
		}
	}
	if c := mustGet(t, s, "rl:a"); c.Type != "list" || c.Status != StatusNotCounter || c.Raw != "" {
		t.Errorf("after all steps: %+v", c)
	}
}

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
			key := fmt.Sprintf("%s%d", []string{"rl:", "views:", "k", "RL:", "k\x1b"}[rng.IntN(5)], rng.IntN(60))
			if updatesOnly && !live[key] {
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
				pttl := int64(rng.IntN(120_000))
				if rng.IntN(4) == 0 {
					pttl = PTTLNoExpiry
				}
				b.Observed = append(b.Observed, read(key, fmt.Sprint(rng.IntN(130)), pttl, now))
			}
		}
		s.Apply(b)
		for _, k := range b.Removed {
			delete(live, k)
		}
		for _, o := range b.Observed {
			live[o.Key] = o.PTTL != PTTLMissing
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
		total++
		byStatus[c.Status]++
		if f.statuses&(1<<c.Status) == 0 {
			continue
		}
		name := strings.ToLower(Printable(key))
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
		if got := s.IndexOf(c.Key); got != i {
			t.Fatalf("step %d: IndexOf(%q) = %d, want %d", step, c.Key, got, i)
		}
	}
	for _, offset := range []int{1, len(want) / 2, max(len(want)-1, 0)} {
		page := want[min(offset, len(want)):min(offset+3, len(want))]
		if got := s.Rows(offset, 3); !slices.Equal(keys(got), keys(page)) {
			t.Fatalf("step %d: Rows(%d, 3) = %v, want %v", step, offset, keys(got), keys(page))
		}
	}
	for key, ok := range live {
		if ok && !slices.ContainsFunc(want, func(c Counter) bool { return c.Key == key }) && s.IndexOf(key) != -1 {
			t.Fatalf("step %d: IndexOf(%q) = %d for a filtered-out key", step, key, s.IndexOf(key))
		}
	}
	counts := s.Counts()
	if counts.Total != total || counts.Visible != len(want) || counts.ByStatus != byStatus || s.Len() != total {
		t.Fatalf("step %d: Counts %+v, want total %d visible %d by status %v", step, counts, total, len(want), byStatus)
	}
}

// modelCompare is the order SortKey's docs describe, written out plainly.
func modelCompare(s *Store, a, b Counter) int {
	desc := func(x float64, xok bool, y float64, yok bool) int {
		switch {
		case xok && !yok:
			return -1
		case !xok && yok:
			return 1
		}
		return cmp.Compare(y, x)
	}
	var c int
	switch s.Sort() {
	case SortValue:
		x, xok := a.Value.Number()
		y, yok := b.Value.Number()
		c = desc(x, xok, y, yok)
		if a.Value.Kind == KindInt && b.Value.Kind == KindInt {
			c = cmp.Compare(b.Value.Int, a.Value.Int)
		}
	case SortTTL:
		switch {
		case !a.HasTTL() && b.HasTTL():
			c = -1
		case a.HasTTL() && !b.HasTTL():
			c = 1
		case a.HasTTL():
			c = a.Deadline().Compare(b.Deadline())
		}
	case SortPercent:
		ra, _ := s.RuleOf(a)
		rb, _ := s.RuleOf(b)
		x, xok := a.Percent(ra.Limit)
		y, yok := b.Percent(rb.Limit)
		c = desc(x, xok, y, yok)
	case SortRate:
		c = cmp.Compare(b.Rate, a.Rate)
	case SortStatus:
		c = cmp.Compare(a.Status, b.Status)
	}
	if c == 0 {
		c = modelCompareKeys(a.Key, b.Key)
	}
	if s.Reverse() {
		return -c
	}
	return c
}

// modelCompareKeys is CompareKeys written out plainly: the names cut into
// runs of digits and single other bytes, runs compared as numbers.
func modelCompareKeys(a, b string) int {
	parts := func(s string) []string {
		var out []string
		for i := 0; i < len(s); {
			j := i + 1
			for '0' <= s[i] && s[i] <= '9' && j < len(s) && '0' <= s[j] && s[j] <= '9' {
				j++
			}
			out = append(out, s[i:j])
			i = j
		}
		return out
	}
	x, y := parts(a), parts(b)
	for i := 0; i < len(x) && i < len(y); i++ {
		xn, xok := new(big.Int).SetString(x[i], 10)
		yn, yok := new(big.Int).SetString(y[i], 10)
		if xok && yok {
			if c := xn.Cmp(yn); c != 0 {
				return c
			}
		} else if c := strings.Compare(x[i], y[i]); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(len(x), len(y)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func TestCounterDeadlineSaturates(t *testing.T) {
	// EXPIRE accepts seconds far past what a time.Duration holds.
	c := Counter{PTTL: 9_000_000_000_000_000, ObservedAt: t0}
	if c.Expired(t0.Add(24 * time.Hour)) {
		t.Error("a key with a TTL of millennia has expired after a day")
	}
	if left, ok := c.TTLAt(t0); !ok || left < 290*365*24*time.Hour {
		t.Errorf("TTLAt = %v, %v", left, ok)
	}
}

// EachProblem gives what E repairs: the stuck and no-expiry counters the
// filter shows, each with its rule, and nothing else.
func TestEachProblem(t *testing.T) {
	rules := &Rules{
		List:     []Rule{{Pattern: "rl:*", Limit: 10, Window: time.Minute, ExpectTTL: true}, {Pattern: "views:*"}},
		Fallback: Rule{ExpectTTL: true},
	}
	s := NewStore(rules)
	s.Apply(Batch{Observed: []Observation{
		{Key: "rl:stuck", Type: "string", Raw: "12", PTTL: PTTLNoExpiry, At: t0},
		{Key: "rl:lost", Type: "string", Raw: "3", PTTL: PTTLNoExpiry, At: t0},
		{Key: "rl:ok", Type: "string", Raw: "3", PTTL: 5000, At: t0},
		{Key: "views:home", Type: "string", Raw: "300", PTTL: PTTLNoExpiry, At: t0},
		{Key: "other:lost", Type: "string", Raw: "1", PTTL: PTTLNoExpiry, At: t0},
		{Key: "rl:hash", Type: "hash", PTTL: PTTLNoExpiry, At: t0},
	}})
	collect := func() []string {
		var got []string
		s.EachProblem(func(key string, rule Rule) {
			got = append(got, key+"="+rule.Pattern)
		})
		slices.Sort(got)
		return got
	}
	if got, want := collect(), []string{"other:lost=", "rl:lost=rl:*", "rl:stuck=rl:*"}; !slices.Equal(got, want) {
		t.Errorf("EachProblem = %q, want %q", got, want)
	}
	s.SetFilter("rl: is:stuck")
	if got, want := collect(), []string{"rl:stuck=rl:*"}; !slices.Equal(got, want) {
		t.Errorf("with a filter, EachProblem = %q, want %q", got, want)
	}
}

// A new sort of more keys than sortAtOnce is worked out over several
// reads: until it is done the rows stay in the sort before it, whole, and
// the keys removed, changed or added meanwhile end where the new sort puts
// them.
// A batch that moves more than 1/32 of a large Store's keys is sorted a
// step per read too: no read sorts them all at once, the rows keep their
// last order until the new one shows, and then it is the whole order,
// the keys that arrived meanwhile included.
func TestStoreSortsABusyBatchInSteps(t *testing.T) {
	s := NewStore(testRules())
	s.order.atOnce, s.order.step = 100, 50
	var b Batch
	for i := range 1000 {
		b.Observed = append(b.Observed, read(fmt.Sprintf("rl:%d", i), strconv.Itoa(i), 60_000, 0))
	}
	s.Apply(b)
	s.SetSort(SortValue)
	for reads := 0; s.Sorting(); reads++ {
		if s.Visible(); reads > 200 {
			t.Fatal("the first sort by value did not end")
		}
	}
	before := keys(s.Rows(0, 20)) // rl:999 down to rl:980

	// 100 keys (1 in 10) go to the top, and 5 arrive there.
	b = Batch{}
	for i := 0; i < 1000; i += 10 {
		b.Observed = append(b.Observed, read(fmt.Sprintf("rl:%d", i), strconv.Itoa(5000+i), 60_000, time.Second))
	}
	for i := range 5 {
		b.Observed = append(b.Observed, read(fmt.Sprintf("rl:new:%d", i), strconv.Itoa(9000+i), 60_000, time.Second))
	}
	s.Apply(b)
	reads := 0
	for ; ; reads++ {
		got, shown := keys(s.Rows(0, 20)), s.order.shown // as this read left them
		if !s.Sorting() {
			break
		}
		if !slices.Equal(got, before) || shown != 1000 {
			t.Fatalf("read %d, while sorting: %d keys, the first %v; want the last order's %v", reads, shown, got, before)
		}
		if reads > 200 {
			t.Fatal("still sorting after 200 reads")
		}
	}
	if reads < 3 {
		t.Errorf("sorted in %d reads, want several: the batch was sorted at once", reads)
	}
	if got, want := keys(s.Rows(0, 7)), []string{"rl:new:4", "rl:new:3", "rl:new:2", "rl:new:1", "rl:new:0", "rl:990", "rl:980"}; !slices.Equal(got, want) {
		t.Errorf("after the sort: %v, want %v", got, want)
	}
	if n := s.Visible(); n != 1005 {
		t.Errorf("Visible = %d, want 1005", n)
	}
	all := keys(s.Rows(0, s.Len()))
	if !slices.IsSortedFunc(all, func(a, b string) int { return modelCompare(s, mustGet(t, s, a), mustGet(t, s, b)) }) {
		t.Errorf("not in order by value: %v", all)
	}
}

func TestStoreSortsInSteps(t *testing.T) {
	s := NewStore(testRules())
	s.order.atOnce, s.order.step = 100, 50 // 200 keys numbered, counted or moved a read
	var b Batch
	for i := range 1000 {
		b.Observed = append(b.Observed, read(fmt.Sprintf("rl:%d", i), strconv.Itoa(i%50), 60_000, 0))
	}
	s.Apply(b)
	s.Visible() // drawn by key

	s.SetSort(SortValue)
	if !s.Sorting() {
		t.Fatal("a sort of 1000 keys, 100 a step: not sorting")
	}
	reads := 0
	for s.Sorting() {
		// The read that ends the sort shows the new one.
		if got := keys(s.Rows(0, 20)); s.Sorting() && (!slices.IsSortedFunc(got, CompareKeys) || len(got) != 20) {
			t.Fatalf("read %d, while sorting: %v, want the rows by key", reads, got)
		}
		switch reads {
		case 1: // a key numbered already and one not yet: both removed
			s.Apply(Batch{Removed: []string{"rl:0", "rl:998"}})
		case 2: // a new key, and one read again with a value that moves it
			s.Apply(Batch{Observed: []Observation{read("rl:new", "1000", 60_000, time.Second), read("rl:1", "999", 60_000, time.Second)}})
			if i := s.IndexOf("rl:new"); s.Sorting() && i != -1 {
				t.Errorf("IndexOf(rl:new) = %d while sorting, want -1: it has no row until the sort shows", i)
			}
		case 3: // so many removed that keys numbered already move into holes
			var gone Batch
			for i := 100; i < 350; i++ {
				gone.Removed = append(gone.Removed, fmt.Sprintf("rl:%d", i))
			}
			s.Apply(gone)
		case 9: // sorting by the numbers' bytes: more removals
			s.Apply(Batch{Removed: []string{"rl:49", "rl:48"}})
		}
		if reads++; reads > 40 {
			t.Fatal("still sorting after 40 reads")
		}
	}
	if reads < 5 {
		t.Errorf("sorted in %d reads, want 10 or so", reads)
	}
	if got := keys(s.Rows(0, 4)); !slices.Equal(got, []string{"rl:new", "rl:1", "rl:99", "rl:399"}) {
		t.Errorf("by value: %v", got)
	}
	if n := s.Visible(); n != 747 {
		t.Errorf("Visible = %d, want 747 (1000, 254 removed, 1 new)", n)
	}
	if got := keys(s.Rows(0, s.Len())); !slices.IsSortedFunc(got, func(a, b string) int { return modelCompare(s, mustGet(t, s, a), mustGet(t, s, b)) }) {
		t.Errorf("not in order by value: %v", got)
	}
	for _, gone := range []string{"rl:0", "rl:998", "rl:49", "rl:48", "rl:100", "rl:349"} {
		if i := s.IndexOf(gone); i != -1 {
			t.Errorf("IndexOf(%s) = %d, want -1: it was removed", gone, i)
		}
	}
	if i := s.IndexOf("rl:999"); i < 0 || keys(s.Rows(i, 1))[0] != "rl:999" {
		t.Errorf("IndexOf(rl:999) = %d, and the row there is not it", i)
	}

	// A sort set while one is worked out replaces it.
	s.SetSort(SortTTL)
	s.Visible()
	s.SetSort(SortKeyName)
	for range 50 {
		s.Visible()
	}
	if got := keys(s.Rows(0, 3)); !slices.Equal(got, []string{"rl:1", "rl:2", "rl:3"}) || s.Sorting() {
		t.Errorf("TTL, then key: %v, sorting %v", got, s.Sorting())
	}
}
