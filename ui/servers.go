package ui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/countertop/countertop/model"
)

// Several servers: each has a feed of its own (model.Batch.Server names
// it), whose state, health and last data the dashboard keeps apart, as
// one server's are kept; the rows of all fill the one Store, a key of one
// name on two servers being two rows (model.RowOf). What the header's
// single-server code reads (feedState, health) is then a summary of all
// (summarize): connected while any is, its error only when none answers,
// the busiest server's load; each server's own line says the rest.

// Server is one of the servers the dashboard watches, for Options.Servers.
type Server struct {
	Name   string
	Writer Writer  // where the writes on its rows go; nil: none possible
	Budget float64 // its --max-commands, commands a second; 0: none
}

// serverFeed is what the dashboard knows of one server's feed.
type serverFeed struct {
	Server
	state     model.FeedState
	health    model.Health
	lastData  time.Time // when its feed last brought data
	downSince time.Time // when it last stopped answering; zero while it answers
	liveAt    time.Time // when its feed was last live (see noteLive): none of its rows is older
}

// several reports whether the dashboard watches more than one server.
func (m *Model) several() bool { return len(m.servers) > 1 }

// serverOf is the feed of the server named name, or nil.
func (m *Model) serverOf(name string) *serverFeed {
	for _, s := range m.servers {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// writerFor is where a write on a row of server goes: its server's
// Writer among several, else the one Writer.
func (m *Model) writerFor(server string) Writer {
	if s := m.serverOf(server); s != nil {
		return s.Writer
	}
	return m.writer
}

// applyServer takes the state and health b brings of its server, then
// sums them up for the rest of the dashboard (summarize).
func (m *Model) applyServer(b *model.Batch, arrived time.Time) {
	s := m.serverOf(b.Server)
	if s == nil {
		return
	}
	if b.Health != nil {
		s.health = *b.Health
	}
	if b.State != nil {
		was := reachable(s.state)
		s.state = *b.State
		switch is := reachable(s.state); {
		case was && !is, s.downSince.IsZero() && !is && s.state.LastError != "":
			s.downSince = arrived
		case is:
			s.downSince = time.Time{}
		}
	}
	if hasData(*b) {
		s.lastData = arrived
	}
}

// summarize is every server's state and health as one, for what reads
// the feed's: connected and watching while any server is, scanning while
// any is, an error only when none answers (each server's line says its
// own), the busiest server's load. A silent server is told on its own
// line, and its rows are not live (serverFeed.following).
func (m *Model) summarize() (model.FeedState, model.Health) {
	var st model.FeedState
	var h model.Health
	answering := false
	for i, s := range m.servers {
		if i == 0 {
			st = s.state
			st.Addr, st.Topology, st.Note, st.LastError = "", "", "", ""
			st.Seen, st.Matched, st.Scanning, st.Connected = 0, 0, false, false
		}
		if reachable(s.state) {
			answering = true
			if st.Phase != model.FeedWatching {
				st.Phase, st.Mode, st.Interval = s.state.Phase, s.state.Mode, s.state.Interval
			}
		}
		st.Connected = st.Connected || s.state.Connected
		st.Scanning = st.Scanning || s.state.Scanning
		st.Seen += s.state.Seen
		st.Matched += s.state.Matched
		if s.state.UpdatedAt.After(st.UpdatedAt) {
			st.UpdatedAt = s.state.UpdatedAt
		}
		if s.health.At.After(h.At) {
			h.At = s.health.At
		}
		h.Commands = max(h.Commands, s.health.Commands)
		h.Behind = max(h.Behind, s.health.Behind)
		h.Evicted += s.health.Evicted
		h.EvictedAll = h.EvictedAll || s.health.EvictedAll
	}
	if !answering {
		var why []string
		for _, s := range m.servers {
			if s.state.LastError != "" {
				why = append(why, s.Name+": "+s.state.LastError)
			}
		}
		if len(why) > 0 {
			st.LastError = fmt.Sprintf("None of the %d servers answers. %s", len(m.servers), strings.Join(why, " "))
		}
	}
	return st, h
}

// following reports whether s's feed sends events or invalidations, s
// answers and is not silent: its feed vouches for its rows as of when it
// is behind by (see Model.following).
func (s *serverFeed) following() bool {
	return s.state.Pushed() && reachable(s.state) && s.health.Silent == ""
}

// live reports whether s's feed vouches for every row of s as of now.
func (s *serverFeed) live() bool { return s.following() && s.health.Behind == 0 }

// down reports whether s does not answer now.
func (s *serverFeed) down() bool { return !reachable(s.state) && s.state.LastError != "" }

// waiting reports whether s has not answered yet, with no error to tell:
// connecting, maybe to a server that accepts and never answers, until the
// dial's timeout says so.
func (s *serverFeed) waiting() bool { return !reachable(s.state) && s.state.LastError == "" }

// answering reports whether s answers now.
func (s *serverFeed) answering() bool { return reachable(s.state) }

// serverWidth is SERVER's width: the longest name and its mark (stale,
// or the copies of a row shards share); 0 with one server, which needs no
// column.
func (m *Model) serverWidth() int {
	if !m.several() {
		return 0
	}
	w, mark := len(model.ColumnServer.Title()), max(cells(staleMark), m.sharedMarkWidth())
	for _, s := range m.servers {
		w = max(w, cells(model.Printable(s.Name))+mark)
	}
	return w
}

// minServerWidth is the least of SERVER a narrow screen keeps.
const minServerWidth = 6

// staleMark follows the name of a server that does not answer, in its
// rows' SERVER cells: its rows are as last read, since the header says when.
const staleMark = " ✗"

// sharedMark follows the server's name of a row that n servers of one
// shard group hold: " ×2", each copy counting the limit once.
func sharedMark(n int) string { return fmt.Sprintf(" ×%d", n) }

// sharedMarkWidth is the widest sharedMark a row can have: as many copies
// as the largest group has servers; 0 without shards.
func (m *Model) sharedMarkWidth() int {
	n := 0
	for _, g := range m.store.Shards() {
		n = max(n, len(g.Servers))
	}
	if n < 2 {
		return 0
	}
	return cells(sharedMark(n))
}

// serverCell is the SERVER cell of r's row: the server's name, marked
// and in the error style while that server does not answer, or marked
// with its copies (×2) when shards of one group hold it.
func (m *Model) serverCell(r *rowArgs) string {
	name := model.Printable(r.c.Server)
	if s := m.serverOf(r.c.Server); s != nil && s.down() {
		return m.theme.Error.Render(r.pad(truncate(name, max(1, r.width-cells(staleMark))) + staleMark))
	}
	if n := m.store.Copies(r.c); n > 1 {
		mark := sharedMark(n)
		return m.theme.Shared.Render(r.pad(truncate(name, max(1, r.width-cells(mark))) + mark))
	}
	return r.look.tones[tonePlain].render(r.pad(truncate(name, r.width)))
}

// maxServerLines is how many servers have a header line of their own;
// with more, the rest are summed up in one more line.
const maxServerLines = 3

// serverLines are the header's lines on the servers, one a server, or up
// to maxServerLines of them (in rank order: those that do not answer,
// those that do not answer yet, those with a note) and a line that sums up
// the rest; none with one server.
func (m *Model) serverLines() []string {
	if !m.several() {
		return nil
	}
	if len(m.servers) <= maxServerLines+1 {
		lines := make([]string, len(m.servers))
		for i, s := range m.servers {
			lines[i] = truncate(m.serverLine(s), m.width)
		}
		return lines
	}
	shown := slices.Clone(m.servers)
	slices.SortStableFunc(shown, func(a, b *serverFeed) int { return cmp.Compare(a.rank(), b.rank()) })
	lines := make([]string, 0, maxServerLines+1)
	for _, s := range shown[:maxServerLines] {
		lines = append(lines, truncate(m.serverLine(s), m.width))
	}
	return append(lines, truncate(m.restLine(shown[maxServerLines:]), m.width))
}

// serverLineCount is how many lines serverLines makes, without drawing
// them: Update asks for the header's height at every message.
func (m *Model) serverLineCount() int {
	switch n := len(m.servers); {
	case n < 2:
		return 0
	case n <= maxServerLines+1:
		return n
	}
	return maxServerLines + 1
}

// serverLine is one server's header line: its name, its mode, how fresh
// its rows are, its load against its budget, and its error, else its note
// (what the one server's header says under it: why it watches in the mode
// it does, that its connections are unnamed), as much as the line holds;
// a row's detail has the note whole.
func (m *Model) serverLine(s *serverFeed) string {
	sep := m.theme.Dim.Render(" · ")
	parts := []string{m.theme.Title.Render(model.Printable(s.Name)), m.modeOf(s.state)}
	switch {
	case s.down():
		parts = append(parts, m.theme.Error.Render("stale since "+m.sinceText(s.downSince)))
	case s.lastData.IsZero() && s.state.UpdatedAt.IsZero():
		parts = append(parts, m.theme.Dim.Render("no data yet"))
	case s.live():
		parts = append(parts, "live")
	default:
		last := s.lastData
		if s.state.UpdatedAt.After(last) {
			last = s.state.UpdatedAt
		}
		parts = append(parts, "read "+model.FormatDuration(max(0, m.clock().Sub(last)))+" ago")
	}
	if !s.health.At.IsZero() {
		load := formatCount(int64(s.health.Commands+0.5)) + " cmd/s"
		if s.Budget > 0 {
			load += " of " + formatCount(int64(s.Budget)) + " max"
		}
		parts = append(parts, load)
	}
	if s.state.Scanning {
		parts = append(parts, "scanning… "+formatCount(s.state.Matched)+" matched")
	}
	line := strings.Join(parts, sep)
	switch {
	case s.state.LastError != "":
		line += sep + m.theme.Error.Render(model.SafeText(s.state.LastError))
	case s.health.Silent != "":
		line += sep + m.theme.Error.Render("no answer for "+model.FormatDuration(m.now().Sub(s.health.Since)))
	case s.note() != "":
		line += sep + m.theme.Dim.Render(model.SafeText(s.note()))
	}
	return line
}

// rank is s's place among the header's server lines: those in trouble
// first (stale, then still connecting: one that accepts and never answers
// says connecting… until the dial's timeout makes it stale), then those
// with a note (a mode it fell back to, connections left unnamed), then
// the rest.
func (s *serverFeed) rank() int {
	switch {
	case s.down():
		return 0
	case s.waiting():
		return 1
	case s.note() != "":
		return 2
	}
	return 3
}

// note is what s's feed says of how it watches (model.FeedState.Note),
// while s answers: "" when down, as its error says more.
func (s *serverFeed) note() string {
	if s.down() {
		return ""
	}
	return s.state.Note
}

// restLine sums up the servers without a line: how many answer, those
// with a note by name (their rows' detail has it), how many do not answer
// yet, and the stale ones by name with since when.
func (m *Model) restLine(rest []*serverFeed) string {
	live, waiting := 0, 0
	var stale, noted []string
	for _, s := range rest {
		switch {
		case s.down():
			stale = append(stale, model.Printable(s.Name)+" (since "+m.sinceText(s.downSince)+")")
		case s.waiting():
			waiting++
		case s.note() != "":
			noted = append(noted, model.Printable(s.Name))
			live++
		default:
			live++
		}
	}
	text := fmt.Sprintf("%d more answering", live)
	if len(noted) > 0 {
		text += fmt.Sprintf(" (%d with a note, in their rows' detail: %s)", len(noted), strings.Join(noted, ", "))
	}
	if waiting > 0 {
		text += fmt.Sprintf(", %d connecting", waiting)
	}
	if len(stale) > 0 {
		text += fmt.Sprintf(", %d stale: %s", len(stale), strings.Join(stale, ", "))
		return m.theme.Error.Render(text)
	}
	return m.theme.Dim.Render(text)
}

// sinceText is a time of day the header names, "15:04:05".
func (m *Model) sinceText(t time.Time) string {
	if t.IsZero() {
		return "the start"
	}
	return t.Local().Format("15:04:05")
}

// serversTitle is the header's first line among several servers: the
// title, how many servers and how many answer, the freshness of the rows
// on screen and the busiest server's load, in room cells.
func (m *Model) serversTitle(room int) string {
	sep := m.theme.Dim.Render(" · ")
	down := 0
	for _, s := range m.servers {
		if s.down() {
			down++
		}
	}
	count := fmt.Sprintf("%d servers", len(m.servers))
	if down > 0 {
		count += m.theme.Error.Render(fmt.Sprintf(" (%d stale)", down))
	}
	line := m.theme.Title.Render(m.title) + sep + count
	if n := m.store.SharedRows(); n > 0 {
		line += sep + m.theme.Shared.Render(fmt.Sprintf("%s on two shards or more", plural(n, "key")))
	}
	line += sep + m.age()
	if cost := m.cost(); cost != "" {
		line += sep + cost + " busiest"
	}
	if lipgloss.Width(line) > room {
		return truncate(line, room)
	}
	return line
}

// serverDetail is the detail screen's lines on c's server among several:
// which server holds the row (and since when it does not answer), and,
// when shards of one group hold it, every copy with its value and TTL and
// what the copies cost: the limit counted once on each.
func (m *Model) serverDetail(c *model.Counter, rule model.Rule, now time.Time, wrapped func(label, value string) []string) []string {
	if !m.several() {
		return nil
	}
	server := quote(c.Server)
	s := m.serverOf(c.Server)
	if s != nil && s.state.Addr != "" {
		server += m.theme.Dim.Render(" at " + model.Printable(s.state.Addr))
		if s.state.Topology != "" {
			server += m.theme.Dim.Render(" (" + model.Printable(s.state.Topology) + ")")
		}
	}
	if s != nil && s.down() {
		server += m.theme.Error.Render(" (not answering since " + m.sinceText(s.downSince) + ": the row is as last read)")
	}
	lines := wrapped("server", server)
	if s != nil && s.note() != "" {
		lines = append(lines, wrapped("note", model.SafeText(s.note()))...)
	}
	shared, ok := m.store.SharedOf(c)
	if !ok {
		return lines
	}
	n := len(shared.Copies)
	what := fmt.Sprintf("on %d servers of the shard group %s, each copy counting the limit once", n, quote(shared.Group))
	if rule.Limit > 0 {
		what += fmt.Sprintf(": a client whose hits land on all of them gets up to %d times its limit of %s (%s)", n, formatNumber(rule.Limit), formatNumber(float64(n)*rule.Limit))
	} else {
		what += fmt.Sprintf(": a client whose hits land on all of them gets up to %d times its limit", n)
	}
	what += ". A ring whose servers changed writes a key on two shards; delete the copies that are not on the shard the ring now picks."
	lines = append(lines, wrapped("shared", what)...)
	width := 0
	for _, cp := range shared.Copies {
		width = max(width, cells(model.Printable(cp.Server)))
	}
	for _, cp := range shared.Copies {
		r, _ := m.store.RuleOf(*cp)
		ttl, _ := m.ttlCell(cp, r, now)
		line := strings.Repeat(" ", labelWidth) + m.theme.Shared.Render(padRight(model.Printable(cp.Server), width)) +
			"  value " + formatValue(cp, now) + "  TTL " + ttl + "  " + cp.Status.String()
		if cp.Server == c.Server {
			line += m.theme.Dim.Render("  (this row)")
		}
		lines = append(lines, truncate(line, m.width))
	}
	return lines
}

// nameServer puts server's name before the status line set since seq
// (the status then), among several servers: "eu-1: DEL k -> deleted",
// so that a write's outcome says where it went. Called deferred by the
// handlers of a write's answer; a status left as it was is not touched.
func (m *Model) nameServer(server string, seq uint64) {
	if m.several() && server != "" && m.status.seq != seq {
		m.status.text = model.Printable(server) + ": " + m.status.text
	}
}

// serversOf is how many of the repairs' servers there are, and a detail
// line that counts each one's keys ("a: 5 keys, b: 2 keys"), when the
// dashboard watches several servers; 0 and "" with one.
func (m *Model) serversOf(targets []model.Expiry) (int, string) {
	if !m.several() {
		return 0, ""
	}
	per := map[string]int{}
	for _, t := range targets {
		per[t.Server]++
	}
	var parts []string
	for _, s := range m.servers { // in the servers' order
		if n := per[s.Name]; n > 0 {
			parts = append(parts, model.Printable(s.Name)+": "+plural(n, "key"))
		}
	}
	return len(per), "Each goes to its own server: " + strings.Join(parts, ", ") + "."
}
