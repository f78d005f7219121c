package model

import (
	"errors"
	"time"
)

// PTTL values with a special meaning, as Redis's PTTL returns them.
const (
	PTTLNoExpiry int64 = -1 // the key exists and has no expiry
	PTTLMissing  int64 = -2 // the key does not exist
)

// WindowUnknown, as an increment's window, says none is known: the
// increment is sent only to a key that has a TTL already, which needs no
// window; for any other it changes nothing and its error wraps
// ErrNeedsWindow, so that the caller can ask for one and send it again.
const WindowUnknown time.Duration = -1

// ErrNeedsWindow is the cause of the error of an increment sent with
// WindowUnknown to a key that has no TTL, or does not exist: it would be
// left without one. Nothing was written.
var ErrNeedsWindow = errors.New("the key has no TTL and no window was given")

// Observation is one read of one key: what redisclient saw, and when.
// Read interprets it; the fields after At describe collections, bounded
// reads of them (see MaxRaw, MaxHashFields, MaxListScan), and are zero
// for strings.
type Observation struct {
	Key  string    // the key name, raw bytes as Redis holds them
	Type string    // "string", "hash", "list", ... as TYPE reports it
	Raw  string    // the stored string (Type == "string" only), at most MaxRaw bytes
	PTTL int64     // milliseconds left, or PTTLNoExpiry
	At   time.Time // when it was read; carries the monotonic clock

	RawCut   bool    // Raw is MaxRaw bytes long: the first of a string that may be longer
	Len      int64   // HLEN, ZCARD or LLEN (SCARD, XLEN for sets and streams); 0 for strings
	Fields   []Field // a hash's fields: all of them when Len <= MaxHashFields, else those of KnownHashFields that exist (read field by field: those listed, see NotShown)
	Newest   float64 // zset: the highest score; list: the head (LINDEX 0) read with ParseScore; NaN when none
	Oldest   float64 // zset: the lowest score; list: the tail (LINDEX -1); NaN when none
	InWindow int64   // log: entries with a score after LogWindowStart (ZCOUNT, or CountInWindow over a list); -1 when not known
	// InWindowFrom is a log's oldest score inside the window, from which
	// LogFalls tells when its count falls; NaN or 0 when not read.
	InWindowFrom float64

	// FieldTTLs says a field of this hash carries a TTL of its own (HPTTL,
	// Redis 7.4 and later), or its rule says its fields do (Rule.FieldTTLs):
	// each of Fields then holds its PTTL, and the hash is read field by
	// field (Rows). False where HPTTL is unknown.
	FieldTTLs bool
	// NotShown, for a hash read field by field, is how many of its fields
	// were left unread, beyond the most a key shows (DefaultMaxFields, or
	// --max-fields); NotShownNoTTL is how many of those hold a number
	// without a TTL, -1 when they were not counted (only check counts
	// them).
	NotShown, NotShownNoTTL int64
	// Field, in one of Rows' observations, is the one hash field it stands
	// for: Fields holds that field alone and PTTL is the field's. "" for a
	// whole key.
	Field string

	// KnownUntil is until when a live feed (events, tracking) vouches for
	// this reading: zero, as long as it is live (it tells every change);
	// At, not beyond its read (a type whose events the server does not
	// send: polled); or when a log's count falls with no write (LogFalls).
	KnownUntil time.Time

	// Server names the server it was read on, as the config names it
	// (config.Server.Name): the same key on two servers is two rows. ""
	// where nothing names it (the Store's feed, until it reads several).
	Server string
}

// Field is one field of a hash and its value; PTTL is its own TTL, as
// HPTTL says, when the Observation's FieldTTLs is set (else unread).
type Field struct {
	Name, Value string
	PTTL        int64
}

// Batch is what a watcher sends the dashboard: keys it read, keys it found
// gone, and optionally a new state of the feed itself, or of its servers.
type Batch struct {
	// Server names the server the batch is of, among several: its
	// observations are read there (Apply sets their Server), its keys
	// removed there, and its State and Health are that server's. "" with
	// one server.
	Server   string
	Observed []Observation
	Removed  []string   // keys that no longer exist (deleted, expired, evicted)
	State    *FeedState // nil when the feed's state did not change
	Health   *Health    // nil when not measured since the last
}

// Health is how the servers answer countertop, measured apart from what
// the feed reads (its reads may be the ones waiting): what countertop
// costs them, and whether one has left a command unanswered for longer
// than an interval, which a hang shows long before any timeout.
type Health struct {
	At       time.Time // when it was measured
	Commands float64   // commands a second countertop sent to its busiest server, lately
	// Silent names the server that has left a command unanswered for
	// longer than an interval, the longest; "" when every one answers.
	// Since is when that command was sent.
	Silent string
	Since  time.Time
	// Behind is how far behind Redis the changes that events or tracking
	// follow are: how late the subscription's messages arrive, plus how
	// long the oldest change they told has waited to be read; 0 while it
	// keeps up (within half a second).
	Behind time.Duration
	// Evicted is how many keys Redis evicted to stay under its maxmemory
	// in the last minute (EvictionWindow): of the watched keys, as their
	// evicted events told, or, where events are not followed (EvictedAll),
	// of every key on the servers, as INFO's evicted_keys counts them.
	// An evicted counter is a rate limit reset early for its client.
	Evicted    int64
	EvictedAll bool
}

// EvictionWindow is how far back Health.Evicted counts.
const EvictionWindow = time.Minute

// ServerEvictions is what a server's INFO says of the keys it evicted to
// stay under its maxmemory, for check.
type ServerEvictions struct {
	Addr    string        // host:port
	Evicted int64         // evicted_keys: every key, of every database, since it started (or CONFIG RESETSTAT)
	Policy  string        // maxmemory-policy, e.g. "allkeys-lru"
	Uptime  time.Duration // since it started
}

// FeedState describes the watcher, for the header: how data arrives and
// whether it is healthy. It is replaced whole each time it is sent.
type FeedState struct {
	// Mode is how the feed follows changes: the mode asked for until it
	// has chosen (auto), then the one it uses. Phase says whether it does.
	Mode      WatchMode
	Phase     FeedPhase
	Interval  time.Duration // polling period (polling mode)
	Addr      string        // where we are connected, without credentials
	Topology  string        // e.g. "standalone", "cluster: 3 masters, 3 replicas"
	Connected bool
	LastError string    // one sentence for people; "" when healthy
	Note      string    // e.g. why polling was chosen over events
	Scanning  bool      // a discovery pass is running
	Seen      int64     // keys the current/last pass looked at, estimated: share of its SCAN walk done × DBSIZE
	Matched   int64     // keys that matched a pattern in that pass
	UpdatedAt time.Time // when data last arrived
}

// FieldValue returns the value of o's field name, and whether o holds
// that field (a hash read whole, or one of the fields read by name).
func (o *Observation) FieldValue(name string) (string, bool) {
	for _, f := range o.Fields {
		if f.Name == name {
			return f.Value, true
		}
	}
	return "", false
}

// FieldPTTL returns the PTTL of o's field name, as HPTTL read it where
// o's fields carry TTLs of their own (FieldTTLs); PTTLMissing when o does
// not hold that field.
func (o *Observation) FieldPTTL(name string) int64 {
	for _, f := range o.Fields {
		if f.Name == name {
			return f.PTTL
		}
	}
	return PTTLMissing
}
