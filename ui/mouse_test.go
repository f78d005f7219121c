package ui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
)

// manyKeys is n counters, ratelimit:api:0000 on, in key order.
func manyKeys(n int) []model.Observation {
	var obs []model.Observation
	for i := range n {
		obs = append(obs, str(fmt.Sprintf("ratelimit:api:%04d", i), fmt.Sprint(i%100), 50_000))
	}
	return obs
}

// lineAt is the y of the screen's first line that contains text.
func lineAt(t *testing.T, m *Model, text string) int {
	t.Helper()
	for y, l := range strings.Split(plain(m), "\n") {
		if strings.Contains(l, text) {
			return y
		}
	}
	t.Fatalf("%q is not on screen:\n%s", text, plain(m))
	return -1
}

// The mouse is asked for only when Options.Mouse says so: off, the
// terminal keeps it for selecting text.
func TestTheMouseIsOnlyAskedForWhenWanted(t *testing.T) {
	if mode := newModelWith(t, Options{Mouse: true}, 80, 24).View().MouseMode; mode != tea.MouseModeCellMotion {
		t.Errorf("with the mouse on the view asks for mouse mode %v, want cell motion", mode)
	}
	m := newModelWith(t, Options{}, 80, 24, manyKeys(100)...)
	if mode := m.View().MouseMode; mode != tea.MouseModeNone {
		t.Errorf("with the mouse off the view asks for mouse mode %v", mode)
	}
	m, _ = send(m, tea.MouseWheelMsg{Button: tea.MouseWheelDown, Y: 10},
		tea.MouseClickMsg{Button: tea.MouseLeft, X: 5, Y: lineAt(t, m, "ratelimit:api:0005")})
	if m.offset != 0 || m.selected != "ratelimit:api:0000" {
		t.Errorf("with the mouse off a wheel and a click moved the table: offset %d, selected %q", m.offset, m.selected)
	}
}

// The wheel scrolls the rows; the selection stays on its key while it is
// in sight, and is carried along at the edge when it would leave.
func TestTheWheelScrollsTheTable(t *testing.T) {
	down := tea.MouseWheelMsg{Button: tea.MouseWheelDown, X: 10, Y: 10}
	up := tea.MouseWheelMsg{Button: tea.MouseWheelUp, X: 10, Y: 10}
	m := newModelWith(t, Options{Mouse: true}, 80, 24, manyKeys(100)...)
	m, _ = press(m, "jjjj") // ratelimit:api:0004
	m, _ = send(m, down)
	if m.offset != wheelStep || m.selected != "ratelimit:api:0004" {
		t.Errorf("after a turn down: offset %d, selected %q; want %d and the same key", m.offset, m.selected, wheelStep)
	}
	m, _ = send(m, down)
	if m.offset != 2*wheelStep || m.selected != fmt.Sprintf("ratelimit:api:%04d", 2*wheelStep) {
		t.Errorf("after a second turn: offset %d, selected %q; want the first row in sight selected", m.offset, m.selected)
	}
	if !strings.Contains(selectedLine(t, m), m.selected) {
		t.Errorf("the selected key is not the row marked on screen")
	}
	for range 100 {
		m, _ = send(m, down)
	}
	if want := 100 - m.tableRows(); m.offset != want {
		t.Errorf("the wheel scrolled past the end: offset %d, want %d", m.offset, want)
	}
	for range 100 {
		m, _ = send(m, up)
	}
	if m.offset != 0 {
		t.Errorf("the wheel does not scroll back to the top: offset %d", m.offset)
	}

	// On the help screen it scrolls the help.
	m = newModelWith(t, Options{Mouse: true}, 80, 10, fixture()...)
	m, _ = press(m, "?")
	m, _ = send(m, down)
	if m.scroll == 0 || !strings.Contains(plain(m), "more above") {
		t.Errorf("the wheel does not scroll the help:\n%s", plain(m))
	}
}

// A click on a row selects it; a click on a column's title sorts by that
// column.
func TestAClickSelectsARowOrSorts(t *testing.T) {
	m := newModelWith(t, Options{Mouse: true, Writer: newFakeWriter()}, 120, 40, fixture()...)
	m, _ = send(m, tea.MouseClickMsg{Button: tea.MouseLeft, X: 8, Y: lineAt(t, m, "ratelimit:api:9")})
	if m.selected != "ratelimit:api:9" || !strings.Contains(selectedLine(t, m), "ratelimit:api:9") {
		t.Fatalf("a click on ratelimit:api:9 selected %q", m.selected)
	}
	// A click below the last row selects nothing new.
	m, _ = send(m, tea.MouseClickMsg{Button: tea.MouseLeft, X: 8, Y: 30})
	if m.selected != "ratelimit:api:9" {
		t.Errorf("a click below the rows moved the selection to %q", m.selected)
	}

	titles := lineAt(t, m, "KEY")
	line := strings.Split(plain(m), "\n")[titles]
	for _, tc := range []struct {
		title string
		sort  model.SortKey
	}{{"VALUE", model.SortValue}, {"TTL", model.SortTTL}, {"LIMIT", model.SortPercent}, {"RATE", model.SortRate}, {"KEY", model.SortKeyName}} {
		x := cells(line[:strings.Index(line, tc.title)])
		m, _ = send(m, tea.MouseClickMsg{Button: tea.MouseLeft, X: x + 1, Y: titles})
		if m.store.Sort() != tc.sort {
			t.Errorf("a click on %s sorts by %v", tc.title, m.store.Sort())
		}
		if m.selected != "ratelimit:api:9" {
			t.Errorf("sorting by %s lost the selection: %q", tc.title, m.selected)
		}
		line = strings.Split(plain(m), "\n")[titles]
		if !strings.Contains(line, tc.title+"▾") {
			t.Errorf("after a click on %s the titles are %q", tc.title, line)
		}
	}

	// The mouse leaves an open dialog alone.
	m, _ = press(m, "d")
	m, _ = send(m, tea.MouseClickMsg{Button: tea.MouseLeft, X: 8, Y: lineAt(t, m, "ratelimit:api:7")})
	if m.confirm == nil || m.selected != "ratelimit:api:9" {
		t.Errorf("a click with a dialog open changed the selection to %q", m.selected)
	}
}
