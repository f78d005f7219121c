package model

import (
	"fmt"
	"slices"
	"strings"
	"testing"
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
