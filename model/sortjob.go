package model

import "slices"

// A new sort of many keys is worked out a step at a time, as a new filter
// is applied: each read of the order (Rows, Visible, IndexOf, Counts,
// OldestRead) takes it one step on, and until it is done the order shown
// is the last sort's, whole, so that no frame pays for sorting a million
// keys (see Sorting). A step numbers a share of the entries (see
// sortNumber), counts the numbers' digits (countDigits), or moves them by
// one of their bytes (startAt and scatter, as radixSort does).
//
// Meanwhile the entries go on changing. A key that is removed leaves the
// order shown at once and is crossed out of the new one; a key whose value
// changes is marked moved, as always, and placed again once the new order
// is shown; a key that arrives waits for it too, a few frames. A batch that
// moves more than 1/rebuildShare of the keys starts such a sort too, of the
// same sort, rather than sorting them all in one read.

// sortAtOnce is the most entries a new sort sorts in one read.
const sortAtOnce = 1 << 16

// sortJob is a new sort being worked out; see the top of this file.
type sortJob struct {
	number func(*entry) (uint64, uint8) // the sort's number of an entry, rates as of quiet
	quiet  int64

	// While numbering, recs are by place in name order and place is each
	// entry's, kept up to date through removals: -1 for an entry that
	// arrived since. A rec whose entry left is crossed out (e = -1). Every
	// place is numbered or crossed out once.
	recs, spare []keyed
	place       []int32
	next        int // entries below it are numbered

	// Then the recs crossed out are dropped and the others counted, up to
	// counted (kept of them kept), and sorted, a digit at a time, up to at;
	// the removals meanwhile are noted in gone and crossed out at the end.
	sorting bool
	counts  [radixDigits][256]int
	counted int
	kept    int
	digit   int
	at      int
	gone    []nameRemoval
}

// Sorting reports whether a sort is being worked out: the sort set last
// (SetSort), until which the rows are in the sort before it, or the same
// sort again after so many keys moved that placing each would cost more
// (see sortInSteps). The ui should draw again while it is true. It is
// true from SetSort, or such a batch, on for a Store of more than
// sortAtOnce keys, even when the next read sorts at once (by name): a
// frame too many, not too few.
func (s *Store) Sorting() bool {
	o := &s.order
	return o.job != nil || len(s.entries) > o.atOnce && (o.resort || len(o.dirty)*o.share > len(s.entries))
}

// beginSort starts a new sort of every entry, to be worked out a step at a
// time, and reports true; false when it cannot be numbered, for rebuild
// to sort at once.
func (s *Store) beginSort() bool {
	number := s.sortNumber(s.quiet)
	if number == nil {
		return false
	}
	_, place := s.byName()
	s.order.job = &sortJob{number: number, quiet: s.quiet, recs: make([]keyed, len(place)), place: place}
	return true
}

// sortStep takes the sort being worked out a step on, 2 o.step entries'
// worth of numbering, counting or moving (a frame reads the order a few
// times), and reports whether it is done:
// then the new order is the order, its keys that moved or arrived
// meanwhile still to be placed.
func (s *Store) sortStep() bool {
	o := &s.order
	j := o.job
	for budget := 2 * o.step; budget > 0; {
		n := len(j.recs)
		switch {
		case !j.sorting:
			end := min(j.next+budget, len(s.entries))
			for e := j.next; e < end; e++ {
				j.numberEntry(s, int32(e))
			}
			budget -= max(1, end-j.next)
			j.next = end
			j.sorting = end >= min(len(s.entries), len(j.place))
		case j.counted < len(j.place):
			end, from := min(j.counted+budget, len(j.place)), j.kept
			for _, r := range j.recs[j.counted:end] {
				if r.e >= 0 {
					j.recs[j.kept] = r
					j.kept++
				}
			}
			countDigits(&j.counts, j.recs[from:j.kept])
			budget -= end - j.counted
			if j.counted = end; end == len(j.place) {
				j.recs = j.recs[:j.kept]
			}
		case j.digit == radixDigits:
			s.finishSort()
			return true
		case j.at == 0 && shared(j.recs, &j.counts[j.digit], j.digit):
			j.digit++ // every one has it
		default:
			if j.at == 0 {
				if j.spare == nil {
					j.spare = make([]keyed, n)
				}
				startAt(&j.counts[j.digit])
			}
			end := min(j.at+budget, n)
			scatter(j.recs[j.at:end], j.spare, &j.counts[j.digit], j.digit)
			budget -= end - j.at
			if j.at = end; end == n {
				j.recs, j.spare, j.digit, j.at = j.spare, j.recs, j.digit+1, 0
			}
		}
	}
	return false
}

// numberEntry numbers entry e into its place in recs; an entry that
// arrived since the sort began has none.
func (j *sortJob) numberEntry(s *Store, e int32) {
	if p := j.placeOf(e); p >= 0 {
		key, cls := j.number(&s.entries[e])
		j.recs[p] = keyed{key: key, e: e, cls: cls}
	}
}

func (j *sortJob) placeOf(e int32) int32 {
	if int(e) < len(j.place) {
		return j.place[e]
	}
	return -1
}

// removed notes that entry gone was removed and the one at last moved into
// its place (last == gone: none did), which Store.remove has done.
func (j *sortJob) removed(s *Store, gone, last int32) {
	if j.sorting {
		j.gone = append(j.gone, nameRemoval{gone, last})
		return
	}
	if p := j.placeOf(gone); p >= 0 {
		j.recs[p].e = -1
	}
	q := int32(-1)
	if last != gone {
		q = j.placeOf(last)
		if int(last) < len(j.place) {
			j.place[last] = -1
		}
	}
	if int(gone) < len(j.place) {
		j.place[gone] = q
	}
	switch {
	case q < 0:
	case int(last) < j.next: // numbered already, as last
		j.recs[q].e = gone
	case int(gone) < j.next: // moved among the numbered, which the numbering has passed
		j.numberEntry(s, gone)
	}
}

// finishSort makes the sorted entries the order, in the direction set now.
func (s *Store) finishSort() {
	o := &s.order
	j := o.job
	recs := j.recs
	if len(j.gone) > 0 {
		at := make([]int32, len(j.place)) // entry -> its index in recs
		for i := range at {
			at[i] = -1
		}
		for i, r := range recs {
			if r.e >= 0 {
				at[r.e] = int32(i)
			}
		}
		of := func(e int32) int32 {
			if int(e) < len(at) {
				return at[e]
			}
			return -1
		}
		for _, g := range j.gone { // as byName brings the names up to date
			if i := of(g.gone); i >= 0 {
				recs[i].e = -1
			}
			i := int32(-1)
			if g.last != g.gone {
				if i = of(g.last); i >= 0 {
					recs[i].e, at[g.last] = g.gone, -1
				}
			}
			if int(g.gone) < len(at) {
				at[g.gone] = i
			}
		}
	}
	keys := j.place[:0] // numbered: its memory is free, and as long
	for _, r := range recs {
		if r.e >= 0 {
			keys = append(keys, r.e)
		}
	}
	if s.reverse {
		slices.Reverse(keys) // the reversed sort is its mirror image, ties too
	}
	o.setBlocks(keys)
	o.job = nil
	// Sorted by rate, the rates were read as of the job's quiet: the keys
	// that faded since are sorted again, as after any quiet second.
	o.quiet, o.refade = j.quiet, o.refade || s.quiet != j.quiet
}
