package model

import (
	"math/bits"
	"slices"
)

// noSweep is order.sweep when no filter is being applied.
const noSweep = -1

// The entries a new filter is checked on, as order.among says.
const (
	sweepAll     = iota // every one
	sweepPassing        // those that passed: the new filter is narrower
	sweepFailing        // those that did not: it is wider
)

// sweepStep is how many entries a refresh checks against a new filter:
// at a million keys, one that every key may pass takes a few frames to
// apply, and no frame pays for all of it.
const sweepStep = 1 << 16

// startFilter begins to apply the Store's filter, which changed: at once
// when that costs nothing (the same keys in other words, or no filter), else
// by a sweep over the entries, a step per refresh, to a copy of the bits
// of the filter shown. Only the entries whose answer can differ are
// checked: those that passed when the new filter is narrower (a term typed
// on: "log" to "logi"), and for only what the old one did not ask; those
// that did not when it is wider (a letter taken back); every one
// otherwise. A filter being applied is dropped: the new one starts from
// the one shown.
func (s *Store) startFilter() {
	o := &s.order
	o.refilter = false
	o.sweep, o.incoming, o.target, o.check = noSweep, nil, filter{}, filter{}
	now := &s.filter
	narrower, wider := now.implies(&o.passed), o.passed.implies(now)
	switch {
	case narrower && wider:
		o.passed = *now // the same keys: the bits hold
		return
	case now.isEmpty():
		o.pass, o.passed = nil, *now
		for _, b := range o.blocks {
			b.shown = len(b.keys)
		}
		o.recount = true
		return
	}
	if o.pass == nil { // every entry passed
		o.incoming = make(bitset, (len(s.entries)+63)/64)
		for w := range o.incoming {
			o.incoming[w] = ^uint64(0)
		}
	} else {
		o.incoming = slices.Clone(o.pass)
	}
	for _, b := range o.blocks {
		b.incoming = b.shown
	}
	o.sweep, o.target, o.among, o.check = 0, *now, sweepAll, *now
	switch {
	case narrower:
		o.among, o.check = sweepPassing, now.beyond(&o.passed)
	case wider:
		o.among = sweepFailing
	}
}

// sweepStep checks about o.step more entries against the filter being
// applied, in memory order, a word of bits at a time, and counts each
// change in its block. Once every entry is checked, the filter is shown.
func (s *Store) sweepStep() {
	o := &s.order
	n := len(s.entries)
	for budget := o.step; o.sweep < n && budget > 0; {
		w := o.sweep / 64
		word, check := o.incoming[w], ^uint64(0)
		switch o.among {
		case sweepPassing:
			check = word
		case sweepFailing:
			check = ^word
		}
		if rest := n - 64*w; rest < 64 {
			check &= 1<<rest - 1
		}
		budget -= 1 + bits.OnesCount64(check)
		for check != 0 {
			bit := bits.TrailingZeros64(check)
			check &= check - 1
			e := int32(64*w + bit)
			was := word&(1<<bit) != 0
			if s.keeps(&o.check, e) == was {
				continue
			}
			word ^= 1 << bit
			switch h := o.home[e]; {
			case h == noBlock: // arrived while a sort is worked out: counted where it is placed
			case was:
				o.byID[h].incoming--
			default:
				o.byID[h].incoming++
			}
		}
		o.incoming[w] = word
		o.sweep = 64 * (w + 1)
	}
	if o.sweep >= n {
		o.pass, o.passed = o.incoming, o.target
		o.incoming, o.sweep, o.target, o.check = nil, noSweep, filter{}, filter{}
		for _, b := range o.blocks {
			b.shown = b.incoming
		}
		o.recount = true
	}
}

// statusChanged updates whether entry i passes the filters after its
// status changed.
func (s *Store) statusChanged(i int32) {
	o := &s.order
	if o.pass != nil {
		if now := s.keeps(&o.passed, i); now != o.pass.has(i) {
			o.pass.set(i, now)
			if h := o.home[i]; h != noBlock {
				if now {
					o.byID[h].shown++
				} else {
					o.byID[h].shown--
				}
				o.recount = true
			}
		}
	}
	if o.sweep != noSweep {
		s.setIncoming(i, s.keeps(&o.target, i))
	}
}

// setIncoming sets whether entry i passes the filter being applied.
func (s *Store) setIncoming(i int32, now bool) {
	o := &s.order
	if now == o.incoming.has(i) {
		return
	}
	o.incoming.set(i, now)
	if h := o.home[i]; h != noBlock {
		if now {
			o.byID[h].incoming++
		} else {
			o.byID[h].incoming--
		}
	}
}
