package model

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
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
			t.limit = strconv.FormatFloat(rule.Limit, 'g', -1, 64)
		}
		if rule.Window > 0 {
			t.window = strconv.FormatFloat(rule.Window.Seconds(), 'g', -1, 64)
		}
	}
	return texts
}

func (t ruleTexts) of(c *Counter) *ruleText { return &t[int(c.Rule)+1] }

// ttlMS is c's time left at takenAt in milliseconds, -1 for no expiry.
func ttlMS(c *Counter, takenAt time.Time) int64 {
	if left, ok := c.TTLAt(takenAt); ok {
		return left.Milliseconds()
	}
	return -1
}

// appendNumber appends the value as JSON and CSV write it: integers
// exactly, floats in the shortest form that reads back the same; nothing
// when the key holds no number (or a float beyond float64).
func appendNumber(dst []byte, v Value) []byte {
	switch {
	case v.Kind == KindInt:
		return strconv.AppendInt(dst, v.Int, 10)
	case v.Kind == KindFloat && !math.IsInf(v.Float, 0):
		return strconv.AppendFloat(dst, v.Float, 'g', -1, 64)
	}
	return dst
}

// writeJSON writes the document exactly as json.Encoder with a two-space
// indent would (export_test.go holds the two side by side), one counter at
// a time and without reflection: a hundred thousand counters are never
// held as one buffer, and take milliseconds. Errors writing to w come out
// of its Flush.
func writeJSON(w *bufio.Writer, takenAt time.Time, rows []*Counter, rules *Rules) error {
	texts := newRuleTexts(rules)
	buf := append([]byte("{\n  \"taken_at\": "), '"')
	buf = takenAt.AppendFormat(buf, time.RFC3339)
	buf = append(buf, "\",\n  \"counters\": ["...)
	for i, c := range rows {
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
		buf = append(buf, "\"\n    }"...)
		w.Write(buf)
		buf = buf[:0]
	}
	if len(rows) > 0 {
		buf = append(buf, "\n  "...)
	}
	buf = append(buf, "]\n}\n"...)
	w.Write(buf)
	return nil
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
// SetEscapeHTML(false): `"` and `\` escaped, control characters as \n-style
// or \u00XX escapes, U+2028 and U+2029 escaped, invalid UTF-8 as U+FFFD
// (JSONKey has replaced it by then).
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
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
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
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

var csvHeader = []string{"key", "type", "value", "raw", "ttl_ms", "limit", "window_s", "rule", "status"}

func writeCSV(w io.Writer, takenAt time.Time, rows []*Counter, rules *Rules) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	texts := newRuleTexts(rules)
	record := make([]string, len(csvHeader))
	var num []byte
	for _, c := range rows {
		t := texts.of(c)
		rule := ""
		if t.ruled {
			rule = Printable(t.pattern)
		}
		num = appendNumber(num[:0], c.Value)
		record = append(record[:0], Printable(c.Key), Printable(c.Type), string(num), Printable(c.Raw),
			strconv.FormatInt(ttlMS(c, takenAt), 10), t.limit, t.window, rule, c.Status.String())
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
// would write, at a fraction of its cost on a hundred thousand rows: one
// pass measures, the next writes, and neither allocates for a counter.
// Errors writing to w come out of its Flush.
func writeTable(w *bufio.Writer, takenAt time.Time, rows []*Counter, rules *Rules) error {
	texts := newRuleTexts(rules)
	var ttl [32]byte
	widths := [...]int{len("KEY"), len("VALUE"), len("LIMIT"), len("TTL")}
	for _, c := range rows {
		key, value, limit := tableCells(c, texts)
		widths[0] = max(widths[0], utf8.RuneCountInString(key))
		widths[1] = max(widths[1], utf8.RuneCountInString(value))
		widths[2] = max(widths[2], len(limit))
		widths[3] = max(widths[3], len(appendTTL(ttl[:0], ttlMS(c, takenAt))))
	}
	spaces := strings.Repeat(" ", slices.Max(widths[:])+tableGap)
	cell := func(text string, runes, width int) {
		w.WriteString(text)
		w.WriteString(spaces[:width-runes+tableGap])
	}
	cell("KEY", 3, widths[0])
	cell("VALUE", 5, widths[1])
	cell("LIMIT", 5, widths[2])
	cell("TTL", 3, widths[3])
	w.WriteString("STATUS\n")
	for _, c := range rows {
		key, value, limit := tableCells(c, texts)
		cell(key, utf8.RuneCountInString(key), widths[0])
		cell(value, utf8.RuneCountInString(value), widths[1])
		cell(limit, len(limit), widths[2])
		t := appendTTL(ttl[:0], ttlMS(c, takenAt))
		w.Write(t)
		w.WriteString(spaces[:widths[3]-len(t)+tableGap])
		w.WriteString(c.Status.String())
		w.WriteByte('\n')
	}
	return nil
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
	return AppendDuration(dst, ttlDuration(ms))
}
