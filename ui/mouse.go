package ui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
)

// wheelStep is how many rows (or lines of the help and the detail screen)
// one turn of the wheel scrolls.
const wheelStep = 3

// onMouse handles the wheel and a left click. The wheel scrolls what is on
// screen; on the table a click on a row selects it, and a click on a
// column's title sorts by that column. A dialog or a prompt that is open
// keeps the focus: the mouse does nothing then.
func (m *Model) onMouse(msg tea.MouseMsg) {
	if m.confirm != nil || m.prompt != nil {
		return
	}
	mouse := msg.Mouse()
	if _, wheel := msg.(tea.MouseWheelMsg); wheel {
		delta := 0
		switch mouse.Button {
		case tea.MouseWheelUp:
			delta = -wheelStep
		case tea.MouseWheelDown:
			delta = wheelStep
		}
		if m.showHelp || m.screen == screenDetail {
			m.scrolled(delta)
		} else if delta != 0 {
			m.scrollTable(delta)
		}
		return
	}
	if _, click := msg.(tea.MouseClickMsg); !click || mouse.Button != tea.MouseLeft || m.showHelp || m.screen != screenTable {
		return
	}
	top := m.headerLines() + m.overviewHeight() // the column titles
	switch row := mouse.Y - top - 1; {
	case mouse.Y == top:
		if k, ok := m.columnAt(mouse.X); ok && k != m.store.Sort() {
			m.store.SetSort(k)
			m.follow()
		}
	case row >= 0 && row < m.tableRows() && m.offset+row < m.store.Visible():
		m.picked, m.lost = true, ""
		m.moveTo(m.offset + row)
	}
}

// scrollTable moves the rows on screen by delta, the cursor with them only
// as far as it must to stay in sight, as a wheel scrolls a list.
func (m *Model) scrollTable(delta int) {
	rows, n := m.tableRows(), m.store.Visible()
	if rows <= 0 || n == 0 {
		return
	}
	m.picked, m.lost = true, ""
	m.offset = max(0, min(m.offset+delta, n-rows))
	cursor := min(max(m.cursor, m.offset), m.offset+rows-1)
	m.moveTo(cursor)
}

// columnAt is the sort of the column whose title spans cell x of the title
// line; ok is false between columns, and for a column the Store does not
// sort by.
func (m *Model) columnAt(x int) (model.SortKey, bool) {
	c := m.columns()
	g := len(c.gap)
	type span struct {
		width int
		sort  model.SortKey
		ok    bool
	}
	spans := []span{{gutterWidth + c.key, model.SortKeyName, true}, {c.value, model.SortValue, true}}
	if c.limit > 0 {
		spans = append(spans, span{c.limit, model.SortPercent, true})
	}
	spans = append(spans, span{c.ttl, model.SortTTL, true})
	if c.rate {
		spans = append(spans, span{rateWidth, model.SortRate, true})
	}
	spans = append(spans, span{c.status, 0, false})
	start := 0
	for _, s := range spans {
		if x >= start && x < start+s.width {
			return s.sort, s.ok
		}
		start += s.width + g
	}
	return 0, false
}
