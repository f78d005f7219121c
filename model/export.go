package model

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
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Snapshot formats, as `snapshot --format` names them.
const (
	FormatTable = "table"
	FormatJSON  = "json"
	FormatCSV   = "csv"
)

// Formats lists the snapshot formats, the default first.
var Formats = []string{FormatTable, FormatJSON, FormatCSV}

// ValidFormat reports whether WriteSnapshot knows format.
func ValidFormat(format string) bool {
	switch format {
	case FormatTable, FormatJSON, FormatCSV:
		return true
	}
	return false
}

// WriteSnapshot writes rows, as they stood at takenAt, to w in format
// (FormatTable, FormatJSON or FormatCSV); rules gives each row's limit,
// window and pattern.
//
// JSON is the form for scripts, as ../DESIGN.md specifies: key and raw are
// the real strings (JSONKey: invalid UTF-8 bytes as the text \xNN), with
// what a terminal could act on as \u escapes (appendJSONString), value is
// the number exactly as stored for integers, null when the key holds no
// number (raw still has what it holds: text, inf, 1e400), and every field
// is present in every counter: raw is null for keys that are not strings,
// as limit, window_s and rule are null when unknown.
//
// The table is for people: Printable names and values, long values cut to
// fit. CSV has the JSON fields as columns, empty for null, with names and
// raw values in Printable form: CSV has no escapes of its own, and a
// snapshot is often printed straight to a terminal. Every format writes a
// limit, a window or a float value as encoding/json writes a float64
// (1000000, not 1e+06).
func WriteSnapshot(w io.Writer, format string, takenAt time.Time, rows []*Counter, rules *Rules) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var err error
	switch format {
	case FormatTable:
		err = writeTable(bw, takenAt, rows, rules)
	case FormatJSON:
		err = writeJSON(bw, takenAt, rows, rules)
	case FormatCSV:
		err = writeCSV(bw, takenAt, rows, rules)
	default:
		return fmt.Errorf("unknown snapshot format %q: use %s", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// ruleText is what every row of one rule says of it, formatted once per
// rule rather than once per row.
type ruleText struct {
	limit   string // "" when the rule has no limit
	window  string // in seconds; "" when it has no window
	pattern string
	ruled   bool // a listed rule (false: the fallback, which has no pattern)
}

// ruleTexts holds the ruleText of every rule, the fallback first.
type ruleTexts []ruleText

func newRuleTexts(rules *Rules) ruleTexts {
	texts := make(ruleTexts, len(rules.List)+1)
	for i := range texts {
		rule := rules.At(i - 1)
		t := &texts[i]
		t.pattern, t.ruled = rule.Pattern, i > 0
		if rule.Limit > 0 {
			t.limit = string(appendFloat(nil, rule.Limit))
		}
		if rule.Window > 0 {
			t.window = string(appendFloat(nil, rule.Window.Seconds()))
		}
	}
	return texts
}

// of is the ruleText of c's rule; the fallback's for a rule it does not
// know, as Rules.At does.
func (t ruleTexts) of(c *Counter) *ruleText {
	if i := int(c.Rule) + 1; i > 0 && i < len(t) {
		return &t[i]
	}
	return &t[0]
}

// ttlMS is c's time left at takenAt in milliseconds, -1 for no expiry. It
// counts in milliseconds, as PTTL does, so that a TTL past what a
// time.Duration holds (Redis takes millennia) is written as Redis has it:
// the PTTL read, less the time since, rounded down as a Duration would be.
func ttlMS(c *Counter, takenAt time.Time) int64 {
	if !c.HasTTL() {
		return -1
	}
	since := takenAt.Sub(c.ObservedAt)
	if since < 0 {
		return c.PTTL + int64(-since/time.Millisecond)
	}
	ms := int64(since / time.Millisecond)
	if since%time.Millisecond != 0 {
		ms++ // a part of a millisecond gone is one less whole one left
	}
	return max(0, c.PTTL-ms)
}

// appendNumber appends the value as JSON and CSV write it: integers
// exactly, floats (always finite: see ParseValue) with appendFloat; nothing
// when the key holds no number.
func appendNumber(dst []byte, v Value) []byte {
	switch v.Kind {
	case KindInt:
		return strconv.AppendInt(dst, v.Int, 10)
	case KindFloat:
		return appendFloat(dst, v.Float)
	}
	return dst
}

// appendFloat appends f as encoding/json writes a float64: the shortest
// digits that read back the same, plain from 1e-6 to 1e21 (a limit of a
// million is "1000000", not "1e+06"), with an exponent beyond ("1e+21",
// "5e-7").
func appendFloat(dst []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if n := len(dst); format == 'e' && n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
		dst[n-2] = dst[n-1] // e-07 is e-7
		dst = dst[:n-1]
	}
	return dst
}

// writeJSON writes the document exactly as json.Encoder with a two-space
// indent would, but for the characters appendJSONString escapes where
// encoding/json does not (export_test.go holds the two side by side), a
// counter at a time and without reflection: a hundred thousand counters
// are never held as one document, and take milliseconds. Errors writing to
// w come out of its Flush.
func writeJSON(w *bufio.Writer, takenAt time.Time, rows []*Counter, rules *Rules) error {
	texts := newRuleTexts(rules)
	w.WriteString("{\n  \"taken_at\": \"")
	w.Write(takenAt.AppendFormat(nil, time.RFC3339))
	w.WriteString("\",\n  \"counters\": [")
	writeRows(w, rows, func(buf []byte, i int, c *Counter) []byte {
		t := texts.of(c)
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, "\n    {\n      \"key\": "...)
		buf = appendJSONString(buf, JSONKey(c.Key))
		buf = append(buf, ",\n      \"type\": "...)
		buf = appendJSONString(buf, JSONKey(c.Type))
		buf = append(buf, ",\n      \"value\": "...)
		buf = appendOrNull(buf, appendNumber(buf, c.Value))
		buf = append(buf, ",\n      \"raw\": "...)
		if c.Type == "string" {
			buf = appendJSONString(buf, JSONKey(c.Raw))
		} else {
			buf = append(buf, "null"...)
		}
		buf = append(buf, ",\n      \"ttl_ms\": "...)
		buf = strconv.AppendInt(buf, ttlMS(c, takenAt), 10)
		buf = append(buf, ",\n      \"limit\": "...)
		buf = appendOrNull(buf, append(buf, t.limit...))
		buf = append(buf, ",\n      \"window_s\": "...)
		buf = appendOrNull(buf, append(buf, t.window...))
		buf = append(buf, ",\n      \"rule\": "...)
		if t.ruled {
			buf = appendJSONString(buf, t.pattern)
		} else {
			buf = append(buf, "null"...)
		}
		buf = append(buf, ",\n      \"status\": \""...)
		buf = append(buf, c.Status.String()...)
		return append(buf, "\"\n    }"...)
	})
	if len(rows) > 0 {
		w.WriteString("\n  ")
	}
	w.WriteString("]\n}\n")
	return nil
}

// parallelRows is how many rows a snapshot needs before its work is
// shared by two goroutines, one per core: a snapshot's rows are sorted and
// written once Redis is done with it, when both cores are free.
const parallelRows = 4096

// inHalves calls f(0, items[:n/2]) and f(1, items[n/2:]) at once, from
// parallelRows items on; below that, f(0, items) alone.
func inHalves[T any](items []T, f func(half int, part []T)) {
	if len(items) < parallelRows {
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

// rowBlock is how many rows one goroutine formats at a time (writeRows),
// and how many rows prefetch brings into cache at a time.
const rowBlock = 1024

// writeRows writes rows in order, each as appendRow makes it (given its
// index). From parallelRows on, two goroutines format blocks of rowBlock
// rows in turns (one the even blocks, the other the odd), each up to
// blocksAhead blocks ahead, while this one writes the blocks in order: a
// few buffers are held, whatever the number of rows.
func writeRows(w *bufio.Writer, rows []*Counter, appendRow func(dst []byte, i int, c *Counter) []byte) {
	const blocksAhead = 2
	if len(rows) < parallelRows {
		var row []byte
		for i, c := range rows {
			row = appendRow(row[:0], i, c)
			w.Write(row)
		}
		return
	}
	// Each formatter holds at most blocksAhead+1 buffers: when it waits for
	// one, its others are ready to be written, so the two never starve.
	spares := make(chan []byte, 2*(blocksAhead+1))
	for range cap(spares) {
		spares <- nil
	}
	var formatted [2]chan []byte
	for f := range formatted {
		formatted[f] = make(chan []byte, blocksAhead)
		go func() {
			defer close(formatted[f])
			for from := f * rowBlock; from < len(rows); from += 2 * rowBlock {
				buf := (<-spares)[:0]
				prefetch(rows[from:min(from+rowBlock, len(rows))])
				for i := from; i < min(from+rowBlock, len(rows)); i++ {
					buf = appendRow(buf, i, rows[i])
				}
				formatted[f] <- buf
			}
		}()
	}
	for block := 0; block*rowBlock < len(rows); block++ {
		buf := <-formatted[block%2]
		w.Write(buf)
		spares <- buf
	}
}

// appendOrNull returns appended, which is before with something appended,
// or before with null appended when nothing was.
func appendOrNull(before, appended []byte) []byte {
	if len(appended) == len(before) {
		return append(before, "null"...)
	}
	return appended
}

// appendJSONString appends s as encoding/json quotes a string with
// SetEscapeHTML(false) — `"` and `\` escaped, C0 control characters as
// \n-style or \u00XX escapes, U+2028 and U+2029 as \u2028 and \u2029,
// invalid UTF-8 as \ufffd (JSONKey has replaced it by then) — and, where
// encoding/json writes them raw, with DEL, the C1 controls (U+0080-U+009F:
// U+009B is a CSI to some terminals), the bidirectional controls and the
// characters drawn as nothing (escapedRune) as \u escapes too. A snapshot
// is often printed straight to a terminal, which would act on those,
// reorder the line around them or show two keys alike; a
// JSON reader decodes the escapes to the same string, so scripts see the
// real key name all the same.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != 0x7f {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case escapedRune(r): // U+2028 and U+2029 among them
			dst = append(dst, s[start:i]...)
			for _, u := range utf16.AppendRune(nil, r) { // a surrogate pair past the basic plane, as JSON has it
				dst = append(dst, '\\', 'u', hex[u>>12], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
			}
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// writeCSV writes what encoding/csv would write of the same records
// (export_test.go holds the two side by side), without a []string per row.
func writeCSV(w *bufio.Writer, takenAt time.Time, rows []*Counter, rules *Rules) error {
	texts := newRuleTexts(rules)
	w.WriteString("key,type,value,raw,ttl_ms,limit,window_s,rule,status\n")
	writeRows(w, rows, func(buf []byte, _ int, c *Counter) []byte {
		t := texts.of(c)
		buf = appendCSVField(buf, Printable(c.Key))
		buf = append(buf, ',')
		buf = appendCSVField(buf, Printable(c.Type))
		buf = append(buf, ',')
		buf = appendNumber(buf, c.Value)
		buf = append(buf, ',')
		buf = appendCSVField(buf, Printable(c.Raw))
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, ttlMS(c, takenAt), 10)
		buf = append(buf, ',')
		buf = append(buf, t.limit...)
		buf = append(buf, ',')
		buf = append(buf, t.window...)
		buf = append(buf, ',')
		if t.ruled {
			buf = appendCSVField(buf, Printable(t.pattern))
		}
		buf = append(buf, ',')
		buf = append(buf, c.Status.String()...)
		return append(buf, '\n')
	})
	return nil
}

// appendCSVField appends field as encoding/csv writes it: quoted, with
// quotes doubled, when it holds a comma, a quote or a line break, starts
// with a space, or is \. (an end of data to some readers).
func appendCSVField(dst []byte, field string) []byte {
	r, _ := utf8.DecodeRuneInString(field)
	if field != `\.` && !strings.ContainsAny(field, ",\"\r\n") && (field == "" || !unicode.IsSpace(r)) {
		return append(dst, field...)
	}
	dst = append(dst, '"')
	for {
		i := strings.IndexByte(field, '"')
		if i < 0 {
			break
		}
		dst = append(dst, field[:i+1]...)
		dst = append(dst, '"')
		field = field[i+1:]
	}
	dst = append(dst, field...)
	return append(dst, '"')
}

// maxTableValue is how many characters of a value the table shows.
const maxTableValue = 40

// tableGap is the space between the table's columns.
const tableGap = 2

// writeTable writes the rows as aligned columns: each column as wide as its
// widest cell in runes, then tableGap spaces. That is what text/tabwriter
// would write (a test compares them), at a fraction of its cost on a
// hundred thousand rows: one pass measures, the next writes, and a row
// allocates only for a value that is not a plain string. Errors writing to
// w come out of its Flush.
func writeTable(w *bufio.Writer, takenAt time.Time, rows []*Counter, rules *Rules) error {
	texts := newRuleTexts(rules)
	widths := tableWidths(rows, texts, takenAt)
	spaces := strings.Repeat(" ", slices.Max(widths[:])+tableGap)
	appendCell := func(dst []byte, text string, runes, col int) []byte {
		dst = append(dst, text...)
		return append(dst, spaces[:widths[col]-runes+tableGap]...)
	}
	var header []byte
	for col, title := range tableHeader {
		header = appendCell(header, title, len(title), col)
	}
	w.Write(header)
	w.WriteString("STATUS\n")
	writeRows(w, rows, func(buf []byte, _ int, c *Counter) []byte {
		key, value, limit := tableCells(c, texts)
		buf = appendCell(buf, key, utf8.RuneCountInString(key), 0)
		buf = appendCell(buf, value, utf8.RuneCountInString(value), 1)
		buf = appendCell(buf, limit, len(limit), 2)
		start := len(buf)
		buf = appendTTL(buf, ttlMS(c, takenAt))
		buf = append(buf, spaces[:widths[3]-(len(buf)-start)+tableGap]...)
		buf = append(buf, c.Status.String()...)
		return append(buf, '\n')
	})
	return nil
}

// tableHeader names the table's padded columns; STATUS ends each line.
var tableHeader = [...]string{"KEY", "VALUE", "LIMIT", "TTL"}

// tableWidths is the width in runes of each padded column: its widest cell,
// header included.
func tableWidths(rows []*Counter, texts ruleTexts, takenAt time.Time) [len(tableHeader)]int {
	var halves [2][len(tableHeader)]int
	inHalves(rows, func(half int, rows []*Counter) {
		w := &halves[half]
		var ttl [32]byte
		for i, c := range rows {
			if i%rowBlock == 0 {
				prefetch(rows[i:min(i+rowBlock, len(rows))])
			}
			key, value, limit := tableCells(c, texts)
			w[0] = max(w[0], utf8.RuneCountInString(key))
			w[1] = max(w[1], utf8.RuneCountInString(value))
			w[2] = max(w[2], len(limit))
			w[3] = max(w[3], len(appendTTL(ttl[:0], ttlMS(c, takenAt))))
		}
	})
	widths := halves[0]
	for col, title := range tableHeader {
		widths[col] = max(widths[col], halves[1][col], len(title))
	}
	return widths
}

// tableCells are c's key, value and limit as the table shows them.
func tableCells(c *Counter, texts ruleTexts) (key, value, limit string) {
	if c.Type == "string" {
		value = truncate(Printable(c.Raw), maxTableValue)
	} else {
		value = "(" + Printable(c.Type) + ")"
	}
	limit = texts.of(c).limit
	if limit == "" {
		limit = "-"
	}
	return Printable(c.Key), value, limit
}

// truncate cuts s to at most n characters, marking the cut with "…".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	end := 0
	for range n - 1 {
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
	}
	return s[:end] + "…"
}

// appendTTL appends milliseconds left the way the dashboard shows them:
// "no expiry", else FormatDuration.
func appendTTL(dst []byte, ms int64) []byte {
	if ms < 0 {
		return append(dst, "no expiry"...)
	}
	return AppendDuration(dst, PTTLDuration(ms))
}

// prefetch reads a byte of each row's counter, key and value, and throws
// them away. Rows in key order are scattered over memory: formatting one
// waits on a cache miss for each, one after the other. This loop is short
// enough that the processor has many rows' misses in flight at once, and
// the formatting of the block that follows finds them in cache: in
// BenchmarkSnapshot, 100,000 rows take a third of the time they took
// (table 50-60 ms -> 15 ms, JSON 35 -> 10 ms). The sum goes to
// runtime.KeepAlive, which keeps the reads without a variable that two
// goroutines would write at once.
func prefetch(rows []*Counter) {
	var sum byte
	for _, c := range rows {
		sum += byte(c.PTTL) + byte(c.Rule)
		if len(c.Key) > 0 {
			sum += c.Key[0]
		}
		if len(c.Raw) > 0 {
			sum += c.Raw[0]
		}
	}
	runtime.KeepAlive(sum) // the reads, not the sum, are the point
}
