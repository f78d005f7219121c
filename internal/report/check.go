package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/countertop/countertop/model"
)

// Check is what one pass of `countertop check` found: the counters, and
// how many of them each pattern matched, so that a pattern with a typo in
// it, which matches nothing, is not taken for a healthy one.
type Check struct {
	Counters []*model.Counter // in key order
	Patterns []PatternCount   // in the order given
	// MinKeys is how many keys each pattern must match for the check to
	// pass; 0 requires none.
	MinKeys int
	// Watched is how long the keys were watched (check --watch), 0 for one
	// pass, which reads each key once and so cannot see extending.
	Watched time.Duration
	// Evictions is what each master's INFO says of the keys it evicted to
	// stay under its maxmemory: an evicted counter is a rate limit reset
	// early, which no key's status shows. Nil when INFO could not be read,
	// and EvictionsUnknown says why. Evictions are said, and change no
	// verdict: they are the server's sizing, not a counter's fault, and
	// a monitor that wants to fail on them reads them in the JSON.
	Evictions        []model.ServerEvictions
	EvictionsUnknown string
	// Pushed are the counters the watch saw pushed back as they grew, not
	// (yet) proven extending, each with what was seen (model.Pushback).
	// Those watched for less than their window (Undecided) are what the
	// check could not tell.
	Pushed []Pushed
	// Servers are the servers checked, by name, in order: with more than
	// one, every line about a key names its server, and the JSON has
	// shared and unreached.
	Servers []string
	// Shared are the keys that more than one shard of a limiter holds
	// (model.SharedKeys): each copy counts the limit, so that a client
	// gets up to one limit a copy. Each is a problem.
	Shared []model.Shared
	// Unreached are the servers that could not be checked, and why: a
	// check that did not see them all is no pass.
	Unreached []Unreached
	// NotShown are the hashes read field by field that hold more fields
	// than a key shows (--max-fields), in key order: how many more, and how
	// many of those hold a number without a TTL (each a field that never
	// resets and keeps its hash alive: a problem), which the check counts
	// or says it could not.
	NotShown []NotShown
	rules    *model.Rules
}

// Unreached is a server a check could not read, and why.
type Unreached struct {
	Server string
	Error  string
}

// NotShown is a hash read field by field beyond whose shown fields lie
// others: Fields of them, NoTTL of which hold a number without a TTL (-1:
// they could not be counted). Server is the server it was read on, as a
// Counter's.
type NotShown struct {
	Key, Server   string
	Fields, NoTTL int64
}

// hiddenLost returns how many fields not shown hold a number without a
// TTL, over every hash.
func (k *Check) hiddenLost() int64 {
	var n int64
	for _, h := range k.NotShown {
		n += max(h.NoTTL, 0)
	}
	return n
}

// notShownReason says what lies beyond a hash's shown fields, and what to
// do of the fields without a TTL there.
func notShownReason(h NotShown) string {
	text := model.NotShownText(h.Fields, h.NoTTL)
	switch {
	case h.NoTTL > 0:
		return text + ": each never resets and keeps the hash alive; raise --max-fields to show them, then countertop repair gives each its own TTL"
	case h.NoTTL < 0:
		return text + "; those without a TTL could not be counted: the hash has more than a million fields to list, or is no longer a hash"
	}
	return text
}

// Pushed is a counter whose TTL a watch saw pushed back as it grew.
type Pushed struct {
	Counter *model.Counter
	model.Pushback
}

// undecidedSlack is how much longer than a key's window a watch must be
// to tell whether it is extending: the jitter of a deadline's reading,
// which the proof allows for, and as long again for the hit and the
// reading that prove it to come.
const undecidedSlack = 2 * time.Second

// Undecided returns the counters pushed back as they grew whose window is
// longer than the watch: a watch shorter than a key's window cannot tell
// whether it would have kept growing past it (extending) or ended with it.
func (k *Check) Undecided() []Pushed {
	var out []Pushed
	for _, p := range k.Pushed {
		if !p.Proven && k.Watched < p.Window+undecidedSlack {
			out = append(out, p)
		}
	}
	return out
}

// watchToTell is how long a watch must be to tell each undecided key.
func watchToTell(undecided []Pushed) time.Duration {
	var d time.Duration
	for _, p := range undecided {
		d = max(d, p.Window+undecidedSlack)
	}
	return d.Round(time.Second)
}

// PatternCount is a pattern and how many of the keys checked it matched.
type PatternCount struct {
	Pattern string
	Keys    int
}

// The verdicts of a check, as its JSON names them; their exit codes are
// ARCHITECTURE.md's and docs/commands.md's: 0 healthy, 1 problems found, 2 could not check.
const (
	VerdictHealthy  = "healthy"
	VerdictProblems = "problems"
	VerdictFailed   = "could-not-check"
	// VerdictUndecided: no problem found, but a watch shorter than the
	// window of a key pushed back as it grows could not tell whether it is
	// extending. It exits 2, as could-not-check does: it is not a pass.
	VerdictUndecided = "could-not-tell"
)

// NewCheck returns the check of counters (in key order, read by SCAN with
// patterns), each classified by rules, requiring minKeys keys of each pattern.
// A key counts for every pattern it matches.
func NewCheck(counters []*model.Counter, patterns []string, minKeys int, rules *model.Rules) *Check {
	k := &Check{Counters: counters, Patterns: make([]PatternCount, len(patterns)), MinKeys: minKeys, rules: rules}
	for i, p := range patterns {
		k.Patterns[i].Pattern = p
	}
	for _, c := range counters {
		for i := range k.Patterns {
			if model.GlobMatch(k.Patterns[i].Pattern, c.Key) {
				k.Patterns[i].Keys++
			}
		}
	}
	return k
}

// Healthy reports whether the check found nothing wrong: no problem
// counter, no field not shown without a TTL, no key on two shards, and
// every pattern matched MinKeys keys or more (Verdict says whether it
// could read every server and tell every key).
func (k *Check) Healthy() bool {
	return k.problems() == 0 && k.hiddenLost() == 0 && k.short() == 0 && len(k.Shared) == 0
}

// Verdict returns VerdictProblems when the check found problems, else
// VerdictFailed when it could not read a server (Unreached), else
// VerdictUndecided when it could not tell some keys (Undecided), else
// VerdictHealthy.
func (k *Check) Verdict() string {
	switch {
	case !k.Healthy():
		return VerdictProblems
	case len(k.Unreached) > 0:
		return VerdictFailed
	case len(k.Undecided()) > 0:
		return VerdictUndecided
	}
	return VerdictHealthy
}

// problems returns how many counters have a problem status.
func (k *Check) problems() int {
	n := 0
	for _, c := range k.Counters {
		if c.Status.Problem() {
			n++
		}
	}
	return n
}

// short returns how many patterns matched fewer than MinKeys keys.
func (k *Check) short() int {
	n := 0
	for _, p := range k.Patterns {
		if p.Keys < k.MinKeys {
			n++
		}
	}
	return n
}

// unmatched returns how many patterns matched no key.
func (k *Check) unmatched() int {
	n := 0
	for _, p := range k.Patterns {
		if p.Keys == 0 {
			n++
		}
	}
	return n
}

// WriteText writes the check for people and for scripts that read lines:
// a line per problem counter (WriteProblems), a line per pattern that
// matched nothing or fewer than MinKeys keys (status unmatched or too-few,
// then the pattern escaped), then one that starts "ok:", "problems:" or
// "could not tell:". After a watch, a line per key it could not tell
// (Undecided, status undecided) follows the problems.
func (k *Check) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	on := k.onServer()
	name := func(c *model.Counter) string { return on(c.Server, c.Name()) }
	if err := writeProblems(bw, k.Counters, k.rules, name); err != nil {
		return err
	}
	// The fields beyond those shown: a problem line where some have no
	// TTL, else a note.
	for _, h := range k.NotShown {
		status := "note"
		if h.NoTTL > 0 {
			status = model.StatusNoExpiry.String()
		}
		fmt.Fprintf(bw, "%-9s  %s  %s\n", status, on(h.Server, model.Printable(h.Key)), notShownReason(h))
	}
	for _, s := range k.Shared {
		fmt.Fprintf(bw, "%-9s  %s  %s; %s\n", "shared", s.Copies[0].Name(), copiesText(s), k.sharedReason(s))
	}
	undecided := k.Undecided()
	for _, p := range undecided {
		fmt.Fprintf(bw, "%-9s  %s  %-9s  %s\n", "undecided", name(p.Counter), p.Counter.Layout, k.undecidedReason(p))
	}
	// A note is no problem (the check passes), but worth a look: a TTL
	// far longer than the window the rule says.
	for _, c := range k.Counters {
		if c.Status.Problem() {
			continue // its note is in its reason
		}
		if note := model.Note(c, k.rules.WindowOf(k.rules.At(int(c.Rule)))); note != "" {
			fmt.Fprintf(bw, "%-9s  %s  %s\n", "note", name(c), note)
		}
	}
	for _, p := range k.Patterns {
		pattern := model.Printable(p.Pattern)
		switch {
		case p.Keys == 0 && k.MinKeys == 0:
			fmt.Fprintf(bw, "%-9s  %s  no key matches this pattern; if you expected some, check --pattern and --url (--min-keys 1 makes this a problem)\n", "unmatched", pattern)
		case p.Keys == 0:
			fmt.Fprintf(bw, "%-9s  %s  no key matches this pattern, and --min-keys wants %d; check --pattern and --url\n", "unmatched", pattern, k.MinKeys)
		case p.Keys < k.MinKeys:
			fmt.Fprintf(bw, "%-9s  %s  %d key%s match%s this pattern, and --min-keys wants %d\n", "too-few", pattern, p.Keys, plural(p.Keys), verbS(p.Keys), k.MinKeys)
		}
	}
	k.writeEvictions(bw)
	for _, u := range k.Unreached {
		fmt.Fprintf(bw, "%-9s  %s  could not be checked: %s\n", "unreached", model.Printable(u.Server), model.SafeText(u.Error))
	}
	checked := len(k.Counters)
	how, none := "checked", "no counter stuck or without expiry"
	if k.Watched > 0 {
		how, none = "watched for "+model.FormatDuration(k.Watched), "no counter stuck, extending or without expiry"
	}
	counters := fmt.Sprintf("%d key%s %s, %s", checked, plural(checked), how, none)
	lost := k.hiddenLost()
	switch n := k.problems(); {
	case n > 0:
		counters = fmt.Sprintf("%d of %d key%s %s (%s)", n, checked, plural(checked), how, k.problemCounts())
	case lost > 0: // no key is, but fields not shown are
		counters = fmt.Sprintf("%d key%s %s", checked, plural(checked), how)
	}
	if len(k.Servers) > 1 {
		read := len(k.Servers) - len(k.Unreached)
		counters += fmt.Sprintf(" on %d of %d servers", read, len(k.Servers))
	}
	if lost > 0 {
		counters += fmt.Sprintf(", and %d field%s not shown without a TTL", lost, plural(int(lost)))
	}
	if n := len(k.Shared); n > 0 {
		counters += fmt.Sprintf("; %d key%s on more than one shard, each copy counting the limit", n, plural(n))
	}
	switch {
	case k.Healthy() && len(k.Unreached) > 0:
		fmt.Fprintf(bw, "could not check: %s; %s", counters, unreachedCount(len(k.Unreached)))
	case k.Healthy() && len(undecided) > 0:
		fmt.Fprintf(bw, "could not tell: %s, but %s", counters, undecidedCount(undecided))
	case k.Healthy():
		fmt.Fprintf(bw, "ok: %s", counters)
		if n := k.unmatched(); n > 0 {
			fmt.Fprintf(bw, "; %d of %d pattern%s matched nothing", n, len(k.Patterns), plural(len(k.Patterns)))
		}
	default:
		fmt.Fprintf(bw, "problems: %s", counters)
		if n := k.short(); n > 0 {
			fmt.Fprintf(bw, "; %d of %d pattern%s matched fewer keys than --min-keys %d", n, len(k.Patterns), plural(len(k.Patterns)), k.MinKeys)
		}
		if len(undecided) > 0 {
			fmt.Fprintf(bw, "; and %s", undecidedCount(undecided))
		}
		if len(k.Unreached) > 0 {
			fmt.Fprintf(bw, "; and %s", unreachedCount(len(k.Unreached)))
		}
	}
	bw.WriteString("\n")
	return bw.Flush()
}

// unreachedCount says that n servers could not be checked.
func unreachedCount(n int) string {
	if n == 1 {
		return "1 server could not be checked"
	}
	return fmt.Sprintf("%d servers could not be checked", n)
}

// onServer returns how the lines about a key name it, given its server
// and its name as printed: by its name, and with several servers, first
// by its server's, padded to the longest.
func (k *Check) onServer() func(server, name string) string {
	if len(k.Servers) < 2 {
		return func(_, name string) string { return name }
	}
	width := 0
	for _, s := range k.Servers {
		width = max(width, model.Cells(model.Printable(s)))
	}
	return func(server, name string) string {
		server = model.Printable(server)
		return server + strings.Repeat(" ", max(width-model.Cells(server), 0)) + "  " + name
	}
}

// copiesText names each copy of s with its value and TTL as read: "ring:
// a (value 7, TTL 41s), b (value 5, TTL 12s)".
func copiesText(s model.Shared) string {
	parts := make([]string, len(s.Copies))
	for i, c := range s.Copies {
		parts[i] = fmt.Sprintf("%s (value %s, %s)", model.Printable(c.Server), problemValue(c), model.TTLPhrase(c.PTTL))
	}
	return model.Printable(s.Group) + ": " + strings.Join(parts, ", ")
}

// sharedReason is why a key on several shards is a problem, and what to
// do about it.
func (k *Check) sharedReason(s model.Shared) string {
	n := len(s.Copies)
	limit := ""
	if l := k.rules.At(int(s.Copies[0].Rule)).Limit; l > 0 {
		limit = " of " + strconv.FormatFloat(l, 'f', -1, 64)
	}
	return fmt.Sprintf("one key on %d shards, each copy counting the limit%s on its own, so a client gets up to %d times its limit; "+
		"a ring whose servers changed (a shard removed and added back, clients with different server lists) writes a key where it did not before: "+
		"give every client the same servers, and delete the copies the ring no longer maps the key to (or let them expire)", n, limit, n)
}

// writeEvictions writes a line per master that has evicted keys (status
// evicted, then its address), or a note when INFO could not be read.
func (k *Check) writeEvictions(w io.Writer) {
	if k.EvictionsUnknown != "" {
		fmt.Fprintf(w, "%-9s  evictions not counted: %s\n", "note", model.SafeText(k.EvictionsUnknown))
	}
	for _, e := range k.Evictions {
		if e.Evicted == 0 {
			continue
		}
		fmt.Fprintf(w, "%-9s  %s  %d key%s evicted since it started %s ago (maxmemory-policy %s): an evicted rate-limit counter is a limit reset early for its client; "+
			"INFO counts every key there, checked or not; raise maxmemory, or keep the counters where nothing evicts them\n",
			"evicted", model.Printable(e.Addr), e.Evicted, plural(int(e.Evicted)), model.FormatDuration(e.Uptime), model.Printable(e.Policy))
	}
}

// undecidedCount says how many keys could not be told, and how long a
// watch would tell them.
func undecidedCount(undecided []Pushed) string {
	what := "1 key is pushed back as it grows, watched for less than its window"
	if n := len(undecided); n > 1 {
		what = fmt.Sprintf("%d keys are pushed back as they grow, watched for less than their windows", n)
	}
	return fmt.Sprintf("%s: watch for %s or more to know whether it is extending", what, model.FormatDuration(watchToTell(undecided)))
}

// undecidedReason is why the check could not tell p: its value, its
// window, and how long a watch would tell.
func (k *Check) undecidedReason(p Pushed) string {
	return fmt.Sprintf("value %s, TTL pushed back as it grows: extending if it keeps growing past its window of %s, which a watch of %s is too short to see; watch for %s or more to know",
		problemValue(p.Counter), model.FormatDuration(p.Window), model.FormatDuration(k.Watched), model.FormatDuration(watchToTell([]Pushed{p})))
}

// problemCounts returns "1 stuck, 2 no-expiry": how many counters have each
// problem status that any has, the most severe first.
func (k *Check) problemCounts() string {
	counts := k.statusCounts()
	var parts []string
	for status := range model.NumStatuses {
		if status.Problem() && counts[status] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[status], status))
		}
	}
	return strings.Join(parts, ", ")
}

// statusCounts returns how many counters have each status.
func (k *Check) statusCounts() [model.NumStatuses]int {
	var counts [model.NumStatuses]int
	for _, c := range k.Counters {
		if c.Status < model.NumStatuses {
			counts[c.Status]++
		}
	}
	return counts
}

// WriteJSON writes the check as one JSON object, for monitors: taken_at,
// verdict and exit_code, keys_checked, min_keys, watched_s (--watch's
// seconds, 0 for one pass), statuses (how many
// counters have each status, every status named), patterns (each with its
// keys and whether they are enough), unmatched (the patterns that matched
// nothing), problems (each problem counter as the snapshot's JSON
// writes it, with a reason), undecided (each key a watch was too short
// to tell, likewise, with its pushes and the watch_s that would tell it),
// fields_not_shown (each hash with more fields than a key shows: its
// key, server, fields, without_ttl, null when not counted, and reason),
// with several servers shared (see appendShared) and unreached (see
// appendUnreached), and evictions (see appendEvictions). Strings are
// escaped as the snapshot's are.
func (k *Check) WriteJSON(w io.Writer, takenAt time.Time) error {
	buf := appendCheckHead(nil, takenAt, k.Verdict())
	buf = append(buf, ",\n  \"keys_checked\": "...)
	buf = strconv.AppendInt(buf, int64(len(k.Counters)), 10)
	buf = append(buf, ",\n  \"min_keys\": "...)
	buf = strconv.AppendInt(buf, int64(k.MinKeys), 10)
	buf = append(buf, ",\n  \"watched_s\": "...)
	buf = strconv.AppendFloat(buf, k.Watched.Seconds(), 'f', -1, 64)
	buf = append(buf, ",\n  \"statuses\": {"...)
	for status, n := range k.statusCounts() {
		if status > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, "\n    \""...)
		buf = append(buf, model.Status(status).String()...)
		buf = append(buf, "\": "...)
		buf = strconv.AppendInt(buf, int64(n), 10)
	}
	buf = append(buf, "\n  }"...)
	buf = appendJSONArray(buf, "  ", "patterns", k.Patterns, func(buf []byte, p PatternCount) []byte {
		buf = append(buf, "\n    {\n      \"pattern\": "...)
		buf = appendJSONString(buf, model.JSONKey(p.Pattern))
		buf = append(buf, ",\n      \"keys\": "...)
		buf = strconv.AppendInt(buf, int64(p.Keys), 10)
		buf = append(buf, ",\n      \"enough\": "...)
		buf = strconv.AppendBool(buf, p.Keys >= k.MinKeys)
		return append(buf, "\n    }"...)
	})
	var unmatched []PatternCount
	for _, p := range k.Patterns {
		if p.Keys == 0 {
			unmatched = append(unmatched, p)
		}
	}
	buf = appendJSONArray(buf, "  ", "unmatched", unmatched, func(buf []byte, p PatternCount) []byte {
		buf = append(buf, "\n    "...)
		return appendJSONString(buf, model.JSONKey(p.Pattern))
	})
	texts := newRuleTexts(k.rules)
	// appendCounter appends c as the snapshot's JSON writes it, up to the
	// keys that follow its rule's.
	appendCounter := func(buf []byte, c *model.Counter) []byte {
		buf = appendJSONHead(buf, c)
		buf = strconv.AppendInt(buf, ttlLeft(c.PTTL, takenAt.Sub(c.ObservedAt)), 10)
		return appendJSONRule(buf, c, texts.of(c))
	}
	buf = appendJSONArray(buf, "  ", "problems", problemRows(k.Counters), func(buf []byte, c *model.Counter) []byte {
		buf = appendCounter(buf, c)
		buf = append(buf, ",\n      \"reason\": "...)
		buf = appendJSONString(buf, problemReason(c, k.rules))
		return append(buf, "\n    }"...)
	})
	buf = appendJSONArray(buf, "  ", "undecided", k.Undecided(), func(buf []byte, p Pushed) []byte {
		buf = appendCounter(buf, p.Counter)
		buf = append(buf, ",\n      \"pushes\": "...)
		buf = strconv.AppendInt(buf, int64(p.Pushes), 10)
		buf = append(buf, ",\n      \"watch_s\": "...)
		buf = strconv.AppendFloat(buf, watchToTell([]Pushed{p}).Seconds(), 'f', -1, 64)
		buf = append(buf, ",\n      \"reason\": "...)
		buf = appendJSONString(buf, k.undecidedReason(p))
		return append(buf, "\n    }"...)
	})
	buf = appendJSONArray(buf, "  ", "fields_not_shown", k.NotShown, func(buf []byte, h NotShown) []byte {
		buf = append(buf, "\n    {\n      \"key\": "...)
		buf = appendJSONString(buf, model.JSONKey(h.Key))
		buf = append(buf, ",\n      \"server\": "...)
		buf = appendJSONServer(buf, h.Server)
		buf = append(buf, ",\n      \"fields\": "...)
		buf = strconv.AppendInt(buf, h.Fields, 10)
		buf = append(buf, ",\n      \"without_ttl\": "...)
		if h.NoTTL < 0 {
			buf = append(buf, "null"...)
		} else {
			buf = strconv.AppendInt(buf, h.NoTTL, 10)
		}
		buf = append(buf, ",\n      \"reason\": "...)
		buf = appendJSONString(buf, notShownReason(h))
		return append(buf, "\n    }"...)
	})
	if len(k.Servers) > 1 {
		buf = k.appendShared(buf, takenAt)
		buf = k.appendUnreached(buf)
	}
	buf = k.appendEvictions(buf)
	buf = append(buf, "\n}\n"...)
	_, err := w.Write(buf)
	return err
}

// appendShared appends the keys on more than one shard: an array of
// each key's key, field, group, copies (each copy's server, value, raw,
// ttl_ms and status) and reason.
func (k *Check) appendShared(buf []byte, takenAt time.Time) []byte {
	return appendJSONArray(buf, "  ", "shared", k.Shared, func(buf []byte, s model.Shared) []byte {
		buf = appendJSONKeyField(buf, s.Copies[0])
		buf = append(buf, ",\n      \"group\": "...)
		buf = appendJSONString(buf, model.JSONKey(s.Group))
		buf = appendJSONArray(buf, "      ", "copies", s.Copies, func(buf []byte, c *model.Counter) []byte {
			buf = append(buf, "\n        {\n          \"server\": "...)
			buf = appendJSONString(buf, model.JSONKey(c.Server))
			buf = append(buf, ",\n          \"value\": "...)
			buf = appendOrNull(buf, appendNumber(buf, c.Value))
			buf = append(buf, ",\n          \"raw\": "...)
			if c.Type == "string" {
				buf = appendJSONString(buf, model.JSONKey(c.Raw))
			} else {
				buf = append(buf, "null"...)
			}
			buf = append(buf, ",\n          \"ttl_ms\": "...)
			buf = strconv.AppendInt(buf, ttlLeft(c.PTTL, takenAt.Sub(c.ObservedAt)), 10)
			buf = append(buf, ",\n          \"status\": \""...)
			buf = append(buf, c.Status.String()...)
			return append(buf, "\"\n        }"...)
		})
		buf = append(buf, ",\n      \"reason\": "...)
		buf = appendJSONString(buf, k.sharedReason(s))
		return append(buf, "\n    }"...)
	})
}

// appendUnreached appends the servers that could not be checked: an
// array of each one's server and error.
func (k *Check) appendUnreached(buf []byte) []byte {
	return appendJSONArray(buf, "  ", "unreached", k.Unreached, func(buf []byte, u Unreached) []byte {
		buf = append(buf, "\n    {\n      \"server\": "...)
		buf = appendJSONString(buf, model.JSONKey(u.Server))
		buf = append(buf, ",\n      \"error\": "...)
		buf = appendJSONString(buf, model.JSONKey(u.Error))
		return append(buf, "\n    }"...)
	})
}

// appendEvictions appends the check's evictions: an array of each master's
// server, evicted_keys, maxmemory_policy and uptime_s; null when INFO
// could not be read (EvictionsUnknown), with evictions_unknown saying why.
func (k *Check) appendEvictions(buf []byte) []byte {
	if k.EvictionsUnknown != "" {
		buf = append(buf, ",\n  \"evictions\": null,\n  \"evictions_unknown\": "...)
		return appendJSONString(buf, model.JSONKey(k.EvictionsUnknown))
	}
	return appendJSONArray(buf, "  ", "evictions", k.Evictions, func(buf []byte, e model.ServerEvictions) []byte {
		buf = append(buf, "\n    {\n      \"server\": "...)
		buf = appendJSONString(buf, model.JSONKey(e.Addr))
		buf = append(buf, ",\n      \"evicted_keys\": "...)
		buf = strconv.AppendInt(buf, e.Evicted, 10)
		buf = append(buf, ",\n      \"maxmemory_policy\": "...)
		buf = appendJSONString(buf, model.JSONKey(e.Policy))
		buf = append(buf, ",\n      \"uptime_s\": "...)
		buf = strconv.AppendInt(buf, int64(e.Uptime/time.Second), 10)
		return append(buf, "\n    }"...)
	})
}

// WriteCheckFailedJSON writes the JSON object of a check that could not be
// done, so that a monitor reading JSON gets one either way: taken_at,
// verdict could-not-check, exit_code 2, and the error's sentence.
func WriteCheckFailedJSON(w io.Writer, takenAt time.Time, failure error) error {
	buf := appendCheckHead(nil, takenAt, VerdictFailed)
	buf = append(buf, ",\n  \"error\": "...)
	buf = appendJSONString(buf, model.JSONKey(failure.Error()))
	buf = append(buf, "\n}\n"...)
	_, err := w.Write(buf)
	return err
}

// appendCheckHead appends the start of a check's JSON object: taken_at,
// verdict and exit_code.
func appendCheckHead(buf []byte, takenAt time.Time, verdict string) []byte {
	code := 0
	switch verdict {
	case VerdictProblems:
		code = 1
	case VerdictFailed, VerdictUndecided:
		code = 2
	}
	buf = append(buf, "{\n  \"taken_at\": \""...)
	buf = takenAt.AppendFormat(buf, time.RFC3339)
	buf = append(buf, "\",\n  \"verdict\": \""...)
	buf = append(buf, verdict...)
	buf = append(buf, "\",\n  \"exit_code\": "...)
	return strconv.AppendInt(buf, int64(code), 10)
}

// appendJSONArray appends the key name, at indent, and its array: each
// item as each appends it (its line break and indent first), commas
// between, closed as encoding/json's indent closes one ("[]" when empty).
func appendJSONArray[T any](buf []byte, indent, name string, items []T, each func([]byte, T) []byte) []byte {
	buf = append(buf, ",\n"...)
	buf = append(buf, indent...)
	buf = appendJSONString(buf, name)
	buf = append(buf, ": ["...)
	for i, item := range items {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = each(buf, item)
	}
	if len(items) > 0 {
		buf = append(buf, '\n')
		buf = append(buf, indent...)
	}
	return append(buf, ']')
}

// plural returns "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// verbS returns "es" when n is 1 ("1 key matches"), else "" ("2 keys match").
func verbS(n int) string {
	if n == 1 {
		return "es"
	}
	return ""
}

// WriteProblems writes one line per problem counter (model.Status.Problem)
// for `countertop check`: status, printable key, layout, and why in words
// an on-call engineer can act on, the most severe status first.
func WriteProblems(w io.Writer, rows []*model.Counter, rules *model.Rules) error {
	return writeProblems(w, rows, rules, (*model.Counter).Name)
}

// writeProblems is WriteProblems, each key named by name.
func writeProblems(w io.Writer, rows []*model.Counter, rules *model.Rules, name func(*model.Counter) string) error {
	for _, c := range problemRows(rows) {
		if _, err := fmt.Fprintf(w, "%-9s  %s  %-9s  %s\n", c.Status, name(c), c.Layout, problemReason(c, rules)); err != nil {
			return err
		}
	}
	return nil
}

// problemRows returns the rows with a problem status, the most severe
// status first, each status's in the order of rows: the order of the
// check's text and of its JSON.
func problemRows(rows []*model.Counter) []*model.Counter {
	var problems []*model.Counter
	for status := range model.NumStatuses {
		if !status.Problem() {
			continue
		}
		for _, c := range rows {
			if c.Status == status {
				problems = append(problems, c)
			}
		}
	}
	return problems
}

// problemReason returns why c is a problem and how to fix it, and what
// else its reading suggests (model.Note).
func problemReason(c *model.Counter, rules *model.Rules) string {
	reason := problemCause(c, rules)
	if note := model.Note(c, rules.WindowOf(rules.At(int(c.Rule)))); note != "" {
		reason += "; " + note
	}
	return reason
}

func problemCause(c *model.Counter, rules *model.Rules) string {
	rule := rules.At(int(c.Rule))
	window := rules.WindowOf(rule)
	var fix string
	if c.Status == model.StatusExtending {
		return fmt.Sprintf("value %s, TTL pushed back while it grew for longer than its window: it never closes; fix the client: EXPIRE ... NX, or INCR and EXPIRE NX in one script", problemValue(c))
	}
	switch {
	case window > 0:
		e, _ := model.RepairOf(c, window) // a problem has a layout
		fix = "fix: countertop repair, which sends " + e.String()
	case c.Rule < 0: // no rule matched: the fallback's window is --window
		fix = "fix: pass --window (or give it a [[rule]] with a window), then countertop repair"
	default:
		fix = "fix: give its [[rule]] a window (or pass --window), then countertop repair"
	}
	value := problemValue(c)
	limit := strconv.FormatFloat(rule.Limit, 'f', -1, 64)
	words := c.Layout.Spec().Words // where its layout's differ from a count's
	switch {
	case c.Status == model.StatusLeak && words.CheckLeak != "":
		return words.CheckLeak + "; " + fix
	case c.Status == model.StatusLeak:
		return fmt.Sprintf("value %s in a past window, no TTL: never read again, never freed, memory that only grows (and never evicted under a volatile-* policy); %s", value, fix)
	case c.Status == model.StatusStuck && words.CheckStuck != nil:
		return words.CheckStuck(value) + "; " + fix
	case c.Status == model.StatusStuck:
		return fmt.Sprintf("value %s >= limit %s and no TTL: blocked forever, it will never reset; %s", value, limit, fix)
	case words.CheckNoExpiry != nil: // gcra, timestamp, opaque: no count to reset, but a key that stays
		return words.CheckNoExpiry(value) + "; " + fix
	}
	return fmt.Sprintf("value %s, no TTL: it will never reset; %s", value, fix)
}

// problemValue is c's value as a problem line says it: what a string
// holds, else the number its layout reads (a log's hits, a hash field, a
// string's JSON or msgpack field).
func problemValue(c *model.Counter) string {
	if (c.Type != "string" || c.Field != "") && c.Value.Kind != model.KindNone {
		return string(appendNumber(nil, c.Value))
	}
	return model.Printable(c.Raw)
}
