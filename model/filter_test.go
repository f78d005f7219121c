package model

import (
	"slices"
	"testing"
	"time"
)

func TestStoreFilter(t *testing.T) {
	s := NewStore(testRules())
	s.Apply(Batch{Observed: []Observation{
		read("rl:Login:bob", "100", PTTLNoExpiry, 0), // stuck
		read("rl:login:amy", "1", PTTLNoExpiry, 0),   // no-expiry
		read("rl:api:amy", "95", 1000, 0),            // warn
		read("views:home", "5", PTTLNoExpiry, 0),     // ok
		read("evil\n\x1b[2J", "1", 1000, 0),          // fallback, ok
		read("用户:Ünïcode", "1", 1000, 0),
	}})
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"", []string{"evil\n\x1b[2J", "rl:Login:bob", "rl:api:amy", "rl:login:amy", "views:home", "用户:Ünïcode"}},
		{"LOGIN", []string{"rl:Login:bob", "rl:login:amy"}},
		{"login amy", []string{"rl:login:amy"}},
		{"  amy   rl:  ", []string{"rl:api:amy", "rl:login:amy"}},
		{"is:stuck", []string{"rl:Login:bob"}},
		{"is:problem", []string{"rl:Login:bob", "rl:login:amy"}},
		{"is:problem amy", []string{"rl:login:amy"}},
		{"IS:WARN", []string{"rl:api:amy"}},
		{"is:stuck is:ok", nil},
		{"is:nonsense", nil},                // not a status: a name term, which no key holds
		{`\n\e`, []string{"evil\n\x1b[2J"}}, // names are matched as shown
		{"ünï", []string{"用户:Ünïcode"}},
		{"用户", []string{"用户:Ünïcode"}},
	} {
		t.Run(caseName(tc.q), func(t *testing.T) {
			s.SetFilter(tc.q)
			if s.Filter() != tc.q {
				t.Fatalf("Filter() = %q", s.Filter())
			}
			got := keys(s.Rows(0, 100))
			if !slices.Equal(got, tc.want) && len(got)+len(tc.want) > 0 {
				t.Errorf("filter %q: %q, want %q", tc.q, got, tc.want)
			}
			if c := s.Counts(); c.Visible != len(tc.want) || c.Total != 6 || s.Visible() != len(tc.want) {
				t.Errorf("filter %q: Counts %+v, Visible %d", tc.q, c, s.Visible())
			}
		})
	}
}

// A status filter follows statuses as they change.
func TestStoreFilterFollowsStatus(t *testing.T) {
	s := NewStore(testRules())
	s.Apply(Batch{Observed: []Observation{read("rl:a", "1", 1000, 0), read("rl:b", "1", 1000, 0)}})
	s.SetFilter("is:no-expiry")
	if n := s.Visible(); n != 0 {
		t.Fatalf("Visible = %d", n)
	}
	s.Apply(Batch{Observed: []Observation{read("rl:b", "2", PTTLNoExpiry, time.Second)}})
	if got := keys(s.Rows(0, 10)); !slices.Equal(got, []string{"rl:b"}) {
		t.Errorf("rows = %v", got)
	}
	if s.IndexOf("rl:a") != -1 || s.IndexOf("rl:b") != 0 {
		t.Errorf("IndexOf a, b = %d, %d", s.IndexOf("rl:a"), s.IndexOf("rl:b"))
	}
}
