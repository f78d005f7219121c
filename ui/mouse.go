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
		m.picked, m.lost = true, rowRef{}
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
	m.picked, m.lost = true, rowRef{}
	m.offset = max(0, min(m.offset+delta, n-rows))
	cursor := min(max(m.cursor, m.offset), m.offset+rows-1)
	m.moveTo(cursor)
}

// columnAt is the sort of the column whose title spans cell x of the title
// line (KEY's with the gutter before it); ok is false between columns,
// and for a column that stands for no sort.
func (m *Model) columnAt(x int) (model.SortKey, bool) {
	c := m.columns()
	start := 0
	for i, col := range tableColumns {
		w := c.widths[i]
		if w == 0 {
			continue // gave way to KEY: not on screen
		}
		if i == 0 {
			w += gutterWidth
		}
		if x >= start && x < start+w {
			return col.id.Sort()
		}
		start += w + len(c.gap)
	}
	return 0, false
}
