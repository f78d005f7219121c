package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/countertop/countertop/internal/suggest"
	"github.com/countertop/countertop/model"
)

var errUnknownKey = errors.New("unknown key")

// The bounds of a config file, far above what any config needs. They are
// checked before the TOML decoder sees the file: a file that never ends
// (/dev/zero, a FIFO) would be read for ever, and the decoder's time and
// memory grow much faster than the file with the nesting of its values.
const (
	maxFileSize    = 1 << 20 // bytes
	maxFileSizeFor = "1 MiB" // maxFileSize, for messages
	maxNesting     = 16      // arrays and inline tables within each other
)

// readFile applies the config file at path to c.
func (c *Config) readFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot read the config file: %w", err)
	}
	defer f.Close()
	// One byte more than allowed tells a file that is too large from one
	// that just fits, whatever its size says (a device, a FIFO).
	src, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return fmt.Errorf("cannot read the config file: %w", err)
	}
	if len(src) > maxFileSize {
		return fmt.Errorf("%s: larger than %s, more than any countertop config needs: check that it is the config file you meant (--config names one)", path, maxFileSizeFor)
	}
	return c.applyTOML(path, string(src))
}

// applyTOML applies the TOML document src, named name in messages, to c.
// It reports every problem it finds, in the order they appear in the file.
//
// The document is decoded into plain maps, and each key is then checked
// here in file order, so that the message for a wrong value names the line
// it is on: toml.MetaData keeps key positions to itself, and the TOML
// decoder's own type errors would point at the last [[rule]] for any rule.
func (c *Config) applyTOML(name, src string) error {
	if line := nestedTooDeep(src); line > 0 {
		return fmt.Errorf("%s:%d: values nested more than %d deep (arrays and inline tables within each other), more than any countertop config needs: write them flatter", name, line, maxNesting)
	}
	var doc map[string]any
	md, err := toml.Decode(src, &doc)
	if err != nil {
		return syntaxError(name, src, err)
	}
	keys := md.Keys()
	lines := keyLines(src)
	if len(lines) != len(keys) {
		// keyLines follows every form of TOML (FuzzKeyLines checks that); if
		// it ever fell out of step, name the file without a wrong line.
		lines = make([]int, len(keys))
	}

	var (
		errs []error
		bad  = make(map[string]bool) // fields reported already: keys inside them are not reported again
		// The index of the table being read of each array of tables: in
		// c.Rules.List, c.tables and c.shardTables.
		arrays = map[string]int{"rule": -1, "server": -1, "shards": -1}
		dir    = filepath.Dir(name)
		seen   = make(map[string]patternAt) // the first rule with each pattern
		// Where each rule's field and json_field are written (its index
		// in Rules.List, -1 for [defaults]), for checkLayoutField once
		// every key is read.
		fields []fieldAt
	)
	for i, k := range keys {
		if _, ok := arrays[k[0]]; ok && len(k) == 1 && md.Type(k[0]) == "ArrayHash" {
			arrays[k[0]]++
			switch k[0] {
			case "rule":
				c.Rules.List = append(c.Rules.List, model.Rule{ExpectTTL: true})
			case "server":
				c.tables = append(c.tables, serverTable{dir: dir})
			case "shards":
				c.shardTables = append(c.shardTables, shardsTable{})
			}
		}
		index, ok := arrays[k[0]]
		if !ok {
			index = -1
		}
		rule := arrays["rule"]
		field := fieldName(k, index)
		if inBad(bad, k, index) {
			continue
		}
		at := name
		if lines[i] > 0 {
			at += ":" + strconv.Itoa(lines[i])
		}

		var err error
		switch {
		case len(k) == 1 && k[0] == "rule":
			if md.Type("rule") != "ArrayHash" {
				err = errors.New("must be written as [[rule]] tables, one per rule")
			} else if lookup(doc, toml.Key{"rule", "pattern"}, index) == nil {
				// Not a reason to skip the rule's other keys, so not err.
				errs = append(errs, fmt.Errorf(`%s: %s: has no pattern (add pattern = "..." to it)`, at, field))
			}
		case len(k) == 1 && (k[0] == "server" || k[0] == "shards"):
			err = c.tableHeader(k[0], index, md.Type(k[0]), lookup(doc, k, index), at, field, &errs)
		case len(k) == 2 && k[0] == "server" && index >= 0:
			err = c.serverKey(&c.tables[index], k[1], lookup(doc, k, index), at, field)
		case len(k) == 2 && k[0] == "shards" && index >= 0:
			err = c.shardsKey(&c.shardTables[index], k[1], lookup(doc, k, index), at)
		case len(k) == 1 && (k[0] == "redis" || k[0] == "defaults"):
			if md.Type(k[0]) != "Hash" {
				err = fmt.Errorf("must be a table: write [%s] and put its keys under it", k[0])
			}
		case len(k) == 2 && settingByKey(k[0]+"."+k[1]) != nil: // [redis], and [defaults]' limit and window
			s := settingByKey(k[0] + "." + k[1])
			err = s.value.toml(c, lookup(doc, k, index), dir)
			if err == nil && s.origin != nil {
				*s.origin(c) = at + ": " + field
			}
		case len(k) == 2 && k[0] == "defaults" && k[1] != "pattern":
			err = setRule(&c.Rules.Fallback, k[1], lookup(doc, k, index))
			if err == nil && (k[1] == "field" || k[1] == "json_field") {
				fields = append(fields, fieldAt{-1, at, field, k[1], -1})
			}
		case len(k) == 2 && k[0] == "rule" && rule >= 0:
			err = setRule(&c.Rules.List[rule], k[1], lookup(doc, k, index))
			if err == nil && k[1] == "pattern" {
				err = repeatedPattern(seen, c.Rules.List[rule].Pattern, patternAt{rule, lines[i]})
			}
			if err == nil && (k[1] == "field" || k[1] == "json_field") {
				fields = append(fields, fieldAt{rule, at, field, k[1], -1})
			}
		default:
			err = errUnknownKey
		}
		if err == errUnknownKey {
			err = unknownKey(k)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w", at, field, err))
			bad[field] = true
		}
		if n := len(fields); err == nil && n > 0 && fields[n-1].pos < 0 {
			fields[n-1].pos = len(errs)
		}
	}
	errs = append(errs, c.checkShards()...)
	// A field's layout may come after it: each is checked now, and its
	// error put where the field is in the file.
	for _, f := range slices.Backward(fields) {
		r := &c.Rules.Fallback
		if f.rule >= 0 {
			r = &c.Rules.List[f.rule]
		}
		if err := checkLayoutField(r, f.key); err != nil {
			errs = slices.Insert(errs, f.pos, fmt.Errorf("%s: %s: %w", f.at, f.field, err))
		}
	}
	return errors.Join(errs...)
}

// fieldAt is where a rule's field or json_field (key) is written: the
// rule (-1: [defaults]), the file and line, the field's name in messages,
// and its place among the errors of the file.
type fieldAt struct {
	rule           int
	at, field, key string
	pos            int
}

// inBad reports whether key k is inside a field of bad, as fieldName names
// them. (A map, not a list: a file may hold thousands of bad keys.)
func inBad(bad map[string]bool, k toml.Key, index int) bool {
	if len(bad) == 0 {
		return false
	}
	for n := 1; n < len(k); n++ {
		if bad[fieldName(k[:n], index)] {
			return true
		}
	}
	return false
}

// patternAt is where a rule's pattern is written: the rule's index in
// Rules.List and the line of its pattern (0 when not known).
type patternAt struct{ rule, line int }

// repeatedPattern notes that pattern is written at at, and reports it when
// an earlier rule, noted in seen, has the very same pattern: as the first
// rule whose pattern matches applies, the later rule never would. A wider
// earlier glob shadows a rule just as well, but that is not checked here.
func repeatedPattern(seen map[string]patternAt, pattern string, at patternAt) error {
	first, ok := seen[pattern]
	if !ok {
		seen[pattern] = at
		return nil
	}
	where := fmt.Sprintf("rule[%d]", first.rule+1)
	if first.line > 0 {
		where += " at line " + strconv.Itoa(first.line)
	}
	return fmt.Errorf("%q repeats the pattern of %s, so this rule would never apply: remove one, or merge them", pattern, where)
}

// fieldName is how messages name key k: as written, except that keys in
// the index-th table of an array of tables ([[rule]], [[server]],
// [[shards]]) are "rule[N].key", counting tables from 1 as they appear in
// the file; index is -1 for a key of no such table.
func fieldName(k toml.Key, index int) string {
	if index < 0 {
		return k.String()
	}
	return fmt.Sprintf("%s[%d]", k[0], index+1) + strings.TrimPrefix(k.String(), k[0])
}

// lookup returns the value of k in doc: of its first part alone, or of a
// key of two parts; in an array of tables it reads the one at index.
func lookup(doc map[string]any, k toml.Key, index int) any {
	var table map[string]any
	switch t := doc[k[0]].(type) {
	case map[string]any:
		table = t
	case []map[string]any:
		if index >= 0 && index < len(t) {
			table = t[index]
		}
	}
	if len(k) == 1 {
		return table
	}
	return table[k[1]]
}

// unknownKey is the error for key k, which its table does not have: with
// the key of that table (or the table) nearest to it, when one is near
// enough to be what was meant.
func unknownKey(k toml.Key) error {
	typed, known := k[0], []string{"redis", "defaults", "rule", "server", "shards"}
	if len(k) > 1 && slices.Contains(known, k[0]) {
		typed, known = strings.Join(k[1:], "."), nil
		for _, s := range settings {
			if table, key, _ := strings.Cut(s.Key, "."); table == k[0] || k[0] == "server" && s.PerServer {
				known = append(known, key)
			}
		}
		switch k[0] {
		case "rule":
			known = append(known, ruleKeys...)
		case "defaults":
			known = append(known, ruleKeys[1:]...) // a pattern is what [defaults] has not
		case "server":
			known = append(known, "name")
		case "shards":
			known = append(known, shardsKeys...)
		}
	}
	if guess := suggest.Nearest(typed, known); guess != "" {
		return fmt.Errorf("%w (did you mean %q?)", errUnknownKey, guess)
	}
	return errUnknownKey
}

// ruleKeys are the keys setRule knows, pattern first.
var ruleKeys = []string{"pattern", "limit", "window", "warn_at", "expect_ttl", "layout", "field", "json_field"}

// setRule applies one key of a [[rule]] table or of [defaults].
func setRule(r *model.Rule, key string, v any) error {
	var err error
	switch key {
	case "pattern":
		if r.Pattern, err = tomlString(v); err == nil {
			err = checkPattern(r.Pattern)
		}
	case "limit":
		r.Limit, err = tomlLimit(v)
	case "window":
		r.Window, err = tomlWindow(v)
	case "warn_at":
		if r.WarnAt, err = tomlNumber(v); err == nil {
			err = checkWarnAt(r.WarnAt)
		}
	case "expect_ttl":
		r.ExpectTTL, err = tomlBool(v)
	case "layout":
		var name string
		if name, err = tomlString(v); err == nil {
			r.Layout, err = model.ParseLayout(name)
		}
	case "field":
		if r.Field, err = tomlString(v); err == nil && r.Field == "" {
			err = errors.New(`"" names no hash field: give the field's name, or leave field out`)
		}
	case "json_field":
		if r.JSONField, err = tomlString(v); err == nil && r.JSONField == "" {
			err = errors.New(`"" names no field: give the name of the field that holds the count in a JSON or msgpack value, or leave json_field out`)
		}
	default:
		return errUnknownKey
	}
	return err
}

// checkLayoutField reports a rule whose field (key: a hash's field, or
// json_field, a JSON or msgpack value's) cannot go with its layout, which
// reads none: one of the two is a mistake, and nothing would be read as
// the user meant.
func checkLayoutField(r *model.Rule, key string) error {
	switch spec := r.Layout.Spec(); {
	case key == "json_field" && !spec.Decodes:
		return fmt.Errorf("json_field is read of a JSON or msgpack value, and layout = %q reads none: remove json_field, or use layout = %s", r.Layout, model.DecodedLayouts())
	case key == "field" && !spec.HashField:
		return fmt.Errorf("a field is read of a hash, and layout = %q reads none: remove field, or use layout = %s", r.Layout, model.HashFieldLayouts())
	}
	return nil
}

func tomlString(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", wrongType(`a string in quotes`, v)
	}
	return s, nil
}

// tomlMode reads a watch mode (see model.ParseWatchMode).
func tomlMode(v any) (model.WatchMode, error) {
	s, err := tomlString(v)
	if err != nil {
		return model.WatchAuto, err
	}
	return model.ParseWatchMode(s)
}

// tomlURL reads a URL, or host:port (see parseURL).
func tomlURL(v any) (string, error) {
	s, err := tomlString(v)
	if err != nil {
		return "", err
	}
	return parseURL(s)
}

// tomlDuration wants a string: TOML has no durations, and a bare 60 could
// mean seconds or (to the TOML decoder) nanoseconds.
func tomlDuration(v any) (time.Duration, error) {
	s, ok := v.(string)
	if !ok {
		return 0, wrongType(`a duration in quotes, like "60s"`, v)
	}
	return parseDuration(s)
}

func tomlWindow(v any) (time.Duration, error) {
	s, ok := v.(string)
	if !ok {
		return 0, wrongType(`a duration in quotes, like "60s"`, v)
	}
	return parseWindow(s)
}

func tomlNumber(v any) (float64, error) {
	switch n := v.(type) {
	case int64:
		return float64(n), nil
	case float64:
		return n, nil
	}
	return 0, wrongType("a number", v)
}

func tomlLimit(v any) (float64, error) {
	f, err := tomlNumber(v)
	if err != nil {
		return 0, err
	}
	return f, checkLimit(f)
}

func tomlScanCount(v any) (int64, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, wrongType("a whole number", v)
	}
	return n, checkScanCount(n)
}

func tomlMaxCommands(v any) (int64, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, wrongType("a whole number", v)
	}
	return checkMaxCommands(n)
}

func tomlBool(v any) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, wrongType("true or false", v)
	}
	return b, nil
}

// tomlFile wants the name of a file that exists, relative to dir (the config
// file's) unless absolute, so that a config file and its certificates can
// move together.
func tomlFile(v any, dir string) (string, error) {
	name, err := tomlString(v)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	return name, checkFile(name)
}

// tomlStrings reads an array of strings, each passing check.
func tomlStrings(v any, want string, check func(string) error) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, wrongType(want, v)
	}
	out := make([]string, len(list))
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			return nil, wrongType(want, v)
		}
		if err := check(s); err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// wrongType says that a value is not what a key wants. It names the TOML
// type it got, never the value, which may be a password.
func wrongType(want string, got any) error {
	var kind string
	switch got.(type) {
	case string:
		kind = "a string"
	case int64:
		kind = "an integer"
	case float64:
		kind = "a float"
	case bool:
		kind = "a boolean"
	case []any, []map[string]any:
		kind = "an array"
	case map[string]any:
		kind = "a table"
	default:
		kind = "a date or time"
	}
	return fmt.Errorf("must be %s, not %s", want, kind)
}

// quoted matches the text that TOML syntax errors quote from the file.
var quoted = regexp.MustCompile(`"[^"]*"|'[^']*'`)

// syntaxError turns the TOML decoder's error into "file:line: ...", where
// line is the line of src that holds the byte the decoder stopped at. The
// decoder's own line is one too far when that byte is the newline ending a
// line ("[redis" with no "]": the line to fix is the header's).
func syntaxError(name, src string, err error) error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", name, err)
	}
	msg := pe.Message
	if strings.HasSuffix(pe.LastKey, "password") || strings.HasSuffix(pe.LastKey, "url") {
		// The decoder quotes the text it stumbled on: that may be a secret.
		msg = quoted.ReplaceAllString(msg, `"***"`)
	}
	src = strings.TrimPrefix(src, "\ufeff") // the decoder counts from after a BOM
	line := 1 + strings.Count(src[:min(max(pe.Position.Start, 0), len(src))], "\n")
	return fmt.Errorf("%s:%d: not valid TOML: %s", name, line, msg)
}

// keyLines returns the line of every key in the valid TOML document src, in
// the order toml.MetaData.Keys lists them: one per table header and one per
// key = value, including the keys inside inline tables.
func keyLines(src string) []int {
	src = strings.TrimPrefix(src, "\ufeff")
	var (
		lines   []int
		line    = 1
		open    []byte // the unclosed '[' and '{' of the value being read
		wantKey = true // the next token starts a key, or at top level a table header
	)
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '\n':
			line++
			wantKey = wantKey || len(open) == 0
			continue
		case ' ', '\t', '\r':
			continue
		case '#':
			i = endOfLine(src, i)
			continue
		}
		if wantKey && c != '}' { // '}' closes an empty inline table
			lines = append(lines, line)
			if c == '[' && len(open) == 0 { // a [table] or [[array]] header
				i = endOfLine(src, i)
				continue
			}
		}
		wantKey = false
		switch c {
		case '"', '\'':
			i, line = skipString(src, i, line)
		case '[', '{':
			open = append(open, c)
			wantKey = c == '{'
		case ']', '}':
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
		case ',':
			wantKey = len(open) > 0 && open[len(open)-1] == '{'
		}
	}
	return lines
}

// nestedTooDeep returns the line on which src, a TOML document valid or not,
// opens its (maxNesting+1)th array or inline table within others, 0 when it
// does not: the brackets and braces outside strings and comments, counted
// the way keyLines reads them.
func nestedTooDeep(src string) int {
	src = strings.TrimPrefix(src, "\ufeff")
	depth, line := 0, 1
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\n':
			line++
		case '#':
			i = endOfLine(src, i)
		case '"', '\'':
			i, line = skipString(src, i, line)
		case '[', '{':
			if depth++; depth > maxNesting {
				return line
			}
		case ']', '}':
			depth = max(depth-1, 0)
		}
	}
	return 0
}

// endOfLine returns the index of the last byte before the newline that ends
// the line holding src[i].
func endOfLine(src string, i int) int {
	if n := strings.IndexByte(src[i:], '\n'); n >= 0 {
		return i + n - 1
	}
	return len(src) - 1
}

// skipString returns the index of the last byte of the TOML string that
// starts at src[i] (basic or literal, single- or multi-line) and the line
// that byte is on, given that src[i] is on line.
func skipString(src string, i, line int) (end, endLine int) {
	q := src[i]
	delim := src[i : i+1]
	if strings.HasPrefix(src[i:], strings.Repeat(delim, 3)) {
		delim = src[i : i+3]
	}
	for j := i + len(delim); j < len(src); j++ {
		switch {
		case src[j] == '\n':
			line++
		case src[j] == '\\' && q == '"':
			j++ // the escaped byte, which is a newline after a line-ending backslash
			if j < len(src) && src[j] == '\n' {
				line++
			}
		case strings.HasPrefix(src[j:], delim):
			j += len(delim)
			// Up to two quotes right before the closing """ belong to the string.
			for len(delim) == 3 && j < len(src) && src[j] == q {
				j++
			}
			return j - 1, line
		}
	}
	return len(src) - 1, line
}
