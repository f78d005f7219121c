package model

import (
	"time"
)

// untils holds the Store's readings that a live feed vouches for only
// until a time (Observation.KnownUntil): those of a type whose events the
// server does not send, and logs whose hits leave their window. Most keys
// have none, so they are kept apart from the entries, which stay as small
// as a million keys call for: a map entry per such key, and the same
// buckets as the readings' ages (see ages), so that the soonest of all is
// known at every frame without a scan.
type untils struct {
	byKey map[string]int64 // key -> nanoseconds from the Store's epoch
	ages  ages
}

// setUntil records until when o, a reading of key applied at at (from the
// epoch), is vouched for; a reading vouched for while the feed is live
// drops what an earlier one said.
func (s *Store) setUntil(key string, o *Observation) {
	u := &s.untils
	was, had := u.byKey[key]
	if o.KnownUntil.IsZero() {
		if had {
			delete(u.byKey, key)
			u.ages.remove(was)
		}
		return
	}
	at := int64(o.KnownUntil.Sub(s.epoch))
	if u.byKey == nil {
		u.byKey = make(map[string]int64)
	}
	u.byKey[key] = at
	if had {
		u.ages.move(was, at)
	} else {
		u.ages.add(at)
	}
}

// dropUntil forgets what key's readings said, as it leaves the Store.
func (s *Store) dropUntil(key string) {
	if at, ok := s.untils.byKey[key]; ok {
		delete(s.untils.byKey, key)
		s.untils.ages.remove(at)
	}
}

// knownUntil is until when the feed vouches for key's last reading; zero
// while it is live.
func (s *Store) knownUntil(key string) time.Time {
	if at, ok := s.untils.byKey[key]; ok {
		return s.epoch.Add(time.Duration(at))
	}
	return time.Time{}
}

// SoonestKnownUntil is about the soonest KnownUntil of all the keys,
// rounded down to the second as OldestRead is; zero when none has one.
func (s *Store) SoonestKnownUntil() time.Time {
	if len(s.untils.byKey) == 0 || len(s.untils.ages.counts) == 0 {
		return time.Time{}
	}
	return s.epoch.Add(time.Duration(s.untils.ages.base << ageShift))
}
