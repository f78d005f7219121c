package report

import (
	"slices"

	"github.com/countertop/countertop/model"
)

// KeySorter collects counters as they arrive, a batch at a time, and puts
// them in key order once they are all in: `check` and `repair` read every
// matched key this way (a Snapshot, which `snapshot` uses, keeps rows
// instead of counters, in the same order). Key order is the dashboard's
// (model.CompareKeys): user:2 before user:10, so that a key is found where
// the screen showed it.
type KeySorter struct {
	order   keyOrder
	batches [][]model.Counter
}

// Add keeps batch (not a copy of it) until Sorted. A key can come in
// several batches; Sorted keeps its latest reading.
func (s *KeySorter) Add(batch []model.Counter) {
	if len(batch) == 0 {
		return
	}
	keys := make([]string, len(batch))
	for i := range batch {
		keys[i] = batch[i].NameID() // a hash's field rows are rows apart
	}
	s.order.add(keys, 0)
	s.batches = append(s.batches, batch)
}

// Sorted returns every counter added, in key order, each key once: of a
// key added twice, the later reading (either, when both were read at the
// same moment, in one pipeline). The KeySorter is empty afterwards.
func (s *KeySorter) Sorted() []*model.Counter {
	batches := s.batches
	at := func(p place) *model.Counter { return &batches[p.batch][p.i] }
	places := s.order.sorted(func(a, b place) bool { return at(a).ObservedAt.After(at(b).ObservedAt) }, nil)
	*s = KeySorter{}
	out := make([]*model.Counter, len(places))
	for i, p := range places {
		out[i] = at(p)
	}
	return out
}

// keyOrder puts keys in order, given a batch at a time as they arrive. As
// each batch arrives, while Redis works on the next, it notes each key's
// model.KeyPrefix past the shared prefix; at the end a radix sort orders
// those, and only keys whose prefixes are equal are compared whole.
type keyOrder struct {
	keys   [][]string // the batches' keys
	places []place    // one per key added, in the order added
	first  string     // the first key added
	shared int        // bytes every key added shares with first
	// exact is how many places, from the last, were noted with shared as
	// it is: a batch that shares less with first makes the earlier ones'
	// next wrong (too far along their keys), to be noted again at the end.
	exact int
	bytes histogram // of the places' nexts
	// servers is each batch's server, as add was given it, once a batch
	// came from a server other than the first (0); nil until then. A key
	// of several servers is a row of each, in the servers' order.
	servers []uint16
}

// place is a key, as its batch and index there, and next: its
// model.KeyPrefix past the prefix every key shares, so that the lesser next
// sorts first and only equal nexts need the keys compared. It holds no
// pointer, so that moving it costs the garbage collector nothing.
type place struct {
	next     uint64
	batch, i uint32
}

// histogram counts, for each byte of a next (least significant first), how
// many nexts hold each value there: what a radix sort's passes start from.
type histogram [8][256]int

// note counts next n times more (n < 0: fewer).
func (h *histogram) note(next uint64, n int) {
	h[0][byte(next)] += n
	h[1][byte(next>>8)] += n
	h[2][byte(next>>16)] += n
	h[3][byte(next>>24)] += n
	h[4][byte(next>>32)] += n
	h[5][byte(next>>40)] += n
	h[6][byte(next>>48)] += n
	h[7][byte(next>>56)] += n
}

// add keeps keys (not a copy), read on server (an index: 0 for the first
// or only one), as the next batch; it must not be empty.
func (o *keyOrder) add(keys []string, server int) {
	if server > 0 && o.servers == nil {
		o.servers = make([]uint16, len(o.keys), len(o.keys)+1)
	}
	if o.servers != nil {
		o.servers = append(o.servers, uint16(server))
	}
	if len(o.places) == 0 {
		o.first, o.shared = keys[0], len(keys[0])
	}
	shared := o.shared
	for _, key := range keys {
		shared = sharedPrefix(o.first[:shared], key)
	}
	if shared != o.shared {
		o.shared, o.exact = shared, 0
	}
	b := uint32(len(o.keys))
	o.keys = append(o.keys, keys)
	// append grows a long slice by a quarter at a time, copying every place
	// several times over for the collector; doubling copies each about once.
	if n := len(o.places) + len(keys); n > cap(o.places) {
		o.places = slices.Grow(o.places, max(n, 2*cap(o.places))-len(o.places))
	}
	for i, key := range keys {
		next := model.KeyPrefix(key, shared)
		o.places = append(o.places, place{next, b, uint32(i)})
		o.bytes.note(next, 1)
	}
	o.exact += len(keys)
}

// sharedPrefix returns the length of the longest prefix of a that b
// starts with.
func sharedPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// key returns the key at p.
func (o *keyOrder) key(p place) string { return o.keys[p.batch][p.i] }

// server returns the server the key at p was read on.
func (o *keyOrder) server(p place) uint16 {
	if o.servers == nil {
		return 0
	}
	return o.servers[p.batch]
}

// same reports whether the places a and b hold one key of one server.
func (o *keyOrder) same(a, b place) bool {
	return a.next == b.next && o.key(a) == o.key(b) && o.server(a) == o.server(b)
}

// byServer puts each run of places of one key, in places (in key order),
// in the order of their servers, and the places of one server together.
func (o *keyOrder) byServer(places []place) {
	for i := 0; i < len(places); {
		j := i + 1
		for j < len(places) && places[j].next == places[i].next && o.key(places[j]) == o.key(places[i]) {
			j++
		}
		if j-i > 1 {
			slices.SortStableFunc(places[i:j], func(a, b place) int { return int(o.server(a)) - int(o.server(b)) })
		}
		i = j
	}
}

// sorted returns the places of the keys added, in key order, each key
// once a server (in the servers' order): of a key added more than once
// from one server, the place later says was read later (of two read at
// once, either). It calls drop, if not nil, with
// each place it leaves out. The keyOrder is empty afterwards.
func (o *keyOrder) sorted(later func(a, b place) bool, drop func(place)) []place {
	stale := o.places[:len(o.places)-o.exact]
	for j := range stale {
		p := &stale[j]
		o.bytes.note(p.next, -1)
		p.next = model.KeyPrefix(o.key(*p), o.shared)
		o.bytes.note(p.next, 1)
	}
	places := o.sortPlaces()
	if o.servers != nil {
		o.byServer(places)
	}
	kept := places[:0]
	for _, p := range places {
		if n := len(kept); n > 0 && o.same(p, kept[n-1]) {
			if later(p, kept[n-1]) {
				kept[n-1], p = p, kept[n-1]
			}
			if drop != nil {
				drop(p)
			}
			continue
		}
		kept = append(kept, p)
	}
	*o = keyOrder{}
	return kept
}

// sortPlaces returns the places in their keys' order, using up the
// histogram: a radix sort by next, one pass per byte in which the nexts
// differ, then each run of equal nexts sorted by its keys.
func (o *keyOrder) sortPlaces() []place {
	from, to := o.places, []place(nil)
	for b := range o.bytes {
		count := &o.bytes[b]
		if len(from) == 0 || count[byte(from[0].next>>(8*b))] == len(from) {
			continue // every next has the same byte here
		}
		if to == nil {
			to = make([]place, len(from))
		}
		at := 0
		for v, n := range count {
			count[v], at = at, at+n
		}
		for _, p := range from {
			v := byte(p.next >> (8 * b))
			to[count[v]] = p
			count[v]++
		}
		from, to = to, from
	}
	for i := 0; i < len(from); {
		j := i + 1
		for j < len(from) && from[j].next == from[i].next {
			j++
		}
		if j-i > 1 {
			slices.SortStableFunc(from[i:j], func(a, b place) int { return model.CompareKeys(o.key(a), o.key(b)) })
		}
		i = j
	}
	return from
}

// Merge returns the counters of lists, each one server's in key order (as
// KeySorter.Sorted returns them), in key order too: a key of several
// servers is a row of each, in the order of lists.
func Merge(lists [][]*model.Counter) []*model.Counter {
	n := 0
	var heads []int // the lists not yet used up, as a heap of their first counters
	for i, l := range lists {
		n += len(l)
		if len(l) > 0 {
			heads = append(heads, i)
		}
	}
	if len(heads) < 2 {
		if len(heads) == 0 {
			return nil
		}
		return lists[heads[0]]
	}
	next := make([]int, len(lists)) // each list's next counter
	ids := make([]string, len(lists))
	less := func(a, b int) bool {
		if c := model.CompareKeys(ids[a], ids[b]); c != 0 {
			return c < 0
		}
		return a < b
	}
	down := func(i int) {
		for {
			least, l, r := i, 2*i+1, 2*i+2
			if l < len(heads) && less(heads[l], heads[least]) {
				least = l
			}
			if r < len(heads) && less(heads[r], heads[least]) {
				least = r
			}
			if least == i {
				return
			}
			heads[i], heads[least] = heads[least], heads[i]
			i = least
		}
	}
	for _, h := range heads {
		ids[h] = lists[h][0].NameID()
	}
	for i := len(heads)/2 - 1; i >= 0; i-- {
		down(i)
	}
	out := make([]*model.Counter, 0, n)
	for len(heads) > 0 {
		h := heads[0]
		out = append(out, lists[h][next[h]])
		if next[h]++; next[h] < len(lists[h]) {
			ids[h] = lists[h][next[h]].NameID()
		} else {
			heads[0] = heads[len(heads)-1]
			heads = heads[:len(heads)-1]
		}
		down(0)
	}
	return out
}
