package ui

import (
	"slices"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
)

// The feed is told which keys are on screen, the table's rows or the
// detail screen's key, each time they change and only then: under a
// budget of commands it reads them first.
func TestTheFeedIsToldTheKeysOnScreen(t *testing.T) {
	store := model.NewStore(testRules())
	store.Apply(model.Batch{Observed: fixture()})
	var told [][]string
	m := New(Options{Store: store, Now: testNow, OnScreen: func(keys []string) { told = append(told, keys) }})
	m, _ = send(m, tea.WindowSizeMsg{Width: 80, Height: 10})
	rows := m.store.Rows(m.offset, m.tableRows())
	if len(told) != 1 || len(told[0]) != len(rows) || len(rows) == 0 || len(rows) >= len(fixture()) {
		t.Fatalf("told %q; want the %d rows on screen, once", told, len(rows))
	}
	for i, r := range rows {
		if told[0][i] != r.Key {
			t.Errorf("told %q; want the rows on screen in order", told[0])
		}
	}
	m, _ = press(m, "j") // the cursor moves, the rows stay
	if len(told) != 1 {
		t.Errorf("told again when the rows did not change: %q", told[1:])
	}
	m, _ = press(m, "G") // the last rows
	var last []string
	for _, r := range m.store.Rows(m.offset, m.tableRows()) {
		last = append(last, r.Key)
	}
	if len(told) != 2 || !slices.Equal(told[1], last) || slices.Equal(last, told[0]) {
		t.Errorf("after G told %q; want the first rows, then the last %q", told, last)
	}
	selected := m.selected.key
	press(m, "<enter>")
	if last := told[len(told)-1]; len(last) != 1 || last[0] != selected {
		t.Errorf("on the detail screen told %q; want [%q]", last, selected)
	}
}
