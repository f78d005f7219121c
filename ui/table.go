package ui

import (
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

// columns is the table's shape at the current width.
type columns struct {
	key, value, limit int // limit 0: no LIMIT column
	ttl, status       int
	gauge, rate       bool
	trend             bool   // the TREND column
	layout            bool   // the LAYOUT column
	gap               string // between columns
}

// width is how many cells a row of these columns takes.
func (c columns) width() int { return c.key + c.fixed() }

// fixed is the width of every column but KEY, gaps and gutter included.
func (c columns) fixed() int {
	g := len(c.gap)
	w := gutterWidth + c.value + c.ttl + c.status + 3*g
	if c.limit > 0 {
		w += c.limit + g
	}
	if c.rate {
		w += rateWidth + g
	}
	if c.trend {
		w += trendWidth + g
	}
	if c.layout {
		w += layoutWidth + g
	}
	return w
}

// roundedValue is as wide as VALUE gets once its numbers are rounded to
// make room for KEY.
const roundedValue = "-9.22e18"

// layout fits the columns to width, for values up to value cells wide and
// key names up to key, sorted on sorted (whose title takes a cell more, for
// its ▾). KEY gets what is left, up to what the names need; where that is
// too little, the other columns give way in steps, as the key is what
// tells one row from another.
func layout(width, value, key int, sorted model.SortKey) columns {
	arrow := func(k model.SortKey) int {
		if k == sorted {
			return 1 // ▾ is one cell
		}
		return 0
	}
	minValue := len("VALUE") + arrow(model.SortValue)
	percentOnly := max(percentWidth, len("LIMIT")+arrow(model.SortPercent))
	c := columns{
		value: max(value, minValue), limit: percentWidth + 1 + gaugeCells, ttl: ttlWidth, status: statusWidth,
		gauge: true, rate: true, trend: true, layout: true, gap: gap,
	}
	fair := min(minKeyWidth, (width-gutterWidth)/3, max(key, len("KEY")+arrow(model.SortKeyName)))
	type step struct {
		goal int
		give func(*columns)
	}
	// Under minKeyWidth, LAYOUT goes (VALUE still reads "frees in 3s", "7
	// left"), then TREND (RATE still says it moves), then RATE, then the
	// gauge (the percentage stays).
	dropLayout := step{minKeyWidth, func(c *columns) { c.layout = false }}
	dropTrend := step{minKeyWidth, func(c *columns) { c.trend = false }}
	dropRate := step{minKeyWidth, func(c *columns) { c.rate = false }}
	dropGauge := step{minKeyWidth, func(c *columns) { c.gauge, c.limit = false, percentOnly }}
	first := []step{dropLayout, dropTrend, dropRate, dropGauge}
	if sorted == model.SortRate {
		first = []step{dropLayout, dropTrend, dropGauge, dropRate} // the column the rows are in the order of stays longest
	}
	// Under KEY's fair share (a third of the row, or what the names need),
	// TTL and the gaps narrow, LIMIT goes (STATUS still says over and
	// warn), STATUS narrows, and last VALUE rounds its numbers.
	steps := append(first, []step{
		{fair, func(c *columns) { c.ttl = narrowTTLWidth }},
		{fair, func(c *columns) { c.gap = narrowGap }},
		{fair, func(c *columns) { c.limit = 0 }},
		{fair, func(c *columns) { c.status = narrowStatusWidth }},
		{fair, func(c *columns) {
			// A number that no longer fits is rounded: to three digits
			// ("9.22e18", not "9.2233720368548e18"), and KEY gets the rest.
			c.value = max(minValue, min(c.value-(fair-(width-c.fixed())), len(roundedValue)))
		}},
	}...)
	for _, s := range steps {
		if width-c.fixed() >= s.goal {
			break
		}
		s.give(&c)
	}
	// KEY is as wide as the names need, up to keyShare of the row: the
	// room past that goes to the right end, so that a value stays next to
	// its key on a wide screen rather than a screen's width away.
	rest := width - c.fixed()
	need := max(key, len("KEY")+arrow(model.SortKeyName))
	c.key = max(1, min(rest, max(minKeyWidth, min(need, width*keyShare/100))))
	return c
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
	return layout(m.width, valueWidth, m.widestKey, m.store.Sort())
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
		names[i] = model.Printable(rows[i].Key)
	}
	for i := range rows {
		line := m.row(&rows[i], keyCell(names, i, cols.key), cols, now, m.offset+i == m.cursor)
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
	title := func(name string, k model.SortKey) string {
		if k == sorted {
			return name + "▾"
		}
		return name
	}
	cells := []string{
		strings.Repeat(" ", gutterWidth) + padRight(title("KEY", model.SortKeyName), c.key),
		padLeft(title("VALUE", model.SortValue), c.value),
	}
	if c.limit > 0 {
		cells = append(cells, padRight(title("LIMIT", model.SortPercent), c.limit))
	}
	cells = append(cells, padLeft(title("TTL", model.SortTTL), c.ttl))
	if c.rate {
		cells = append(cells, padLeft(title("RATE", model.SortRate), rateWidth))
	}
	if c.trend {
		cells = append(cells, padRight("TREND", trendWidth))
	}
	if c.layout {
		cells = append(cells, padRight("LAYOUT", layoutWidth))
	}
	cells = append(cells, padRight("STATUS", c.status))
	return m.theme.Heading.Render(strings.Join(cells, c.gap))
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

// row renders one counter, its key shown as name. A counter with no expiry
// is red across the row; the STATUS cell and the gauge carry the status
// colour.
func (m *Model) row(c *model.Counter, name string, cols columns, now time.Time, selected bool) string {
	look, marker := &m.theme.rows[c.Status][0], "  "
	if selected {
		look, marker = &m.theme.rows[c.Status][1], "▸ "
	}
	rule, _ := m.store.RuleOf(*c)
	ttl, ttlTone := m.ttlCell(c, rule, now)
	rateTone := tonePlain
	if still(c.Rate) {
		rateTone = toneDim
	}

	if ttl == persistent && cols.ttl < ttlWidth {
		ttl = persistentShort
	}
	gap := cols.gap

	var b strings.Builder
	b.WriteString(look.base.render(marker + padRight(name, cols.key)))
	b.WriteString(look.base.render(gap + padLeft(valueCell(c, cols.value, now), cols.value) + gap))
	if cols.limit > 0 {
		b.WriteString(m.limitCell(c, rule, cols, look))
		b.WriteString(look.base.render(gap))
	}
	b.WriteString(look.tones[ttlTone].render(padLeft(ttl, cols.ttl)))
	if cols.rate {
		b.WriteString(look.base.render(gap))
		b.WriteString(look.tones[rateTone].render(padLeft(formatRate(c.Rate), rateWidth)))
	}
	if cols.trend {
		b.WriteString(look.base.render(gap))
		if line := m.trendCell(c, rule, now); line != "" {
			b.WriteString(look.gauge[c.Status].render(padRight(line, trendWidth))) // in the gauge's colours
		} else {
			b.WriteString(look.base.render(strings.Repeat(" ", trendWidth)))
		}
	}
	if cols.layout {
		b.WriteString(look.base.render(gap))
		b.WriteString(look.tones[toneDim].render(padRight(c.Layout.Spec().Cell, layoutWidth)))
	}
	b.WriteString(look.base.render(gap))
	b.WriteString(look.status[c.Status].render(padRight(truncate(c.Status.String(), cols.status), cols.status)))
	return b.String()
}

// trendCell is the TREND cell: the key's last minute as a sparkline, as a
// share of its limit when it has one (see model.TrendLine); blank for a
// key that has not changed since it was first read.
func (m *Model) trendCell(c *model.Counter, rule model.Rule, now time.Time) string {
	t, ok := m.store.Trend(c.Key, now)
	if !ok {
		return ""
	}
	return model.TrendLine(t, c.Layout, rule.Limit)
}

// limitCell is the LIMIT cell: a gauge and the percentage of the limit, or
// "—" when the key has no limit or no number.
func (m *Model) limitCell(c *model.Counter, rule model.Rule, cols columns, look *rowLook) string {
	frac, ok := c.Percent(rule.Limit)
	if !ok {
		return look.tones[toneDim].render(padRight("—", cols.limit))
	}
	if !cols.gauge {
		return look.gauge[c.Status].render(padLeft(formatPercent(frac), cols.limit))
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
	if i := m.store.IndexOf(m.selected); m.selected != "" && i >= 0 {
		m.cursor = i
	}
	m.moveTo(m.cursor)
}

// followFeed is follow after the feed changed the rows. A picked key that
// left the view by itself (deleted, expired, or out of a status filter by
// a change of its own) is noted as lost: the row that takes its place was
// not the user's choice, and the next write must not land on it.
func (m *Model) followFeed() {
	if m.picked && m.selected != "" && m.lost == "" && m.store.IndexOf(m.selected) < 0 {
		m.lost = m.selected
	}
	m.follow()
}

// moveTo selects the row at index i (clamped) and scrolls it into view.
func (m *Model) moveTo(i int) {
	n := m.store.Visible()
	m.cursor = max(0, min(i, n-1))
	m.selected = ""
	if n > 0 {
		if rows := m.store.Rows(m.cursor, 1); len(rows) == 1 {
			m.selected = rows[0].Key
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
