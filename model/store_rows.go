package model

// SetSort changes the order; Sort returns it. An unknown SortKey is
// ignored.
func (s *Store) SetSort(k SortKey) {
	if k < numSortKeys && k != s.sortKey {
		s.sortKey = k
		s.order.resort = true
	}
}

func (s *Store) Sort() SortKey { return s.sortKey }

// SetReverse reads the order from the bottom up (true) or as SortKey
// describes it (false); Reverse returns which. Turning it costs one pass
// over the order at the next read, not a sort.
func (s *Store) SetReverse(reverse bool) {
	if reverse != s.reverse {
		s.reverse = reverse
		s.order.flip = !s.order.flip
	}
}

func (s *Store) Reverse() bool { return s.reverse }

// Visible is how many keys pass the filter.
func (s *Store) Visible() int {
	s.refresh()
	return s.order.shown
}

// Rows returns up to n counters of the filtered, sorted order from offset.
func (s *Store) Rows(offset, n int) []Counter {
	s.refresh()
	o := &s.order
	offset = max(offset, 0)
	if n <= 0 || offset >= o.shown {
		return nil
	}
	rows := make([]Counter, 0, min(n, o.shown-offset))
	for j, i := o.locate(offset); ; j, i = j+1, 0 {
		for _, e := range o.blocks[j].keys[i:] {
			if o.passes(e) {
				rows = append(rows, s.counter(e))
				if len(rows) == cap(rows) {
					return rows
				}
			}
		}
	}
}

// IndexOf is the position of the row id (Counter.ID) in the filtered,
// sorted order, or -1.
func (s *Store) IndexOf(id string) int {
	i, ok := s.index.find(id, s.entries)
	if !ok {
		return -1
	}
	s.refresh()
	return s.order.position(i)
}

// Counts summarises the Store for the header.
type Counts struct {
	Total     int
	Visible   int              // after the filter shown
	ByStatus  [NumStatuses]int // over all keys, ignoring the filter
	Filtering bool             // the filter set last is not shown yet: see Store.Filtering
	Fields    int              // of Total, the rows of hash fields (a hash whose fields carry TTLs)
}

// Counts returns the totals for the header.
func (s *Store) Counts() Counts {
	s.refresh()
	return Counts{Total: len(s.entries), Visible: s.order.shown, ByStatus: s.byStatus, Filtering: s.Filtering(), Fields: len(s.fields.keyOf)}
}
