package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/model"
)

// check and repair collect their counters in a KeySorter, batch by batch,
// as they arrive, and order them at the end (a Snapshot's rows go in the
// same order): the dashboard's order by name (model.CompareKeys), runs of
// digits read as numbers, so that rl:9 comes before rl:10 in both.
func TestKeySorterIsTheDashboardsOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, 500, 1000, 4097} {
		var obs []model.Observation
		for i := range n {
			key := fmt.Sprintf("rl:%d", rng.IntN(1_000_000_000))
			switch i % 5 {
			case 1:
				key = strings.ToUpper(key) // before every "rl:"
			case 2:
				key += "\xff"
			case 3:
				key = key[:3+i%4]
			}
			obs = append(obs, model.Observation{Key: fmt.Sprintf("%s#%d", key, i), Type: "string", Raw: "1", PTTL: 1000, At: t0})
		}
		var sorter KeySorter
		for batch := range slices.Chunk(obs, 1+rng.IntN(600)) {
			counters := make([]model.Counter, len(batch))
			for i := range batch {
				counters[i] = model.NewCounter(&batch[i], &model.Rules{})
			}
			sorter.Add(counters)
		}
		var got, want []string
		for _, c := range sorter.Sorted() {
			got = append(got, c.Key)
		}
		for _, o := range obs {
			want = append(want, o.Key)
		}
		slices.SortFunc(want, model.CompareKeys)
		if !slices.Equal(got, want) {
			t.Errorf("%d keys: the KeySorter's order is not the dashboard's:\n%q\n%q", n, got, want)
		}
	}
}

// mixedKeys are names whose natural order is not their byte order, and
// some that try the edges of it: numbers of several lengths, leading zeros,
// a number far past 64 bits, bytes that are not UTF-8, control bytes,
// Unicode, the empty name, names that are prefixes of others.
var mixedKeys = []string{
	"user:1", "user:10", "user:2", "user:20", "user:100", "user:3:login", "user:", "user",
	"user:007", "user:07", "user:7", "user:0", "user:00", "user:000123", "user:123",
	"user:" + strings.Repeat("9", 40), "user:1" + strings.Repeat("0", 40),
	"\xff\xfe", "user:\xff", "user:\x00", "user:\x001", "\x00", "\x01", "\x1b[2J",
	"用户:2", "用户:10", "Ünïcode", "é", "e", "E", "",
	"rl:api:9", "rl:api:10", "rl:api:9:a", "rl:9api", "rl:10api", "rl:a9", "rl:a10",
	"v1.2.10", "v1.2.9", "v1.10.0", "0", "00", "01", "1", "10", "9",
}

// The dashboard, snapshot, check and repair list the same keys in the same
// order: the Store's order by name is the KeySorter's and the Snapshot's,
// whatever the batches the keys arrive in.
func TestReportsListKeysInTheDashboardsOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 20 {
		keys := slices.Clone(mixedKeys)
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		obs := make([]model.Observation, len(keys))
		for i, key := range keys {
			obs[i] = read(key, "1", 60_000, 0)
		}
		batches := slices.Collect(slices.Chunk(obs, 1+round%9))

		store := model.NewStore(testRules())
		for _, b := range batches {
			store.Apply(model.Batch{Observed: b})
		}
		var dashboard []string
		for _, c := range store.Rows(0, store.Len()) {
			dashboard = append(dashboard, c.Key)
		}
		if len(dashboard) != len(mixedKeys) {
			t.Fatalf("the Store holds %d keys, not %d", len(dashboard), len(mixedKeys))
		}

		var sorter KeySorter
		snap := NewSnapshot(FormatJSON, testRules())
		for _, b := range batches {
			counters := make([]model.Counter, len(b))
			for i := range b {
				counters[i] = model.NewCounter(&b[i], testRules())
			}
			sorter.Add(counters)
			snap.Add(b)
		}
		var checked []string
		for _, c := range sorter.Sorted() {
			checked = append(checked, c.Key)
		}
		if !slices.Equal(checked, dashboard) {
			t.Fatalf("check and repair list\n%q\nthe dashboard\n%q", checked, dashboard)
		}

		var out bytes.Buffer
		if err := snap.Write(&out, t0); err != nil {
			t.Fatal(err)
		}
		var doc struct{ Counters []struct{ Key string } }
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		var snapshot, want []string
		for _, c := range doc.Counters {
			snapshot = append(snapshot, c.Key)
		}
		for _, key := range dashboard {
			want = append(want, model.JSONKey(key)) // as the JSON spells a name that is not UTF-8
		}
		if !slices.Equal(snapshot, want) {
			t.Fatalf("snapshot lists\n%q\nthe dashboard\n%q", snapshot, want)
		}
	}
}

// A snapshot may read a key twice (SCAN repeats keys); its output has each
// key once, as the later reading found it.
func TestKeySorterKeepsTheLaterReading(t *testing.T) {
	read := func(key, raw string, after time.Duration) model.Counter {
		o := model.Observation{Key: key, Type: "string", Raw: raw, PTTL: 1000, At: t0.Add(after)}
		return model.NewCounter(&o, &model.Rules{})
	}
	var s KeySorter
	s.Add([]model.Counter{read("a", "1", 0), read("b", "1", time.Second), read("c", "1", 0)})
	s.Add([]model.Counter{read("b", "2", 2*time.Second), read("a", "0", -time.Second)})
	s.Add([]model.Counter{read("c", "2", time.Second), read("c", "3", 3*time.Second)})
	var got []string
	for _, c := range s.Sorted() {
		got = append(got, c.Key+"="+c.Raw)
	}
	if want := []string{"a=1", "b=2", "c=3"}; !slices.Equal(got, want) {
		t.Errorf("Sorted = %q, want %q", got, want)
	}
}

// The KeySorter compares a few bytes of each key noted as it arrives, past
// the prefix every key shares, and the whole keys only when those are
// equal. Whatever the keys (zero bytes, keys that are prefixes of others,
// a key that leaves the shared prefix late or in a number, repeats), its
// order is model.CompareKeys's, each key once.
func FuzzKeySorter(f *testing.F) {
	f.Add([]byte("rl:user:1\nrl:user:10\nrl:user:1\x00\nrl:user:2\nrl:\nother"), uint8(3))
	f.Add([]byte("a\x00\x00\x00\x00\x00\x00\x00\x00b\na\na\x00\nab\na"), uint8(1))
	f.Add([]byte("ratelimit:user:00012345:login\nratelimit:user:00012346:login\nratelimit:"), uint8(2))
	f.Add([]byte("rl:12\nrl:1\nrl:123\nrl:0012\nrl:9\nrl:12a\nrl:"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, batchSize uint8) {
		keys := strings.Split(string(data), "\n")
		var sorter KeySorter
		for batch := range slices.Chunk(keys, 1+int(batchSize%16)) {
			counters := make([]model.Counter, len(batch))
			for i, k := range batch {
				counters[i] = model.Counter{Key: k}
			}
			sorter.Add(counters)
		}
		var got []string
		for _, c := range sorter.Sorted() {
			got = append(got, c.Key)
		}
		want := slices.Clone(keys)
		slices.SortFunc(want, model.CompareKeys)
		want = slices.Compact(want)
		if !slices.Equal(got, want) {
			t.Errorf("Sorted = %q\nwant     %q", got, want)
		}
	})
}

// Each server's counters in key order make one list in key order, a key
// of several servers a row of each, in the servers' order.
func TestMerge(t *testing.T) {
	list := func(server string, keys ...string) []*model.Counter {
		var out []*model.Counter
		for _, k := range keys {
			out = append(out, &model.Counter{Server: server, Key: k})
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		lists [][]*model.Counter
		want  []string
	}{
		{"none", nil, nil},
		{"one", [][]*model.Counter{list("a", "k1", "k2")}, []string{"a/k1", "a/k2"}},
		{"empty lists left out", [][]*model.Counter{nil, list("b", "k1"), nil}, []string{"b/k1"}},
		{"interleaved, numbers by their value", [][]*model.Counter{list("a", "u:2", "u:10"), list("b", "u:1", "u:3", "u:20")}, []string{"b/u:1", "a/u:2", "b/u:3", "a/u:10", "b/u:20"}},
		{"a key on several, in the lists' order", [][]*model.Counter{list("c", "k"), list("a", "j", "k"), list("b", "k", "l")}, []string{"a/j", "c/k", "a/k", "b/k", "b/l"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range Merge(tc.lists) {
				got = append(got, c.Server+"/"+c.Key)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Merge = %q, want %q", got, tc.want)
			}
		})
	}
}
