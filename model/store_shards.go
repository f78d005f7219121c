package model

// The rows that two shards of one group hold (SharedKeys), kept as rows
// come and go rather than found by a pass over the Store: the dashboard
// marks them in every frame, and a pass at a million rows is not a
// frame's to pay. Each row of a server of a group counts one copy of its
// name (Counter.NameID) in that group; a name with two or more copies is
// shared. A Store without groups pays a length check a row.

// shardRows are the Store's shard groups and their rows' copies.
type shardRows struct {
	groups  []ShardGroup
	groupOf map[string]int // a server's name -> its group's index in groups
	copies  map[shardName]int32
	shared  []int // by group, in groups' order: names with more than one copy
}

// shardName is a row's name in a group.
type shardName struct {
	group int
	name  string
}

// SetShards declares groups the servers that are shards of one limiter
// (config's [[shards]]): from then on a row that more than one of a
// group's servers holds is shared (Copies, SharedOf). It counts the rows
// held so far once; afterwards each row added or removed costs a map
// update, and only when its server is in a group.
func (s *Store) SetShards(groups []ShardGroup) {
	s.shards = shardRows{groups: groups, shared: make([]int, len(groups))}
	for g, group := range groups {
		for _, server := range group.Servers {
			if s.shards.groupOf == nil {
				s.shards.groupOf = make(map[string]int)
			}
			s.shards.groupOf[server] = g
		}
	}
	if s.shards.groupOf == nil {
		return
	}
	s.shards.copies = make(map[shardName]int32)
	for i := range s.entries {
		s.countCopy(&s.entries[i], 1)
	}
}

// countCopy counts e's row as a copy of its name in its server's group,
// by is 1 (a row added) or -1 (removed); nothing when e's server is in no
// group. It is called while e's field row, if it is one, is known.
func (s *Store) countCopy(e *entry, by int32) {
	if len(s.shards.groupOf) == 0 {
		return
	}
	g, ok := s.shards.groupOf[s.serverOf(e)]
	if !ok {
		return
	}
	name := shardName{g, s.keyOf(e)}
	if _, field, ok := s.fieldRow(e); ok {
		name.name = RowID(name.name, field)
	}
	was := s.shards.copies[name]
	now := was + by
	switch {
	case now <= 0:
		delete(s.shards.copies, name)
	default:
		s.shards.copies[name] = now
	}
	switch {
	case was < 2 && now >= 2:
		s.shards.shared[g]++
	case was >= 2 && now < 2:
		s.shards.shared[g]--
	}
}

// Copies is how many servers of c's server's group hold c's row (c
// counted): 2 or more for a shared row, each copy counting the limit once;
// 0 when c's server is in no group.
func (s *Store) Copies(c *Counter) int {
	g, ok := s.shards.groupOf[c.Server]
	if !ok {
		return 0
	}
	return int(s.shards.copies[shardName{g, c.NameID()}])
}

// SharedOf is c's row and its copies on the other servers of its group,
// in the order the group names its servers, when more than one holds it.
func (s *Store) SharedOf(c *Counter) (Shared, bool) {
	if s.Copies(c) < 2 {
		return Shared{}, false
	}
	group := s.shards.groups[s.shards.groupOf[c.Server]]
	shared := Shared{Group: group.Name}
	for _, server := range group.Servers {
		id := RowOf(server, c.Key, "")
		if c.FieldRow {
			id = RowOf(server, c.Key, c.Field)
		}
		if copy, ok := s.Get(id); ok {
			shared.Copies = append(shared.Copies, &copy)
		}
	}
	return shared, len(shared.Copies) > 1
}

// SharedRows is how many rows' names more than one server of their group
// holds: the rows SharedKeys would find, each name once.
func (s *Store) SharedRows() int {
	n := 0
	for _, in := range s.shards.shared {
		n += in
	}
	return n
}

// SharedRowsIn is SharedRows of the group at index g of Shards alone; 0
// for a g out of range.
func (s *Store) SharedRowsIn(g int) int {
	if g < 0 || g >= len(s.shards.shared) {
		return 0
	}
	return s.shards.shared[g]
}

// Shards are the groups SetShards declared.
func (s *Store) Shards() []ShardGroup { return s.shards.groups }
