package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/countertop/countertop/model"
)

// labelWidth is the width of the field names on the detail screen.
const labelWidth = 10

// detailView is every field of the key the detail screen shows, and what
// its status means for the clients it counts, that first.
func (m *Model) detailView() []string {
	c, ok := m.store.Get(m.detail.id)
	if !ok {
		gone := "This key no longer exists: it was deleted or it expired. Press esc to go back."
		if m.detail.field != "" {
			gone = "This field no longer exists: it expired or was deleted (HDEL), or its hash was. Press esc to go back."
		}
		return []string{m.theme.Bold.Render(m.detail.name), "", gone}
	}
	now := m.clock()
	rule, listed := m.store.RuleOf(c)
	field := func(label, value string) string {
		return m.theme.Label.Render(padRight(label, labelWidth)) + value
	}
	// wrapped is a field whose words go on under it where they do not
	// fit: the window's origin, the rule's pattern.
	wrapped := func(label, value string) []string {
		lines := wrapWords(value, max(20, m.width-labelWidth))
		if len(lines) == 0 {
			return []string{field(label, value)}
		}
		lines[0] = field(label, lines[0])
		for i := 1; i < len(lines); i++ {
			lines[i] = strings.Repeat(" ", labelWidth) + lines[i]
		}
		return lines
	}

	raw := "—"
	if c.Type == "string" {
		raw = quote(c.Raw)
	}
	ttl, ttlTone := m.ttlCell(&c, rule, now)
	deadline := "—"
	if c.HasTTL() {
		deadline = c.Deadline().Local().Format("15:04:05")
	}
	ruleText := "none matched (the --limit/--window fallback applies)"
	if listed {
		ruleText = quote(rule.Pattern)
		if !rule.ExpectTTL {
			ruleText += " (expect_ttl = false)"
		}
	}
	limit := "none"
	if rule.Limit > 0 {
		limit = formatNumber(rule.Limit)
		if frac, ok := c.Percent(rule.Limit); ok {
			limit += " (" + formatPercent(frac) + ")"
		}
	}
	window := "none"
	if w, ok := m.windowFor(c.ID(), rule); ok {
		window = model.FormatDuration(w)
		switch {
		case rule.Window > 0:
		case m.store.Rules().Fallback.Window > 0:
			window += " (from the fallback)"
		default:
			window += " (you gave it this session)"
		}
	}
	st := c.Status
	var lines []string
	for _, l := range keyLines(c.Name(), m.width) {
		lines = append(lines, m.theme.Row[st].Bold(true).Render(l))
	}
	// The status and what it means first, then what it comes of: on a
	// short terminal what is cut off is the least of it.
	lines = append(lines, "", field("status", m.theme.Status[st].Render(st.String())))
	explain := m.explain(&c, rule, listed, now)
	if note := model.Note(&c, m.store.Rules().WindowOf(rule)); note != "" {
		explain += " Note: " + note + "."
	}
	for _, l := range wrapWords(explain, max(20, m.width-labelWidth)) {
		lines = append(lines, strings.Repeat(" ", labelWidth)+l)
	}
	lines = append(lines, m.serverDetail(&c, rule, now, wrapped)...)
	if p, ok := m.store.Pushback(c.ID()); ok && !p.Proven {
		lines = append(lines, wrapped("pushed", pushedText(p, now))...)
	}
	lines = append(lines, m.layoutLines(&c, wrapped)...)
	lines = append(lines,
		field("value", formatValue(&c, now)),
		field("read", m.readAgo(&c, now)),
		field("TTL", m.theme.style(ttlTone).Render(ttl)),
		field("limit", limit))
	lines = append(lines, wrapped("window", window)...)
	lines = append(lines, field("rate", formatRate(c.Rate)))
	lines = append(lines, wrapped("rule", ruleText)...)
	lines = append(lines,
		field("deadline", deadline),
		field("type", model.Printable(c.Type)),
		field("raw", raw),
	)
	if c.FieldRow && c.NotShown > 0 {
		// Its hash holds more fields than a key shows: their rows are not
		// on the table, nor counted (only check counts them).
		lines = append(lines, wrapped("fields", model.NotShownText(c.NotShown, -1)+" (beyond --max-fields): countertop check counts those without a TTL")...)
	}
	return append(lines, m.historyLines(&c, rule, now)...)
}

// layoutLines are the detail screen's lines on how the key was read: its
// layout (and whether that is a guess), the commands and clue that chose
// it, the hits left, and a window key's identity.
func (m *Model) layoutLines(c *model.Counter, wrapped func(label, value string) []string) []string {
	layout := c.Layout.String()
	if c.Field != "" {
		layout += ", field " + quote(c.Field)
	}
	if c.Guess {
		layout += " (a guess from the key's shape: a rule's layout = \"…\" settles it)"
	}
	lines := wrapped("layout", layout)
	if c.Clue != "" {
		lines = append(lines, wrapped("read by", model.Printable(c.Clue))...)
	}
	if c.HasRemaining && !c.Window.Past { // no client counts in a past window
		lines = append(lines, wrapped("remaining", formatNumber(c.Remaining)+" more hits allowed")...)
	}
	if c.Layout.Spec().NamedWindow && c.Window.Identity != "" {
		identity := quote(c.Window.Identity)
		if c.Window.Part != "" {
			identity += ", window " + quote(c.Window.Part)
			if !c.Window.Start.IsZero() {
				identity += " from " + c.Window.Start.Local().Format("2006-01-02 15:04:05")
			}
			if c.Window.Past {
				identity += " (a past window: nobody counts in it any more)"
			} else {
				identity += " (the current window)"
			}
		}
		lines = append(lines, wrapped("identity", identity)...)
		lines = append(lines, m.siblingLines(c, m.clock(), wrapped)...)
	}
	return append(lines, m.blockHitLines(c, m.clock(), wrapped)...)
}

// pushedText is what the detail says of a counter whose TTL is pushed back
// as it grows, before that proves it extending: a key that outgrows its
// window so is, one refreshed inside a window it does not outlive is not.
func pushedText(p model.Pushback, now time.Time) string {
	s := fmt.Sprintf("its TTL has been pushed back as it grows since %s: it is extending if it keeps growing past its window of %s",
		p.Since.Local().Format("15:04:05"), model.FormatDuration(p.Window))
	if left := p.KnownBy.Sub(now); left > 0 {
		return s + fmt.Sprintf(", known by %s (in %s)", p.KnownBy.Local().Format("15:04:05"), model.FormatDuration(left))
	}
	return s + ", and it has not so far"
}

// maxKeyLines is how many lines the detail screen gives a key's name.
const maxKeyLines = 4

// keyLines is name, a key as Printable shows it, in lines of width cells:
// whole, up to maxKeyLines lines, else with its middle taken out.
func keyLines(name string, width int) []string {
	width = max(width, 1)
	name = truncateMiddle(name, maxKeyLines*width)
	return strings.Split(ansi.Hardwrap(name, width, true), "\n")
}

// explain is one or two sentences on what a counter's status means and,
// for the ones that need it, what to do about it.
//
// listed tells a rule of the config from the fallback, which applies to
// keys no rule matched: the sentences must say which one they speak of.
func (m *Model) explain(c *model.Counter, rule model.Rule, listed bool, now time.Time) string {
	limit := formatNumber(rule.Limit)
	left, _ := c.TTLAt(now)
	words := c.Layout.Spec().Words // where its layout's differ from a count's
	switch c.Status {
	case model.StatusStuck:
		switch {
		case c.FieldRow:
			return fmt.Sprintf("At or over its limit of %s: every request it counts is refused. %s. %s", limit, model.FieldKeepsHashAlive, m.repairHint(c, rule))
		case words.Stuck != "":
			return words.Stuck + " " + m.repairHint(c, rule)
		}
		return fmt.Sprintf("No TTL and at or over its limit of %s: every request it counts is refused, and it will never reset. %s", limit, m.repairHint(c, rule))
	case model.StatusExtending:
		return fmt.Sprintf("It kept growing for longer than a whole window while its TTL was pushed back (EXPIRE without NX on every hit): its window never closes, so a client that keeps hitting it stays counted, and once over its limit of %s is refused for as long as it keeps trying. Fix the client: EXPIRE … NX, or INCR and EXPIRE NX in one script.", limit)
	case model.StatusNoExpiry:
		s := "No TTL, though its rule expects one: it will never reset"
		switch {
		case c.FieldRow:
			s = model.FieldKeepsHashAlive
		case !listed:
			s = "No TTL, though counters are expected to have one (no rule matched; the default): it will never reset"
		}
		if rule.Limit > 0 {
			s += fmt.Sprintf(", so once it reaches its limit of %s every request it counts is refused for good", limit)
		}
		return s + ". " + m.repairHint(c, rule)
	case model.StatusLeak:
		what := "A past window's key with no TTL"
		if words.Leak != "" {
			what = words.Leak
		}
		return what + ": nobody reads it again and nothing frees it, so it holds memory for good, and under a volatile-* eviction policy (which evicts only keys with a TTL) it is never evicted. " + m.repairHint(c, rule)
	case model.StatusOver:
		if words.Over != nil {
			return words.Over(c.At, now)
		}
		if c.HasTTL() {
			return fmt.Sprintf("At or over its limit of %s: requests it counts are refused until it expires in %s.", limit, model.FormatDuration(left))
		}
		return fmt.Sprintf("At or over its limit of %s; its rule expects no expiry, so it stays there until someone resets it.", limit)
	case model.StatusWarn:
		warnAt := rule.WarnAt
		if warnAt == 0 {
			warnAt = model.DefaultWarnAt
		}
		frac, _ := c.Percent(rule.Limit)
		return fmt.Sprintf("At %s of its limit of %s (warns from %s).", formatPercent(frac), limit, formatPercent(warnAt))
	case model.StatusOK:
		if words.OK != "" {
			return words.OK
		}
		switch {
		case !c.HasTTL() && listed:
			return "A number with no expiry, as its rule wants (expect_ttl = false)."
		case !c.HasTTL():
			return "A number with no expiry, as the default for keys no rule matches wants (expect_ttl = false)."
		case rule.Limit > 0:
			return fmt.Sprintf("A counter under its limit; it resets when it expires in %s.", model.FormatDuration(left))
		case listed:
			return fmt.Sprintf("A counter with no limit to reach (its rule sets none); it resets when it expires in %s.", model.FormatDuration(left))
		}
		return fmt.Sprintf("A counter with no limit to reach (no rule matched, and no --limit was given); it resets when it expires in %s.", model.FormatDuration(left))
	case model.StatusNotCounter: // below
	}
	if c.Type != "string" {
		return fmt.Sprintf("A %s, not a number: nothing here counts with INCR.", model.Printable(c.Type))
	}
	return "Text that is not a number: INCR on it fails with \"value is not an integer\"."
}

// repairHint says which key repairs a counter with no expiry, and what
// it sends.
func (m *Model) repairHint(c *model.Counter, rule model.Rule) string {
	if w, ok := m.windowFor(c.ID(), rule); ok {
		return fmt.Sprintf("Press e to send %s.", m.repairOf(refOf(c), w))
	}
	return "Press e to give it an expiry (you will be asked for a window)."
}
