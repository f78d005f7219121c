package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/countertop/countertop/model"
)

// Snapshot collects one pass's counters as they arrive and writes them in
// key order, as they stood at one moment, in one of the Formats: what
// `countertop snapshot` prints.
//
// JSON is ARCHITECTURE.md's document for scripts, with watched_s after taken_at
// (see Watched), exactly as json.Encoder with a two-space indent writes it
// but for what appendJSONString also escapes;
// the table (text/tabwriter's layout, long names cut as the dashboard cuts
// them: see FitTo) and CSV (encoding/csv's) carry names and values in
// model.Printable form, since they often go straight to a terminal.
//
// The user waits from Redis's last answer to the last row, so Add does most
// of the work while Redis reads on: it renders each row but for its TTL and
// padding, and keeps rows and keys rather than counters, to hold less memory.
type Snapshot struct {
	format      string
	rules       *model.Rules
	texts       ruleTexts
	width       int           // of the terminal the table goes to; 0 when it goes elsewhere
	watched     time.Duration // how long the counters were watched (see Watched); 0: one pass
	start       time.Time     // the rows' read times count from it
	order       keyOrder
	batches     []renderedBatch // the order's batches, in the same order
	rows, bytes int             // rendered so far
	// servers are the servers the rows come from, in their order (see
	// Servers), and serverAt each one's index there: with more than one,
	// the table has a SERVER column.
	servers  []string
	serverAt map[string]int
}

// renderedBatch is the rows of a batch of counters, rendered but for what
// Write adds (see rendered).
type renderedBatch struct {
	text   []byte     // the rows' parts, row after row
	rows   []rendered // counter i's row
	server int        // the index of the server its rows were read on, in Snapshot.servers
}

// rendered is where one row's parts lie in its batch's text: part k ends
// ends[k] bytes after start, and Write puts the TTL between the parts
// before tailPart and it (a table's cells before its TTL, then its
// status; JSON and CSV use parts 0 and tailPart alone). It keeps the PTTL
// and read time but no pointer, so that Write need not visit the
// counters, nor the collector scan the rows.
type rendered struct {
	start   int
	ends    [tailPart + 1]uint32
	runes   [tailPart]uint32 // the cells of the table's key, and the runes of its other cells
	dropped bool             // a reading of a key that Write leaves out for another (see keyOrder.sorted)
	pttl    int64
	readAt  time.Duration // since the Snapshot's start
}

// ttlMS returns the row's TTL in milliseconds at the moment elapsed after
// the Snapshot's start.
func (r *rendered) ttlMS(elapsed time.Duration) int64 {
	return ttlLeft(r.pttl, subDurations(elapsed, r.readAt))
}

// subDurations returns a-b, held at the largest or smallest Duration where
// it would overflow (a reading with no time, from a test, is ages ago).
func subDurations(a, b time.Duration) time.Duration {
	d := a - b
	switch {
	case b < 0 && d < a:
		return math.MaxInt64
	case b > 0 && d > a:
		return math.MinInt64
	}
	return d
}

// part returns the row's part k in text, its batch's.
func (r *rendered) part(text []byte, k int) []byte {
	from := r.start
	if k > 0 {
		from += int(r.ends[k-1])
	}
	return text[from : r.start+int(r.ends[k])]
}

// NewSnapshot returns an empty snapshot to write in format; rules classify
// the counters and give each row's limit, window and pattern.
func NewSnapshot(format string, rules *model.Rules) *Snapshot {
	return &Snapshot{format: format, rules: rules, texts: newRuleTexts(rules), start: time.Now()}
}

// FitTo makes the table fit a terminal width cells wide: key names are cut
// (model.CutMiddle) to what the other columns leave them, though to no
// fewer than minTableKey cells. Without it, as for a table that goes to a
// file or a pipe, names are cut at maxTableKey cells. It changes nothing
// of JSON and CSV, which always hold the whole name; call it before Add.
func (s *Snapshot) FitTo(width int) { s.width = max(width, 0) }

// Servers says the rows come from servers (their names, as
// model.Observation.Server gives them), in the order keys of one name on
// several of them are written; with more than one, the table has a SERVER
// column, even when some of them gave no row. Without it, the servers
// are those of the rows, in the order they came. Call it before Add.
func (s *Snapshot) Servers(names []string) {
	for _, name := range names {
		s.serverIndex(name)
	}
}

// serverIndex returns the index of the server name, which it adds to
// the servers when new.
func (s *Snapshot) serverIndex(name string) int {
	if i, ok := s.serverAt[name]; ok {
		return i
	}
	if s.serverAt == nil {
		s.serverAt = make(map[string]int)
	}
	s.serverAt[name] = len(s.servers)
	s.servers = append(s.servers, name)
	return len(s.servers) - 1
}

// Watched says the counters come from watching them for d (snapshot
// --watch), so their statuses are as watched: the JSON's watched_s, which
// is 0 for one pass, so that a script can tell a snapshot that could see
// extending from one that could not.
func (s *Snapshot) Watched(d time.Duration) { s.watched = max(d, 0) }

// keyCap returns how many cells of a key name a table row keeps as it is
// added: the whole terminal's width, or maxTableKey.
func (s *Snapshot) keyCap() int {
	if s.width > 0 {
		return s.width
	}
	return maxTableKey
}

// Add classifies and renders a batch of readings, as they arrive. A key
// can come in several batches; Write writes its latest reading.
func (s *Snapshot) Add(batch []model.Observation) {
	batch = model.Expand(batch) // a hash whose fields carry TTLs: a row a field
	serverRuns(len(batch), func(i int) string { return batch[i].Server }, func(from, to int, server string) {
		s.add(to-from, server, func(i int) model.Counter { return model.NewCounter(&batch[from+i], s.rules) })
	})
}

// AddCounters renders counters classified already (by a model.Store that
// watched them, which sees what one reading cannot: extending) as the next
// batch.
func (s *Snapshot) AddCounters(batch []*model.Counter) {
	serverRuns(len(batch), func(i int) string { return batch[i].Server }, func(from, to int, server string) {
		s.add(to-from, server, func(i int) model.Counter { return *batch[from+i] })
	})
}

// serverRuns calls add with each run of the n items whose servers, server(i)
// the i-th's, are the same: a batch is one server's rows, as one pass
// reads them.
func serverRuns(n int, server func(i int) string, add func(from, to int, server string)) {
	for from := 0; from < n; {
		to := from + 1
		for to < n && server(to) == server(from) {
			to++
		}
		add(from, to, server(from))
		from = to
	}
}

// add renders n counters of the server named server, counter(i) the i-th,
// as the next batch.
func (s *Snapshot) add(n int, server string, counter func(i int) model.Counter) {
	if n == 0 {
		return
	}
	// Room for rows as long as the rows so far, on average: a guess, which
	// one long row (a 64 KiB value escaped) must not turn into megabytes
	// held for the whole pass.
	const maxGuess = 1 << 10
	b := renderedBatch{rows: make([]rendered, n), server: s.serverIndex(server)}
	if s.rows > 0 {
		b.text = make([]byte, 0, min(s.bytes/s.rows+s.bytes/s.rows/8, maxGuess)*n)
	}
	keys := make([]string, n)
	for i := range n {
		c := counter(i)
		keys[i] = c.NameID() // a hash's field rows are rows apart
		b.text = s.render(b.text, &b.rows[i], &c)
	}
	s.order.add(keys, b.server)
	s.batches = append(s.batches, b)
	s.rows, s.bytes = s.rows+n, s.bytes+len(b.text)
}

// Write writes every counter added, in key order, as it stood at takenAt,
// and returns an error writing to w, or for a format it does not know.
// The Snapshot is empty afterwards.
func (s *Snapshot) Write(w io.Writer, takenAt time.Time) error {
	row := func(p place) *rendered { r, _ := s.row(p); return r }
	order := s.order.sorted(
		func(a, b place) bool { return row(a).readAt > row(b).readAt },
		func(p place) { row(p).dropped = true })
	err := s.write(w, takenAt, order)
	*s = Snapshot{format: s.format, rules: s.rules, texts: s.texts, width: s.width, watched: s.watched, start: s.start, servers: s.servers, serverAt: s.serverAt}
	return err
}

// render appends c's row to text, in s's format, and notes in r where it
// is.
func (s *Snapshot) render(text []byte, r *rendered, c *model.Counter) []byte {
	r.start, r.pttl, r.readAt = len(text), c.PTTL, c.ObservedAt.Sub(s.start)
	end := func() uint32 { return uint32(len(text) - r.start) }
	switch s.format {
	case FormatTable:
		cells := tableCells(c, s.texts, s.keyCap())
		for k, cell := range cells {
			text = append(text, cell...)
			r.ends[k], r.runes[k] = end(), uint32(utf8.RuneCountInString(cell))
		}
		r.runes[0] = uint32(model.Cells(cells[0])) // the key, as a terminal shows it
		text = append(text, c.Status.String()...)
		text = append(text, '\n')
	case FormatJSON:
		text = appendJSONHead(text, c)
		r.ends[0] = end()
		text = s.appendJSONTail(text, c)
	case FormatCSV:
		text = s.appendCSVHead(text, c)
		r.ends[0] = end()
		text = s.appendCSVTail(text, c)
	}
	for k := 1; k < tailPart && s.format != FormatTable; k++ {
		r.ends[k] = r.ends[0] // JSON and CSV: empty parts up to the tail
	}
	r.ends[tailPart] = end()
	return text
}

// row returns the row of the counter at p, and its batch's text.
func (s *Snapshot) row(p place) (*rendered, []byte) {
	b := &s.batches[p.batch]
	return &b.rows[p.i], b.text
}

// write writes the counters at order, in that order (Write's is key order;
// tests give theirs).
func (s *Snapshot) write(w io.Writer, takenAt time.Time, order []place) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	elapsed := takenAt.Sub(s.start)
	switch s.format {
	case FormatTable:
		s.writeTable(bw, elapsed, order)
	case FormatJSON:
		bw.WriteString("{\n  \"taken_at\": \"")
		bw.Write(takenAt.AppendFormat(nil, time.RFC3339))
		bw.WriteString("\",\n  \"watched_s\": ")
		bw.Write(strconv.AppendFloat(nil, s.watched.Seconds(), 'f', -1, 64))
		bw.WriteString(",\n  \"counters\": [")
		s.writeRows(bw, order, func(buf []byte, i int, p place) []byte {
			r, text := s.row(p)
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, r.part(text, 0)...)
			buf = strconv.AppendInt(buf, r.ttlMS(elapsed), 10)
			return append(buf, r.part(text, tailPart)...)
		})
		if len(order) > 0 {
			bw.WriteString("\n  ")
		}
		bw.WriteString("]\n}\n")
	case FormatCSV:
		bw.WriteString("key,type,layout,value,remaining,raw,ttl_ms,limit,window_s,rule,status,raw_truncated,field,server\n")
		s.writeRows(bw, order, func(buf []byte, _ int, p place) []byte {
			r, text := s.row(p)
			buf = append(buf, r.part(text, 0)...)
			buf = strconv.AppendInt(buf, r.ttlMS(elapsed), 10)
			return append(buf, r.part(text, tailPart)...)
		})
	default:
		return fmt.Errorf("unknown snapshot format %q: use %s", s.format, strings.Join(Formats, ", "))
	}
	return bw.Flush()
}

// appendJSONServer appends the name of the server a row was read on as a
// JSON string, or null for none (a Store's counter, of the one server it
// watches).
func appendJSONServer(buf []byte, server string) []byte {
	if server == "" {
		return append(buf, "null"...)
	}
	return appendJSONString(buf, model.JSONKey(server))
}

// appendJSONKeyField opens c's object as JSON with its key and field
// (null for a whole key), as every object about a row starts.
func appendJSONKeyField(buf []byte, c *model.Counter) []byte {
	buf = append(buf, "\n    {\n      \"key\": "...)
	buf = appendJSONString(buf, model.JSONKey(c.Key))
	buf = append(buf, ",\n      \"field\": "...)
	if c.FieldRow {
		return appendJSONString(buf, model.JSONKey(c.Field))
	}
	return append(buf, "null"...)
}

// appendJSONHead appends c's object as JSON up to the value of ttl_ms,
// which comes next; appendJSONTail the rest.
func appendJSONHead(buf []byte, c *model.Counter) []byte {
	buf = appendJSONKeyField(buf, c)
	buf = append(buf, ",\n      \"server\": "...)
	buf = appendJSONServer(buf, c.Server)
	buf = append(buf, ",\n      \"type\": "...)
	buf = appendJSONString(buf, model.JSONKey(c.Type))
	buf = append(buf, ",\n      \"layout\": \""...)
	buf = append(buf, c.Layout.String()...)
	buf = append(buf, "\",\n      \"value\": "...)
	buf = appendOrNull(buf, appendNumber(buf, c.Value))
	buf = append(buf, ",\n      \"remaining\": "...)
	buf = appendOrNull(buf, appendRemaining(buf, c))
	buf = append(buf, ",\n      \"raw\": "...)
	if c.Type == "string" {
		buf = appendJSONString(buf, model.JSONKey(c.Raw))
	} else {
		buf = append(buf, "null"...)
	}
	buf = append(buf, ",\n      \"raw_truncated\": "...)
	buf = strconv.AppendBool(buf, rawCut(c))
	return append(buf, ",\n      \"ttl_ms\": "...)
}

func (s *Snapshot) appendJSONTail(buf []byte, c *model.Counter) []byte {
	return append(appendJSONRule(buf, c, s.texts.of(c)), "\n    }"...)
}

// appendJSONRule appends the fields of c's object that follow ttl_ms, up
// to its status, but not the end of the object: `check` adds a reason.
func appendJSONRule(buf []byte, c *model.Counter, t *ruleText) []byte {
	buf = append(buf, ",\n      \"limit\": "...)
	buf = appendOrNull(buf, append(buf, t.limit...))
	buf = append(buf, ",\n      \"window_s\": "...)
	buf = appendOrNull(buf, append(buf, t.window...))
	buf = append(buf, ",\n      \"rule\": "...)
	buf = append(buf, t.jsonRule...)
	buf = append(buf, ",\n      \"status\": \""...)
	buf = append(buf, c.Status.String()...)
	return append(buf, '"')
}

// appendCSVHead appends c's record up to its ttl_ms, which comes next;
// appendCSVTail the rest.
func (s *Snapshot) appendCSVHead(buf []byte, c *model.Counter) []byte {
	buf = appendCSVField(buf, model.Printable(c.Key))
	buf = append(buf, ',')
	buf = appendCSVField(buf, model.Printable(c.Type))
	buf = append(buf, ',')
	buf = append(buf, c.Layout.String()...)
	buf = append(buf, ',')
	buf = appendNumber(buf, c.Value)
	buf = append(buf, ',')
	buf = appendRemaining(buf, c)
	buf = append(buf, ',')
	buf = appendCSVField(buf, model.Printable(c.Raw))
	return append(buf, ',')
}

func (s *Snapshot) appendCSVTail(buf []byte, c *model.Counter) []byte {
	t := s.texts.of(c)
	buf = append(buf, ',')
	buf = append(buf, t.limit...)
	buf = append(buf, ',')
	buf = append(buf, t.window...)
	buf = append(buf, ',')
	buf = append(buf, t.csvRule...)
	buf = append(buf, ',')
	buf = append(buf, c.Status.String()...)
	buf = append(buf, ',')
	buf = strconv.AppendBool(buf, rawCut(c))
	buf = append(buf, ',')
	if c.FieldRow { // empty for a whole key, as CSV writes null
		buf = appendCSVField(buf, model.Printable(c.Field))
	}
	buf = append(buf, ',')
	buf = appendCSVField(buf, model.Printable(c.Server))
	return append(buf, '\n')
}

// maxTableValue is how many characters of a value the table shows.
const maxTableValue = 40

// maxTableKey is how many cells of a key name a table shows when it does
// not go to a terminal: one name of a megabyte would otherwise pad every
// row to its length. minTableKey is the fewest a terminal's table leaves
// a name, however narrow the terminal: past that, lines wrap.
const maxTableKey, minTableKey = 80, 16

// tableGap is the space between the table's columns.
const tableGap = 2

// tableHeader are the table's padded columns, its cells (tableCells) and
// TTL, titled as the dashboard titles them (model.Column); STATUS ends
// each line. LEFT is the snapshot's remaining, in a word short enough for
// a terminal.
var tableHeader = [...]model.Column{model.ColumnKey, model.ColumnLayout, model.ColumnValue, model.ColumnLeft, model.ColumnLimit, model.ColumnTTL}

// tailPart is the part of a rendered row after its TTL: the table's
// status, the rest of a JSON object or CSV record. The parts before it
// are the table's cells.
const tailPart = len(tableHeader) - 1

// writeTable writes the rows at order as aligned columns, each as wide as
// its widest cell, but for the names of a table that must fit a terminal
// (FitTo), which are cut to what the other columns leave.
func (s *Snapshot) writeTable(w *bufio.Writer, elapsed time.Duration, order []place) {
	widths := s.tableWidths(elapsed, len(order) >= parallelRows)
	servers, serverWidth := s.serverCells()
	if s.width > 0 {
		others := len(tableHeader)*tableGap + statusWidth()
		if servers != nil {
			others += serverWidth + tableGap
		}
		for _, w := range widths[1:] {
			others += w
		}
		widths[0] = min(widths[0], max(s.width-others, minTableKey, len(tableHeader[0].Title())))
	}
	spaces := strings.Repeat(" ", max(slices.Max(widths[:]), serverWidth)+tableGap)
	pad := func(dst []byte, runes, col int) []byte {
		return append(dst, spaces[:widths[col]-runes+tableGap]...)
	}
	var header []byte
	if servers != nil {
		title := model.ColumnServer.Title()
		header = append(append(header, title...), spaces[:serverWidth-len(title)+tableGap]...)
	}
	for col, c := range tableHeader {
		header = pad(append(header, c.Title()...), len(c.Title()), col)
	}
	w.Write(header)
	w.WriteString(model.ColumnStatus.Title() + "\n")
	s.writeRows(w, order, func(buf []byte, _ int, p place) []byte {
		r, text := s.row(p)
		if servers != nil {
			name := servers[s.batches[p.batch].server]
			buf = append(append(buf, name...), spaces[:serverWidth-model.Cells(name)+tableGap]...)
		}
		if key := r.part(text, 0); int(r.runes[0]) > widths[0] { // a long name, on a terminal
			cut := model.CutMiddle(string(key), widths[0])
			buf = pad(append(buf, cut...), model.Cells(cut), 0)
		} else {
			buf = pad(append(buf, key...), int(r.runes[0]), 0)
		}
		for col := 1; col < tailPart; col++ {
			buf = pad(append(buf, r.part(text, col)...), int(r.runes[col]), col)
		}
		start := len(buf)
		buf = appendTTL(buf, r.ttlMS(elapsed))
		buf = pad(buf, len(buf)-start, tailPart)
		return append(buf, r.part(text, tailPart)...)
	})
}

// serverCells returns the servers' names as the table's SERVER column
// shows them, and the column's width in cells; nil when the rows come
// from one server, where the table has no such column.
func (s *Snapshot) serverCells() ([]string, int) {
	if len(s.servers) < 2 {
		return nil, 0
	}
	cells := make([]string, len(s.servers))
	width := len(model.ColumnServer.Title())
	for i, name := range s.servers {
		cells[i] = model.CutMiddle(model.Printable(name), maxTableServer)
		width = max(width, model.Cells(cells[i]))
	}
	return cells, width
}

// maxTableServer is how many cells of a server's name the table shows:
// config's names are shorter, but an address (a socket's path) may not be.
const maxTableServer = 40

// statusWidth returns the cells of the longest status: the last column's
// width at most.
func statusWidth() int {
	n := len(model.ColumnStatus.Title())
	for status := range model.NumStatuses {
		n = max(n, len(status.String()))
	}
	return n
}

// tableWidths returns the width of each padded column, header included:
// in cells for the key, in runes for the others. It goes through the rows as they were added, the next in
// memory, which is quicker than key order; dropped rows do not count.
func (s *Snapshot) tableWidths(elapsed time.Duration, parallel bool) [len(tableHeader)]int {
	var halves [2][len(tableHeader)]int
	inHalves(s.batches, parallel, func(half int, batches []renderedBatch) {
		w := &halves[half]
		for _, b := range batches {
			for i := range b.rows {
				r := &b.rows[i]
				if r.dropped {
					continue
				}
				for col, n := range r.runes {
					w[col] = max(w[col], int(n))
				}
				w[tailPart] = max(w[tailPart], ttlWidth(r.ttlMS(elapsed)))
			}
		}
	})
	widths := halves[0]
	for col, c := range tableHeader {
		widths[col] = max(widths[col], halves[1][col], len(c.Title()))
	}
	return widths
}

// parallelRows is how many rows a snapshot needs before two goroutines
// share its work: the rows are put together once Redis is done, when the
// cores are free.
const parallelRows = 4096

// inHalves calls f(0, items[:n/2]) and f(1, items[n/2:]) at once when
// parallel is set (when there are parallelRows rows to go through or
// more); otherwise f(0, items) alone.
func inHalves[T any](items []T, parallel bool, f func(half int, part []T)) {
	if !parallel || len(items) < 2 {
		f(0, items)
		return
	}
	mid := len(items) / 2
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(1, items[mid:])
	}()
	f(0, items[:mid])
	<-done
}

// rowBlock is how many rows one goroutine puts together at a time
// (writeRows), and how many rows prefetch brings into cache at a time.
const rowBlock = 1024

// writeRows writes the rows at order, each as appendRow makes it. From
// parallelRows on, two goroutines put the even and the odd blocks of
// rowBlock rows together, while this one writes them in order, so that a
// few buffers are held whatever the number of rows.
func (s *Snapshot) writeRows(w *bufio.Writer, order []place, appendRow func(dst []byte, i int, p place) []byte) {
	const blocksAhead = 2
	if len(order) < parallelRows {
		var row []byte
		for i, p := range order {
			row = appendRow(row[:0], i, p)
			w.Write(row)
		}
		return
	}
	// Each goroutine holds at most blocksAhead+1 buffers: when it waits for
	// one, its others are ready to be written, so the two never starve.
	spares := make(chan []byte, 2*(blocksAhead+1))
	for range cap(spares) {
		spares <- nil
	}
	var made [2]chan []byte
	for f := range made {
		made[f] = make(chan []byte, blocksAhead)
		go func() {
			defer close(made[f])
			for from := f * rowBlock; from < len(order); from += 2 * rowBlock {
				buf := (<-spares)[:0]
				to := min(from+rowBlock, len(order))
				s.prefetch(order[from:to])
				for i := from; i < to; i++ {
					buf = appendRow(buf, i, order[i])
				}
				made[f] <- buf
			}
		}()
	}
	for block := 0; block*rowBlock < len(order); block++ {
		buf := <-made[block%2]
		w.Write(buf)
		spares <- buf
	}
}

// prefetch reads both ends of each row and of its text and throws them
// away: rows in key order are scattered over memory, and this short loop
// has many rows' cache misses in flight at once, so the block that follows
// finds them in cache (both ends, as most rows cross a cache line).
func (s *Snapshot) prefetch(order []place) {
	var sum byte
	for _, p := range order {
		r, text := s.row(p)
		sum += byte(r.start) + byte(r.readAt)
		if end := r.start + int(r.ends[tailPart]); r.start < end {
			sum += text[r.start] + text[end-1]
		}
	}
	runtime.KeepAlive(sum) // the reads, not the sum, are the point
}
