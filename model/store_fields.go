package model

// The Store's rows of hashes read field by field (Rows): a reading of a
// hash whose fields carry TTLs becomes one entry a numeric field, under
// its RowID, each with its own value, TTL, status and history. Few hashes
// are read so, so what tells their rows apart is kept beside the entries,
// which a million plain keys fill: a plain key pays a length check.
//
// A hash's rows follow its readings: a field the last one did not hold
// (expired, HDEL) leaves, the hash gone takes every row with it, and a
// hash that no longer has a field with a TTL is one whole key's row again.

// fieldRows are the hashes read field by field, and their rows.
type fieldRows struct {
	byKey map[string]map[string]struct{} // a hash's key -> the fields it has rows for; nil until one
	keyOf map[string]int                 // a field's row ID -> the length of its key in the ID
	// notShown: a hash's key, with its server (ServerKey) -> how many of
	// its fields its last reading left unread (Observation.NotShown), for
	// those that left some.
	notShown map[string]int64
}

// fieldRow returns the key and the field of e, and false when e is a whole
// key's row.
func (s *Store) fieldRow(e *entry) (key, field string, ok bool) {
	if len(s.fields.keyOf) == 0 {
		return "", "", false
	}
	n, ok := s.fields.keyOf[e.key]
	if !ok {
		return "", "", false
	}
	return e.key[:n], e.key[n+1:], true
}

// keyOf is the Redis key of e's row: its own, or its hash's.
func (s *Store) keyOf(e *entry) string {
	k := e.key
	if key, _, ok := s.fieldRow(e); ok {
		k = key
	}
	if s.named {
		k, _ = splitServer(k)
	}
	return k
}

// serverOf is the server of e's row: "" with one server.
func (s *Store) serverOf(e *entry) string {
	if !s.named {
		return ""
	}
	k := e.key
	if key, _, ok := s.fieldRow(e); ok {
		k = key
	}
	_, server := splitServer(k)
	return server
}

// nameOf is e's row's name for people, escaped (RowName).
func (s *Store) nameOf(e *entry) string {
	if _, field, ok := s.fieldRow(e); ok {
		return RowName(s.keyOf(e), field)
	}
	return Printable(s.keyOf(e))
}

// rowKey is o's key as the Store holds it: with its server among several
// (ServerKey).
func rowKey(o *Observation) string { return ServerKey(o.Server, o.Key) }

// observeHash applies the reading o of a hash whose fields carry TTLs: a
// row a numeric field, the rows of the fields it no longer holds removed,
// and the whole key's row, if there was one, removed. What was read after
// o stays: a row read since, the whole key read since (o is then ignored).
// It returns how many rows changed; ok is false when o has no field to
// read as a row (none holds a number): it is then a whole key's reading.
func (s *Store) observeHash(o *Observation) (changed int, ok bool) {
	rows := Rows(o)
	if len(rows) == 0 || rows[0].Field == "" {
		return 0, false
	}
	if s.readAfter(rowKey(o), o) {
		return 0, true
	}
	if s.remove(rowKey(o)) {
		changed++ // read whole before, field by field now
	}
	if held := s.fields.byKey[rowKey(o)]; len(held) > 0 && !holdsAll(held, rows) {
		now := make(map[string]struct{}, len(rows))
		for i := range rows {
			now[rows[i].Field] = struct{}{}
		}
		for f := range held {
			// Expired, or deleted (HDEL), since the last reading.
			if _, still := now[f]; !still && !s.readAfter(RowID(rowKey(o), f), o) && s.remove(RowID(rowKey(o), f)) {
				changed++
			}
		}
	}
	for i := range rows {
		if s.observeRow(&rows[i], RowID(rowKey(o), rows[i].Field)) {
			changed++
		}
	}
	s.fields.noteNotShown(rowKey(o), o.NotShown)
	return changed, true
}

// noteNotShown keeps n, how many fields of the hash key were not read.
func (f *fieldRows) noteNotShown(key string, n int64) {
	switch {
	case n > 0 && f.notShown == nil:
		f.notShown = map[string]int64{key: n}
	case n > 0:
		f.notShown[key] = n
	default:
		delete(f.notShown, key)
	}
}

// holdsAll reports whether rows are the fields held, and no others: the
// same fields read again, as most readings are.
func holdsAll(held map[string]struct{}, rows []Observation) bool {
	if len(rows) != len(held) {
		return false
	}
	for i := range rows {
		if _, ok := held[rows[i].Field]; !ok {
			return false
		}
	}
	return true
}

// readAfter reports whether the Store holds the row id from a reading
// after o.
func (s *Store) readAfter(id string, o *Observation) bool {
	i, found := s.index.find(id, s.entries)
	return found && int64(o.At.Sub(s.epoch)) < s.entries[i].at
}

// fieldsNewer reports whether the Store holds a row of o's key's fields
// read after o, which is then older than what the Store shows.
func (s *Store) fieldsNewer(o *Observation) bool {
	for f := range s.fields.byKey[rowKey(o)] {
		if s.readAfter(RowID(rowKey(o), f), o) {
			return true
		}
	}
	return false
}

// observeField applies o, the reading of one field's row (a repair's
// answer), and returns how many rows changed: the field gone leaves its
// row, the key gone every row of it; a key that is no hash any more loses
// the row, and the feed's next reading shows what it holds.
func (s *Store) observeField(o *Observation) int {
	id := RowID(rowKey(o), o.Field)
	switch {
	case o.Type == "none":
		return s.removeKey(rowKey(o))
	case o.PTTL == PTTLMissing || o.Type != "hash":
		if s.remove(id) {
			return 1
		}
		return 0
	}
	changed := 0
	if s.remove(rowKey(o)) {
		changed++
	}
	if s.observeRow(o, id) {
		changed++
	}
	return changed
}

// addField notes that the entry just added under id is o's field's row.
func (s *Store) addField(o *Observation, id string) {
	f := &s.fields
	if f.byKey == nil {
		f.byKey, f.keyOf = map[string]map[string]struct{}{}, map[string]int{}
	}
	held := f.byKey[rowKey(o)]
	if held == nil {
		held = map[string]struct{}{}
		f.byKey[rowKey(o)] = held
	}
	held[o.Field] = struct{}{}
	f.keyOf[id] = len(rowKey(o))
}

// dropField forgets that id, a row leaving the Store, was a field's.
func (s *Store) dropField(id string) {
	f := &s.fields
	n, ok := f.keyOf[id]
	if !ok {
		return
	}
	delete(f.keyOf, id)
	key := id[:n]
	held := f.byKey[key]
	delete(held, id[n+1:])
	if len(held) == 0 {
		delete(f.byKey, key)
		delete(f.notShown, key)
	}
}

// removeFields removes every field's row of key, and returns how many
// there were.
func (s *Store) removeFields(key string) int {
	held := s.fields.byKey[key]
	if len(held) == 0 {
		return 0
	}
	fields := make([]string, 0, len(held))
	for f := range held {
		fields = append(fields, f)
	}
	n := 0
	for _, f := range fields {
		if s.remove(RowID(key, f)) {
			n++
		}
	}
	return n
}

// removeKey removes key's row and every field's row of it, and returns
// how many rows there were.
func (s *Store) removeKey(key string) int {
	n := 0
	if s.remove(key) {
		n++
	}
	if len(s.fields.byKey) != 0 {
		n += s.removeFields(key)
	}
	return n
}
