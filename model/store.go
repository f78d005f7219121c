package model

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SortKey is one of the orders the dashboard cycles through with `s`.
// Each is listed as it reads unreversed; Store.SetReverse reads it from the
// bottom up, its exact mirror image, ties and keys left last included (so
// that `S` costs a pass over the order, not a sort):
//
//   - SortKeyName: key names as people read them, runs of digits by their
//     number ("user:2", "user:10", "user:100"); reversed, Z to A.
//   - SortValue, SortPercent: largest first, keys without a number (or a
//     limit) last; reversed, those first, then the smallest.
//   - SortTTL: keys without expiry first, as the ones an incident is about,
//     then the least time left; reversed, the most time left first and the
//     keys without expiry last.
//   - SortRate: fastest rise first, falling keys last.
//   - SortStatus: most severe first (stuck, no-expiry, ...: Status order).
//
// Every order breaks ties by key name, in the same order as SortKeyName
// (and reversed with it), so it is total and the same for the same data.
type SortKey uint8

const (
	SortKeyName SortKey = iota
	SortValue
	SortTTL
	SortPercent
	SortRate
	SortStatus
	numSortKeys
)

var sortNames = [numSortKeys]string{"key", "value", "ttl", "% limit", "rate", "status"}

// String is the sort's short name, for the header.
func (k SortKey) String() string {
	if k < numSortKeys {
		return sortNames[k]
	}
	return "?"
}

// Next is the sort that `s` moves to: each in turn, then SortKeyName again.
func (k SortKey) Next() SortKey { return (k + 1) % numSortKeys }

// Counts summarises the Store for the header.
type Counts struct {
	Total     int
	Visible   int              // after the filter shown
	ByStatus  [NumStatuses]int // over all keys, ignoring the filter
	Filtering bool             // the filter set last is not shown yet: see Store.Filtering
}

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
	epoch   time.Time         // entry.at counts from here (the first reading's time)
	quiet   int64             // no key changed up to here unless read since (see QuietUntil); 0: not known

	hist     history // past readings of the keys that changed
	parking  parking // the rings of keys removed lately (see trend_park.go)
	ages     ages    // the keys by when they were last read (see OldestRead)
	untils   untils  // the readings vouched for until a time (see KnownUntilOf)
	byStatus [NumStatuses]int
	floats   int      // entries holding a decimal (see countValue)
	hugeInts int      // entries holding an integer beyond 2^53
	percents percents // the keys by share of their limit (see Overview)
	sortKey  SortKey
	reverse  bool
	filter   filter
	order    order
}

// entry is a Counter as the Store keeps it, in as few bytes as a million
// keys call for: an integer's text is rebuilt from its value, other types
// keep their (shared) type name where strings keep their text, the reading
// time is relative to the Store's epoch, and the rate is two decayed sums.
type entry struct {
	key      string
	text     string // a string's stored text ("" for KindInt: FormatInt(num) is it), or another type's name
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

// plainName reports whether a filter can look for text in key as it is:
// printable ASCII that Printable keeps, with no upper-case letter, as most
// key names are. It is worked out once, when the key arrives.
func plainName(key string) bool {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c >= 0x7f || c == '\\' || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// rateHorizon (seconds) is how far back Rate looks: an increase this old
// weighs e^-1 of a fresh one.
const rateHorizon = 5.0

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
// Type "none" removes its key too. It returns how many keys changed.
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
	for _, key := range b.Removed {
		if s.remove(key) {
			changed++
		}
	}
	for i := range b.Observed {
		if s.observe(&b.Observed[i]) {
			changed++
		}
	}
	return changed
}

func (s *Store) observe(o *Observation) bool {
	if o.PTTL == PTTLMissing || o.Type == "none" {
		return s.remove(o.Key)
	}
	if s.index.len() == 0 && len(s.parking.byKey) == 0 {
		s.epoch = o.At // keeps the monotonic reading, so TTLs count down with it
		s.quiet = 0
	}
	at := int64(o.At.Sub(s.epoch))
	s.expireParked(at) // an older reading finds nothing older still to expire
	i, ok := s.index.find(o.Key, s.entries)
	if !ok {
		s.add(o, at)
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
	var before entry
	track := s.sortKey != SortKeyName && !e.moved
	if track {
		before = *e
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
	was := entry{kind: e.kind, num: e.num, layout: e.layout, rule: e.rule}
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
	// Sorted by rate, a key with a rate that is read again is placed
	// again, even where its rate as of now is what it was: the keys that
	// fade are told apart by how their rates were read (see sortFading).
	if track && (s.compareEntries(&before, e) != 0 || s.sortKey == SortRate && before.rateChanged(e)) {
		s.markMoved(i)
	}
	return changed
}

func (s *Store) add(o *Observation, at int64) {
	e := entry{key: o.Key, pttl: o.PTTL, at: at, rule: s.rules.matchIndex(o.Key)}
	r, st := s.read(o, e.rule)
	s.setValue(&e, o, &r)
	e.status = st
	s.unpark(&e)
	s.byStatus[e.status]++
	s.countValue(&e, 1)
	s.ages.add(at)
	s.setUntil(e.key, o)
	i := int32(len(s.entries))
	s.entries = append(s.entries, e)
	s.index.insert(o.Key, i, s.entries)
	ord := &s.order
	s.plain.set(i, plainName(o.Key))
	ord.add(i, ord.pass != nil && s.keeps(&ord.passed, i), ord.sweep != noSweep && s.keeps(&ord.target, i))
	s.markMoved(i)
}

// remove deletes key, moving the last entry into its place, and reports
// whether it was there.
func (s *Store) remove(key string) bool {
	i, ok := s.index.find(key, s.entries)
	if !ok {
		return false
	}
	s.index.remove(key, s.entries)
	if len(s.notes) != 0 {
		delete(s.notes, key)
	}
	s.byStatus[s.entries[i].status]--
	s.countValue(&s.entries[i], -1)
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
	case v.Kind == KindInt:
		e.text = ""
	default:
		e.text = o.Raw
	}
	s.note(e.key, r)
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
	case v.Kind == KindInt:
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

// restarted reports whether a reading of pttl at at, whose value is below
// e's, can be a new key made since e was read (its window restarted and
// counted up from 0) rather than e lowered in place (DECR, SET KEEPTTL, a
// limiter giving a hit back), which keeps its deadline or has none.
//
// A key with a TTL can be made again once it expires: its deadline has
// passed, or a later one was set (deleted and made again). One made
// again without a TTL (INCR and no EXPIRE, the bug) is told by the old
// deadline alone, within deadlineJitter, as the two deadlines are
// estimates. A key without a TTL never expires: only a TTL set with the
// fall says it was made again; without one it was lowered.
func (e *entry) restarted(pttl, at int64) bool {
	if e.pttl < 0 {
		return pttl >= 0
	}
	was := e.deadline()
	if pttl < 0 {
		return at >= was-int64(deadlineJitter)
	}
	now := deadline(pttl, at)
	return now > was+int64(deadlineJitter) || at >= was && now > was
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

// addReading folds a change over secs seconds (> 0) into the rate (a fall
// is below 0: see restarted), a moving average whose weights fade as
// e^(-age/rateHorizon): both sums fade by the time that passed, and the
// new span counts for its faded weight (spanWeight), with the change
// spread over it. So the rate is
// about the change per second over the last rateHorizon seconds,
// however irregular the readings: a reading a few milliseconds after the
// last one moves it little, and one after a long quiet spell (keyspace
// events read a key only when it changes) weighs that spell as
// rateHorizon seconds without an increase, not its whole length, so a
// counter that starts again climbs as fast after a minute of quiet as
// after ten seconds, and as fast as when it is polled.
func (e *entry) addReading(delta, secs float64) {
	fade, weight := math.Exp(-secs/rateHorizon), spanWeight(secs)
	e.sumDelta = toFloat32(float64(e.sumDelta)*fade + delta*weight/secs)
	e.sumSecs = toFloat32(float64(e.sumSecs)*fade + weight)
}

// toFloat32 is f as a float32 sum of the rate can hold it: a float
// counter's jump past 3.4e38 is held at the largest float32, not as an
// infinity that, faded to nothing, would read as NaN for ever.
func toFloat32(f float64) float32 {
	return float32(max(-math.MaxFloat32, min(math.MaxFloat32, f)))
}

// spanWeight is the weight of the last secs seconds in the rate: the
// integral of e^(-t/rateHorizon) over them, about secs for a short span
// and rateHorizon for a long one.
func spanWeight(secs float64) float64 { return -rateHorizon * math.Expm1(-secs/rateHorizon) }

func (e *entry) rate() float64 {
	if e.sumSecs == 0 {
		return 0
	}
	return float64(e.sumDelta) / float64(e.sumSecs)
}

// quietStep is how far QuietUntil must move on to count: the rates of
// quiet keys fall a step a second, so an order by rate changes at most
// once a second, not at every frame.
const quietStep = time.Second

// fadedOut is how long after its last reading a quiet key's rate is 0: by
// then (twelve rateHorizons) it has fallen to a millionth of what it was,
// and a million keys that once had a rate do not each need placing again,
// every second, for as long as they stay quiet.
const fadedOut = 12 * rateHorizon * float64(time.Second)

// QuietUntil tells the Store that no key changed up to now unless it was
// read since: true of a feed of keyspace events, which reads a key as soon
// as it changes, and not of polling, which reads every key in turn
// whether it changed or not. The rate of a key last read before now then
// counts the time since as time without an increase, as a reading now
// would: a counter nobody increments any more falls to 0/s (from 10/s, in
// 27 s; from 1,000/s, in 50, as when polled), rather than showing its last
// rate until something reads it again, and is 0 from fadedOut on. It only
// moves forward, in steps of quietStep; the rates are as of the last step
// until the next.
//
// Sorted by rate, the order follows at the next read: only keys whose
// rate is not 0 can fade, and the order keeps those at its two ends, so
// those ends are sorted again, and the keys whose rates reached 0 placed
// among the others by name (see order.refade).
func (s *Store) QuietUntil(now time.Time) {
	if len(s.entries) == 0 {
		return
	}
	quiet := int64(now.Sub(s.epoch))
	if quiet-s.quiet < int64(quietStep) {
		return
	}
	s.quiet = quiet
	if s.sortKey == SortRate {
		s.order.refade = true
	}
}

// rateOf is e's rate as of its last reading or, when later, as of the
// moment the Store knows it has not changed since (see QuietUntil): the
// time in between folded in as a reading with no increase, as addReading
// would fold it; 0 from fadedOut on.
func (s *Store) rateOf(e *entry) float64 {
	return rateAsOf(e, s.quiet)
}

// rateChanged reports whether e's rate is worked out from other
// readings than before's, and either is not 0.
func (e *entry) rateChanged(before *entry) bool {
	return (e.rate() != 0 || before.rate() != 0) &&
		(e.at != before.at || e.sumDelta != before.sumDelta || e.sumSecs != before.sumSecs)
}

// hasRateAsOf reports whether rateAsOf(e, quiet) is not 0, without
// working it out.
func (e *entry) hasRateAsOf(quiet int64) bool {
	return e.rate() != 0 && (quiet == 0 || quiet <= e.at || float64(quiet-e.at) < fadedOut)
}

// rateAsOf is rateOf with the Store quiet up to quiet.
func rateAsOf(e *entry, quiet int64) float64 {
	r := e.rate()
	if r == 0 || quiet == 0 || quiet <= e.at {
		return r
	}
	secs := float64(quiet - e.at)
	if secs >= fadedOut {
		return 0
	}
	secs /= float64(time.Second)
	faded := float64(e.sumSecs) * math.Exp(-secs/rateHorizon)
	return r * faded / (faded + spanWeight(secs))
}

func (s *Store) counter(i int32) Counter {
	e := &s.entries[i]
	typ, raw := e.text, ""
	if e.isString {
		typ, raw = "string", e.text
		if e.kind == KindInt {
			raw = strconv.FormatInt(int64(e.num), 10)
		}
	}
	c := Counter{
		Key:        e.key,
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
	s.setReading(&c, e)
	return c
}

// Len is the number of keys held, ignoring the filter.
func (s *Store) Len() int { return len(s.entries) }

// Get returns the counter for key.
func (s *Store) Get(key string) (Counter, bool) {
	i, ok := s.index.find(key, s.entries)
	if !ok {
		return Counter{}, false
	}
	return s.counter(i), true
}

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

// SetFilter sets the filter: space-separated terms that must all hold; a term
// "is:STATUS" (is:stuck, is:no-expiry, ...) keeps that status, "is:problem"
// keeps the statuses check fails on (Status.Problem), any other term keeps
// keys whose printable name contains it, ignoring case. Filter returns it
// at once; the rows follow as Filtering says.
func (s *Store) SetFilter(q string) {
	if q != s.filter.query {
		s.filter = parseFilter(q)
		s.order.refilter = true
	}
}

func (s *Store) Filter() string { return s.filter.query }

// Filtering reports whether the filter set last is still being applied.
// A new filter that could change many keys' answers is checked against a
// step of them at each read of the order (Rows, Visible, IndexOf, Counts);
// until all are checked, those read as the filter before it had them, so
// that the rows shown are always one filter's, whole and in order. The ui
// should draw again while it is true.
func (s *Store) Filtering() bool {
	o := &s.order
	return o.sweep != noSweep || o.refilter && s.filter.query != o.passed.query
}

// EachProblem calls fn with each counter whose status is Repairable (a Problem a repair can fix) that
// the filter (Filter, applied in full or not) keeps, in no particular
// order, and the rule that applies to it. It reads the entries as they
// are, without building a Counter or the sorted order, which paging
// through the rows would, on the dashboard's own thread (BenchmarkEachProblem
// measures it).
func (s *Store) EachProblem(fn func(key string, rule Rule)) {
	for i := range s.entries {
		if e := &s.entries[i]; e.status.Repairable() && s.keeps(&s.filter, int32(i)) {
			fn(e.key, s.rules.At(int(e.rule)))
		}
	}
}

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

// IndexOf is key's position in the filtered, sorted order, or -1.
func (s *Store) IndexOf(key string) int {
	i, ok := s.index.find(key, s.entries)
	if !ok {
		return -1
	}
	s.refresh()
	return s.order.position(i)
}

// Counts returns the totals for the header.
func (s *Store) Counts() Counts {
	s.refresh()
	return Counts{Total: len(s.entries), Visible: s.order.shown, ByStatus: s.byStatus, Filtering: s.Filtering()}
}

// RuleOf returns the rule that applies to c and whether it was a listed
// rule (false: the fallback).
func (s *Store) RuleOf(c Counter) (Rule, bool) {
	return s.rules.At(int(c.Rule)), c.Rule >= 0
}

// compare orders entries a and b in the current sort.
func (s *Store) compare(a, b int32) int { return s.compareEntries(&s.entries[a], &s.entries[b]) }

func (s *Store) compareEntries(x, y *entry) int {
	var c int
	switch s.sortKey {
	case SortValue:
		c = compareValues(x, y)
	case SortTTL:
		c = compareExpiry(x, y)
	case SortPercent:
		xp, xok := x.percent(s.rules)
		yp, yok := y.percent(s.rules)
		c = compareDesc(xp, xok, yp, yok)
	case SortRate:
		c = cmp.Compare(s.rateOf(y), s.rateOf(x))
	case SortStatus:
		c = cmp.Compare(x.status, y.status)
	}
	if c == 0 {
		c = CompareKeys(x.key, y.key)
	}
	if s.reverse {
		return -c
	}
	return c
}

// compareValues puts larger numbers first, then keys holding no number.
func compareValues(x, y *entry) int {
	if x.kind == KindInt && y.kind == KindInt {
		return cmp.Compare(int64(y.num), int64(x.num)) // exact, beyond float64's 2^53
	}
	xn, xok := x.value().Number()
	yn, yok := y.value().Number()
	return compareDesc(xn, xok, yn, yok)
}

// compareDesc puts larger values first and missing ones last.
func compareDesc(x float64, xok bool, y float64, yok bool) int {
	if xok != yok {
		if xok {
			return -1
		}
		return 1
	}
	return cmp.Compare(y, x)
}

// compareExpiry puts keys without a TTL first, then the earliest deadline:
// deadlines do not change as time passes, so neither does the order.
func compareExpiry(x, y *entry) int {
	xNone, yNone := x.pttl < 0, y.pttl < 0
	switch {
	case xNone && yNone:
		return 0
	case xNone:
		return -1
	case yNone:
		return 1
	}
	return cmp.Compare(x.deadline(), y.deadline())
}

func (e *entry) percent(rules *Rules) (float64, bool) {
	return percentOf(e.layout, e.value(), rules.At(int(e.rule)).Limit)
}

// filter is a parsed SetFilter query.
type filter struct {
	query    string
	statuses uint8    // a bit per Status that passes; allStatuses without is: terms
	names    []string // lower-case text the printable key name must contain
}

const allStatuses = 1<<NumStatuses - 1

// problemStatuses has a bit for each Status.Problem.
var problemStatuses = func() (bits uint8) {
	for st := range NumStatuses {
		if st.Problem() {
			bits |= 1 << st
		}
	}
	return bits
}()

func parseFilter(q string) filter {
	f := filter{query: q, statuses: allStatuses}
	for _, term := range strings.Fields(q) {
		term = strings.ToLower(term)
		if name, ok := strings.CutPrefix(term, "is:"); ok {
			if name == "problem" {
				f.statuses &= problemStatuses
				continue
			}
			if st, ok := ParseStatus(name); ok {
				f.statuses &= 1 << st
				continue
			}
		}
		f.names = append(f.names, term)
	}
	// A term that is part of another adds nothing ("log login"); the
	// shortest are looked for first, as the quickest (one byte is an
	// IndexByte) and as likely as any to turn a key away.
	slices.SortStableFunc(f.names, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	kept := f.names[:0]
	for _, term := range f.names {
		if !slices.ContainsFunc(kept, func(longer string) bool { return strings.Contains(longer, term) }) {
			kept = append(kept, term)
		}
	}
	slices.Reverse(kept)
	f.names = kept
	return f
}

// UnknownStatuses is the is: terms of a filter query that name no status
// (nor problem): the filter takes them as text that key names must hold,
// which none likely does.
func UnknownStatuses(q string) []string {
	var unknown []string
	for _, term := range strings.Fields(q) {
		if name, ok := strings.CutPrefix(strings.ToLower(term), "is:"); ok {
			if _, known := ParseStatus(name); !known && name != "problem" {
				unknown = append(unknown, term)
			}
		}
	}
	return unknown
}

func (f *filter) isEmpty() bool { return f.statuses == allStatuses && len(f.names) == 0 }

// implies reports whether every key f keeps, g keeps too: f asks for
// fewer statuses, and each of g's terms is part of one of f's.
func (f *filter) implies(g *filter) bool {
	if f.statuses&^g.statuses != 0 {
		return false
	}
	for _, t := range g.names {
		if !slices.ContainsFunc(f.names, func(u string) bool { return strings.Contains(u, t) }) {
			return false
		}
	}
	return true
}

// beyond is f less the terms that every key g keeps holds already: what
// is left to check of a key that passes g.
func (f *filter) beyond(g *filter) filter {
	left := filter{query: f.query, statuses: f.statuses}
	for _, t := range f.names {
		if !slices.ContainsFunc(g.names, func(u string) bool { return strings.Contains(u, t) }) {
			left.names = append(left.names, t)
		}
	}
	return left
}

// keeps reports whether filter f keeps entry i.
func (s *Store) keeps(f *filter, i int32) bool {
	e := &s.entries[i]
	if f.statuses&(1<<e.status) == 0 {
		return false
	}
	switch {
	case len(f.names) == 0:
		return true
	case s.plain.has(i):
		for _, term := range f.names {
			if !strings.Contains(e.key, term) {
				return false
			}
		}
		return true
	}
	name := Printable(e.key)
	if !isASCII(name) {
		name = strings.ToLower(name)
	}
	for _, term := range f.names {
		if !containsFoldASCII(name, term) {
			return false
		}
	}
	return true
}

// containsFoldASCII reports whether s contains the lower-case lower,
// folding ASCII letters of s to lower case; it does not allocate.
func containsFoldASCII(s, lower string) bool {
	for i := 0; i+len(lower) <= len(s); i++ {
		j := 0
		for j < len(lower) && toLowerASCII(s[i+j]) == lower[j] {
			j++
		}
		if j == len(lower) {
			return true
		}
	}
	return false
}

func toLowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
