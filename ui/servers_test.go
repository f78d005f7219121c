package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
)

// Ten servers' feeds into one dashboard: the header names three servers
// on lines of their own, the one that stopped answering first with since
// when, and sums up the other seven in one line; its rows stay, marked;
// server:NAME keeps that server's rows; + goes to the selected row's
// server's Writer alone.
func TestDashboardOfTenServers(t *testing.T) {
	var servers []Server
	writers := map[string]*fakeWriter{}
	for i := range 10 {
		name := fmt.Sprintf("s%d", i)
		writers[name] = newFakeWriter()
		servers = append(servers, Server{Name: name, Writer: writers[name], Budget: 1000})
	}
	m := newModelWith(t, Options{Servers: servers}, 140, 30)
	var batches []model.Batch
	for i, s := range servers {
		batches = append(batches, model.Batch{
			Server:   s.Name,
			Observed: []model.Observation{str("rl:shared", fmt.Sprint(i+1), 30000)},
			State:    &model.FeedState{Mode: model.WatchPoll, Phase: model.FeedWatching, Interval: time.Second, Connected: true, UpdatedAt: t0.Add(time.Second)},
			Health:   &model.Health{At: t0.Add(time.Second), Commands: 12},
		})
	}
	m, _ = send(m, batchesMsg{batches: batches})
	m, _ = send(m, batchesMsg{batches: []model.Batch{{Server: "s4", State: &model.FeedState{
		Mode: model.WatchPoll, Phase: model.FeedReconnecting, LastError: "could not connect to 10.0.0.4:6379: connection refused; countertop keeps trying",
	}}}})

	screen := plain(m)
	if m.store.Len() != 10 || !strings.Contains(screen, "10 servers (1 stale)") {
		t.Fatalf("want 10 rows of rl:shared and the servers counted:\n%s", screen)
	}
	lines := strings.Split(screen, "\n")
	if !strings.HasPrefix(lines[1], "s4 · reconnecting… · stale since") || !strings.Contains(lines[1], "connection refused") {
		t.Errorf("the stale server's line is not first: %q", lines[1])
	}
	if !strings.HasPrefix(lines[2], "s0 · polling 1s") || !strings.Contains(lines[2], "12 cmd/s of 1k max") {
		t.Errorf("s0's line = %q, want its mode and load against its budget", lines[2])
	}
	if lines[4] != "7 more answering" {
		t.Errorf("the summary line = %q, want 7 more answering", lines[4])
	}
	if row := lineWith(t, screen, " s4 ✗"); !strings.Contains(row, "rl:shared") {
		t.Errorf("s4's row is not kept and marked:\n%s", screen)
	}

	m = filterTo(t, m, "server:s7")
	if m.store.Visible() != 1 || !strings.Contains(lineWith(t, plain(m), "rl:shared"), " s7 ") {
		t.Fatalf("server:s7 keeps %d rows:\n%s", m.store.Visible(), plain(m))
	}
	writers["s7"].seed(str("rl:shared", "8", 30000))
	m, cmd := press(m, "+")
	m = run(t, m, cmd)
	if calls := writers["s7"].Calls(); len(calls) != 1 || !strings.Contains(calls[0], "rl:shared") {
		t.Errorf("s7's writer got %q, want one INCRBY of rl:shared", calls)
	}
	for name, w := range writers {
		if name != "s7" && len(w.Calls()) > 0 {
			t.Errorf("%s's writer got %q from + on s7's row", name, w.Calls())
		}
	}
	if c, ok := m.store.Get(model.RowOf("s7", "rl:shared", "")); !ok || c.Value.Int != 9 {
		t.Errorf("s7's row after + = %v, want 9", c.Value.Int)
	}
}

// Nine servers answer while a tenth is still connecting (one that accepts
// and never answers, until the dial's timeout): the nine's rows are on
// screen, the tenth's line comes first and says it is connecting, and the
// summary counts it as connecting, not as answering; before any answers,
// every server is connecting.
func TestTenServersWhileOneIsConnecting(t *testing.T) {
	var servers []Server
	for i := range 10 {
		servers = append(servers, Server{Name: fmt.Sprintf("s%d", i), Writer: newFakeWriter(), Budget: 20000})
	}
	m := newModelWith(t, Options{Servers: servers}, 140, 30)
	connecting := &model.FeedState{Mode: model.WatchAuto, Phase: model.FeedConnecting}
	var batches []model.Batch
	for _, s := range servers {
		batches = append(batches, model.Batch{Server: s.Name, State: connecting})
	}
	m, _ = send(m, batchesMsg{batches: batches})
	if lines := strings.Split(plain(m), "\n"); lines[4] != "0 more answering, 7 connecting" {
		t.Errorf("before any server answers, the summary line = %q", lines[4])
	}

	batches = nil
	for i, s := range servers[:9] {
		batches = append(batches, model.Batch{
			Server:   s.Name,
			Observed: []model.Observation{str(fmt.Sprintf("rl:%s", s.Name), fmt.Sprint(i+1), 30000)},
			State:    &model.FeedState{Mode: model.WatchTracking, Phase: model.FeedWatching, Connected: true, UpdatedAt: t0.Add(time.Second)},
			Health:   &model.Health{At: t0.Add(time.Second), Commands: 40},
		})
	}
	m, _ = send(m, batchesMsg{batches: batches})
	screen := plain(m)
	lines := strings.Split(screen, "\n")
	if !strings.HasPrefix(lines[0], "countertop · 10 servers · ") || strings.Contains(lines[0], "stale") {
		t.Errorf("the title = %q, want 10 servers and none stale", lines[0])
	}
	if lines[1] != "s9 · connecting… · no data yet" {
		t.Errorf("the connecting server's line = %q, want it first, connecting", lines[1])
	}
	if !strings.HasPrefix(lines[2], "s0 · tracking · live") || !strings.HasPrefix(lines[3], "s1 · tracking · live") {
		t.Errorf("the lines after it = %q, %q, want s0's and s1's, live", lines[2], lines[3])
	}
	if lines[4] != "7 more answering" {
		t.Errorf("the summary line = %q, want the other seven answering", lines[4])
	}
	for _, s := range servers[:9] {
		if row := lineWith(t, screen, "rl:"+s.Name); !strings.Contains(row, " "+s.Name+" ") {
			t.Errorf("%s's row is not on screen with its server: %q", s.Name, row)
		}
	}
}

// filterTo types q in the filter prompt and waits for the Store to apply it.
func filterTo(t *testing.T, m *Model, q string) *Model {
	t.Helper()
	m, _ = press(m, "/")
	m, _ = press(m, q)
	m, _ = send(m, keys("<enter>")...)
	for m.store.Filtering() {
		m.store.Visible()
	}
	return m
}

// A key that two shards of one ring hold is marked ×2 in SERVER, the
// header counts it, and its detail names both copies with their values
// and TTLs and says the limit counts once on each; the same name on a
// server of no group (another region) is never marked.
func TestDashboardMarksAKeyOnTwoShards(t *testing.T) {
	var servers []Server
	for _, name := range []string{"a", "b", "c", "eu"} {
		servers = append(servers, Server{Name: name, Writer: newFakeWriter()})
	}
	m := newModelWith(t, Options{Servers: servers}, 140, 40)
	m.store.SetShards([]model.ShardGroup{{Name: "ring", Servers: []string{"a", "b", "c"}}})
	watching := &model.FeedState{Mode: model.WatchPoll, Phase: model.FeedWatching, Interval: time.Second, Connected: true, UpdatedAt: t0}
	m, _ = send(m, batchesMsg{batches: []model.Batch{
		{Server: "a", State: watching, Observed: []model.Observation{str("ratelimit:u1", "60", 30_000), str("ratelimit:u2", "5", 30_000)}},
		{Server: "b", State: watching, Observed: []model.Observation{str("ratelimit:u3", "7", 30_000)}},
		{Server: "c", State: watching, Observed: []model.Observation{str("ratelimit:u1", "55", 12_000)}},
		{Server: "eu", State: watching, Observed: []model.Observation{str("ratelimit:u1", "90", 30_000), str("ratelimit:u2", "9", 30_000)}},
	}})
	screen := plain(m)
	if !strings.Contains(screen, "1 key on two shards or more") {
		t.Errorf("the header does not count the shared key:\n%s", screen)
	}
	for _, row := range strings.Split(screen, "\n") {
		shared := strings.Contains(row, "ratelimit:u1") && (strings.Contains(row, " a ×2") || strings.Contains(row, " c ×2"))
		if strings.Contains(row, "×") && !shared {
			t.Errorf("a row is marked that no two shards hold: %q", row)
		}
	}
	for _, mark := range []string{" a ×2", " c ×2"} {
		if row := lineWith(t, screen, mark); !strings.Contains(row, "ratelimit:u1") {
			t.Errorf("the row marked %q is not ratelimit:u1's: %q", mark, row)
		}
	}
	if row := lineWith(t, screen, " eu "); strings.Contains(row, "×") {
		t.Errorf("eu's row is marked, though eu is no shard: %q", row)
	}

	m = filterTo(t, m, "server:c u1")
	m, _ = press(m, "<enter>")
	detail := plain(m)
	for _, want := range []string{
		`server    "c"`,
		`on 2 servers of the shard group "ring", each copy counting the limit once`,
		"times its limit of 100 (200)",
		"a  value 60  TTL 28s  ok",
		"c  value 55  TTL 10s  ok  (this row)",
	} {
		if !strings.Contains(detail, want) {
			t.Errorf("the detail does not say %q:\n%s", want, detail)
		}
	}
	if strings.Contains(detail, "eu  value") {
		t.Errorf("the detail counts eu's key of the same name as a copy:\n%s", detail)
	}
}

// E over several servers asks once, saying how many keys on how many
// servers and each one's count, and sends each repair to its row's server
// alone; a write's status line names its server; the detail names it.
func TestRepairAllAcrossServers(t *testing.T) {
	writers := map[string]*fakeWriter{}
	var servers []Server
	for _, name := range []string{"a", "b", "c"} {
		writers[name] = newFakeWriter()
		servers = append(servers, Server{Name: name, Writer: writers[name]})
	}
	m := newModelWith(t, Options{Servers: servers}, 140, 30)
	stuck := map[string][]model.Observation{
		"a": {str("ratelimit:u1", "5", model.PTTLNoExpiry), str("ratelimit:u2", "5", model.PTTLNoExpiry)},
		"b": {str("ratelimit:u1", "5", model.PTTLNoExpiry)},
		"c": {str("ratelimit:u9", "5", 30_000)}, // has a TTL: nothing to repair on c
	}
	var batches []model.Batch
	for name, obs := range stuck {
		writers[name].seed(obs...)
		batches = append(batches, model.Batch{Server: name, Observed: obs, State: &model.FeedState{
			Mode: model.WatchPoll, Phase: model.FeedWatching, Interval: time.Second, Connected: true, UpdatedAt: t0}})
	}
	m, _ = send(m, batchesMsg{batches: batches})

	m, _ = press(m, "E")
	screen := plain(m)
	for _, want := range []string{"Set an expiry on 3 counters on 2 servers that have none?", "Each goes to its own server: a: 2 keys, b: 1 key."} {
		if !strings.Contains(screen, want) {
			t.Errorf("the confirmation does not say %q:\n%s", want, screen)
		}
	}
	m, cmd := press(m, "y")
	m = run(t, m, cmd)
	for name, want := range map[string]int{"a": 2, "b": 1, "c": 0} {
		calls := writers[name].Calls()
		if len(calls) != want {
			t.Errorf("%s's writer got %q, want %d EXPIREs of its own keys", name, calls, want)
		}
		for _, c := range calls {
			if !strings.HasPrefix(c, "EXPIRE ratelimit:u") {
				t.Errorf("%s's writer got %q", name, c)
			}
		}
	}

	m = filterTo(t, m, "server:b")
	m, _ = press(m, "d")
	m, cmd = press(m, "y")
	m = run(t, m, cmd)
	if got := statusText(m); !strings.HasPrefix(got, "b: DEL ratelimit:u1 -> deleted") {
		t.Errorf("the status of a delete on b = %q, want it to name b", got)
	}
	if calls := writers["a"].Calls(); len(calls) != 2 {
		t.Errorf("a's writer got %q after a delete on b", calls)
	}
}

// One server's live feed vouches for its own rows only: once b stops
// answering, its rows on screen keep the header's title from saying
// "live" and it says how long ago they were read; with only a's rows on
// screen the title says live again; b's row's detail does not say it is
// unchanged since; a row's detail names its own server's mode.
func TestTitleIsLiveOnlyForLiveServersRows(t *testing.T) {
	c := &clock{t: t0}
	m := New(Options{Store: model.NewStore(testRules()), Now: c.now, Servers: []Server{{Name: "a"}, {Name: "b"}}})
	m, _ = send(m, tea.WindowSizeMsg{Width: 140, Height: 30})
	tracking := &model.FeedState{Mode: model.WatchTracking, Phase: model.FeedWatching, Connected: true, UpdatedAt: t0}
	events := &model.FeedState{Mode: model.WatchEvents, Phase: model.FeedWatching, Connected: true, UpdatedAt: t0}
	m, _ = send(m, batchesMsg{batches: []model.Batch{
		{Server: "a", State: tracking, Observed: []model.Observation{str("ratelimit:a", "1", 600_000)}},
		{Server: "b", State: events, Observed: []model.Observation{str("ratelimit:b", "2", 600_000)}},
	}})
	title := func() string { return strings.Split(plain(m), "\n")[0] }
	if !strings.Contains(title(), " · live") {
		t.Fatalf("both servers live, the title = %q, want live", title())
	}
	m, _ = press(m, "<down>")
	m, _ = press(m, "<enter>")
	if detail := plain(m); !strings.Contains(detail, "(unchanged since, as events tell)") {
		t.Errorf("b's row's detail does not name b's mode, events:\n%s", detail)
	}
	m, _ = press(m, "<esc>")

	c.t = t0.Add(10 * time.Second)
	m, _ = send(m, tickMsg{m.tickGen}, batchesMsg{batches: []model.Batch{{Server: "b", State: &model.FeedState{
		Mode: model.WatchEvents, Phase: model.FeedReconnecting, LastError: "could not connect to 10.0.0.2:6379: connection refused",
	}}}})
	c.t = t0.Add(40 * time.Second)
	m, _ = send(m, tickMsg{m.tickGen}, batchesMsg{batches: []model.Batch{{Server: "a", State: tracking}}})
	if got := title(); strings.Contains(got, " · live") || !strings.Contains(got, "read 30s ago") {
		t.Errorf("b stale since 10s with its row on screen, the title = %q, want read 30s ago, not live", got)
	}

	m = filterTo(t, m, "server:a")
	if got := title(); !strings.Contains(got, " · live") {
		t.Errorf("only a's live row on screen, the title = %q, want live", got)
	}
	m, _ = press(m, "<esc>") // clears the filter
	m = filterTo(t, m, "server:b")
	if got := title(); !strings.Contains(got, "read 30s ago") {
		t.Errorf("only b's stale row on screen, the title = %q, want read 30s ago", got)
	}
	m, _ = press(m, "<enter>")
	if detail := plain(m); !strings.Contains(detail, "read      40s ago") || strings.Contains(detail, "unchanged since") {
		t.Errorf("b's row's detail does not say it was read 40s ago, or says it is unchanged since:\n%s", detail)
	}
}

// The header's height counts as many server lines as it draws, for one
// server to many, some of them stale: the table starts right under them.
func TestServerLineCountIsWhatIsDrawn(t *testing.T) {
	for n := 1; n <= 7; n++ {
		var servers []Server
		for i := range n {
			servers = append(servers, Server{Name: fmt.Sprintf("s%d", i)})
		}
		m := newModelWith(t, Options{Servers: servers}, 140, 30)
		m, _ = send(m, batchesMsg{batches: []model.Batch{{Server: "s0", State: &model.FeedState{
			Mode: model.WatchPoll, Phase: model.FeedReconnecting, LastError: "could not connect",
		}}}})
		if got, want := m.serverLineCount(), len(m.serverLines()); got != want {
			t.Errorf("%d servers: serverLineCount = %d, serverLines draws %d", n, got, want)
		}
	}
}

// What one server's header says under it (why it watches in the mode it
// does, that its connections are unnamed) a server says on its own line
// among several, as much as the line holds, and whole in its rows'
// detail with where it is connected; a server down says its error
// instead. Past four servers, those with a note are named before the
// rest, and the summary line names those it holds.
func TestServersSayTheirNotes(t *testing.T) {
	const (
		polling = "poll: keyspace notifications are off on the server (notify-keyspace-events=\"\"); CONFIG SET notify-keyspace-events K$gxe for live updates"
		unnamed = "countertop's connections show unnamed in CLIENT LIST and SLOWLOG: CLIENT SETNAME countertop-1 was refused (NOPERM)"
	)
	state := func(note string) *model.FeedState {
		return &model.FeedState{Mode: model.WatchPoll, Phase: model.FeedWatching, Interval: time.Second, Connected: true,
			UpdatedAt: t0, Addr: "10.0.0.2:6379/0", Topology: "standalone", Note: note}
	}
	var servers []Server
	for _, name := range []string{"eu", "us", "ap"} {
		servers = append(servers, Server{Name: name, Writer: newFakeWriter()})
	}
	m := newModelWith(t, Options{Servers: servers}, 120, 40)
	m, _ = send(m, batchesMsg{batches: []model.Batch{
		{Server: "eu", State: state(""), Observed: []model.Observation{str("rl:1", "3", 30_000)}},
		{Server: "us", State: state(polling + "; " + unnamed), Observed: []model.Observation{str("rl:1", "4", 30_000)}},
		{Server: "ap", State: &model.FeedState{Mode: model.WatchPoll, Phase: model.FeedReconnecting, Note: polling,
			LastError: "could not connect to 10.0.0.3:6379: connection refused; countertop keeps trying"}},
	}})
	screen := plain(m)
	if line := lineWith(t, screen, "us · "); !strings.Contains(line, "· poll: keyspace notifications are off") || !strings.HasSuffix(line, "…") {
		t.Errorf("us's line does not say its note as far as it fits: %q", line)
	}
	if line := lineWith(t, screen, "eu · "); strings.Contains(line, "notifications") {
		t.Errorf("eu's line has another server's note: %q", line)
	}
	if line := lineWith(t, screen, "ap · "); !strings.Contains(line, "connection refused") || strings.Contains(line, "notifications") {
		t.Errorf("ap, down, does not say its error alone: %q", line)
	}
	m = filterTo(t, m, "server:us")
	m, _ = press(m, "<enter>")
	detail := flat(m)
	for _, want := range []string{`server "us" at 10.0.0.2:6379/0 (standalone)`, "note " + polling + "; " + unnamed} {
		if !strings.Contains(detail, want) {
			t.Errorf("us's row's detail does not say %q:\n%s", want, plain(m))
		}
	}

	// Six servers: the one down, then two of the three with a note on
	// lines of their own; the summary names the third.
	servers = nil
	for i := range 6 {
		servers = append(servers, Server{Name: fmt.Sprintf("s%d", i)})
	}
	m = newModelWith(t, Options{Servers: servers}, 160, 40)
	var batches []model.Batch
	for i, s := range servers {
		note := ""
		if i == 2 || i == 4 || i == 5 {
			note = polling
		}
		batches = append(batches, model.Batch{Server: s.Name, State: state(note)})
	}
	batches = append(batches, model.Batch{Server: "s3", State: &model.FeedState{Mode: model.WatchPoll, Phase: model.FeedReconnecting, LastError: "connection refused"}})
	m, _ = send(m, batchesMsg{batches: batches})
	lines := strings.Split(plain(m), "\n")
	for i, want := range []string{"s3 · ", "s2 · ", "s4 · ", "3 more answering (1 with a note, in their rows' detail: s5)"} {
		if !strings.HasPrefix(lines[1+i], want) {
			t.Errorf("header line %d = %q, want it to start %q", 1+i, lines[1+i], want)
		}
	}
}
