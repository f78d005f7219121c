package model

import (
	"cmp"
	"slices"
	"strings"
)

// SetFilter sets the filter: space-separated terms that must all hold; a term
// "is:STATUS" (is:stuck, is:no-expiry, ...) keeps that status, "is:problem"
// keeps the statuses check fails on (Status.Problem), any other term keeps
// keys whose printable name contains it, ignoring case, and "server:NAME"
// keeps the rows of that server (several such terms: of any of them).
// Filter returns it
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

// filter is a parsed SetFilter query.
type filter struct {
	query    string
	statuses uint8    // a bit per Status that passes; allStatuses without is: terms
	names    []string // lower-case text the printable key name must contain
	servers  []string // lower-case names of the servers whose rows pass; nil: every server's
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
		if name, ok := strings.CutPrefix(term, "server:"); ok && name != "" {
			f.servers = append(f.servers, name)
			continue
		}
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

func (f *filter) isEmpty() bool {
	return f.statuses == allStatuses && len(f.names) == 0 && len(f.servers) == 0
}

// implies reports whether every key f keeps, g keeps too: f asks for
// fewer statuses, and each of g's terms is part of one of f's.
func (f *filter) implies(g *filter) bool {
	if f.statuses&^g.statuses != 0 {
		return false
	}
	if len(g.servers) > 0 && (len(f.servers) == 0 || slices.ContainsFunc(f.servers, func(s string) bool { return !slices.Contains(g.servers, s) })) {
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
	left := filter{query: f.query, statuses: f.statuses, servers: f.servers}
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
	if len(f.servers) > 0 && !slices.Contains(f.servers, strings.ToLower(s.serverOf(e))) {
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
	name := s.nameOf(e) // a field's row by "key › field"
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
