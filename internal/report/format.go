package report

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/countertop/countertop/model"
)

// Snapshot formats, as `snapshot --format` names them.
const (
	FormatTable = "table"
	FormatJSON  = "json"
	FormatCSV   = "csv"
)

// Formats lists the snapshot formats, the default first.
var Formats = []string{FormatTable, FormatJSON, FormatCSV}

// ValidFormat reports whether a Snapshot can be written in format.
func ValidFormat(format string) bool {
	switch format {
	case FormatTable, FormatJSON, FormatCSV:
		return true
	}
	return false
}

// ruleText is what every row of one rule says of it, formatted once per
// rule rather than once per row.
type ruleText struct {
	limit  string // "" when the rule has no limit
	window string // in seconds; "" when it has no window
	// The rule's pattern, as JSON writes it ("null" for the fallback,
	// which has none) and as CSV does ("" for the fallback).
	jsonRule, csvRule string
}

// ruleTexts holds the ruleText of every rule, the fallback first.
type ruleTexts []ruleText

func newRuleTexts(rules *model.Rules) ruleTexts {
	texts := make(ruleTexts, len(rules.List)+1)
	for i := range texts {
		rule := rules.At(i - 1)
		t := &texts[i]
		t.jsonRule = "null"
		if i > 0 {
			t.jsonRule = string(appendJSONString(nil, rule.Pattern))
			t.csvRule = string(appendCSVField(nil, model.Printable(rule.Pattern)))
		}
		if rule.Limit > 0 {
			t.limit = string(appendFloat(nil, rule.Limit))
		}
		if w := rules.WindowOf(rule); w > 0 {
			t.window = string(appendFloat(nil, w.Seconds()))
		}
	}
	return texts
}

// of returns the ruleText of c's rule; the fallback's for a rule it does
// not know, as model.Rules.At does.
func (t ruleTexts) of(c *model.Counter) *ruleText {
	if i := int(c.Rule) + 1; i > 0 && i < len(t) {
		return &t[i]
	}
	return &t[0]
}

// ttlLeft returns what is left, in milliseconds, of a PTTL of pttl read
// since ago; -1 for no expiry. It counts in milliseconds, as PTTL does, so
// that a TTL past what a time.Duration holds is written as Redis has it.
func ttlLeft(pttl int64, since time.Duration) int64 {
	if pttl < 0 {
		return -1
	}
	if since < 0 {
		return pttl + int64(-max(since, -math.MaxInt64)/time.Millisecond)
	}
	ms := int64(since / time.Millisecond)
	if since%time.Millisecond != 0 {
		ms++ // a part of a millisecond gone is one less whole one left
	}
	return max(0, pttl-ms)
}

// appendNumber appends the value as JSON and CSV write it: integers
// exactly, floats (always finite: see model.ParseValue) with appendFloat;
// nothing when the key holds no number.
func appendNumber(dst []byte, v model.Value) []byte {
	switch v.Kind {
	case model.KindInt:
		return strconv.AppendInt(dst, v.Int, 10)
	case model.KindFloat:
		return appendFloat(dst, v.Float)
	case model.KindNone:
	}
	return dst
}

// appendFloat appends f as encoding/json writes a float64: the shortest
// digits that read back the same, plain from 1e-6 to 1e21 (a limit of a
// million is "1000000", not "1e+06"), with an exponent beyond.
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

// appendOrNull returns appended, which is before with something appended,
// or before with null appended when nothing was.
func appendOrNull(before, appended []byte) []byte {
	if len(appended) == len(before) {
		return append(before, "null"...)
	}
	return appended
}

// appendJSONString appends s quoted as encoding/json does with
// SetEscapeHTML(false), and with \u escapes also for what that writes raw
// but a terminal would act on or hide (DEL, model.EscapedRune): a JSON
// reader decodes them to the same string, so scripts see the real key.
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
		case model.EscapedRune(r): // U+2028 and U+2029 among them
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

// appendCSVField appends field as encoding/csv writes it: quoted, with
// quotes doubled, when it holds a comma, a quote or a line break, starts
// with a space, or is \. (an end of data to some readers).
func appendCSVField(dst []byte, field string) []byte {
	if !csvQuoted(field) {
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

// csvQuoted reports whether appendCSVField quotes field.
func csvQuoted(field string) bool {
	if field == "" {
		return false
	}
	if r, _ := utf8.DecodeRuneInString(field); field == `\.` || unicode.IsSpace(r) {
		return true
	}
	for i := 0; i < len(field); i++ {
		switch field[i] {
		case ',', '"', '\r', '\n':
			return true
		}
	}
	return false
}

// tableCells returns c's cells as the table shows them, in the order of
// tableHeader: key (cut to at most keyCells cells as the dashboard cuts
// one), layout, value, remaining and limit. A string's value is what it
// holds; another type's, the number its layout reads (a log's hits, a
// hash's field), else its type.
func tableCells(c *model.Counter, texts ruleTexts, keyCells int) [tailPart]string {
	var value string
	switch {
	case c.Type == "string":
		value = truncate(model.Printable(c.Raw), maxTableValue)
		if rawCut(c) {
			value += rawCutMarker
		}
	case c.Value.Kind != model.KindNone:
		value = string(appendNumber(nil, c.Value))
	default:
		value = "(" + model.Printable(c.Type) + ")"
	}
	remaining := "-"
	if c.HasRemaining {
		remaining = string(appendFloat(nil, c.Remaining))
	}
	limit := texts.of(c).limit
	if limit == "" {
		limit = "-"
	}
	return [tailPart]string{model.CutMiddle(c.Name(), keyCells), c.Layout.String(), value, remaining, limit}
}

// appendRemaining appends the hits c's limit still allows, as JSON and CSV
// write a number; nothing when that is not known.
func appendRemaining(dst []byte, c *model.Counter) []byte {
	if !c.HasRemaining {
		return dst
	}
	return appendFloat(dst, c.Remaining)
}

// rawCut reports whether c's Raw is only the start of its string, as
// model says (Counter.RawCut), or as long as what redisclient reads of a
// string (model.MaxRaw), so that a string of exactly that length reads as
// cut too, whichever layout it was read as.
func rawCut(c *model.Counter) bool {
	return c.Type == "string" && (c.RawCut || len(c.Raw) >= model.MaxRaw)
}

// rawCutMarker follows the table's value of a string that was not read whole.
const rawCutMarker = " (read in part)"

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
// "no expiry", else model.FormatDuration.
func appendTTL(dst []byte, ms int64) []byte {
	if ms < 0 {
		return append(dst, "no expiry"...)
	}
	return model.AppendDuration(dst, model.PTTLDuration(ms))
}

// ttlWidth returns len(appendTTL(nil, ms)) without writing it.
func ttlWidth(ms int64) int {
	if ms < 0 {
		return len("no expiry")
	}
	return model.DurationWidth(model.PTTLDuration(ms))
}
