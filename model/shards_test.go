package model

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// A key on two shards of one limiter is counted once on each: the rows
// SharedKeys finds are those and only those, whatever else shares a name.
func TestSharedKeys(t *testing.T) {
	ring := ShardGroup{Name: "ring", Servers: []string{"a", "b", "c"}}
	other := ShardGroup{Name: "other", Servers: []string{"x", "y"}}
	// row is "server/key", or "server/key/field" for a field's row.
	row := func(s string) *Counter {
		parts := strings.Split(s, "/")
		c := &Counter{Server: parts[0], Key: parts[1]}
		if len(parts) == 3 {
			c.Field, c.FieldRow = parts[2], true
		}
		return c
	}
	tests := []struct {
		name   string
		groups []ShardGroup
		rows   []string
		want   []string // "group: server/key server/key ..." per shared row
	}{
		{"no groups", nil, []string{"a/k", "b/k"}, nil},
		{"one key on each of two shards", []ShardGroup{ring}, []string{"a/k", "b/k"}, []string{"ring: a/k b/k"}},
		{"the copies in the group's order, whatever the rows'", []ShardGroup{ring}, []string{"c/k", "a/k", "b/k"}, []string{"ring: a/k b/k c/k"}},
		{"keys on one shard each", []ShardGroup{ring}, []string{"a/k1", "b/k2", "c/k3"}, nil},
		{"in the order of their first copies", []ShardGroup{ring}, []string{"a/k1", "a/k2", "b/k2", "c/k1"}, []string{"ring: a/k1 c/k1", "ring: a/k2 b/k2"}},
		{"regions: servers of no group share names freely", []ShardGroup{ring}, []string{"eu/k", "us/k", "a/k"}, nil},
		{"a region beside a shard: only the shards count", []ShardGroup{ring}, []string{"a/k", "eu/k", "b/k"}, []string{"ring: a/k b/k"}},
		{"two groups hold the same name apart", []ShardGroup{ring, other}, []string{"a/k", "x/k"}, nil},
		{"each group its own copies", []ShardGroup{ring, other}, []string{"a/k", "x/k", "b/k", "y/k"}, []string{"ring: a/k b/k", "other: x/k y/k"}},
		{"a server read twice counts once", []ShardGroup{ring}, []string{"a/k", "a/k"}, nil},
		{"a hash's field rows are rows of their own", []ShardGroup{ring}, []string{"a/h/f1", "b/h/f2", "c/h/f1"}, []string{"ring: a/h/f1 c/h/f1"}},
		{"a field's row is not its whole key's", []ShardGroup{ring}, []string{"a/h", "b/h/f"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rows []*Counter
			for _, r := range tc.rows {
				rows = append(rows, row(r))
			}
			var got []string
			for _, s := range SharedKeys(rows, tc.groups) {
				var copies []string
				for _, c := range s.Copies {
					name := c.Server + "/" + c.Key
					if c.FieldRow {
						name += "/" + c.Field
					}
					copies = append(copies, name)
				}
				got = append(got, fmt.Sprintf("%s: %s", s.Group, strings.Join(copies, " ")))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("SharedKeys(%q) = %q, want %q", tc.rows, got, tc.want)
			}
		})
	}
}

// A counter says which server it was read on, as its reading did.
func TestNewCounterKeepsItsServer(t *testing.T) {
	o := Observation{Key: "rl:1", Server: "eu-1", Type: "string", Raw: "3", PTTL: 1000, At: now}
	if c := NewCounter(&o, &Rules{}); c.Server != "eu-1" {
		t.Errorf("NewCounter's Server = %q, want eu-1", c.Server)
	}
}

// The Store keeps the rows two shards hold as rows come and go: after
// each step its shared rows are SharedKeys' over its rows, counted in
// all and in each group, each row's Copies is its group's count, and
// SharedOf names every copy.
func TestStoreSharedRows(t *testing.T) {
	groups := []ShardGroup{{Name: "ring", Servers: []string{"a", "b", "c"}}, {Name: "other", Servers: []string{"x", "y"}}}
	// A step is a server's batch: keys read ("key", or "key/field/value"
	// for a field of a hash with field TTLs), keys removed ("-key").
	type step struct {
		server string
		keys   []string
	}
	tests := []struct {
		name  string
		steps []step
		want  []string // "group: server/name ..." per shared row, in key order
	}{
		{"one key on two shards", []step{{"a", []string{"k"}}, {"b", []string{"k"}}}, []string{"ring: a/k b/k"}},
		{"three copies", []step{{"c", []string{"k"}}, {"a", []string{"k"}}, {"b", []string{"k"}}}, []string{"ring: a/k b/k c/k"}},
		{"a copy removed is no longer shared", []step{{"a", []string{"k"}}, {"b", []string{"k"}}, {"b", []string{"-k"}}}, nil},
		{"one of three removed: still shared", []step{{"a", []string{"k"}}, {"b", []string{"k"}}, {"c", []string{"k"}}, {"a", []string{"-k"}}}, []string{"ring: b/k c/k"}},
		{"read again: one copy still", []step{{"a", []string{"k"}}, {"a", []string{"k"}}}, nil},
		{"regions are never shared", []step{{"eu", []string{"k"}}, {"us", []string{"k"}}}, nil},
		{"two groups apart", []step{{"a", []string{"k"}}, {"x", []string{"k"}}}, nil},
		{"each group its own", []step{{"a", []string{"k"}}, {"x", []string{"k"}}, {"b", []string{"k"}}, {"y", []string{"k"}}}, []string{"ring: a/k b/k", "other: x/k y/k"}},
		{"fields: one field on two shards", []step{{"a", []string{"h/f1/1"}}, {"b", []string{"h/f2/1"}}, {"c", []string{"h/f1/2"}}}, []string{"ring: a/h›f1 c/h›f1"}},
		{"fields: a hash removed takes its copies", []step{{"a", []string{"h/f1/1"}}, {"b", []string{"h/f1/2"}}, {"a", []string{"-h"}}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(&Rules{Fallback: Rule{Limit: 10, Window: time.Minute}})
			s.SetShards(groups)
			for i, st := range tc.steps {
				b := Batch{Server: st.server}
				for _, k := range st.keys {
					switch parts := strings.Split(k, "/"); {
					case strings.HasPrefix(k, "-"):
						b.Removed = append(b.Removed, k[1:])
					case len(parts) == 3:
						o := hash(parts[0])
						o.PTTL, o.FieldTTLs, o.Len = PTTLNoExpiry, true, 1
						o.Fields = []Field{{Name: parts[1], Value: parts[2], PTTL: 60000}}
						o.At = t0.Add(time.Duration(i) * time.Second)
						b.Observed = append(b.Observed, o)
					default:
						b.Observed = append(b.Observed, read(k, "1", 60000, time.Duration(i)*time.Second))
					}
				}
				s.Apply(b)
			}
			rows := s.Rows(0, s.Len())
			ptrs := make([]*Counter, len(rows))
			for i := range rows {
				ptrs[i] = &rows[i]
			}
			reference := SharedKeys(ptrs, groups)
			var got []string
			for _, sh := range reference {
				mine, ok := s.SharedOf(sh.Copies[0])
				if !ok {
					t.Fatalf("SharedOf(%s on %s) = not shared, SharedKeys says it is", sh.Copies[0].Name(), sh.Copies[0].Server)
				}
				var copies []string
				for j, c := range mine.Copies {
					copies = append(copies, c.Server+"/"+strings.ReplaceAll(c.Name(), FieldMark, "›"))
					if c.ID() != sh.Copies[j].ID() {
						t.Errorf("SharedOf's copy %d is %q, SharedKeys' %q", j, c.ID(), sh.Copies[j].ID())
					}
				}
				got = append(got, mine.Group+": "+strings.Join(copies, " "))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("shared rows %q, want %q", got, tc.want)
			}
			if s.SharedRows() != len(tc.want) {
				t.Errorf("SharedRows() = %d, want %d", s.SharedRows(), len(tc.want))
			}
			for g, group := range groups {
				want := 0
				for _, w := range tc.want {
					if strings.HasPrefix(w, group.Name+": ") {
						want++
					}
				}
				if got := s.SharedRowsIn(g); got != want {
					t.Errorf("SharedRowsIn(%s) = %d, want %d", group.Name, got, want)
				}
			}
			held := map[string]int{}
			for _, sh := range reference {
				for _, c := range sh.Copies {
					held[c.ID()] = len(sh.Copies)
				}
			}
			for i := range rows {
				got, want := s.Copies(&rows[i]), held[rows[i].ID()]
				if want == 0 && got > 1 || want > 0 && got != want {
					t.Errorf("Copies(%s on %s) = %d, want %d", rows[i].Name(), rows[i].Server, got, want)
				}
			}
		})
	}
}

// Shards declared after rows arrived count those rows.
func TestSetShardsCountsRowsHeld(t *testing.T) {
	s := NewStore(&Rules{})
	s.Apply(Batch{Server: "a", Observed: []Observation{read("k", "1", 60000, 0)}})
	s.Apply(Batch{Server: "b", Observed: []Observation{read("k", "2", 60000, 0)}})
	c := mustGet(t, s, RowOf("a", "k", ""))
	if s.Copies(&c) != 0 {
		t.Errorf("Copies without groups = %d, want 0", s.Copies(&c))
	}
	s.SetShards([]ShardGroup{{Name: "ring", Servers: []string{"a", "b"}}})
	if s.Copies(&c) != 2 || s.SharedRows() != 1 {
		t.Errorf("after SetShards: Copies %d, SharedRows %d; want 2 and 1", s.Copies(&c), s.SharedRows())
	}
}
