package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
)

// writeTimeout bounds every write, so a hung server shows up as an error in
// the status line instead of a write that never answers.
const writeTimeout = 5 * time.Second

// Results of writes, each carrying what was asked so the status line can
// say it back.
type (
	incrDoneMsg struct {
		row    rowRef // the row it was sent from (a key typed by name: that key's); row.key is the key added to
		field  string // the hash field added to; "": a string counter
		by     model.Amount
		window time.Duration
		inc    model.Incremented
		err    error
	}
	expireDoneMsg struct {
		expiry  model.Expiry
		outcome model.ExpiryOutcome
		obs     model.Observation
		err     error
		repair  bool // one of the writes of a repair-all
	}
	deleteDoneMsg struct {
		server  string // among several, the key's
		key     string
		existed bool // false: it had expired, or someone deleted it first
		err     error
	}
)

// writesOff reports whether every write is refused.
func (m *Model) writesOff() bool { return m.readOnly || m.writer == nil && !m.several() }

// writeKey handles the keys that change Redis, acting on the row r (the
// selected one, or the one the detail screen shows): its key, or for a
// hash field's row that field. Every write is refused before anything is
// sent when writes are off.
func (m *Model) writeKey(msg tea.KeyPressMsg, r rowRef) tea.Cmd {
	k := m.keys
	if !keyMatches(msg, k.Incr, k.Decr, k.IncrBy, k.IncrName, k.Expire, k.RepairAll, k.Delete) {
		return nil
	}
	switch {
	case m.readOnly:
		m.status = failed("Read-only: nothing was sent (countertop was started with --read-only).")
		return nil
	case m.writer == nil && !m.several():
		m.status = failed("This dashboard cannot write to Redis: nothing was sent.")
		return nil
	case keyMatches(msg, k.IncrName):
		return m.askKeyName()
	case keyMatches(msg, k.RepairAll):
		return m.repairAll()
	case r.none():
		m.status = failed("No key is selected: nothing was sent.")
		return nil
	case !m.lost.none() && r.id == m.selected.id && m.screen == screenTable:
		m.status = failed("Nothing was sent: %s, which you had selected, left the rows (deleted, expired, or out of the filter), and the cursor moved to %s: press the key again to act on it.",
			m.lost.name, r.name)
		m.lost = rowRef{}
		return nil
	case keyMatches(msg, k.Incr):
		return m.incr(r, model.Amount{Int: 1})
	case keyMatches(msg, k.Decr):
		return m.incr(r, model.Amount{Int: -1})
	case keyMatches(msg, k.IncrBy):
		if m.refuseNotString(r, "INCRBY") {
			return nil
		}
		return m.askAmount(r, false)
	case keyMatches(msg, k.Expire):
		if m.refuseExpire(r) {
			return nil
		}
		return m.withWindow(r, m.ruleFor(r.id), func(m *Model, w time.Duration) tea.Cmd {
			e := m.repairOf(r, w)
			m.status = info("%s …", e)
			return m.expireCmd(e, false)
		})
	}
	m.askDelete(r)
	return nil
}

// keyMatches is key.Matches for key presses, as a value the handlers share.
var keyMatches = key.Matches[tea.KeyPressMsg]

// ruleFor is the rule that applies to the row id, whether or not the
// Store holds it yet (`n` can create a key): a hash field's row expects a
// TTL, as its siblings have theirs (model.Store.RuleOf).
func (m *Model) ruleFor(id string) model.Rule {
	if c, ok := m.store.Get(id); ok {
		r, _ := m.store.RuleOf(c)
		return r
	}
	rules := m.store.Rules()
	return rules.At(rules.Match(id))
}

// windowFor is the expiry to give the row id under rule: the rule's
// window, else the fallback's (--window), else the one the user gave for
// it earlier in this session; ok is false when none is known.
func (m *Model) windowFor(id string, rule model.Rule) (time.Duration, bool) {
	if w := m.store.Rules().WindowOf(rule); w > 0 {
		return w, true
	}
	w, ok := m.given[id]
	return w, ok
}

// remember notes w as the window the user gave for the row id, so that it
// is not asked for again this session.
func (m *Model) remember(id string, w time.Duration) {
	if m.given == nil {
		m.given = make(map[string]time.Duration)
	}
	m.given[id] = w
}

// repairOf is the repair that gives r window as its TTL, for what the
// Store read it as: its key's, or its field's for a hash field's row
// (model.RepairOf). A key it does not hold (yet) is taken for a counter,
// the only kind e gives an expiry to, and a field that left for a number
// in a hash: the repair checks it in Redis.
func (m *Model) repairOf(r rowRef, window time.Duration) model.Expiry {
	if c, ok := m.store.Get(r.id); ok {
		return repairOfRow(&c, window)
	}
	if r.field != "" {
		return model.Expiry{Key: r.key, Window: window, Field: r.field, Shape: fieldShape, Server: r.server}
	}
	return model.Expiry{Key: r.key, Window: window, Shape: model.ShapeCounter, Server: r.server}
}

// fieldShape is what a hash field's row is read as: a hash whose field
// holds a number.
var fieldShape = model.Shape{Layout: model.LayoutCounter, Type: "hash", Number: true}

// repairOfRow is repairOf for c, a row the Store holds.
func repairOfRow(c *model.Counter, window time.Duration) model.Expiry {
	e, ok := model.RepairOf(c, window)
	switch {
	case ok:
	case e.Field != "":
		e.Shape = fieldShape
	default:
		e.Shape = model.ShapeCounter
	}
	return e
}

// withWindow runs then with the window for r, asking the user for one
// first when none is known, and remembering the answer for r.
func (m *Model) withWindow(r rowRef, rule model.Rule, then func(*Model, time.Duration) tea.Cmd) tea.Cmd {
	if w, ok := m.windowFor(r.id, rule); ok {
		return then(m, w)
	}
	return m.askWindow("window for "+r.name+" (e.g. 60s): ", func(m *Model, w time.Duration) tea.Cmd {
		m.remember(r.id, w)
		return then(m, w)
	})
}

// refuseNotString refuses at once an increment of a key the dashboard
// knows is no string counter: a log, a bucket, a GCRA key, a time or
// opaque state (its library writes it otherwise, and an INCR would corrupt
// it or fail), a hash, or text. Refused before the user is asked for an
// amount or a window for nothing. It reports whether it refused, having
// said why, and what the library itself writes, in the status.
func (m *Model) refuseNotString(r rowRef, command string) bool {
	c, known := m.store.Get(r.id)
	if !known || c.Type == "" {
		return false
	}
	why := c.Layout.Spec().Refusal(c.Type, c.Field, command)
	if why == "" {
		return false
	}
	m.status = failed("Nothing was sent: %s %s", r.name, why)
	return true
}

// refuseExpire refuses at once an expiry for a key that is not a counter
// (a hash, a list, text: e would make it vanish one day, unasked) or whose
// rule says it lives forever (expect_ttl = false). It reports whether it
// refused, having said why in the status.
func (m *Model) refuseExpire(r rowRef) bool {
	c, known := m.store.Get(r.id)
	if !known {
		return false
	}
	name := r.name
	rule, ruled := m.store.RuleOf(c)
	switch {
	case c.Status == model.StatusNotCounter:
		what := "text"
		if c.Type != "string" {
			what = "a " + model.Printable(c.Type)
		}
		m.status = failed("Nothing was sent: %s holds %s, not a counter, and e gives an expiry to counters only.", name, what)
	case !rule.ExpectTTL && ruled:
		m.status = failed("Nothing was sent: the rule %s says %s lives forever (expect_ttl = false), so it needs no expiry.", "'"+model.Printable(rule.Pattern)+"'", name)
	case !rule.ExpectTTL:
		m.status = failed("Nothing was sent: keys no rule covers are expected to live forever here, so %s needs no expiry.", name)
	default:
		// The repair would leave a TTL that is still running as it is:
		// asking for a window first would ask for nothing.
		left, ok := c.TTLAt(m.clock())
		if !ok || left <= 0 {
			return false
		}
		m.status = info("Nothing was sent: %s has a TTL already (%s left), and e gives one only to a counter without one.", name, model.FormatDuration(left))
	}
	return true
}

// incrField is the hash field an increment of r adds to, as its limiter
// does (HINCRBY): a hash field's row's own field, the field the Store
// reads a hash's counter from, or, for a row it does not hold, the field
// its rule names; "" for a string.
func (m *Model) incrField(r rowRef) string {
	if c, ok := m.store.Get(r.id); ok && c.Type != "" && c.Type != "none" {
		if c.Type == "hash" {
			return c.Field
		}
		return ""
	}
	if r.field != "" {
		return r.field
	}
	return m.ruleFor(r.id).Field
}

// incr fires an atomic increment of r by by: of its key, or of its field
// for a hash field's row. A row whose rule expects no TTL is sent window
// 0: a plain INCRBY, as its rule wants.
func (m *Model) incr(r rowRef, by model.Amount) tea.Cmd {
	if m.refuseNotString(r, by.Command()) {
		return nil
	}
	rule := m.ruleFor(r.id)
	w, known := m.windowFor(r.id, rule)
	switch {
	case !rule.ExpectTTL:
		w = 0
	case !known:
		// A key with a TTL needs no window: Redis is asked, in the same
		// atomic step, and the user only if the key turns out to have none
		// (see onIncrDone).
		w = model.WindowUnknown
	}
	return m.sendIncr(r, m.incrField(r), by, w)
}

// sendIncr sends the increment of r's key by by, with window w: of its
// hash field field, or of the string key when field is "".
func (m *Model) sendIncr(r rowRef, field string, by model.Amount, w time.Duration) tea.Cmd {
	m.status = info("%s …", incrText(m.expectedCommand(r.id, field, by), r.key, field, by))
	return m.incrCmd(r, field, by, w)
}

// incrText is an increment as people would type it: "INCRBY k 1",
// "HINCRBY k hits 1".
func incrText(command, key, field string, by model.Amount) string {
	if field != "" {
		return command + " " + model.Printable(key) + " " + model.Printable(field) + " " + by.String()
	}
	return command + " " + model.Printable(key) + " " + by.String()
}

// expectedCommand is the command an increment of the row id (its field,
// when not "") by by runs, as far as the rows tell: a whole amount goes to
// a decimal counter ("3.5", "007") as INCRBYFLOAT. Redis decides when it
// runs, and the answer says what ran.
func (m *Model) expectedCommand(id, field string, by model.Amount) string {
	if c, ok := m.store.Get(id); ok && c.Value.Kind == model.KindFloat {
		return model.Amount{IsFloat: true}.CommandOn(field)
	}
	return by.CommandOn(field)
}

// incrCmd sends the increment of r's key, within writeTimeout, and reports
// it as an incrDoneMsg.
func (m *Model) incrCmd(r rowRef, field string, by model.Amount, window time.Duration) tea.Cmd {
	w, key := m.writerFor(r.server), r.key
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		defer cancel()
		var inc model.Incremented
		var err error
		if field != "" {
			inc, err = w.IncrField(ctx, key, field, by, window)
		} else {
			inc, err = w.Incr(ctx, key, by, window)
		}
		return incrDoneMsg{row: r, field: field, by: by, window: window, inc: inc, err: err}
	}
}

// expireCmd sends the repair e, within writeTimeout, and reports it as an
// expireDoneMsg; repair marks one of a repair-all's writes.
func (m *Model) expireCmd(e model.Expiry, repair bool) tea.Cmd {
	w := m.writerFor(e.Server)
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		defer cancel()
		outcome, obs, err := w.Expire(ctx, e)
		return expireDoneMsg{expiry: e, outcome: outcome, obs: obs, err: err, repair: repair}
	}
}

// deleteCmd sends DEL, within writeTimeout, and reports it as a
// deleteDoneMsg.
func (m *Model) deleteCmd(server, key string) tea.Cmd {
	w := m.writerFor(server)
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		defer cancel()
		existed, err := w.Delete(ctx, key)
		return deleteDoneMsg{server: server, key: key, existed: existed, err: err}
	}
}

// writeFailed is the status line for a write Redis (or --read-only)
// refused. The Writer's errors are whole sentences; most already name the
// command ("INCRBY k 1 failed: ..."), and saying it twice would push the
// part that tells the user what to do off the screen.
func (m *Model) writeFailed(cmd string, err error) statusLine {
	text := model.SafeText(err.Error()) // its key names are escaped already
	s := failed("%s failed: %s", cmd, text)
	if strings.Contains(text, " failed: ") || strings.Contains(text, "was not sent") {
		s = failed("%s", text)
	}
	if !refused(err) {
		s.at, s.cmd = m.clock(), cmd // it may be the outage's doing: see Model.apply
		if !reachable(m.feedState) && m.feedState.LastError != "" || m.health.Silent != "" && !m.feedClosed {
			s = outage(s)
		}
	}
	return s
}

// outage is the status of a write that failed while the header says Redis
// does not answer: in the header's terms, not the Writer's, whose advice
// for a server never reached (check --url) is wrong for one that answered
// before.
func outage(s statusLine) statusLine {
	o := failed("%s failed: Redis does not answer, as the header says; press the key again once it is back.", s.cmd)
	o.at, o.cmd = s.at, s.cmd
	return o
}

// refused reports whether err says the write was refused (by Redis, or by
// --read-only), as the Writer's errors can tell: no outage made it fail.
func refused(err error) bool {
	var r interface{ Refused() bool }
	return errors.As(err, &r) && r.Refused()
}

// onIncrDone shows the new state at once, without waiting for the feed. An
// increment sent with no window known, to a key that turned out to have no
// TTL, was not sent: the user is asked for a window, and it goes again. A
// decimal one that would have turned an integer counter, or a new key,
// into a decimal was not sent either: the user is asked to confirm.
func (m *Model) onIncrDone(msg incrDoneMsg) tea.Cmd {
	defer m.nameServer(msg.row.server, m.status.seq)
	cmd := incrText(msg.by.CommandOn(msg.field), msg.row.key, msg.field, msg.by)
	if errors.Is(msg.err, model.ErrMakesDecimal) {
		if m.prompt != nil || m.confirm != nil {
			m.status = failed("Nothing was sent: %s would turn %s into a decimal, which needs your yes: press the key again to be asked.", cmd, model.Printable(msg.row.key))
			return nil
		}
		m.askMakeDecimal(msg)
		return nil
	}
	if errors.Is(msg.err, model.ErrNeedsWindow) {
		if m.prompt != nil || m.confirm != nil {
			// The answer came back while the user types or decides
			// something else: that is not to be taken over.
			m.status = failed("Nothing was sent: %s has no TTL yet, so %s needs a window: press the key again to give one.", msg.row.name, cmd)
			return nil
		}
		state := " has no TTL yet" // a key of the rows; one typed by name (n) may not exist
		if _, known := m.store.Get(msg.row.id); !known {
			state = " is new, or has no TTL"
		}
		prompt := msg.row.name + state + ": window to give it (e.g. 60s): "
		return m.askWindow(prompt, func(m *Model, w time.Duration) tea.Cmd {
			m.remember(msg.row.id, w)
			return m.sendIncr(msg.row, msg.field, msg.by, w)
		})
	}
	if msg.err != nil {
		m.status = m.writeFailed(cmd, msg.err)
		return nil
	}
	// What was sent, the field's HPEXPIRE with it where it went: the
	// row's own field for a hash field's row.
	inc := msg.inc
	inc.Key, inc.Field = msg.row.key, msg.field
	ran := inc.Sent(msg.by)
	sep := ", "
	if msg.inc.GaveTTL {
		sep = "; " // a repair in passing: said, never silent
	}
	m.status = done("%s -> %s%s%s", ran, model.Printable(msg.inc.Value()), sep, msg.inc.TTLNote())
	if !m.watched(msg.row.key) {
		// Nothing would read it again: a row would go stale, and stay
		// after Redis dropped the key. The table holds the watched keys.
		m.status.text += fmt.Sprintf(" (not in the table: it is outside the watched patterns %s)", quotePatterns(m.patterns))
		return nil
	}
	o := msg.inc.Observation
	o.Server = msg.row.server
	m.applyWrite(model.Batch{Observed: []model.Observation{o}})
	return nil
}

// askMakeDecimal asks before a decimal increment turns a key that holds an
// integer, or none, into a decimal counter: the application's INCR fails
// on it from then on, and nothing turns it back. msg is the increment
// Redis did not run; y sends it again with the user's consent.
func (m *Model) askMakeDecimal(msg incrDoneMsg) {
	name := model.Printable(msg.row.key)
	shown := truncateMiddle(name, maxDialogKey)
	what, incr, sent := shown, "INCR", "INCRBYFLOAT "+shown
	if msg.field != "" {
		field := truncateMiddle(model.Printable(msg.field), maxDialogKey)
		what, incr, sent = "field "+field+" of "+shown, "HINCRBY", "HINCRBYFLOAT "+shown+" "+field
	}
	holds := what + " holds " + model.Printable(msg.inc.Value()) + ", an integer."
	switch {
	case msg.inc.PTTL == model.PTTLMissing:
		holds = shown + " does not exist yet: it would be created holding " + msg.by.String() + "."
	case msg.field != "" && msg.inc.FieldValue == "":
		holds = what + " does not exist yet: it would be created holding " + msg.by.String() + "."
	}
	m.confirm = &confirm{
		question: model.Amount{IsFloat: true}.CommandOn(msg.field) + " turns " + what + " into a decimal; the application's " + incr + " will then fail with 'value is not an integer'. Send it?",
		details:  []string{sent + " " + msg.by.String(), holds},
		yes: func(m *Model) tea.Cmd {
			by := msg.by
			by.AllowFloat = true
			return m.sendIncr(msg.row, msg.field, by, msg.window)
		},
	}
}

// watched reports whether the feed reads key: it matches one of the
// patterns (or no patterns were given to tell).
func (m *Model) watched(key string) bool {
	return len(m.patterns) == 0 || slices.ContainsFunc(m.patterns, func(p string) bool { return model.GlobMatch(p, key) })
}

// quotePatterns is the patterns, quoted: "'a*'" for one, "'a*' and 'b*'"
// for two (they may come from --pattern or from the rules).
func quotePatterns(patterns []string) string {
	quoted := make([]string, len(patterns))
	for i, p := range patterns {
		quoted[i] = "'" + model.Printable(p) + "'"
	}
	return strings.Join(quoted, " and ")
}

// onExpireDone reports one repair, or counts it towards a repair-all, and
// shows the key, or the field, as the repair found it.
func (m *Model) onExpireDone(msg expireDoneMsg) tea.Cmd {
	e := msg.expiry
	msg.obs.Server = e.Server
	switch {
	case msg.err != nil:
	case msg.outcome == model.ExpiryGone:
		// Deleted or expired since it was read: not a failure, and the
		// row goes now rather than at the next read. A field's repair
		// says whether the field went or its whole hash (msg.obs).
		if e.Field != "" {
			m.applyWrite(model.Batch{Observed: []model.Observation{msg.obs}})
		} else {
			m.applyWrite(model.Batch{Server: e.Server, Removed: []string{e.Key}})
		}
		if !msg.repair && m.lost.id == model.RowOf(e.Server, e.Key, e.Field) {
			m.lost = rowRef{} // the status says it is gone; a repair-all's summary names no key
		}
	default:
		m.applyWrite(model.Batch{Observed: []model.Observation{msg.obs}})
	}
	if msg.repair {
		return m.onRepaired(msg)
	}
	defer m.nameServer(e.Server, m.status.seq)
	cmd := msg.expiry.String()
	switch msg.outcome {
	case model.ExpiryFailed:
		m.status = m.writeFailed(cmd, msg.err)
	case model.ExpirySet:
		m.status = done("%s -> set, %s", cmd, model.TTLPhrase(msg.obs.PTTL))
	case model.ExpiryChanged:
		if v, ok := msg.obs.FieldValue(e.Field); e.Field != "" && msg.obs.Type == "hash" && ok {
			m.status = info("%s -> left alone: the field holds %s now, not a number", cmd, quote(v))
			break
		}
		m.status = info("%s -> left alone: it holds %s now, not %s", cmd, model.Holding(msg.obs), e.Shape.Noun())
	case model.ExpiryGone:
		what := "the key"
		if e.Field != "" && msg.obs.Type == "hash" {
			what = "the field"
		}
		m.status = info("%s -> left alone: %s no longer exists", cmd, what)
	case model.ExpiryHadTTL:
		m.status = info("%s -> left alone: it has a TTL already (%s)", cmd, model.FormatDuration(model.PTTLDuration(msg.obs.PTTL)))
	case model.ExpiryFieldTTLs:
		m.status = info("%s -> left alone: %s", cmd, model.FieldTTLsLeftAlone)
	}
	return nil
}

// onDeleteDone reports a DEL, and takes the key off the table at once.
func (m *Model) onDeleteDone(msg deleteDoneMsg) {
	defer m.nameServer(msg.server, m.status.seq)
	if msg.err != nil {
		m.status = m.writeFailed("DEL "+model.Printable(msg.key), msg.err)
		return
	}
	m.applyWrite(model.Batch{Server: msg.server, Removed: []string{msg.key}})
	if m.lost.key == msg.key && m.lost.server == msg.server {
		m.lost = rowRef{} // the user deleted it: the cursor on the next row is no surprise
	}
	if m.screen == screenDetail && m.detail.key == msg.key && m.detail.server == msg.server {
		m.screen, m.scroll = screenTable, 0
	}
	if !msg.existed {
		m.status = info("DEL %s -> it was gone already (expired, or deleted by someone else)", model.Printable(msg.key))
		return
	}
	m.status = done("DEL %s -> deleted", model.Printable(msg.key))
}

// applyWrite puts a write's result into the Store at once. While paused it
// is also held, so that on resume it is not overwritten by older readings
// that were held before it. A write can move its key out of the filter (+
// under is:ok makes a counter warn): the cursor then moves as it does for
// the feed, and the next write is refused once (see followFeed).
func (m *Model) applyWrite(b model.Batch) {
	m.store.Apply(b)
	if m.paused {
		m.held.add(b)
	}
	m.followFeed()
}
