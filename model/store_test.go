package model

import (
	"fmt"
	"slices"
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
		out[i] = c.ID()
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
		t.Run(key, func(t *testing.T) {
			if got := mustGet(t, s, key).Status; got != want {
				t.Errorf("%s: status %v, want %v", key, got, want)
			}
		})
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
