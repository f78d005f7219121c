package ui

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/countertop/countertop/model"
)

// Fixed column widths. KEY takes what the names need (see layout).
const (
	gutterWidth  = 2 // "▸ " marks the selected row without relying on colour
	gaugeCells   = 6
	percentWidth = 5  // up to ">999%"
	ttlWidth     = 12 // "∞ persistent"
	rateWidth    = 8
	trendWidth   = model.TrendBuckets // a block a span
	statusWidth  = 11                 // "not-counter"
	layoutWidth  = 7                  // "counter"; see model.LayoutSpec.Cell
	minKeyWidth  = 24                 // below this, RATE and then the gauge give way
	maxValue     = 20                 // a signed 64-bit integer; longer floats are cut
)

// gap is the space between columns, narrowGap where space is short.
const gap, narrowGap = "  ", " "

// On a narrow terminal the columns but KEY get narrower still.
const (
	narrowTTLWidth    = 9 // "no expiry"; "∞ persistent" reads "∞"
	narrowStatusWidth = 9 // "no-expiry"; only "not-counter" is cut
)

// persistent is the TTL cell of a counter meant to live forever, and
// persistentShort the same where the TTL column is narrow.
const persistent, persistentShort = "∞ persistent", "∞"

// numTableColumns is how many columns tableColumns has.
const numTableColumns = 9

// column is one column of the table: all that its width, its title, its
// cell of each row and a click on its title come from. The table is
// tableColumns, left to right.
type column struct {
	id    model.Column // its title, and the sort it stands for (model.Column.Sort)
	right bool         // aligned right, as numbers are
	// wide is its width when there is room; nil for KEY, which takes what
	// the others leave (see layout).
	wide func(f *fit) int
	// gives are the steps by which it gives way to KEY on a narrow screen
	// (see layout).
	gives []give
	// cell is its cell of a row, r.width cells wide: text in the row's
	// own look (plain), drawn with the gaps around it, or drawn already.
	cell func(m *Model, r *rowArgs) (text string, plain bool)
}

// tableColumns are the table's columns, left to right. To add one: an
// entry here, and numTableColumns one more (its title in model.Column,
// the sort it stands for in model's sorts).
var tableColumns = [numTableColumns]column{
	{id: model.ColumnKey, cell: func(_ *Model, r *rowArgs) (string, bool) { return r.pad(r.name), true }},
	{
		// Only with several servers (0 wide with one): the row's server,
		// marked while that server does not answer (see serverCell).
		id:    model.ColumnServer,
		wide:  func(f *fit) int { return f.server },
		gives: []give{{keyFair, 0, func(_ *fit, c *columns, i int) { c.widths[i] = min(c.widths[i], minServerWidth) }}},
		cell:  func(m *Model, r *rowArgs) (string, bool) { return m.serverCell(r), false },
	},
	{
		id: model.ColumnValue, right: true,
		wide: func(f *fit) int { return max(f.value, f.title(model.ColumnValue)) },
		// Last of all, a number that no longer fits is rounded: to three
		// digits ("9.22e18", not "9.2233720368548e18"), and KEY gets the rest.
		gives: []give{{keyFair, 5, func(f *fit, c *columns, i int) {
			c.widths[i] = max(f.title(model.ColumnValue), min(c.widths[i]-(f.fair-(f.width-c.fixed())), len(roundedValue)))
		}}},
		cell: func(_ *Model, r *rowArgs) (string, bool) { return r.pad(valueCell(r.c, r.width, r.now)), true },
	},
	{
		id:   model.ColumnLimit,
		wide: always(percentWidth + 1 + gaugeCells),
		gives: []give{
			{keyMin, 4, func(f *fit, c *columns, i int) { c.widths[i] = max(percentWidth, f.title(model.ColumnLimit)) }}, // the gauge goes, the percentage stays
			dropAt(keyFair, 3), // STATUS still says over and warn
		},
		cell: func(m *Model, r *rowArgs) (string, bool) { return m.limitCell(r), false },
	},
	{
		id: model.ColumnTTL, right: true,
		wide:  always(ttlWidth),
		gives: []give{narrowAt(keyFair, 1, narrowTTLWidth)},
		cell: func(m *Model, r *rowArgs) (string, bool) {
			ttl, tone := m.ttlCell(r.c, r.rule, r.now)
			if ttl == persistent && r.width < ttlWidth {
				ttl = persistentShort
			}
			return r.look.tones[tone].render(r.pad(ttl)), false
		},
	},
	{
		id: model.ColumnRate, right: true,
		wide:  always(rateWidth),
		gives: []give{dropAt(keyMin, 3)},
		cell: func(_ *Model, r *rowArgs) (string, bool) {
			tone := tonePlain
			if still(r.c.Rate) {
				tone = toneDim
			}
			return r.look.tones[tone].render(r.pad(formatRate(r.c.Rate))), false
		},
	},
	{
		id:    model.ColumnTrend,
		wide:  always(trendWidth),
		gives: []give{dropAt(keyMin, 2)}, // RATE still says it moves
		cell: func(m *Model, r *rowArgs) (string, bool) {
			if line := m.trendCell(r.c, r.rule, r.now); line != "" {
				return r.look.gauge[r.c.Status].render(r.pad(line)), false // in the gauge's colours
			}
			return r.look.base.render(strings.Repeat(" ", r.width)), false
		},
	},
	{
		id:    model.ColumnLayout,
		wide:  always(layoutWidth),
		gives: []give{dropAt(keyMin, 1)}, // VALUE still reads "frees in 3s", "7 left"
		cell: func(_ *Model, r *rowArgs) (string, bool) {
			return r.look.tones[toneDim].render(r.pad(r.c.Layout.Spec().Cell)), false
		},
	},
	{
		id:    model.ColumnStatus,
		wide:  always(statusWidth),
		gives: []give{narrowAt(keyFair, 4, narrowStatusWidth)}, // only "not-counter" is cut
		cell: func(_ *Model, r *rowArgs) (string, bool) {
			return r.look.status[r.c.Status].render(r.pad(truncate(r.c.Status.String(), r.width))), false
		},
	},
}

// A give is a step by which a column gives way to KEY: when KEY would be
// narrower than its goal, to sets the column's width, index i of c.widths
// (0: the column goes). The steps of all columns are taken in turn, by
// goal then rank, until KEY has its goal (see layout); a column can take
// several.
type give struct {
	goal goal
	rank int
	to   func(f *fit, c *columns, i int)
}

// goal is how wide KEY must be for the columns to stop giving way.
type goal uint8

const (
	keyMin  goal = iota // minKeyWidth: the columns that only add go first
	keyFair             // its fair share: then the others narrow
)

// always is a width that does not depend on the rows.
func always(width int) func(*fit) int { return func(*fit) int { return width } }

// dropAt is the step by which a column goes, at goal and rank.
func dropAt(g goal, rank int) give {
	return give{g, rank, func(_ *fit, c *columns, i int) { c.widths[i] = 0 }}
}

// narrowAt is the step by which a column narrows to width.
func narrowAt(g goal, rank, width int) give {
	return give{g, rank, func(_ *fit, c *columns, i int) { c.widths[i] = width }}
}

// narrowGaps is the step by which the gaps between columns narrow: after
// TTL, before LIMIT goes.
var narrowGaps = give{keyFair, 2, func(_ *fit, c *columns, _ int) { c.gap = narrowGap }}

// step is a give of column col of tableColumns (-1: of the gaps).
type step struct {
	give
	col int
}

// tableSteps are every give of tableColumns and narrowGaps, by goal then
// rank.
var tableSteps = func() []step {
	steps := []step{{narrowGaps, -1}}
	for i, col := range tableColumns {
		for _, g := range col.gives {
			steps = append(steps, step{g, i})
		}
	}
	slices.SortStableFunc(steps, func(a, b step) int { return cmp.Or(cmp.Compare(a.goal, b.goal), cmp.Compare(a.rank, b.rank)) })
	return steps
}()

// fit is what the table's shape is worked out from (see layout).
type fit struct {
	width  int           // the screen's
	value  int           // the widest value on screen
	server int           // SERVER's width: 0 with one server
	key    int           // the widest name seen
	sorted model.SortKey // the rows' order, whose column's title has a ▾
	fair   int           // KEY's fair share of width
}

// title is how many cells col's title takes: one more for the sorted
// column's ▾.
func (f *fit) title(col model.Column) int {
	if k, ok := col.Sort(); ok && k == f.sorted {
		return len(col.Title()) + 1
	}
	return len(col.Title())
}

// goal is g in cells.
func (f *fit) goal(g goal) int {
	if g == keyMin {
		return minKeyWidth
	}
	return f.fair
}

// columns is the table's shape at the current width.
type columns struct {
	widths [numTableColumns]int // by tableColumns' index; 0: the column gave way
	gap    string               // between columns
}

// key is KEY's width.
func (c *columns) key() int { return c.widths[0] }

// width is how many cells a row of these columns takes.
func (c *columns) width() int { return c.key() + c.fixed() }

// fixed is the width of every column but KEY, gaps and gutter included.
func (c *columns) fixed() int {
	w := gutterWidth
	for _, n := range c.widths[1:] {
		if n > 0 {
			w += n + len(c.gap)
		}
	}
	return w
}

// roundedValue is as wide as VALUE gets once its numbers are rounded to
// make room for KEY.
const roundedValue = "-9.22e18"

// layout fits the columns to width, for values up to value cells wide and
// key names up to key, sorted on sorted. KEY gets what is left, up to what
// the names need; where that is too little, the other columns give way in
// steps (their gives), as the key is what tells one row from another:
// under minKeyWidth, what only adds goes, the sorted column's last, as it
// explains the rows' order; under KEY's fair share (a third of the row, or
// what the names need), the others narrow or go.
func layout(width, value, key, server int, sorted model.SortKey) columns {
	f := fit{width: width, value: value, key: key, server: server, sorted: sorted}
	f.fair = min(minKeyWidth, (width-gutterWidth)/3, max(key, f.title(model.ColumnKey)))
	c := columns{gap: gap}
	for i, col := range tableColumns {
		if col.wide != nil {
			c.widths[i] = col.wide(&f)
		}
	}
give:
	for turn := range 3 {
		for _, s := range tableSteps {
			if f.turn(s) != turn {
				continue
			}
			if width-c.fixed() >= f.goal(s.goal) {
				break give
			}
			s.to(&f, &c, s.col)
		}
	}
	// KEY is as wide as the names need, up to keyShare of the row: the
	// room past that goes to the right end, so that a value stays next to
	// its key on a wide screen rather than a screen's width away.
	rest := width - c.fixed()
	need := max(key, f.title(model.ColumnKey))
	c.widths[0] = max(1, min(rest, max(minKeyWidth, min(need, width*keyShare/100))))
	return c
}

// turn is when layout takes step s: the steps under minKeyWidth (0), but
// the sorted column's (1), then the others (2), each in tableSteps' order.
func (f *fit) turn(s step) int {
	switch {
	case s.goal != keyMin:
		return 2
	case s.col < 0:
		return 0
	}
	if k, ok := tableColumns[s.col].id.Sort(); ok && k == f.sorted {
		return 1
	}
	return 0
}

// keyShare is the most of a wide row's width (in percent) that KEY takes
// for its longest name; a longer name is cut in its middle.
const keyShare = 60

// columns is the table's shape as it is drawn now.
func (m *Model) columns() columns { return m.columnsFor(m.store.Rows(m.offset, m.tableRows())) }

// columnsFor is the table's shape for rows, the ones on screen: VALUE is as
// wide as their values.
func (m *Model) columnsFor(rows []model.Counter) columns {
	now := m.clock()
	valueWidth := 0
	for i := range rows {
		valueWidth = max(valueWidth, min(maxValue, cells(formatValue(&rows[i], now))))
	}
	return layout(m.width, valueWidth, m.widestKey, m.serverWidth(), m.store.Sort())
}

// tableRows is how many counters fit under the column titles (and the
// overview panel, when it is on).
func (m *Model) tableRows() int { return max(0, m.bodyHeight()-1-m.overviewHeight()) }

// tableView is the column titles and the visible rows, height lines at most,
// each cut to the width. Only the rows on screen are read from the Store,
// so a frame costs the same at ten keys or a million.
func (m *Model) tableView(height int) []string {
	rows := m.store.Rows(m.offset, max(0, height-1))
	now := m.clock()
	cols := m.columnsFor(rows)
	lines := make([]string, 0, height)
	lines = append(lines, truncate(m.titles(cols), m.width))
	if len(rows) == 0 {
		return append(lines, m.emptyMessage(height-1)...)
	}
	names := make([]string, len(rows))
	for i := range rows {
		names[i] = rows[i].Name() // a hash field's row: "key › field"
	}
	r := &rowArgs{now: now} // one for all rows: the cells' functions move it to the heap
	for i := range rows {
		r.c, r.name = &rows[i], keyCell(names, i, cols.key())
		line := m.row(r, cols, m.offset+i == m.cursor)
		if cols.width() > m.width {
			// Rows are as wide as their columns, which fit the width
			// unless it is too narrow for them.
			line = truncate(line, m.width)
		}
		lines = append(lines, line)
	}
	return lines
}

// emptyMessage explains an empty table in at most height lines, wrapped.
// When the feed stopped for good (say --mode events on a server without
// notifications), its reason is the whole message, not a line the header
// has to cut.
func (m *Model) emptyMessage(height int) []string {
	var msg string
	style := m.theme.Dim
	switch {
	case m.feedClosed && m.feedState.LastError != "":
		msg, style = "Stopped: "+strings.TrimSuffix(model.Printable(m.feedState.LastError), ".")+". Press q to quit.", m.theme.Error
	case m.store.Len() > 0:
		msg = "No key matches the filter " + quoteTyped(m.store.Filter()) + " (esc clears it)."
		if unknown := model.UnknownStatuses(m.store.Filter()); len(unknown) > 0 {
			msg += " " + quoteTyped(unknown[0]) + " is not a status: is: takes " + statusNames() + ", or problem."
		}
	case m.feedState.Scanning || !m.feedState.Connected:
		msg = "Looking for keys…"
	case m.feedState.LastError != "" && m.lastData.IsZero():
		// A pass that failed found nothing to say of the keys.
		msg = "No keys read yet: see the error above."
	default:
		msg = m.nothingWatched()
	}
	lines := wrapWords(msg, max(10, m.width-2))
	for i, l := range lines {
		lines[i] = "  " + style.Render(l)
	}
	return lines[:min(len(lines), max(0, height))]
}

// nothingWatched is the empty screen of a keyspace where nothing matched:
// which patterns, in which database, and where to look when that is a
// mistake (a typo in a pattern, the wrong /N at the end of --url).
func (m *Model) nothingWatched() string {
	db := "db " + strconv.Itoa(m.db)
	if len(m.patterns) == 0 {
		return "No keys in " + db + ". Check the database (--url .../N)."
	}
	names := make([]string, len(m.patterns))
	for i, p := range m.patterns {
		names[i] = model.Printable(p)
	}
	check := "Check the pattern (--pattern)"
	if len(names) > 1 {
		check = "Check the patterns (--pattern)"
	}
	return "No key matches " + strings.Join(names, " or ") + " in " + db + ". " + check + " and the database (--url .../N)."
}

// statusNames is every status's name, for the filter's is: terms.
func statusNames() string {
	names := make([]string, model.NumStatuses)
	for st := range model.Status(model.NumStatuses) {
		names[st] = st.String()
	}
	return strings.Join(names, ", ")
}

// titles is the column-title line; the sorted column is marked with ▾.
func (m *Model) titles(c columns) string {
	sorted := m.store.Sort()
	cells := make([]string, 0, len(tableColumns))
	for i, col := range tableColumns {
		if c.widths[i] == 0 {
			continue
		}
		title := col.id.Title()
		if k, ok := col.id.Sort(); ok && k == sorted {
			title += "▾"
		}
		cell := col.pad(title, c.widths[i])
		if i == 0 {
			cell = strings.Repeat(" ", gutterWidth) + cell
		}
		cells = append(cells, cell)
	}
	return m.theme.Heading.Render(strings.Join(cells, c.gap))
}

// pad pads text to width cells on the side the column aligns to.
func (col *column) pad(text string, width int) string {
	if col.right {
		return padLeft(text, width)
	}
	return padRight(text, width)
}

// keyCell is names[i] in width cells: whole when it fits, else with its
// middle cut out (truncateMiddle), which keeps the end, where keys of a
// pattern differ. Names that differ in the middle (user:42:login beside
// user:43:login) are cut inside what they share instead, so that where
// they differ stays in sight and the rows do not read alike.
func keyCell(names []string, i, width int) string {
	name := names[i]
	if cells(name) <= width || width < 3 {
		return truncateMiddle(name, width)
	}
	shared := 0 // bytes name shares from its start with the most alike name
	for j, other := range names {
		if j != i && other != name {
			shared = max(shared, len(commonPrefix(name, other)))
		}
	}
	differs, _ := model.EscapeAt(name, shared) // whole characters and escapes
	for differs > 0 && isWordByte(name[differs-1]) {
		differs-- // from the start of the word: 42, not 2
	}
	head := (width - 1) / 2
	const minHead = 3 // of the shared start, for context
	tail := cells(name[differs:])
	if differs >= len(name) || cells(name[:differs]) < head || tail <= width-1-head || tail > width-1-minHead {
		return truncateMiddle(name, width) // the middle cut shows where it differs, or nothing can
	}
	return cutMiddle(name, width, width-1-tail)
}

// isWordByte reports whether b is an ASCII letter or digit: a key's words
// (a user, an id) are runs of them between separators.
func isWordByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// commonPrefix is the longest prefix a and b share.
func commonPrefix(a, b string) string {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return a[:i]
		}
	}
	return a[:n]
}

// rowArgs are what a row's cells are drawn from (see column.cell).
type rowArgs struct {
	c     *model.Counter
	name  string // the key, as KEY shows it
	rule  model.Rule
	now   time.Time
	look  *rowLook
	col   *column // the column being drawn
	width int     // its width
}

// pad pads text to the width of the column being drawn.
func (r *rowArgs) pad(text string) string { return r.col.pad(text, r.width) }

// row renders the counter r.c, its key shown as r.name. A counter with no
// expiry is red across the row; the STATUS cell and the gauge carry the
// status colour. The gutter and KEY are drawn as one run of the row's
// look, and so is each other plain cell with the gaps either side of it;
// every other cell is drawn apart, each gap before it in the row's look.
func (m *Model) row(r *rowArgs, cols columns, selected bool) string {
	look, marker := &m.theme.rows[r.c.Status][0], "  "
	if selected {
		look, marker = &m.theme.rows[r.c.Status][1], "▸ "
	}
	r.look = look
	r.rule, _ = m.store.RuleOf(*r.c)

	var b strings.Builder
	var run [2 * numTableColumns]string // in the row's look, to be drawn as one
	n := 0
	draw := func() {
		if n > 0 {
			b.WriteString(look.base.render(strings.Join(run[:n], "")))
			n = 0
		}
	}
	run[n], n = marker, n+1
	for i := range tableColumns {
		if cols.widths[i] == 0 {
			continue
		}
		if i > 0 {
			run[n], n = cols.gap, n+1
		}
		r.col, r.width = &tableColumns[i], cols.widths[i]
		text, plain := r.col.cell(m, r)
		if plain {
			run[n], n = text, n+1
			if i > 0 {
				continue
			}
		}
		draw()
		if !plain {
			b.WriteString(text)
		}
	}
	draw()
	return b.String()
}

// trendCell is the TREND cell: the key's last minute as a sparkline, as a
// share of its limit when it has one (see model.TrendLine); blank for a
// key that has not changed since it was first read.
func (m *Model) trendCell(c *model.Counter, rule model.Rule, now time.Time) string {
	t, ok := m.store.Trend(c.ID(), now)
	if !ok {
		return ""
	}
	return model.TrendLine(t, c.Layout, rule.Limit)
}

// limitCell is the LIMIT cell: a gauge and the percentage of the limit,
// the percentage alone where the gauge has no room, or "—" when the key
// has no limit or no number.
func (m *Model) limitCell(r *rowArgs) string {
	c, look := r.c, r.look
	frac, ok := c.Percent(r.rule.Limit)
	if !ok {
		return look.tones[toneDim].render(r.pad("—"))
	}
	if r.width < percentWidth+1+gaugeCells {
		return look.gauge[c.Status].render(padLeft(formatPercent(frac), r.width))
	}
	pct := padLeft(formatPercent(frac), percentWidth)
	return look.gauge[c.Status].render(gauge(frac, gaugeCells)) + look.base.render(" "+pct)
}

// ttlCell is the live countdown and the tone it is drawn in: never
// negative; "expired" once the deadline passed but no reading has said the
// key is gone; "no expiry" in red where the rule expects a TTL.
func (m *Model) ttlCell(c *model.Counter, rule model.Rule, now time.Time) (string, tone) {
	switch {
	case c.Expired(now):
		return "expired", toneDim
	case c.HasTTL():
		left, _ := c.TTLAt(now)
		return model.FormatDuration(left), tonePlain
	case c.Status == model.StatusNotCounter:
		return "no expiry", toneDim
	case !rule.ExpectTTL:
		return persistent, toneDim
	}
	return "no expiry", toneNoExpiry
}

// follow puts the cursor back on the selected key after the rows changed
// (new batch, sort, filter, resize). When the key is gone or filtered out,
// the cursor keeps its index, clamped, and selects what is there now.
func (m *Model) follow() {
	if !m.picked {
		m.moveTo(0)
		return
	}
	if i := m.store.IndexOf(m.selected.id); !m.selected.none() && i >= 0 {
		m.cursor = i
	}
	m.moveTo(m.cursor)
}

// followFeed is follow after the feed changed the rows. A picked key that
// left the view by itself (deleted, expired, or out of a status filter by
// a change of its own) is noted as lost: the row that takes its place was
// not the user's choice, and the next write must not land on it.
func (m *Model) followFeed() {
	if m.picked && !m.selected.none() && m.lost.none() && m.store.IndexOf(m.selected.id) < 0 {
		m.lost = m.selected
	}
	m.follow()
}

// moveTo selects the row at index i (clamped) and scrolls it into view.
func (m *Model) moveTo(i int) {
	n := m.store.Visible()
	m.cursor = max(0, min(i, n-1))
	m.selected = rowRef{}
	if n > 0 {
		if rows := m.store.Rows(m.cursor, 1); len(rows) == 1 {
			m.selected = refOf(&rows[0])
		}
	}
	rows := m.tableRows()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if rows > 0 && m.cursor >= m.offset+rows {
		m.offset = m.cursor - rows + 1
	}
	m.offset = max(0, min(m.offset, n-rows))
}
