package model

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"
)

// The detail screen of a window key lists the other windows of its
// identity, newest first, and no key of another identity, however alike
// its name; n bounds the list, and the rest is counted.
func TestWindowSiblings(t *testing.T) {
	s := NewStore(&Rules{
		List:     []Rule{{Pattern: "rl:*", Limit: 50, Window: time.Minute, ExpectTTL: true}},
		Fallback: Rule{ExpectTTL: true},
	})
	cur := t0.Unix() / 60
	win := func(base string, n int64) string { return base + ":" + strconv.FormatInt(n, 10) }
	day := func(base string, ago int) string { return base + ":" + t0.AddDate(0, 0, -ago).Format("2006-01-02") }
	obs := func(key string) Observation {
		return Observation{Key: key, Type: "string", Raw: "3", PTTL: 60_000, At: t0}
	}
	keys := []string{
		win("rl:acme", cur), win("rl:acme", cur-1), win("rl:acme", cur-30), // acme's windows
		win("rl:acme:sub", cur),            // another identity that starts the same
		win("rl:acmex", cur),               // another, without a separator
		win("rl:other", cur),               // another altogether
		"rl:acme:note",                     // no window part
		day("rl:day", 0), day("rl:day", 1), // dashed stamps
	}
	for _, k := range keys {
		s.Apply(Batch{Observed: []Observation{obs(k)}})
	}
	for _, k := range keys[:3] {
		if c, _ := s.Get(k); c.Layout != LayoutWindow || c.Window.Identity != "rl:acme" {
			t.Fatalf("%s read as %s of %q, want a window of rl:acme", k, c.Layout, c.Window.Identity)
		}
	}
	names := func(cs []Counter) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Key)
		}
		return out
	}
	for _, tc := range []struct {
		key, identity string
		n             int
		want          []string
		more          int
	}{
		{win("rl:acme", cur), "rl:acme", 5, []string{win("rl:acme", cur-1), win("rl:acme", cur-30)}, 0},
		{win("rl:acme", cur), "rl:acme", 1, []string{win("rl:acme", cur-1)}, 1},
		{win("rl:acme", cur-30), "rl:acme", 5, []string{win("rl:acme", cur), win("rl:acme", cur-1)}, 0},
		{win("rl:other", cur), "rl:other", 5, nil, 0},
		{day("rl:day", 0), "rl:day", 5, []string{day("rl:day", 1)}, 0},
		{win("rl:acme", cur), "", 5, nil, 0},
	} {
		t.Run(fmt.Sprintf("%s %s n%d", tc.key, tc.identity, tc.n), func(t *testing.T) {
			got, more := s.WindowSiblings("", tc.key, tc.identity, tc.n)
			if !slices.Equal(names(got), tc.want) || more != tc.more {
				t.Errorf("siblings of %s (%s, n %d): %v and %d more; want %v and %d more", tc.key, tc.identity, tc.n, names(got), more, tc.want, tc.more)
			}
		})
	}
}

// Among several servers a window key's siblings are its own server's
// windows only: the same identity's windows on another server are another
// limiter's (a region's) or another shard's, even where the names are the
// same, and a server whose name ends another's is not that one.
func TestWindowSiblingsOnServer(t *testing.T) {
	s := NewStore(&Rules{
		List:     []Rule{{Pattern: "rl:*", Limit: 50, Window: time.Minute, ExpectTTL: true}},
		Fallback: Rule{ExpectTTL: true},
	})
	cur := t0.Unix() / 60
	win := func(n int64) string { return "rl:acme:" + strconv.FormatInt(n, 10) }
	on := map[string][]string{
		"eu-1":  {win(cur), win(cur - 1), win(cur - 2)},
		"us-1":  {win(cur), win(cur - 5)}, // the same names, and one of its own
		"neu-1": {win(cur - 9)},           // a name that ends in eu-1
		"eu-2":  {"rl:other:" + strconv.FormatInt(cur, 10)},
	}
	for server, keys := range on {
		var obs []Observation
		for _, k := range keys {
			obs = append(obs, Observation{Key: k, Type: "string", Raw: "3", PTTL: 60_000, At: t0})
		}
		s.Apply(Batch{Server: server, Observed: obs})
	}
	for _, tc := range []struct {
		server, key string
		n           int
		want        []string // each one's key@server
		more        int
	}{
		{"eu-1", win(cur), 5, []string{win(cur-1) + "@eu-1", win(cur-2) + "@eu-1"}, 0},
		{"eu-1", win(cur), 1, []string{win(cur-1) + "@eu-1"}, 1},
		{"eu-1", win(cur - 2), 5, []string{win(cur) + "@eu-1", win(cur-1) + "@eu-1"}, 0},
		{"us-1", win(cur), 5, []string{win(cur-5) + "@us-1"}, 0},
		{"neu-1", win(cur - 9), 5, nil, 0},
		{"eu-2", win(cur), 5, nil, 0}, // no window of rl:acme there
		{"", win(cur), 5, nil, 0},     // every row is a named server's
		{"eu-9", win(cur), 5, nil, 0}, // a server not held
	} {
		t.Run(fmt.Sprintf("%s on %s n%d", tc.key, tc.server, tc.n), func(t *testing.T) {
			got, more := s.WindowSiblings(tc.server, tc.key, "rl:acme", tc.n)
			var names []string
			for _, c := range got {
				names = append(names, c.Key+"@"+c.Server)
			}
			if !slices.Equal(names, tc.want) || more != tc.more {
				t.Errorf("siblings of %s on %s (n %d): %v and %d more; want %v and %d more", tc.key, tc.server, tc.n, names, more, tc.want, tc.more)
			}
		})
	}
}

func TestIsWindowOf(t *testing.T) {
	for _, tc := range []struct {
		key, identity string
		want          bool
	}{
		{"rl:a:29936001", "rl:a", true},
		{"rl:a_1764620400", "rl:a", true},
		{"rl:a:2026-12-01", "rl:a", true},
		{"rl:a:2026-12-01T14", "rl:a", true},
		{"rl:a:b:29936001", "rl:a", false},
		{"rl:ab:29936001", "rl:a", false},
		{"rl:a:", "rl:a", false},
		{"rl:a:x1", "rl:a", false},
		{"rl:a", "rl:a", false},
	} {
		t.Run(tc.key, func(t *testing.T) {
			if got := isWindowOf(tc.key, tc.identity); got != tc.want {
				t.Errorf("isWindowOf(%q, %q) = %v, want %v", tc.key, tc.identity, got, tc.want)
			}
		})
	}
}

// BenchmarkWindowSiblings is the detail screen's look for a window key's
// siblings among 1,000,000 keys, a tenth of them windows of 1,000
// identities.
func BenchmarkWindowSiblings(b *testing.B) {
	const n = 1_000_000
	s := fillStore(n)
	cur := t0.Unix() / 60
	batch := Batch{}
	for i := range n / 10 {
		batch.Observed = append(batch.Observed, Observation{
			Key: fmt.Sprintf("ratelimit:win:%04d:%d", i%1000, cur-int64(i/1000)), Type: "string", Raw: "3", PTTL: 60_000, At: t0,
		})
	}
	s.Apply(batch)
	key := fmt.Sprintf("ratelimit:win:0007:%d", cur)
	if c, _ := s.Get(key); c.Layout != LayoutWindow {
		b.Fatalf("%s reads as %s", key, c.Layout)
	}
	b.ReportAllocs()
	for b.Loop() {
		if got, more := s.WindowSiblings("", key, "ratelimit:win:0007", 5); len(got) != 5 {
			b.Fatalf("%d siblings and %d more", len(got), more)
		}
	}
}
