package ui

import (
	"fmt"
	"time"

	"github.com/countertop/countertop/model"
)

const (
	// maxSiblings is how many other windows of a window key's identity
	// the detail screen lists; the rest it counts.
	maxSiblings = 5
	// siblingsEvery is how often the detail screen looks the list up
	// again while it stays open: the look-up walks every key (tens of ms
	// at a million on a loaded machine), which no frame should pay for.
	siblingsEvery = 2 * time.Second
)

// siblings is the detail screen's list of the other windows of its
// window key's identity, as last looked up (Store.WindowSiblings).
type siblings struct {
	key  string    // the detail row it was looked up for (its ID); "": none yet
	at   time.Time // when
	ids  []string  // their rows (Counter.ID): newest window first; a block flag's hits keys in key order
	more int       // how many more there are
}

// lookUpSiblings looks up the other windows of the detail screen's key,
// when it is a window key, or the keys beside it that count its client's
// hits, when it is a block flag: at once when force (the screen just opened),
// else when the last look-up is siblingsEvery old.
func (m *Model) lookUpSiblings(force bool) {
	if m.screen != screenDetail {
		return
	}
	now := m.clock()
	if !force && m.siblings.key == m.detail.id && now.Sub(m.siblings.at) < siblingsEvery {
		return
	}
	m.siblings = siblings{key: m.detail.id, at: now}
	c, ok := m.store.Get(m.detail.id)
	var list []model.Counter
	var more int
	switch {
	case ok && c.Layout.Spec().Refuses: // a block flag: the keys that count its client's hits
		list, more = m.store.BlockHits(c.Server, c.Key, maxSiblings)
	case !ok || !c.Layout.Spec().NamedWindow || c.Window.Part == "":
		return
	default:
		list, more = m.store.WindowSiblings(c.Server, c.Key, c.Window.Identity, maxSiblings)
	}
	for _, s := range list {
		m.siblings.ids = append(m.siblings.ids, s.ID())
	}
	m.siblings.more = more
}

// siblingLines are the detail screen's lines on the other windows of c's
// identity: each one's window part, value, status and TTL, as the Store
// holds them now (one that went meanwhile is left out).
func (m *Model) siblingLines(c *model.Counter, now time.Time, wrapped func(label, value string) []string) []string {
	if m.siblings.key != c.ID() || !c.Layout.Spec().NamedWindow || c.Window.Part == "" {
		return nil
	}
	rows := m.keyRows(now, func(key string) string { return key[min(len(c.Window.Identity)+1, len(key)):] })
	var head string
	switch {
	case len(rows) == 0 && m.siblings.more == 0:
		head = "no other window of this identity is held"
	case len(rows) == 0:
		head = plural(m.siblings.more, "other window") + " of this identity"
	default:
		head = plural(len(rows), "other window") + " of this identity, newest first"
	}
	if len(rows) > 0 && m.siblings.more > 0 {
		head += fmt.Sprintf(", and %d more", m.siblings.more)
	}
	if m.siblings.more > 0 {
		head += " (filter on " + quote(c.Window.Identity) + " to see them all)"
	}
	if len(rows) > 0 {
		head += ":"
	}
	return append(wrapped("windows", head), rows...)
}

// blockHitLines are the detail screen's lines on the keys beside a block
// flag that count its client's hits (Store.BlockHits), as the Store holds
// them now: each one's name, value, status and TTL.
func (m *Model) blockHitLines(c *model.Counter, now time.Time, wrapped func(label, value string) []string) []string {
	if m.siblings.key != c.ID() || !c.Layout.Spec().Refuses {
		return nil
	}
	rows := m.keyRows(now, func(key string) string { return key })
	head := "no key beside it counts this client's hits (its name without the block part, or with another part in its place)"
	switch {
	case len(rows) > 0 && m.siblings.more > 0:
		head = fmt.Sprintf("%s beside it, and %d more:", plural(len(rows), "key"), m.siblings.more)
	case len(rows) > 0:
		head = plural(len(rows), "key") + " beside it:"
	}
	return append(wrapped("hits", head), rows...)
}

// keyRows are the detail screen's rows on the keys last looked up, as the
// Store holds them now (one that went meanwhile is left out): each one's
// name as name shortens it, value, status and TTL.
func (m *Model) keyRows(now time.Time, name func(key string) string) []string {
	var rows []string
	for _, id := range m.siblings.ids {
		s, ok := m.store.Get(id)
		if !ok {
			continue
		}
		rule, _ := m.store.RuleOf(s)
		ttl, tone := m.ttlCell(&s, rule, now)
		rows = append(rows, fmt.Sprintf("%s%s  %s  %s  %s", padRight("", labelWidth), quote(name(s.Key)), formatValue(&s, now),
			m.theme.Status[s.Status].Render(s.Status.String()), m.theme.style(tone).Render(ttl)))
	}
	return rows
}
