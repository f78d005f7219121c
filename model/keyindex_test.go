package model

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// The index finds every key as a map would through adds and removals in
// any order, the last entry moving into a removed one's place as the
// Store does, across the table's growth and the shifts removal makes.
func TestKeyIndexAgreesWithAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := newKeyIndex()
	var entries []entry
	want := map[string]int32{}
	for step := range 200_000 {
		key := "k" + strconv.Itoa(rng.IntN(5000))
		if i, ok := want[key]; ok && rng.IntN(2) == 0 {
			if !x.remove(key, entries) {
				t.Fatalf("step %d: %q not removed", step, key)
			}
			delete(want, key)
			last := int32(len(entries) - 1)
			if i != last {
				x.move(entries[last].key, i, entries)
				entries[i] = entries[last]
				want[entries[i].key] = i
			}
			entries = entries[:last]
		} else if !ok {
			i := int32(len(entries))
			entries = append(entries, entry{key: key})
			x.insert(key, i, entries)
			want[key] = i
		}
		if step%997 == 0 {
			for k, i := range want {
				if got, ok := x.find(k, entries); !ok || got != i {
					t.Fatalf("step %d: %q at %d, %v; want %d", step, k, got, ok, i)
				}
			}
		}
		if _, ok := x.find("absent", entries); ok {
			t.Fatalf("step %d: a key never added is found", step)
		}
	}
	if x.len() != len(want) {
		t.Errorf("index holds %d keys, want %d", x.len(), len(want))
	}
}
