package ui

import (
	"bytes"
	"fmt"
	"image/color"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/vt"

	"github.com/countertop/countertop/model"
)

// frame is the screen as a 256-colour terminal is sent it.
func frame(t *testing.T, m *Model) string {
	t.Helper()
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.ANSI256}
	if _, err := w.WriteString(m.View().Content); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Run with -update to rewrite testdata/*.golden.
func TestGoldenScreens(t *testing.T) {
	for _, size := range [][2]int{{120, 40}, {80, 24}, {200, 50}} {
		for _, tc := range []struct{ name, keys string }{
			{"table", ""},
			{"help", "?"},
			{"detail", "<enter>"},
			{"confirm", "d"},
			{"overview", "o"},
		} {
			t.Run(fmt.Sprintf("%s_%dx%d", tc.name, size[0], size[1]), func(t *testing.T) {
				m := newModelWith(t, Options{Writer: newFakeWriter(), Patterns: testPatterns, ConfigFile: "/etc/countertop/countertop.toml"},
					size[0], size[1], fixture()...)
				m = selectKey(t, m, "ratelimit:legacy")
				m, _ = press(m, tc.keys)
				golden.RequireEqual(t, frame(t, m))
			})
		}
	}
}

// terminal writes m's frame into a virtual terminal, to read its cells back.
func terminal(t *testing.T, m *Model) *vt.Emulator {
	t.Helper()
	term := vt.NewEmulator(m.width, m.height)
	if _, err := term.WriteString(strings.ReplaceAll(frame(t, m), "\n", "\r\n")); err != nil {
		t.Fatal(err)
	}
	return term
}

// keyCells returns the foreground colour of each cell of key's name on the
// screen.
func keyCells(t *testing.T, m *Model, term *vt.Emulator, key string) []color.Color {
	t.Helper()
	for y, line := range strings.Split(ansi.Strip(m.View().Content), "\n") {
		i := strings.Index(line, key)
		if i < 0 {
			continue
		}
		x := ansi.StringWidth(line[:i])
		var fg []color.Color
		for dx := range ansi.StringWidth(key) {
			fg = append(fg, term.CellAt(x+dx, y).Style.Fg)
		}
		return fg
	}
	t.Fatalf("%q is not on screen", key)
	return nil
}

func sameColor(a, b color.Color) bool {
	if a == nil || b == nil {
		return a == b
	}
	ar, ag, ab, aa := a.RGBA()
	br, bg, bb, ba := b.RGBA()
	return ar == br && ag == bg && ab == bb && aa == ba
}

func TestCountersWithNoExpiryAreRed(t *testing.T) {
	m := newModel(t, nil, 120, 40, fixture()...)
	term := terminal(t, m)
	red := m.theme.Status[model.StatusNoExpiry].GetForeground()
	for key, wantRed := range map[string]bool{
		"ratelimit:orphan": true,  // no-expiry
		"ratelimit:legacy": true,  // stuck
		"ratelimit:api:42": false, // ok
		"ratelimit:api:9":  false, // over: warning colour, not red
		"views:home":       false, // no TTL, but its rule wants none
	} {
		t.Run(key, func(t *testing.T) {
			for i, fg := range keyCells(t, m, term, key) {
				if sameColor(fg, red) != wantRed {
					t.Errorf("%s: cell %d has colour %v, red wanted: %v", key, i, fg, wantRed)
					break
				}
			}
		})
	}
}

func TestHostileKeyNamesAreEscaped(t *testing.T) {
	hostile := []string{
		"ratelimit:\x1b[2J",
		"ratelimit:\x1b]0;pwned\x07",
		"ratelimit:\xff\xfe",
		"ratelimit:two\nlines",
		"ratelimit:\u202eevil",
	}
	var obs []model.Observation
	for _, k := range hostile {
		obs = append(obs, model.Observation{Key: k, Type: "string", Raw: "1\x1b[31m", PTTL: model.PTTLNoExpiry, At: t0})
	}
	for _, keys := range []string{"", "<enter>", "<esc>d", "<esc>/\x1b<enter>"} {
		m, _ := press(newModel(t, nil, 120, 40, obs...), keys)
		text := ansi.Strip(m.View().Content)
		if i := strings.IndexAny(text, "\x1b\x07\u202e"); i >= 0 {
			t.Fatalf("after %q a control character reached the screen at %d: %q", keys, i, text)
		}
		if n := strings.Count(text, "\n") + 1; n != m.height {
			t.Fatalf("after %q the screen has %d lines, want %d: a key broke a line", keys, n, m.height)
		}
	}
	text := ansi.Strip(newModel(t, nil, 120, 40, obs...).View().Content)
	for _, k := range hostile {
		if !strings.Contains(text, model.Printable(k)) {
			t.Errorf("%q is not shown escaped as %q", k, model.Printable(k))
		}
	}
}

// On a narrow terminal the help line gives up the keys nearest its end,
// but never ? and q: help and quit stay in sight.
func TestHelpLineKeepsHelpAndQuit(t *testing.T) {
	for _, width := range []int{120, 80, 60, 40} {
		t.Run(fmt.Sprintf("%d columns", width), func(t *testing.T) {
			m := newModel(t, newFakeWriter(), width, 24, fixture()...)
			lines := strings.Split(plain(m), "\n")
			last := lines[len(lines)-1]
			if !strings.Contains(last, "? help") || !strings.Contains(last, "q quit") {
				t.Errorf("at %d columns the help line lost ? or q: %q", width, last)
			}
			if w := lipgloss.Width(last); w > width {
				t.Errorf("at %d columns the help line is %d wide", width, w)
			}
			if width == 120 && !strings.Contains(last, "enter detail") {
				t.Errorf("at 120 columns every key fits: %q", last)
			}
		})
	}
}

// The help line keeps as many keys as fit: it is the line drawn again
// and again, dropping the key nearest the end each time until it fits,
// on every screen and at every width, the rows' position included.
func TestHelpLineKeepsAllThatFit(t *testing.T) {
	// reference draws the line as the paragraph above says.
	reference := func(m *Model) string {
		keys := slices.Clone(m.helpFor().ShortHelp())
		h := m.help
		h.SetWidth(0)
		pos := m.position()
		room := m.width
		if pos != "" {
			room -= cells(pos) + 2
		}
		for {
			line := h.ShortHelpView(keys)
			i := len(keys) - 1
			for i >= 0 && m.keepInHelp(keys[i]) {
				i--
			}
			if lipgloss.Width(line) <= room || i < 0 {
				if pos == "" || lipgloss.Width(line) > room {
					return truncate(line, m.width)
				}
				return spread(line, m.theme.Dim.Render(pos), m.width)
			}
			keys = slices.Delete(keys, i, i+1)
		}
	}
	obs := fixture()
	for i := range 40 { // more rows than fit: the position shows
		obs = append(obs, str(fmt.Sprintf("ratelimit:more:%02d", i), "1", 60_000))
	}
	for _, keys := range []string{"", "p", "<enter>", "<enter>p", "/", "?"} {
		for width := 10; width <= 140; width++ {
			m, _ := press(newModel(t, newFakeWriter(), width, 24, obs...), keys)
			if got, want := m.helpLine(), reference(m); got != want {
				t.Fatalf("after %q at %d columns the help line is\n%q, want\n%q", keys, width, ansi.Strip(got), ansi.Strip(want))
			}
		}
	}
}

// Keys that differ only at their end stay apart on screen: the table cuts
// their middle, the detail shows them whole, and a dialog about a key of
// two kilobytes keeps its buttons.
func TestLongKeysKeepTheirEnd(t *testing.T) {
	base := "ratelimit:api:POST:/v2/organizations/projects/deployments/rollback:user:"
	for _, width := range []int{3, 10, 41, 60} {
		for _, s := range []string{base + "1001", "日本語:" + base + "😀😀:1002"} {
			got := truncateMiddle(s, width)
			if cells(got) > width || !strings.Contains(got, "…") {
				t.Errorf("truncateMiddle(%q, %d) = %q (%d cells)", s, width, got, cells(got))
			}
		}
	}
	if got, want := truncateMiddle(base+"1001", 41), "ratelimit:api:POST:/…s/rollback:user:1001"; got != want {
		t.Errorf("truncateMiddle = %q, want %q", got, want)
	}

	obs := []model.Observation{str(base+"1001", "3", 60_000), str(base+"1002", "4", 60_000)}
	m := newModel(t, newFakeWriter().seed(obs...), 80, 24, obs...)
	screen := plain(m)
	for _, end := range []string{"user:1001 ", "user:1002 "} {
		if !strings.Contains(screen, end) {
			t.Errorf("the table does not show the key ending %q:\n%s", end, screen)
		}
	}

	huge := "ratelimit:" + strings.Repeat("tenant-", 300) + "2"
	obs = []model.Observation{str(huge, "1", 60_000)}
	m = newModel(t, newFakeWriter().seed(obs...), 80, 30, obs...)
	m = selectKey(t, m, huge)
	m, _ = press(m, "<enter>")
	if flat := strings.ReplaceAll(plain(m), "\n", ""); !strings.Contains(flat, "tenant-2") || !strings.Contains(flat, "ratelimit:tenant-") {
		t.Errorf("the detail does not show the key's beginning and end:\n%s", plain(m))
	}
	m, _ = press(m, "<esc>d")
	if screen := plain(m); !strings.Contains(screen, "y yes") || !strings.Contains(screen, "tenant-2?") {
		t.Errorf("the delete dialog lost its buttons or the key's end:\n%s", screen)
	}
}

// A name cut in its middle loses whole escapes, never part of one: what is
// left of "\e[31m" would read as the text "e[31m", or "31m".
func TestACutKeepsEscapesWhole(t *testing.T) {
	evil := model.Printable("ratelimit:evil:\x1b[31mRED")
	for width := 3; width < cells(evil); width++ {
		if _, right, _ := strings.Cut(truncateMiddle(evil, width), "…"); strings.HasPrefix(right, "31m") || strings.HasPrefix(right, "[31m") || strings.HasPrefix(right, "1m") {
			t.Errorf("truncateMiddle(%q, %d) leaves part of the control sequence: %q", evil, width, right)
		}
	}
	for _, raw := range []string{"ratelimit:evil:\x1b[31mRED\n", "a\xffb\u202ec:\\d\x00e", "日本\x7f語:\U000e0041x"} {
		key := model.Printable(raw)
		// Each side of the cut must be the escaped form of a part of the
		// name itself.
		isPrefix := func(p string) bool {
			for k := 0; k <= len(raw); k++ {
				if model.Printable(raw[:k]) == p {
					return true
				}
			}
			return false
		}
		isSuffix := func(p string) bool {
			for k := 0; k <= len(raw); k++ {
				if model.Printable(raw[k:]) == p {
					return true
				}
			}
			return false
		}
		for width := 3; width < cells(key); width++ {
			got := truncateMiddle(key, width)
			left, right, _ := strings.Cut(got, "…")
			if cells(got) > width || !isPrefix(left) || !isSuffix(right) {
				t.Errorf("truncateMiddle(%q, %d) = %q: a side is not the escaped form of part of the name", key, width, got)
			}
		}
	}
}

// On a short screen the detail screen and the help scroll with the keys
// that move the cursor, and say when there is more: every field of the
// detail and every key of the help can be reached at 40x12.
func TestShortScreensScroll(t *testing.T) {
	m := newModel(t, newFakeWriter().seed(fixture()...), 40, 12, fixture()...)
	m = selectKey(t, m, "ratelimit:legacy")
	m, _ = press(m, "<enter>")
	if screen := plain(m); !strings.Contains(screen, "↓ more below") || strings.Contains(screen, "raw ") {
		t.Fatalf("the detail at 40x12 does not say there is more, or shows it all:\n%s", screen)
	}
	seen := map[string]bool{}
	for range 30 {
		for _, l := range strings.Split(plain(m), "\n") {
			seen[strings.TrimSpace(l)] = true
		}
		m, _ = press(m, "j")
	}
	var all string
	for l := range seen {
		all += l + "\n"
	}
	for _, field := range []string{"status", "value", "TTL", "limit", "window", "rule", "deadline", "type", "raw"} {
		if !strings.Contains(all, "\n"+field+" ") && !strings.HasPrefix(all, field+" ") {
			t.Errorf("scrolling the detail never showed its %s:\n%s", field, plain(m))
		}
	}
	m, _ = press(m, "<esc>")
	m, _ = press(m, "<enter>")
	if !strings.Contains(plain(m), "status") {
		t.Errorf("the detail opened again does not start at the top:\n%s", plain(m))
	}

	m, _ = press(m, "<esc>?")
	seen = map[string]bool{}
	for range 40 {
		for _, l := range strings.Split(plain(m), "\n") {
			seen[strings.TrimSpace(l)] = true
		}
		m, _ = press(m, "j")
	}
	for _, want := range []string{"/ filter", "d delete", "E repair all in view", "q quit"} {
		found := false
		for l := range seen {
			found = found || strings.Contains(strings.Join(strings.Fields(l), " "), want)
		}
		if !found {
			t.Errorf("scrolling the help at 40 columns never showed %q", want)
		}
	}
}

// On a short screen the header's note (how to get live updates) takes one
// line, leaving the rows their room; an error keeps its lines but on the
// smallest screen, where two rows must stay.
func TestAShortScreenGivesTheNoteOneLine(t *testing.T) {
	note := `polling: keyspace notifications are off on the server (notify-keyspace-events=""); run with --enable-events or CONFIG SET notify-keyspace-events 'K$gxe' to get live updates`
	for _, tc := range []struct {
		height, lines, errLines int
	}{{minHeight, 1, 1}, {12, 1, 3}, {40, 3, 3}} {
		t.Run(fmt.Sprintf("60x%d", tc.height), func(t *testing.T) {
			m := newModel(t, nil, 60, tc.height, fixture()...)
			m, _ = send(m, batchesMsg{batches: []model.Batch{{State: &model.FeedState{
				Mode: model.WatchPoll, Phase: model.FeedWatching, Interval: time.Second, Addr: "127.0.0.1:7000", Connected: true, Note: note, UpdatedAt: t0,
			}}}})
			if got := len(m.feedLines()); got != tc.lines {
				t.Errorf("at 60x%d the note takes %d lines, want %d", tc.height, got, tc.lines)
			}
			m, _ = send(m, batchesMsg{batches: []model.Batch{{State: &model.FeedState{
				Mode: model.WatchPoll, Phase: model.FeedWatching, Interval: time.Second, Addr: "127.0.0.1:7000", Connected: true, LastError: note, UpdatedAt: t0,
			}}}})
			if got := len(m.feedLines()); got != tc.errLines {
				t.Errorf("at 60x%d an error takes %d lines, want %d", tc.height, got, tc.errLines)
			}
		})
	}
}

// Keys that differ in their middle (ratelimit:user:N:login) stay apart on a
// narrow screen: the cut moves into what a key shares with its neighbours,
// so that where it differs from them shows.
func TestKeysThatDifferInTheMiddleStayApart(t *testing.T) {
	var obs []model.Observation
	for i := range 6 {
		obs = append(obs, str(fmt.Sprintf("ratelimit:user:%d:login", 41+i), "3", 60_000))
	}
	obs = append(obs, model.Observation{Key: "ratelimit:cfg", Type: "hash", PTTL: model.PTTLNoExpiry, At: t0})
	m := newModel(t, nil, 40, 20, obs...)
	screen := plain(m)
	for i := range 6 {
		if want := fmt.Sprintf("…%d:login ", 41+i); !strings.Contains(screen, want) {
			t.Errorf("the row of ratelimit:user:%d:login does not show %q:\n%s", 41+i, want, screen)
		}
	}
	// Each row's cell is as wide as the column, whatever the cut.
	names := []string{"ratelimit:user:41:login", "ratelimit:user:42:login", `ratelimit:user:\e:login`}
	for i := range names {
		for width := 3; width <= 30; width++ {
			if got := keyCell(names, i, width); cells(got) > width {
				t.Errorf("keyCell(%q, %d) = %q: %d cells", names[i], width, got, cells(got))
			}
		}
	}
}

// At the smallest screen, with a feed error and a status of two lines, the
// body is a line or two: it shows content, not "more" lines, and scrolling
// reaches every line of the detail. After the screen grows, the first
// key up moves the detail up at once.
func TestThePagerAtTheSmallestScreen(t *testing.T) {
	m := newModel(t, newFakeWriter().seed(fixture()...), 40, minHeight, fixture()...)
	m, _ = send(m, batchesMsg{batches: []model.Batch{{State: &model.FeedState{
		Mode: model.WatchPoll, Phase: model.FeedWatching, Interval: time.Second, Addr: "127.0.0.1:7000", Connected: true, UpdatedAt: t0,
		LastError: "127.0.0.1:7000 stopped answering: it may be busy with a slow command or a save, or frozen — countertop keeps trying, and the values shown are as last read",
	}}}})
	m = selectKey(t, m, "session:abc")
	m, _ = press(m, "+<enter>") // refused (a hash): a status of two lines
	if body := m.bodyHeight(); body > 2 {
		t.Fatalf("the body has %d lines: the test wants a screen with one or two", body)
	}
	all := strings.Join(m.detailView(), "\n")
	seen := ""
	for range 40 {
		seen += plain(m)
		m, _ = press(m, "j")
	}
	for _, field := range []string{"status", "value", "limit", "window", "rule", "deadline", "type", "raw"} {
		if strings.Contains(all, field) && !strings.Contains(seen, field+" ") {
			t.Errorf("scrolling the detail at 40x%d never showed its %s", minHeight, field)
		}
	}
	if strings.Contains(seen, "more below") || strings.Contains(seen, "more above") {
		t.Errorf("a body of one or two lines spent one on saying there is more")
	}

	m, _ = send(m, tea.WindowSizeMsg{Width: 60, Height: 14}) // room for more of it, not all
	before := plain(m)
	m, _ = press(m, "k")
	if plain(m) == before {
		t.Errorf("after the screen grew, k did not move the detail:\n%s", before)
	}
}

// A filter is:foo, where foo is no status, says so when nothing matches,
// rather than only that nothing does.
func TestAnUnknownStatusInTheFilterIsNamed(t *testing.T) {
	for _, width := range []int{120, 40} {
		t.Run(fmt.Sprintf("%d columns", width), func(t *testing.T) { // wrapped over the empty rows, whole
			m := newModel(t, nil, width, 20, fixture()...)
			m, _ = press(m, "/is:stcuk<enter>")
			if s := flat(m); !strings.Contains(s, `"is:stcuk" is not a status: is: takes stuck, extending, no-expiry, leak, over, warn, ok, not-counter, or problem.`) {
				t.Errorf("at %d columns the empty table does not say is:stcuk is no status, whole:\n%s", width, plain(m))
			}
		})
	}
	m := newModel(t, nil, 120, 40, fixture()...)
	m, _ = press(m, "<esc>/is:stuck<enter>")
	if s := flat(m); strings.Contains(s, "is not a status") {
		t.Errorf("is:stuck was called no status:\n%s", plain(m))
	}
}

// When rows are out of sight the help line ends with which ones are shown,
// as less and vim show it; when all fit, it says nothing of it.
func TestThePositionShowsWhenRowsAreHidden(t *testing.T) {
	var obs []model.Observation
	for i := range 1024 {
		obs = append(obs, str(fmt.Sprintf("ratelimit:api:%04d", i), "1", 50_000))
	}
	m := newModel(t, nil, 80, 24, obs...)
	rows := m.tableRows()
	last := func(m *Model) string {
		lines := strings.Split(plain(m), "\n")
		return lines[len(lines)-1]
	}
	if want := fmt.Sprintf("1-%d of 1,024", rows); !strings.HasSuffix(last(m), want) {
		t.Errorf("at the top the help line is %q, want it to end with %q", last(m), want)
	}
	m, _ = press(m, "G")
	if want := thousands(1024-rows+1) + "-1,024 of 1,024"; !strings.HasSuffix(last(m), want) {
		t.Errorf("at the bottom the help line is %q, want it to end with %q", last(m), want)
	}
	for _, width := range []int{40, 60} {
		m, _ = send(m, tea.WindowSizeMsg{Width: width, Height: 24})
		if l := last(m); !strings.Contains(l, " of 1,024") || !strings.Contains(l, "? help") || cells(l) > width {
			t.Errorf("at %d columns the help line is %q: want the position, ? and q, within the width", width, l)
		}
	}
	m, _ = press(m, "?")
	if strings.Contains(last(m), " of 1,024") {
		t.Errorf("the help screen's help line shows the table's position: %q", last(m))
	}
	if l := last(newModel(t, nil, 80, 24, fixture()...)); strings.Contains(l, " of ") {
		t.Errorf("with every row in sight the help line is %q", l)
	}
}

// The ? screen has the keys, then every status drawn in its own look with
// what it means, then the filter's syntax, is: included.
func TestTheHelpScreenHasTheLegendAndTheFilterSyntax(t *testing.T) {
	m := newModel(t, nil, 120, 60, fixture()...)
	m, _ = press(m, "?")
	screen := plain(m)
	keys, legend, filter := strings.Index(screen, "copy name"), strings.Index(screen, "Statuses"), strings.Index(screen, "Filter")
	if keys < 0 || legend < keys || filter < legend {
		t.Fatalf("the help is not keys, statuses, filter in that order:\n%s", screen)
	}
	term := terminal(t, m)
	for st := range model.Status(model.NumStatuses) {
		if statusMeaning(st) == "" {
			t.Errorf("status %v has no meaning on the ? screen", st)
		}
		line := lineWith(t, screen, "  "+st.String()+" ")
		if !strings.Contains(line, statusMeaning(st)[:20]) {
			t.Errorf("the legend line of %v is %q", st, line)
		}
		want := m.theme.Status[st].GetForeground()
		if _, none := want.(lipgloss.NoColor); none {
			want = nil // the terminal's own
		}
		if got := keyCells(t, m, term, "  "+st.String()+" ")[2]; !sameColor(got, want) {
			t.Errorf("%v is drawn in %v in the legend, its status colour is %v", st, got, want)
		}
	}
	for _, want := range []string{"is:STATUS", "is:problem", "stuck, extending, no-expiry or leak", "↑/↓"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the filter syntax lacks %q", want)
		}
	}
}

// lineWith is the first line of screen that holds text.
func lineWith(t *testing.T, screen, text string) string {
	t.Helper()
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, text) {
			return l
		}
	}
	t.Fatalf("no line holds %q:\n%s", text, screen)
	return ""
}

// Below the smallest size the dashboard draws in, it says the size it
// needs and the terminal's, whole, within the terminal.
func TestATooSmallTerminalSaysTheSizeNeeded(t *testing.T) {
	m := newModel(t, nil, 39, 10, fixture()...)
	if got, want := plain(m), "Need at least 40x8; this is 39x10."; got != want {
		t.Errorf("at 39x10 the screen is %q, want %q", got, want)
	}
	m, _ = send(m, tea.WindowSizeMsg{Width: 12, Height: 3})
	lines := strings.Split(plain(m), "\n")
	if len(lines) > 3 || strings.Join(lines, " ") != "Need 40x8, not 12x3." {
		t.Errorf("at 12x3 the screen is %q", lines)
	}
	for _, l := range lines {
		if cells(l) > 12 {
			t.Errorf("at 12x3 a line is wider than the screen: %q", l)
		}
	}
}

// While paused the help line offers p to resume, not to pause.
func TestPausedHelpOffersResume(t *testing.T) {
	m := newModel(t, nil, 120, 40, fixture()...)
	last := func() string { l := strings.Split(plain(m), "\n"); return l[len(l)-1] }
	if !strings.Contains(last(), "p pause") {
		t.Fatalf("help line %q", last())
	}
	m, _ = press(m, "p")
	if !strings.Contains(last(), "p resume") || strings.Contains(last(), "pause") {
		t.Errorf("paused, the help line is %q", last())
	}
	m, _ = press(m, "<enter>")
	if !strings.Contains(last(), "p resume") {
		t.Errorf("paused, on the detail screen, the help line is %q", last())
	}
	// Where the keys do not all fit, p stays with ? and q.
	for _, width := range []int{80, 60, 40} {
		m, _ = send(m, tea.WindowSizeMsg{Width: width, Height: 24})
		for _, screen := range []string{"<esc>", "<enter>"} {
			m, _ = press(m, screen)
			if l := last(); !strings.Contains(l, "p resume") || !strings.Contains(l, "? help") || cells(l) > width {
				t.Errorf("paused, at %d columns, the help line is %q", width, l)
			}
		}
	}
}

// The detail screen of a key that holds no number (a hash, text) offers
// no increment and no expiry: they refuse such a key, in one sentence.
func TestTheDetailOfANonCounterOffersNoIncrement(t *testing.T) {
	for key, what := range map[string]string{"session:abc": "holds a hash", "cache:greeting": "holds text"} {
		t.Run(key, func(t *testing.T) {
			m := newModel(t, newFakeWriter(), 120, 40, fixture()...)
			m = selectKey(t, m, key)
			m, _ = press(m, "<enter>")
			lines := strings.Split(plain(m), "\n")
			help := lines[len(lines)-1]
			if strings.Contains(help, "+ incr") || strings.Contains(help, "repair") || !strings.Contains(help, "d delete") {
				t.Errorf("the detail of %s offers %q", key, help)
			}
			for _, k := range []string{"+", "-", "i", "e"} {
				m, cmd := press(m, k)
				s := statusText(m)
				if cmd != nil || m.prompt != nil || !strings.HasPrefix(s, "Nothing was sent: "+key+" "+what) || strings.Count(s, ".") != 1 {
					t.Errorf("%s on the detail of %s: status %q, a prompt %v", k, key, s, m.prompt != nil)
				}
			}
		})
	}
	m := newModel(t, newFakeWriter(), 120, 40, fixture()...)
	m = selectKey(t, m, "ratelimit:api:42")
	m, _ = press(m, "<enter>")
	if l := strings.Split(plain(m), "\n"); !strings.Contains(l[len(l)-1], "+ incr") {
		t.Errorf("the detail of a counter does not offer +: %q", l[len(l)-1])
	}
}

// Each row's VALUE and LAYOUT read as its layout means: a GCRA key says
// when it frees (not a number of 3e8), a bucket its tokens left, opaque
// state its size; on a narrow screen LAYOUT goes first and VALUE stays.
func TestRowsReadAsTheirLayout(t *testing.T) {
	sec := float64(t0.Unix())
	obs := []model.Observation{
		{Key: "ratelimit:log:1", Type: "zset", Len: 3, Newest: sec, Oldest: sec - 1, InWindow: 3, PTTL: 60_000, At: t0},
		{Key: "ratelimit:bucket:1", Type: "hash", Len: 2, Fields: []model.Field{{Name: "tokens", Value: "4.5"}, {Name: "refilledAt", Value: "1764620400000"}}, PTTL: 60_000, At: t0},
		str("ratelimit:gcra:1", gcraTAT(t0.Add(12*time.Second)), 12_000),
		str("ratelimit:java:1", "\xac\xed\x00\x05sr\x00\x10bucket", 60_000),
	}
	m := newModel(t, nil, 120, 40, obs...)
	screen := plain(m)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`ratelimit:log:1 +3 .* log +ok`),
		regexp.MustCompile(`ratelimit:bucket:1 +4\.5 left .* bucket +warn`),
		regexp.MustCompile(`ratelimit:gcra:1 +frees in 1[01]s .* gcra +ok`),
		regexp.MustCompile(`ratelimit:java:1 +14 B .* opaque +ok`),
	} {
		if !want.MatchString(screen) {
			t.Errorf("no row matches %s:\n%s", want, screen)
		}
	}
	m, _ = send(m, tea.WindowSizeMsg{Width: 60, Height: 40})
	screen = plain(m)
	if strings.Contains(screen, "LAYOUT") || !strings.Contains(screen, "frees in") {
		t.Errorf("at 60 columns LAYOUT should give way and VALUE stay:\n%s", screen)
	}
}
