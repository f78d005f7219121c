package ui

import "slices"

// tellOnScreen tells Options.OnScreen the keys on screen when they changed
// since it was last told: the table's rows, or the detail screen's key.
// Under a budget of commands the feed reads them before the others.
func (m *Model) tellOnScreen() {
	if m.onScreen == nil {
		return
	}
	var keys []string
	if m.screen == screenDetail {
		keys = []string{m.detail.key}
	} else {
		rows := m.store.Rows(m.offset, m.tableRows())
		keys = make([]string, 0, len(rows))
		for i := range rows {
			if !slices.Contains(keys, rows[i].Key) { // a hash's fields' rows: one key to read
				keys = append(keys, rows[i].Key)
			}
		}
	}
	if slices.Equal(keys, m.told) {
		return
	}
	m.told = keys
	m.onScreen(slices.Clone(keys)) // the feed's from now on
}
