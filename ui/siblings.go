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
	key  string    // the detail key it was looked up for; "": none yet
	at   time.Time // when
	keys []string  // newest window first
	more int       // how many more there are
}

// lookUpSiblings looks up the other windows of the detail screen's key,
// when it is a window key: at once when force (the screen just opened),
// else when the last look-up is siblingsEvery old.
func (m *Model) lookUpSiblings(force bool) {
	if m.screen != screenDetail {
		return
	}
	now := m.clock()
	if !force && m.siblings.key == m.detailKey && now.Sub(m.siblings.at) < siblingsEvery {
		return
	}
	m.siblings = siblings{key: m.detailKey, at: now}
	c, ok := m.store.Get(m.detailKey)
	if !ok || !c.Layout.Spec().NamedWindow || c.Window.Part == "" {
		return
	}
	list, more := m.store.WindowSiblings(c.Key, c.Window.Identity, maxSiblings)
	for _, s := range list {
		m.siblings.keys = append(m.siblings.keys, s.Key)
	}
	m.siblings.more = more
}

// siblingLines are the detail screen's lines on the other windows of c's
// identity: each one's window part, value, status and TTL, as the Store
// holds them now (one that went meanwhile is left out).
func (m *Model) siblingLines(c *model.Counter, now time.Time, wrapped func(label, value string) []string) []string {
	if m.siblings.key != c.Key || !c.Layout.Spec().NamedWindow || c.Window.Part == "" {
		return nil
	}
	var rows []string
	for _, key := range m.siblings.keys {
		s, ok := m.store.Get(key)
		if !ok {
			continue
		}
		rule, _ := m.store.RuleOf(s)
		ttl, tone := m.ttlCell(&s, rule, now)
		part := key[min(len(c.Window.Identity)+1, len(key)):]
		rows = append(rows, fmt.Sprintf("%s%s  %s  %s  %s", padRight("", labelWidth), quote(part), formatValue(&s, now),
			m.theme.Status[s.Status].Render(s.Status.String()), m.theme.style(tone).Render(ttl)))
	}
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
