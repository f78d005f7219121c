package ui

import (
	"fmt"
	"slices"
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
	if m.offset != 0 || m.selected.id != "ratelimit:api:0000" {
		t.Errorf("with the mouse off a wheel and a click moved the table: offset %d, selected %q", m.offset, m.selected.id)
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
	if m.offset != wheelStep || m.selected.id != "ratelimit:api:0004" {
		t.Errorf("after a turn down: offset %d, selected %q; want %d and the same key", m.offset, m.selected.id, wheelStep)
	}
	m, _ = send(m, down)
	if m.offset != 2*wheelStep || m.selected.id != fmt.Sprintf("ratelimit:api:%04d", 2*wheelStep) {
		t.Errorf("after a second turn: offset %d, selected %q; want the first row in sight selected", m.offset, m.selected.id)
	}
	if !strings.Contains(selectedLine(t, m), m.selected.id) {
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
	if m.selected.id != "ratelimit:api:9" || !strings.Contains(selectedLine(t, m), "ratelimit:api:9") {
		t.Fatalf("a click on ratelimit:api:9 selected %q", m.selected.id)
	}
	// A click below the last row selects nothing new.
	m, _ = send(m, tea.MouseClickMsg{Button: tea.MouseLeft, X: 8, Y: 30})
	if m.selected.id != "ratelimit:api:9" {
		t.Errorf("a click below the rows moved the selection to %q", m.selected.id)
	}

	titles := lineAt(t, m, "KEY")
	line := strings.Split(plain(m), "\n")[titles]
	for _, tc := range []struct {
		title string
		sort  model.SortKey
	}{{"VALUE", model.SortValue}, {"TTL", model.SortTTL}, {"LIMIT", model.SortPercent}, {"RATE", model.SortRate}, {"STATUS", model.SortStatus}, {"KEY", model.SortKeyName}} {
		x := cells(line[:strings.Index(line, tc.title)])
		m, _ = send(m, tea.MouseClickMsg{Button: tea.MouseLeft, X: x + 1, Y: titles})
		if m.store.Sort() != tc.sort {
			t.Errorf("a click on %s sorts by %v", tc.title, m.store.Sort())
		}
		if m.selected.id != "ratelimit:api:9" {
			t.Errorf("sorting by %s lost the selection: %q", tc.title, m.selected.id)
		}
		line = strings.Split(plain(m), "\n")[titles]
		if !strings.Contains(line, tc.title+"▾") {
			t.Errorf("after a click on %s the titles are %q", tc.title, line)
		}
	}

	// The mouse leaves an open dialog alone.
	m, _ = press(m, "d")
	m, _ = send(m, tea.MouseClickMsg{Button: tea.MouseLeft, X: 8, Y: lineAt(t, m, "ratelimit:api:7")})
	if m.confirm == nil || m.selected.id != "ratelimit:api:9" {
		t.Errorf("a click with a dialog open changed the selection to %q", m.selected.id)
	}
}

// titleSorts is the sort each title stands for; TREND and LAYOUT stand for
// none.
var titleSorts = map[string]model.SortKey{
	"KEY": model.SortKeyName, "VALUE": model.SortValue, "LIMIT": model.SortPercent,
	"TTL": model.SortTTL, "RATE": model.SortRate, "STATUS": model.SortStatus,
}

// titleWords are the words of the title line, ▾ left out, and the cells
// each spans.
func titleWords(t *testing.T, m *Model) (words []string, from, to []int) {
	t.Helper()
	line := []rune(strings.Split(plain(m), "\n")[lineAt(t, m, "KEY")])
	for x := 0; x < len(line); x++ {
		if line[x] == ' ' {
			continue
		}
		start := x
		for x < len(line) && line[x] != ' ' {
			x++
		}
		words = append(words, strings.TrimSuffix(string(line[start:x]), "▾"))
		from, to = append(from, start), append(to, x)
	}
	return words, from, to
}

// Every title that stands for a sort sorts by it when clicked, STATUS
// included, and says so with its ▾; TREND and LAYOUT sort nothing.
func TestAClickOnEachTitleSortsByIt(t *testing.T) {
	m := newModelWith(t, Options{Mouse: true}, 200, 40, fixture()...)
	titles := lineAt(t, m, "KEY")
	for i := range 8 {
		m, _ = press(m, "s") // away from the sort before
		before := m.store.Sort()
		words, from, _ := titleWords(t, m) // where they are in this sort: a ▾ can widen a column
		if len(words) != 8 {
			t.Fatalf("at 200 columns the titles are %q, want all eight", words)
		}
		word := words[i]
		m, _ = send(m, tea.MouseClickMsg{Button: tea.MouseLeft, X: from[i], Y: titles})
		want, sorts := titleSorts[word]
		if !sorts {
			want = before
		}
		if got := m.store.Sort(); got != want {
			t.Errorf("a click on %s sorts by %v, want %v", word, got, want)
		}
		if line := strings.Split(plain(m), "\n")[titles]; sorts && !strings.Contains(line, word+"▾") {
			t.Errorf("after a click on %s the titles are %q", word, line)
		}
	}
}

// At every width, in every sort, a click on a title's word sorts by what
// the title stands for, and no click on the title line sorts by a column
// that gave way to KEY: at 80 columns RATE is gone (unless the rows are
// in its order), and so is its sort.
func TestOnlyTitlesOnScreenCanBeClicked(t *testing.T) {
	for width := 40; width <= 160; width++ {
		for s := range 6 {
			m := newModelWith(t, Options{Mouse: true}, width, 30, fixture()...)
			m, _ = press(m, strings.Repeat("s", s))
			words, from, to := titleWords(t, m)
			shown := map[model.SortKey]bool{}
			for i, word := range words {
				want, sorts := titleSorts[word]
				shown[want] = shown[want] || sorts
				for x := from[i]; x < to[i]; x++ {
					if got, ok := m.columnAt(x); ok != sorts || ok && got != want {
						t.Fatalf("at %d columns, sort %v: cell %d of %s picks %v (%v), want %v (%v)", width, m.store.Sort(), x, word, got, ok, want, sorts)
					}
				}
			}
			for x := range width {
				if got, ok := m.columnAt(x); ok && !shown[got] {
					t.Fatalf("at %d columns, sort %v: cell %d picks %v, whose title is not on screen: %q", width, m.store.Sort(), x, got, words)
				}
			}
			if width == 80 && m.store.Sort() != model.SortRate && (slices.Contains(words, "RATE") || shown[model.SortRate]) {
				t.Fatalf("at 80 columns RATE is still there: %q", words)
			}
		}
	}
}

// Each of the table's columns is whole: a title of its own, a cell, a
// width (but KEY, which takes the rest), and steps of giving way that are
// taken in one order, whatever the columns.
func TestEveryColumnIsWhole(t *testing.T) {
	seen := map[model.Column]bool{}
	for i, col := range tableColumns {
		if seen[col.id] || col.cell == nil || (col.wide == nil) != (i == 0) {
			t.Errorf("column %d (%s) is not whole: a repeat %v, a cell %v, a width %v", i, col.id.Title(), seen[col.id], col.cell != nil, col.wide != nil)
		}
		seen[col.id] = true
	}
	for i := 1; i < len(tableSteps); i++ {
		if a, b := tableSteps[i-1], tableSteps[i]; a.goal == b.goal && a.rank == b.rank {
			t.Errorf("columns %d and %d give way at the same step", a.col, b.col)
		}
	}
}
