package model

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
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
// the real strings (JSONKey: invalid UTF-8 bytes as the text \xNN), value is
// the number exactly as stored for integers, null when the key holds no
// number or a float beyond float64 (raw still has it), and every field is
// present in every counter: raw is null for keys that are not strings, as
// limit, window_s and rule are null when unknown.
//
// The table is for people: Printable names and values, long values cut to
// fit. CSV has the JSON fields as columns, empty for null, with names and
// raw values in Printable form: CSV has no escapes of its own, and a
// snapshot is often printed straight to a terminal.
func WriteSnapshot(w io.Writer, format string, takenAt time.Time, rows []Counter, rules *Rules) error {
	bw := bufio.NewWriter(w)
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

// snapshotRow is one counter's fields as every format reports them.
type snapshotRow struct {
	c       *Counter
	ttlMS   int64 // at takenAt; -1 when the key has no expiry
	limit   float64
	window  time.Duration
	pattern string
	ruled   bool // a listed rule matched (false: the fallback)
}

func newSnapshotRow(c *Counter, takenAt time.Time, rules *Rules) snapshotRow {
	rule := rules.At(int(c.Rule))
	r := snapshotRow{c: c, ttlMS: -1, limit: rule.Limit, window: rule.Window, pattern: rule.Pattern, ruled: c.Rule >= 0}
	if left, ok := c.TTLAt(takenAt); ok {
		r.ttlMS = left.Milliseconds()
	}
	return r
}

// number is the value as JSON and CSV write it: integers exactly, floats
// in the shortest form that reads back the same, "" for no number.
func (r *snapshotRow) number() string {
	switch v := r.c.Value; {
	case v.Kind == KindInt:
		return strconv.FormatInt(v.Int, 10)
	case v.Kind == KindFloat && !math.IsInf(v.Float, 0):
		return strconv.FormatFloat(v.Float, 'g', -1, 64)
	}
	return ""
}

func (r *snapshotRow) limitText() string {
	if r.limit <= 0 {
		return ""
	}
	return strconv.FormatFloat(r.limit, 'g', -1, 64)
}

func (r *snapshotRow) windowText() string {
	if r.window <= 0 {
		return ""
	}
	return strconv.FormatFloat(r.window.Seconds(), 'g', -1, 64)
}

type jsonCounter struct {
	Key     string  `json:"key"`
	Type    string  `json:"type"`
	Value   any     `json:"value"` // json.Number or nil
	Raw     *string `json:"raw"`
	TTLMS   int64   `json:"ttl_ms"`
	Limit   any     `json:"limit"`
	WindowS any     `json:"window_s"`
	Rule    *string `json:"rule"`
	Status  string  `json:"status"`
}

// writeJSON writes the document as json.Encoder with a two-space indent
// would, one counter at a time, so that a hundred thousand counters are
// never held (and indented) as one buffer. Errors writing to w come out of
// its Flush.
func writeJSON(w *bufio.Writer, takenAt time.Time, rows []Counter, rules *Rules) error {
	takenJSON, err := json.Marshal(takenAt.Format(time.RFC3339))
	if err != nil {
		return err
	}
	w.WriteString("{\n  \"taken_at\": ")
	w.Write(takenJSON)
	w.WriteString(",\n  \"counters\": [")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("    ", "  ")
	for i := range rows {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString("\n    ")
		buf.Reset()
		if err := enc.Encode(jsonRow(&rows[i], takenAt, rules)); err != nil {
			return err
		}
		w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	if len(rows) > 0 {
		w.WriteString("\n  ")
	}
	w.WriteString("]\n}\n")
	return nil
}

// jsonRow is c as the JSON document spells it.
func jsonRow(c *Counter, takenAt time.Time, rules *Rules) jsonCounter {
	r := newSnapshotRow(c, takenAt, rules)
	jc := jsonCounter{
		Key:     JSONKey(r.c.Key),
		Type:    JSONKey(r.c.Type),
		Value:   jsonNumber(r.number()),
		TTLMS:   r.ttlMS,
		Limit:   jsonNumber(r.limitText()),
		WindowS: jsonNumber(r.windowText()),
		Status:  r.c.Status.String(),
	}
	if r.c.Type == "string" {
		raw := JSONKey(r.c.Raw)
		jc.Raw = &raw
	}
	if r.ruled {
		jc.Rule = &r.pattern
	}
	return jc
}

// jsonNumber is text as a JSON number, or nil (null) for "".
func jsonNumber(text string) any {
	if text == "" {
		return nil
	}
	return json.Number(text)
}

var csvHeader = []string{"key", "type", "value", "raw", "ttl_ms", "limit", "window_s", "rule", "status"}

func writeCSV(w io.Writer, takenAt time.Time, rows []Counter, rules *Rules) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for i := range rows {
		r := newSnapshotRow(&rows[i], takenAt, rules)
		rule := ""
		if r.ruled {
			rule = Printable(r.pattern)
		}
		record := []string{
			Printable(r.c.Key), Printable(r.c.Type), r.number(), Printable(r.c.Raw),
			strconv.FormatInt(r.ttlMS, 10), r.limitText(), r.windowText(), rule, r.c.Status.String(),
		}
		if err := cw.Write(record); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// maxTableValue is how many characters of a value the table shows.
const maxTableValue = 40

// tableGap is the space between the table's columns.
const tableGap = 2

// writeTable writes the rows as aligned columns: each column as wide as its
// widest cell in runes, then tableGap spaces. That is what text/tabwriter
// would write, at a fraction of its cost on a hundred thousand rows. Errors
// writing to w come out of its Flush.
func writeTable(w *bufio.Writer, takenAt time.Time, rows []Counter, rules *Rules) error {
	const cols = 4 // before STATUS, which ends the line unpadded
	header := [cols]string{"KEY", "VALUE", "LIMIT", "TTL"}
	cells := make([][cols]string, len(rows))
	var widths [cols]int
	for j, h := range header {
		widths[j] = len(h)
	}
	for i := range rows {
		r := newSnapshotRow(&rows[i], takenAt, rules)
		value := "(" + Printable(r.c.Type) + ")"
		if r.c.Type == "string" {
			value = truncate(Printable(r.c.Raw), maxTableValue)
		}
		limit := r.limitText()
		if limit == "" {
			limit = "-"
		}
		cells[i] = [cols]string{Printable(r.c.Key), value, limit, formatTTL(r.ttlMS)}
		for j, c := range cells[i] {
			widths[j] = max(widths[j], utf8.RuneCountInString(c))
		}
	}
	line := func(cells *[cols]string, last string) {
		for j, c := range cells {
			w.WriteString(c)
			for range widths[j] - utf8.RuneCountInString(c) + tableGap {
				w.WriteByte(' ')
			}
		}
		w.WriteString(last)
		w.WriteByte('\n')
	}
	line(&header, "STATUS")
	for i := range rows {
		line(&cells[i], rows[i].Status.String())
	}
	return nil
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

// formatTTL writes milliseconds left the way the dashboard shows them: "no
// expiry", else FormatDuration.
func formatTTL(ms int64) string {
	if ms < 0 {
		return "no expiry"
	}
	return FormatDuration(ttlDuration(ms))
}
