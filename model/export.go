package model

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
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

type jsonSnapshot struct {
	TakenAt  string        `json:"taken_at"`
	Counters []jsonCounter `json:"counters"`
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

func writeJSON(w io.Writer, takenAt time.Time, rows []Counter, rules *Rules) error {
	doc := jsonSnapshot{TakenAt: takenAt.Format(time.RFC3339), Counters: make([]jsonCounter, len(rows))}
	for i := range rows {
		r := newSnapshotRow(&rows[i], takenAt, rules)
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
		doc.Counters[i] = jc
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
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

func writeTable(w io.Writer, takenAt time.Time, rows []Counter, rules *Rules) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tLIMIT\tTTL\tSTATUS")
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n",
			Printable(r.c.Key), value, limit, formatTTL(r.ttlMS), r.c.Status)
	}
	return tw.Flush()
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

// formatTTL writes milliseconds left the way people read them: "no expiry",
// "850ms", "42s", "5m07s", "3h05m", "2d04h".
func formatTTL(ms int64) string {
	if ms < 0 {
		return "no expiry"
	}
	d := ttlDuration(ms)
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%ds", d/time.Second)
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", d/time.Minute, d%time.Minute/time.Second)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", d/time.Hour, d%time.Hour/time.Minute)
	}
	return fmt.Sprintf("%dd%02dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
}
