package ui

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/countertop/countertop/model"
)

// panelLines is the overview panel's lines as drawn now, without styles.
func panelLines(m *Model) []string {
	lines := strings.Split(plain(m), "\n")
	top := m.headerLines()
	return lines[top : top+m.overviewHeight()]
}

// countIn is the word after name in the panel's lines: its count.
func countIn(panel []string, name string) string {
	for _, l := range panel {
		words := strings.Fields(l)
		for i := 0; i+1 < len(words); i++ {
			if words[i] == name {
				return words[i+1]
			}
		}
	}
	return ""
}

// o turns the panel on above the table and off again; the table gives it
// room and keeps the selection in sight.
func TestOverviewToggles(t *testing.T) {
	m := newModelWith(t, Options{Writer: newFakeWriter()}, 120, 40, manyKeys(200)...)
	rows := m.tableRows()
	m, _ = press(m, "G") // the last row, at the bottom
	m, _ = press(m, "o")
	if !m.overviewShown() || m.overviewHeight() != overviewFull {
		t.Fatalf("o at 120x40: panel shown %v in %d lines, want %d", m.overviewShown(), m.overviewHeight(), overviewFull)
	}
	if m.tableRows() != rows-overviewFull {
		t.Errorf("with the panel the table has %d rows, want %d", m.tableRows(), rows-overviewFull)
	}
	if !strings.Contains(selectedLine(t, m), "ratelimit:api:0199") {
		t.Errorf("the selection went out of sight: %q", selectedLine(t, m))
	}
	if got := panelLines(m)[0]; !strings.HasPrefix(got, "Overview: 200 keys") || !strings.Contains(got, "% of limit (200 keys have a limit)") {
		t.Errorf("the panel's title is %q", got)
	}
	// The rows still count from the line under the titles.
	if lineAt(t, m, "KEY") != m.headerLines()+overviewFull {
		t.Errorf("the titles are on line %d, want %d", lineAt(t, m, "KEY"), m.headerLines()+overviewFull)
	}
	m, _ = press(m, "o")
	if m.overviewShown() || m.tableRows() != rows || strings.Contains(plain(m), "% of limit") {
		t.Errorf("a second o left the panel on, or the table short (%d rows)", m.tableRows())
	}
}

// The panel counts each status, and the keys in each tenth of their
// limit, over every key: the filter narrows the rows, not the panel, and
// the panel says so.
func TestOverviewCounts(t *testing.T) {
	var obs []model.Observation
	for i := range 30 { // 10 at 0-9%, 10 at 80-89%, 10 at 100%
		v := []int{5, 85, 100}[i%3]
		obs = append(obs, str(fmt.Sprintf("ratelimit:api:%02d", i), fmt.Sprint(v), 50_000))
	}
	obs = append(obs, str("ratelimit:stuck", "250", model.PTTLNoExpiry), str("views:home", "7", model.PTTLNoExpiry))
	m := newModelWith(t, Options{}, 120, 40, obs...)
	m, _ = press(m, "o")
	panel := panelLines(m)
	for name, want := range map[string]string{
		"stuck": "1", "over": "10", "warn": "10", "ok": "11", "extending": "0",
		"0-10%": "10", "80-90%": "10", "≥100%": "11", "50-60%": "0",
	} {
		t.Run(name, func(t *testing.T) {
			if got := countIn(panel, name); got != want {
				t.Errorf("the panel counts %s %q keys, want %s:\n%s", name, got, want, strings.Join(panel, "\n"))
			}
		})
	}
	// The largest bucket has the longest bar; a bucket with keys has one.
	bar := func(label string) int {
		for _, l := range panel {
			if i := strings.Index(l, label); i >= 0 {
				return strings.Count(l[i:], "█")
			}
		}
		t.Fatalf("no %q in the panel", label)
		return 0
	}
	if full, some := bar("≥100%"), bar("80-90%"); full != maxBar || some == 0 || some >= full {
		t.Errorf("bars: ≥100%% %d cells, 80-90%% %d; want %d and fewer but some", full, some, maxBar)
	}

	m, _ = press(m, "/is:stuck<enter>")
	if m.store.Visible() != 1 {
		t.Fatalf("the filter shows %d keys", m.store.Visible())
	}
	panel = panelLines(m)
	if !strings.HasPrefix(panel[0], "Overview: 32 keys") || !strings.Contains(panel[0], "all keys, not only the filter's") ||
		countIn(panel, "ok") != "11" {
		t.Errorf("with a filter the panel is:\n%s", strings.Join(panel, "\n"))
	}
}

// The counts wear their status's look, as the STATUS column does; a
// status no key has is dim.
func TestOverviewColours(t *testing.T) {
	m := newModel(t, nil, 120, 40, fixture()...)
	m, _ = press(m, "o")
	term := terminal(t, m)
	lines := strings.Split(ansi.Strip(m.View().Content), "\n")
	for st, wantStyle := range map[model.Status]bool{model.StatusStuck: true, model.StatusOver: true, model.StatusExtending: false} {
		t.Run(st.String(), func(t *testing.T) {
			y := m.headerLines() + 1 + int(st)
			x := strings.Index(lines[y], st.String())
			if x < 0 {
				t.Fatalf("line %d is %q, no %s", y, lines[y], st)
			}
			cell := term.CellAt(x, y)
			want := m.theme.Status[st].GetForeground()
			if !wantStyle {
				// Dim as the title's note is.
				note := strings.Index(lines[m.headerLines()], "keys have a limit")
				if dim := term.CellAt(ansi.StringWidth(lines[m.headerLines()][:note]), m.headerLines()); !reflect.DeepEqual(cell.Style, dim.Style) {
					t.Errorf("%s, which no key has, is drawn %+v, not dim as %+v", st, cell.Style, dim.Style)
				}
				return
			}
			if !sameColor(cell.Style.Fg, want) {
				t.Errorf("%s is drawn in %v, want %v", st, cell.Style.Fg, want)
			}
		})
	}
}

// The panel fits every size the dashboard draws in, and on a short screen
// gives the rows room first: two columns and fifths at 80x24, one line of
// counts below that, nothing where the table would keep no rows.
func TestOverviewFitsTheScreen(t *testing.T) {
	for _, tc := range []struct {
		width, height, lines int
	}{
		{200, 50, overviewFull},
		{120, 40, overviewFull},
		{80, 24, overviewCompact},
		{60, 24, overviewCompact},
		{40, 24, overviewCompact},
		{80, 14, overviewLine},
		{40, 8, 0},
	} {
		t.Run(fmt.Sprintf("%dx%d", tc.width, tc.height), func(t *testing.T) {
			m := newModel(t, nil, tc.width, tc.height, fixture()...)
			m, _ = press(m, "o")
			if got := m.overviewHeight(); got != tc.lines {
				t.Errorf("the panel takes %d lines, want %d", got, tc.lines)
			}
			lines := strings.Split(plain(m), "\n")
			if len(lines) != tc.height {
				t.Errorf("%d lines on a screen of %d", len(lines), tc.height)
			}
			for y, l := range lines {
				if w := ansi.StringWidth(l); w > tc.width {
					t.Errorf("line %d is %d cells wide: %q", y, w, l)
				}
			}
			if tc.lines > 0 && m.tableRows() < 2 {
				t.Errorf("the panel leaves the table %d rows", m.tableRows())
			}
			if tc.lines == overviewLine && !strings.Contains(panelLines(m)[0], "1 stuck") {
				t.Errorf("the one-line panel is %q", panelLines(m)[0])
			}
		})
	}
}

// A click selects the row under it with the panel on too.
func TestOverviewClick(t *testing.T) {
	m := newModelWith(t, Options{Mouse: true}, 120, 40, fixture()...)
	m, _ = press(m, "o")
	m, _ = send(m, tea.MouseClickMsg{Button: tea.MouseLeft, X: 8, Y: lineAt(t, m, "ratelimit:api:9 ")})
	if m.selected.id != "ratelimit:api:9" {
		t.Errorf("a click on ratelimit:api:9 selected %q", m.selected.id)
	}
}

// BenchmarkOverview is the panel's part of a frame (the Store's counts,
// then the lines drawn from them), and the whole 120x40 frame with the
// panel on, at a thousand keys and a million: neither should grow with
// the keys.
func BenchmarkOverview(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		m := benchModel(n)
		m, _ = press(m, "o")
		height := m.overviewHeight()
		if height != overviewFull {
			b.Fatalf("the panel takes %d lines", height)
		}
		b.Run(fmt.Sprint("panel-", n, "keys"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = m.overviewView(height)
			}
		})
		b.Run(fmt.Sprint("frame-", n, "keys"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}
