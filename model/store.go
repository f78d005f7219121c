package model

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Store holds every counter the dashboard knows, in the current sort and
// filter. Apply is the only way data enters it. It is not safe for
// concurrent use: the ui owns it.
//
// Cost model: Apply is O(batch). The sorted, filtered order is kept in
// blocks of a few hundred keys (see order) and brought up to date when a
// reader (Rows, IndexOf, Visible, Counts) asks for it, with work that does
// not grow with the number of keys unless something changed most of them:
//
//   - Each key that moved since costs O(log n) compares plus a copy within
//     its block, so a frame after a batch of changes costs about the same
//     at a thousand keys as at a million. A reading that cannot move its
//     key (a new value while sorted by name) costs the order nothing.
//   - A new sort, or a change to most keys at once, sorts everything again,
//     from the order by name kept since the last sort and a number per key
//     (see names.go): a few passes over the keys, and a name compare only
//     for each key that arrived since; reversing a sort (SetReverse) reads
//     the blocks backwards, O(n) with a small constant, and compares nothing.
//   - Sorted by rate, a quiet second (QuietUntil) sorts again only the keys
//     whose rates are not 0, which sit at the order's two ends and are
//     mostly in order already: about a compare each.
//   - A new filter (SetFilter) checks only the keys whose answer can
//     change: those shown when it is narrower (a term typed on), those
//     hidden when it is wider (a letter taken back), all otherwise. It
//     checks sweepStep of them at each read, so no read pays for more; until
//     all are checked the order shows the filter before it, whole (see
//     Filtering), and the ui draws again to see it through. A filter that
//     every key of a million may pass takes a few frames; one that narrows
//     a few thousand keys, one.
//
// Rows is O(rows asked) and IndexOf O(block) once the order is up to date.
//
// The orders are SortKey's, each also reversed (SetReverse).
type Store struct {
	rules  *Rules
	clocks map[string]clockKey // two-string buckets' clocks, by the stem of their name (see store_pair.go); nil until one is seen

	entries []entry           // in no particular order; removal swaps the last entry in
	index   keyIndex          // key -> position in entries
	types   map[string]string // type names other than "string", shared by their keys
	plain   bitset            // a bit per entry: its name is a plainName (a bit, as entry has no byte to spare)
	notes   map[string]note   // what a hash's reading says beyond its entry; nil until one does
	fields  fieldRows         // the hashes read field by field, and their rows (see store_fields.go)
	epoch   time.Time         // entry.at counts from here (the first reading's time)
	quiet   int64             // no key changed up to here unless read since (see QuietUntil); 0: not known
	named   bool              // it has held a row of a named server: its IDs end in their server (see rowid.go)
	shards  shardRows         // the shard groups and their rows' copies (see store_shards.go)

	hist     history // past readings of the keys that changed
	parking  parking // the rings of keys removed lately (see trend_park.go)
	ages     ages    // the keys by when they were last read (see OldestRead)
	untils   untils  // the readings vouched for until a time (see EachShownRead)
	byStatus [NumStatuses]int
	floats   int      // entries holding a decimal (see countValue)
	hugeInts int      // entries holding an integer beyond 2^53
	percents percents // the keys by share of their limit (see Overview)
	tally    *tally   // the keys by rule, layout and status (see Tally); nil until asked for
	sortKey  SortKey
	reverse  bool
	filter   filter
	order    order
	// before is an entry as it was before a reading, for observe to compare
	// with: held here rather than on the stack, as the sorts' functions
	// (sortSpec) would move it to the heap at every reading.
	before entry
}

// entry is a Counter as the Store keeps it, in as few bytes as a million
// keys call for: an integer's text is rebuilt from its value, other types
// keep their (shared) type name where strings keep their text, the reading
// time is relative to the Store's epoch, and the rate is two decayed sums.
type entry struct {
	key      string
	text     string // a string's stored text ("" for KindInt, unless decoded from JSON or msgpack: FormatInt(num) is it), or another type's name
	num      uint64 // the int64 (KindInt) or the float64's bits (KindFloat)
	pttl     int64
	at       int64   // nanoseconds from the Store's epoch to the reading
	sumDelta float32 // the increases between readings, each faded by its age
	sumSecs  float32 // the seconds between readings, faded alike
	rule     int16
	kind     Kind
	status   Status
	isString bool
	moved    bool   // it may belong elsewhere in the order: see order.dirty
	layout   Layout // as Read gave it
	why      why    // Read's reason for it, which gives the clue (see store_layout.go)
	hist     int32  // its ring of past readings + 1; 0: none (see history.go)
	histN    uint8  // readings in the ring
	histHead uint8  // where the next one goes
	extends  uint8  // pushes of its expiry while it grew (see extend)
}

// deadlineJitter is how far a key's deadline may move between readings
// before Apply counts its expiry as changed: PTTL is read over the network,
// so successive readings of an untouched TTL disagree by a little.
const deadlineJitter = time.Second

// NewStore returns an empty Store that classifies keys with rules.
func NewStore(rules *Rules) *Store {
	return &Store{rules: rules, index: newKeyIndex(), types: map[string]string{}, filter: parseFilter(""), order: newOrder()}
}

// Rules returns the rules the Store classifies with.
func (s *Store) Rules() *Rules { return s.rules }

// Apply upserts each observation (computing value, status and rate) and
// deletes each removed key. An observation with PTTL == PTTLMissing or
// Type "none" removes its key too. A hash whose fields carry TTLs
// (Observation.FieldTTLs) is a row a numeric field (Rows), under its
// RowID, and a removed key takes its fields' rows with it (see
// store_fields.go). It returns how many rows changed.
//
// Removals are applied first: a key both removed and read in one batch was
// read after it was removed, and hiding a key that exists (perhaps a stuck
// one, which nothing would ever report again) is the worse mistake. A
// reading older than the one already held is ignored. Counters carry each
// reading's At as ObservedAt (monotonic clock included; compare with
// Equal), so TTLs count down from it.
//
// A key counts as changed when it is added or removed, or read with another
// value, type, status or expiry (a TTL gained, lost, or set again); a key
// changed twice in one batch counts twice.
func (s *Store) Apply(b Batch) int {
	if len(s.entries) == 0 && len(b.Observed) > 0 {
		// A first batch of many keys (a poller's first batch after a
		// restart of the feed, a benchmark's): size for it at once rather
		// than growing through every power of two.
		s.index.reserve(len(b.Observed), s.entries)
		s.entries = slices.Grow(s.entries, len(b.Observed))
		s.order.home = slices.Grow(s.order.home, len(b.Observed))
	}
	changed := 0
	if b.Server != "" {
		s.named = true
	}
	for _, key := range b.Removed {
		changed += s.removeKey(ServerKey(b.Server, key))
	}
	for i := range b.Observed {
		o := &b.Observed[i]
		if b.Server != "" {
			o.Server = b.Server
		} else if o.Server != "" {
			s.named = true
		}
		changed += s.observe(o)
	}
	return changed
}

// observe applies one reading, and returns how many rows it changed: a
// key's reading changes its row; a hash read field by field, its fields'
// rows (see store_fields.go).
func (s *Store) observe(o *Observation) int {
	switch {
	case o.Field != "":
		return s.observeField(o)
	case o.PTTL == PTTLMissing || o.Type == "none":
		return s.removeKey(rowKey(o))
	case o.FieldTTLs:
		if n, ok := s.observeHash(o); ok {
			return n
		}
	}
	changed := 0
	if len(s.fields.byKey) != 0 {
		if s.fieldsNewer(o) {
			return 0
		}
		changed = s.removeFields(rowKey(o)) // read field by field before, whole now
	}
	if s.observeRow(o, rowKey(o)) {
		changed++
	}
	return changed
}

// observeRow applies o to the row id: o's key's, or its field's.
func (s *Store) observeRow(o *Observation, id string) bool {
	if s.index.len() == 0 && len(s.parking.byKey) == 0 {
		s.epoch = o.At // keeps the monotonic reading, so TTLs count down with it
		s.quiet = 0
	}
	at := int64(o.At.Sub(s.epoch))
	s.expireParked(at) // an older reading finds nothing older still to expire
	i, ok := s.index.find(id, s.entries)
	if !ok {
		s.add(o, at, id)
		return true
	}
	e := &s.entries[i]
	if at < e.at {
		return false
	}
	s.ages.move(e.at, at)
	s.setUntil(e.key, o)
	r, st := s.read(o, e.rule)
	st = s.remember(e, &r, o.PTTL, at, st)
	v := r.Value
	// A reading may move the key in the sort (never by name: keys do not
	// change): compare it before and after.
	before := &s.before
	track := s.sortKey != SortKeyName && !e.moved
	if track {
		*before = *e
	}

	oldNum, wasNum := e.value().Number()
	newNum, isNum := v.Number()
	switch {
	case !wasNum || !isNum || e.layout != r.Layout:
		e.sumDelta, e.sumSecs = 0, 0
	case at > e.at:
		delta := newNum - oldNum
		if delta < 0 && e.restarted(o.PTTL, at) {
			delta = newNum // a new key in a new window, counted up from 0
		}
		e.addReading(delta, float64(at-e.at)/float64(time.Second))
	}

	changed := !e.holds(o.Type, &r, o.Raw) || e.expiryMoved(o.PTTL, at)
	was := entry{kind: e.kind, num: e.num, layout: e.layout, rule: e.rule, status: e.status}
	s.setValue(e, o, &r)
	if e.kind != was.kind || e.num != was.num || e.layout != was.layout {
		s.countValue(&was, -1) // most readings find the value as it was, and count nothing
		s.countValue(e, 1)
	}
	e.pttl, e.at = o.PTTL, at
	if st != e.status {
		s.byStatus[e.status]--
		s.byStatus[st]++
		e.status = st
		s.statusChanged(i)
		changed = true
	}
	s.retally(&was, e)
	// Sorted by rate, a key with a rate that is read again is placed
	// again, even where its rate as of now is what it was: the keys that
	// fade are told apart by how their rates were read (see sortFading).
	if track && (s.compareEntries(before, e) != 0 || s.sortKey == SortRate && before.rateChanged(e)) {
		s.markMoved(i)
	}
	return changed
}

func (s *Store) add(o *Observation, at int64, id string) {
	e := entry{key: id, pttl: o.PTTL, at: at, rule: s.rules.matchIndex(o.Key)}
	r, st := s.read(o, e.rule)
	s.setValue(&e, o, &r)
	e.status = st
	s.unpark(&e)
	s.byStatus[e.status]++
	s.countValue(&e, 1)
	s.tallyEntry(&e, 1)
	s.ages.add(at)
	s.setUntil(e.key, o)
	i := int32(len(s.entries))
	s.entries = append(s.entries, e)
	s.index.insert(id, i, s.entries)
	if o.Field != "" {
		s.addField(o, id)
	}
	s.countCopy(&s.entries[i], 1)
	ord := &s.order
	s.plain.set(i, plainName(id))
	ord.add(i, ord.pass != nil && s.keeps(&ord.passed, i), ord.sweep != noSweep && s.keeps(&ord.target, i))
	s.markMoved(i)
}

// remove deletes the row key (a key's, or a field's: its ID), moving the
// last entry into its place, and reports whether it was there.
func (s *Store) remove(key string) bool {
	i, ok := s.index.find(key, s.entries)
	if !ok {
		return false
	}
	s.countCopy(&s.entries[i], -1) // while its field row is known
	s.index.remove(key, s.entries)
	if len(s.notes) != 0 {
		delete(s.notes, key)
	}
	if len(s.fields.keyOf) != 0 {
		s.dropField(key)
	}
	s.byStatus[s.entries[i].status]--
	s.countValue(&s.entries[i], -1)
	s.tallyEntry(&s.entries[i], -1)
	s.ages.remove(s.entries[i].at)
	s.dropUntil(key)
	s.dropClock(key)
	s.park(&s.entries[i])
	if s.order.home[i] != noBlock {
		s.order.take(i)
	}
	last := int32(len(s.entries) - 1)
	s.order.removedName(i, last)
	if i != last {
		s.index.move(s.entries[last].key, i, s.entries)
		s.entries[i] = s.entries[last]
		s.plain.set(i, s.plain.has(last))
		s.order.rename(last, i)
		if s.entries[i].moved {
			s.order.dirty = append(s.order.dirty, i) // its old index in the list is stale now
		}
		if o := &s.order; o.sweep != noSweep && int(i) < o.sweep && int(last) >= o.sweep {
			s.setIncoming(i, s.keeps(&o.target, i)) // moved among the checked
		}
	}
	if s.order.job != nil {
		s.order.job.removed(s, i, last)
	}
	s.entries[last] = entry{} // let go of its strings
	s.entries = s.entries[:last]
	s.order.home = s.order.home[:last]
	return true
}

// setValue stores a reading's type, value and layout in e.
func (s *Store) setValue(e *entry, o *Observation, r *Reading) {
	v := r.Value
	e.isString, e.kind, e.num = o.Type == "string", v.Kind, numOf(r)
	e.layout, e.why = r.Layout, r.why
	switch {
	case !e.isString:
		e.text = s.typeName(o.Type)
	case v.Kind == KindInt && r.Field == "": // a string's field is a count in its JSON or msgpack, not its text
		e.text = ""
	default:
		e.text = o.Raw
	}
	s.note(e.key, r, o.Field)
}

// countValue adds k (1 or -1) to the Store's counts of e's value: its
// share of its limit (see percents), and the decimals and the integers
// beyond 2^53, which decide how a sort by value numbers the keys (see
// sortNumber) without a pass over them all.
func (s *Store) countValue(e *entry, k int) {
	s.percents[s.percentBucket(e)] += k
	switch {
	case e.kind == KindFloat:
		s.floats += k
	case e.kind == KindInt && (int64(e.num) > 1<<53 || int64(e.num) < -(1<<53)):
		s.hugeInts += k
	}
}

// typeName returns the Store's copy of a type name, so that a million keys
// share a handful of strings.
func (s *Store) typeName(typ string) string {
	if t, ok := s.types[typ]; ok {
		return t
	}
	typ = strings.Clone(typ)
	s.types[typ] = typ
	return typ
}

// holds reports whether e already holds what a reading r of typ and raw says.
func (e *entry) holds(typ string, r *Reading, raw string) bool {
	v := r.Value
	switch {
	case e.isString != (typ == "string") || e.kind != v.Kind || e.layout != r.Layout || e.why != r.why:
		return false
	case !e.isString:
		return e.text == typ && e.num == numOf(r)
	case v.Kind == KindInt && e.text == "":
		return int64(e.num) == v.Int
	}
	return e.text == raw
}

func (e *entry) value() Value {
	switch e.kind {
	case KindInt:
		n := int64(e.num)
		return Value{Kind: KindInt, Int: n, Float: float64(n)}
	case KindFloat:
		return Value{Kind: KindFloat, Float: math.Float64frombits(e.num)}
	case KindNone:
	}
	return Value{}
}

// expiryMoved reports whether a reading of pttl at at says the key gained
// or lost its TTL, or had it set again.
func (e *entry) expiryMoved(pttl, at int64) bool {
	if (e.pttl < 0) != (pttl < 0) {
		return true
	}
	if pttl < 0 {
		return false
	}
	moved := deadline(pttl, at) - e.deadline()
	return moved > int64(deadlineJitter) || moved < -int64(deadlineJitter)
}

// deadline is when e expires, in nanoseconds from the epoch; only
// meaningful when e has a TTL.
func (e *entry) deadline() int64 { return deadline(e.pttl, e.at) }

func deadline(pttl, at int64) int64 {
	d := int64(PTTLDuration(pttl))
	if at > 0 && d > math.MaxInt64-at {
		return math.MaxInt64
	}
	return at + d
}

func (s *Store) counter(i int32) Counter {
	e := &s.entries[i]
	typ, raw := e.text, ""
	if e.isString {
		typ, raw = "string", e.text
		if e.kind == KindInt && e.text == "" {
			raw = strconv.FormatInt(int64(e.num), 10)
		}
	}
	c := Counter{
		Key:        s.keyOf(e),
		Type:       typ,
		Raw:        raw,
		Value:      e.value(),
		PTTL:       e.pttl,
		ObservedAt: s.epoch.Add(time.Duration(e.at)),
		Rule:       e.rule,
		Status:     e.status,
		Rate:       s.rateOf(e),
		KnownUntil: s.knownUntil(e.key),
	}
	if key, field, ok := s.fieldRow(e); ok {
		// key is the row's ServerKey, so that the same hash on two servers
		// keeps its own count.
		c.Field, c.FieldRow = field, true
		c.NotShown = s.fields.notShown[key]
	}
	c.Server = s.serverOf(e)
	s.setReading(&c, e)
	return c
}

// Len is the number of keys held, ignoring the filter.
func (s *Store) Len() int { return len(s.entries) }

// Get returns the counter of the row id: a key's, or a hash field's
// (RowID, Counter.ID).
func (s *Store) Get(id string) (Counter, bool) {
	i, ok := s.index.find(id, s.entries)
	if !ok {
		return Counter{}, false
	}
	return s.counter(i), true
}

// EachProblem calls fn with the ID of each row (Counter.ID: a key, or a
// hash field's RowID) whose status is Repairable (a Problem a repair can
// fix) that the filter (Filter, applied in full or not) keeps, in no
// particular order, and the rule that applies to it. It reads the entries as they
// are, without building a Counter or the sorted order, which paging
// through the rows would, on the dashboard's own thread (BenchmarkEachProblem
// measures it).
func (s *Store) EachProblem(fn func(id string, rule Rule)) {
	for i := range s.entries {
		if e := &s.entries[i]; e.status.Repairable() && s.keeps(&s.filter, int32(i)) {
			fn(e.key, s.rules.At(int(e.rule)))
		}
	}
}

// RuleOf returns the rule that applies to c and whether it was a listed
// rule (false: the fallback). A field's row (Counter.FieldRow) is read
// from its field and expects a TTL, as its siblings have theirs.
func (s *Store) RuleOf(c Counter) (Rule, bool) {
	r := s.rules.At(int(c.Rule))
	if c.FieldRow {
		r = rowRule(r, c.Field)
	}
	return r, c.Rule >= 0
}

func (e *entry) percent(rules *Rules) (float64, bool) {
	return percentOf(e.layout, e.value(), rules.At(int(e.rule)).Limit)
}
