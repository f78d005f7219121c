package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/countertop/countertop/model"
)

// The filter is matched against key names as the table shows them, so a
// user looking for keys holding ESC [ types \e[; the header shows that as
// typed, not escaped a second time, and a key's own backslash still shows
// as \\.
func TestTheFilterIsShownAsTyped(t *testing.T) {
	obs := append(fixture(), str("views:page:\x1b[31mevil", "13", model.PTTLNoExpiry), str(`views:dir\x`, "1", model.PTTLNoExpiry))
	m := newModel(t, nil, 120, 40, obs...)
	m, _ = press(m, `/\e[<enter>`)
	screen := plain(m)
	if !strings.Contains(screen, `filter: "\e["`) {
		t.Errorf(`the header does not show the filter as typed, "\e[":`+"\n%s", screen)
	}
	if m.store.Visible() != 1 || !strings.Contains(screen, `views:page:\e[31mevil`) {
		t.Errorf("the filter does not find the key with ESC [ in it:\n%s", screen)
	}
	m, _ = press(m, `/<backspace><backspace><backspace>zzz<enter>`)
	if screen := plain(m); !strings.Contains(screen, `No key matches the filter "zzz"`) {
		t.Errorf("empty table:\n%s", screen)
	}
	m, _ = press(m, "<esc>")
	if !strings.Contains(plain(m), `views:dir\\x`) {
		t.Errorf("a backslash in a key name is not shown escaped:\n%s", plain(m))
	}
}

// One key is "1 key", not "1 keys".
func TestOneKeyIsCountedInTheSingular(t *testing.T) {
	m := newModel(t, nil, 120, 40, str("ratelimit:api:42", "17", 43_000))
	if screen := plain(m); !strings.Contains(screen, "1 key · 0 stuck") {
		t.Errorf("header:\n%s", screen)
	}
	m = newModel(t, nil, 120, 40, fixture()...)
	m, _ = press(m, "/api:42<enter>")
	if screen := plain(m); !strings.Contains(screen, "1 of 10 keys") {
		t.Errorf("header:\n%s", screen)
	}
}

// In events mode the header says what the periodic re-scan is, as the
// watcher puts it, next to the rest of what it says about the feed.
func TestEventsModeSaysWhatTheReScanIs(t *testing.T) {
	note := `turned keyspace notifications on (notify-keyspace-events was "", now "K$gxe"); re-scan every 30s (a full one every 5m00s), in case an event was lost`
	m := newModel(t, nil, 120, 40, fixture()...)
	m, _ = send(m, batchesMsg{batches: []model.Batch{{State: &model.FeedState{
		Mode: model.WatchEvents, Phase: model.FeedWatching, Addr: "127.0.0.1:7000", Connected: true, Note: note, UpdatedAt: t0,
	}}}})
	lines := strings.Split(plain(m), "\n")
	if got := strings.TrimSpace(lines[3]) + " " + strings.TrimSpace(lines[4]); got != note {
		t.Errorf("the header's fourth and fifth lines are %q, want %q", got, note)
	}
}

// At 40 columns the key, which tells the rows apart, keeps a fair share of
// the row (a third), cut in its middle so that its end, where keys of a
// pattern differ, stays; VALUE, TTL and STATUS stay.
func TestANarrowTableGivesTheKeyItsShare(t *testing.T) {
	long := str("ratelimit:"+strings.Repeat("x", 40), "12345678901234567", 50_000)
	m := newModel(t, nil, 40, 20, append(fixture(), long)...)
	m = selectKey(t, m, "ratelimit:api:42")
	line := selectedLine(t, m)
	for _, want := range []string{"▸ ratel…api:42 ", " 17 ", " 41s ", " ok"} {
		if !strings.Contains(line, want) {
			t.Errorf("the row does not show %q: %q", want, line)
		}
	}
	if screen := plain(m); !strings.Contains(screen, "  ratel…xxxxxx ") || !strings.Contains(screen, " 1e16 ") || !strings.Contains(screen, "∞") {
		t.Errorf("a long key, its long value rounded (not cut), or views:home's ∞:\n%s", screen)
	}

	// Short names take no more than they need: the value stays whole.
	m = newModel(t, nil, 40, 20, str("rl:a", "123456789012", 50_000), str("rl:b", "7", 50_000))
	if line := selectedLine(t, m); !strings.Contains(line, "▸ rl:a ") || !strings.Contains(line, " 123456789012 ") {
		t.Errorf("the row does not show the key and its whole value: %q", line)
	}
}

// A number that must be rounded to fit is rounded to three digits, and
// the room its other digits took goes to the names: at 60 columns,
// 9223372036854775807 reads 9.22e18, not 9.2233720368548e18, and
// ratelimit:api:expired is whole.
func TestARoundedValueGivesTheKeyTheRoom(t *testing.T) {
	m := newModel(t, nil, 60, 20, append(fixture(), str("ratelimit:big", "9223372036854775807", model.PTTLNoExpiry))...)
	screen := plain(m)
	for _, want := range []string{" 9.22e18 ", " ratelimit:api:expired "} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen does not show %q:\n%s", want, screen)
		}
	}
}

// The sorted column's title has a ▾ after it: at every width, with every
// sort, each title stays over its column (STATUS over the statuses).
func TestTitlesStayOverTheirColumns(t *testing.T) {
	for width := 40; width <= 130; width++ {
		for s := range 6 { // key, value, TTL, % of limit, rate, status
			m := newModel(t, nil, width, 20, fixture()...)
			m, _ = press(m, strings.Repeat("s", s))
			m = selectKey(t, m, "ratelimit:api:42") // status ok
			var titles string
			for _, l := range strings.Split(plain(m), "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), "KEY") {
					titles = l
				}
			}
			row := selectedLine(t, m)
			col := func(line, word string) int { return len([]rune(line[:strings.LastIndex(line, word)])) }
			if !strings.Contains(titles, "STATUS") || col(titles, "STATUS") != col(row, " ok")+1 {
				t.Fatalf("at %d columns, sort %d, STATUS is not over the statuses:\n%s\n%s", width, s, titles, row)
			}
		}
	}
}

// On a narrow screen KEY gets no more than the names shown need; once a
// longer name has been on screen, the columns keep that shape, rather than
// shifting each time the list scrolls past a shorter one.
func TestNarrowColumnsDoNotShiftAsTheListScrolls(t *testing.T) {
	var obs []model.Observation
	for i := range 30 {
		key := fmt.Sprintf("a:%02d", i) // first in key order
		if i >= 25 {
			key = fmt.Sprintf("ratelimit:customer:%02d", i) // last
		}
		obs = append(obs, str(key, "1234567", 50_000))
	}
	titles := func(m *Model) string {
		for _, l := range strings.Split(plain(m), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "KEY") {
				return l
			}
		}
		t.Fatalf("no column titles:\n%s", plain(m))
		return ""
	}
	widened := 0
	for width := 40; width <= 70; width++ {
		m := newModel(t, nil, width, 20, obs...)
		top := titles(m)
		m, _ = press(m, "G")
		bottom := titles(m)
		m, _ = press(m, "g")
		if top != bottom {
			widened++
		}
		if again := titles(m); again != bottom {
			t.Errorf("at %d columns, back at the top, the columns shifted again:\n%s\n%s", width, bottom, again)
		}
	}
	if widened == 0 {
		t.Error("at no width did the long names at the bottom get more room than the short ones")
	}
}

// The feed's note ends with what to do (the command to run): at 80 columns
// it is shown whole, not cut before the command.
func TestFeedNoteFitsAt80Columns(t *testing.T) {
	m := newModel(t, newFakeWriter(), 80, 24, fixture()...)
	// As redisclient writes it for a server whose notifications are off
	// (TestWatchFallsBackToPollingWhenNotificationsGoOff).
	m.feedState.Note = `polling: keyspace notifications are off on the server (notify-keyspace-events=""); ` +
		`run with --enable-events or CONFIG SET notify-keyspace-events 'K$gxe' to get live updates`
	header := strings.Join(m.wrapFeed(m.feedState.Note, maxFeedLines), " ")
	if !strings.HasSuffix(header, "notify-keyspace-events 'K$gxe' to get live updates") {
		t.Errorf("the note is cut: %q", header)
	}
	if !strings.Contains(flat(m), "'K$gxe' to get live updates") {
		t.Errorf("the screen does not show the note's end:\n%s", plain(m))
	}
}

// TestFreshness: the header's age is that of the oldest row on screen,
// with the oldest of all when it is older, never the time the last batch
// came (a pass at a million keys takes seconds); "live" while events
// vouch for every row; in the error style when polling should have read
// the rows again three intervals ago; and what countertop costs Redis.
func TestFreshness(t *testing.T) {
	polling := &model.FeedState{Mode: model.WatchPoll, Phase: model.FeedWatching, Interval: time.Second, Addr: "127.0.0.1:7000", Connected: true}
	events := &model.FeedState{Mode: model.WatchEvents, Phase: model.FeedWatching, Addr: "127.0.0.1:7000", Connected: true}
	eventsDown := &model.FeedState{Mode: model.WatchEvents, Phase: model.FeedReconnecting, Addr: "127.0.0.1:7000", Connected: true, LastError: "the subscription was lost"}
	rows := func(at time.Duration, keys ...string) model.Batch {
		b := model.Batch{}
		for _, k := range keys {
			o := str(k, "1", 60_000)
			o.At = t0.Add(at)
			b.Observed = append(b.Observed, o)
		}
		return b
	}
	many := make([]string, 100) // more than the screen shows, before zzz:old
	for i := range many {
		many[i] = fmt.Sprintf("ratelimit:%03d", i)
	}
	tests := []struct {
		name    string
		batches []model.Batch
		after   time.Duration // from t0, when the header is read
		want    string
		red     bool
	}{
		{"no data", []model.Batch{{State: polling}}, time.Second, "no data yet", false},
		{"a pass that just ended, read seconds ago", []model.Batch{
			{State: &model.FeedState{Mode: model.WatchPoll, Phase: model.FeedWatching, Interval: time.Second, Connected: true, UpdatedAt: t0.Add(5 * time.Second)}},
			rows(0, "ratelimit:a", "ratelimit:b"),
		}, 5 * time.Second, "read 5.0s ago", true},
		{"the rows on screen fresh, one off screen old", []model.Batch{{State: polling}, rows(0, "zzz:old"),
			rows(9500*time.Millisecond, many...)}, 10 * time.Second, "read 0.5s ago (oldest 10s)", false},
		{"all about as fresh", []model.Batch{{State: polling}, rows(9*time.Second, "ratelimit:a"), rows(9500*time.Millisecond, "ratelimit:b")},
			10 * time.Second, "read 1.0s ago", false},
		{"events, healthy: live", []model.Batch{{State: events}, rows(0, "ratelimit:a")}, time.Minute, "live", false},
		{"events down: the rows age from then", []model.Batch{{State: events}, rows(0, "ratelimit:a"), {State: eventsDown}},
			time.Minute, "read 1m00s ago", true},
		{"a silent server", []model.Batch{{State: polling}, rows(0, "ratelimit:a"),
			{Health: &model.Health{At: t0.Add(900 * time.Millisecond), Silent: "127.0.0.1:7000", Since: t0.Add(200 * time.Millisecond)}}},
			time.Second, "no answer for 0.8s", true},
		{"events falling behind", []model.Batch{{State: events}, rows(0, "ratelimit:a"),
			{Health: &model.Health{At: t0.Add(time.Second), Behind: 1800 * time.Millisecond}}},
			time.Second, "behind by 1.8s", false},
		{"tracking caught up again", []model.Batch{{State: &model.FeedState{Mode: model.WatchTracking, Phase: model.FeedWatching, Connected: true}}, rows(0, "ratelimit:a"),
			{Health: &model.Health{At: t0.Add(time.Second), Behind: 1800 * time.Millisecond}}, {Health: &model.Health{At: t0.Add(2 * time.Second)}}},
			time.Minute, "live", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t: t0}
			m := New(Options{Store: model.NewStore(testRules()), Now: c.now})
			m, _ = send(m, tea.WindowSizeMsg{Width: 120, Height: 30})
			for _, b := range tt.batches {
				m, _ = send(m, batchesMsg{batches: []model.Batch{b}})
			}
			c.t = t0.Add(tt.after)
			m, _ = send(m, tickMsg{m.tickGen})
			got, want := m.age(), tt.want
			if tt.red {
				want = m.theme.Error.Render(want)
			}
			if got != want && (tt.red || ansi.Strip(got) != want || got == m.theme.Error.Render(want)) {
				t.Errorf("age = %q (in the error style: %v), want %q (%v)", ansi.Strip(got), got == m.theme.Error.Render(ansi.Strip(got)), tt.want, tt.red)
			}
		})
	}
}

// TestHeaderShowsCostAndSilence: the header says what countertop costs
// the server, and names a server that does not answer in one sentence,
// which goes once it answers again.
func TestHeaderShowsCostAndSilence(t *testing.T) {
	c := &clock{t: t0}
	m := newModel(t, nil, 120, 40, fixture()...)
	m.now = c.now
	m, _ = send(m, batchesMsg{batches: []model.Batch{{Health: &model.Health{At: t0, Commands: 12_345}}}})
	if !strings.Contains(plain(m), "12k cmd/s") {
		t.Errorf("no cost in the header:\n%s", plain(m))
	}
	m, _ = send(m, batchesMsg{batches: []model.Batch{{Health: &model.Health{At: t0, Commands: 80, Silent: "127.0.0.1:7000", Since: t0.Add(-700 * time.Millisecond)}}}})
	want := "127.0.0.1:7000 has not answered for 0.7s: it may be busy with a slow command or a save, or frozen"
	if !strings.Contains(flat(m), want) {
		t.Errorf("the silence is not named:\n%s", plain(m))
	}
	m, _ = send(m, batchesMsg{batches: []model.Batch{{Health: &model.Health{At: t0, Commands: 80}}}})
	if strings.Contains(flat(m), "has not answered") {
		t.Errorf("the silence stays after an answer:\n%s", plain(m))
	}
}

// TestDetailSaysWhenTheKeyWasRead: the detail screen says how long ago its
// key was read.
func TestDetailSaysWhenTheKeyWasRead(t *testing.T) {
	m := newModel(t, nil, 120, 40, fixture()...)
	m = selectKey(t, m, "ratelimit:legacy")
	m, _ = press(m, "<enter>")
	if !strings.Contains(plain(m), "read      1.5s ago") {
		t.Errorf("the detail screen does not say when the key was read:\n%s", plain(m))
	}
}

// A first pass that failed (a master refused the password, say) is not an
// empty keyspace: the body says nothing was read, not that no key matches.
func TestAFailedFirstPassIsNotAnEmptyKeyspace(t *testing.T) {
	m := newModel(t, nil, 120, 40)
	if !strings.Contains(plain(m), "No keys in db 0.") {
		t.Fatalf("an empty keyspace:\n%s", plain(m))
	}
	m, _ = send(m, batchesMsg{batches: []model.Batch{{State: &model.FeedState{
		Mode: model.WatchPoll, Phase: model.FeedWatching, Interval: time.Second, Addr: "127.0.0.1:7000", Connected: true,
		LastError: "127.0.0.1:7001 rejected the username or password.",
	}}}})
	if screen := plain(m); strings.Contains(screen, "No keys in") || !strings.Contains(screen, "No keys read yet: see the error above.") {
		t.Errorf("after a failed pass:\n%s", screen)
	}
}

// On a narrow screen the header's address keeps its port, which tells two
// servers on one host apart: the topology goes first, then the middle of
// the address.
func TestANarrowHeaderKeepsThePort(t *testing.T) {
	// Several Sentinels are cut in the middle, not shown as the first
	// host with the last port.
	m := newModel(t, nil, 60, 20, fixture()...)
	m, _ = send(m, batchesMsg{batches: []model.Batch{{State: &model.FeedState{
		Mode: model.WatchPoll, Phase: model.FeedWatching, Interval: time.Second, Addr: "10.0.0.5:26379,10.0.0.6:26380,10.0.0.7:26381/0", Connected: true, UpdatedAt: t0,
	}}}})
	if first := strings.Split(plain(m), "\n")[0]; !strings.Contains(first, "10.0.…") || strings.Contains(first, "10.…:26381") {
		t.Errorf("Sentinels' addresses in the header: %q", first)
	}

	for _, addr := range []string{"redis-cache-07.internal.example:26417", "127.0.0.1:26417/3"} {
		for _, width := range []int{60, 50, 40} {
			m := newModel(t, nil, width, 20, fixture()...)
			m, _ = send(m, batchesMsg{batches: []model.Batch{{State: &model.FeedState{
				Mode: model.WatchPoll, Phase: model.FeedWatching, Interval: time.Second, Addr: addr, Topology: "standalone",
				Connected: true, UpdatedAt: t0,
			}}}})
			first := strings.Split(plain(m), "\n")[0]
			port := addr[strings.LastIndexByte(addr, ':'):]
			if !strings.Contains(first, port+" ") || width >= 60 && !strings.Contains(first, "polling 1s") {
				t.Errorf("at %d columns the header's first line is %q, want %s (and at 60, the mode)", width, first, port)
			}
		}
	}
}

// With a filter on, the header's alarms still count every key, and say so:
// "2 stuck" under "1 of 10 keys" would read as the filter's.
func TestFilteredCountsSayTheAlarmsAreOfAll(t *testing.T) {
	m := newModel(t, nil, 120, 40, fixture()...)
	if line := strings.Split(plain(m), "\n")[2]; strings.Contains(line, "in all") {
		t.Errorf("without a filter the counts say %q", line)
	}
	m, _ = press(m, "/api:42<enter>")
	if line := strings.Split(plain(m), "\n")[2]; !strings.Contains(line, "1 of 10 keys · 1 stuck · 1 no-expiry in all") {
		t.Errorf("with a filter the counts say %q, want the alarms marked as of all keys", line)
	}
	// Where that does not fit, the counts of keys shorten, not the alarms.
	m, _ = send(m, tea.WindowSizeMsg{Width: 40, Height: 20})
	if line := strings.Split(plain(m), "\n")[2]; !strings.HasPrefix(line, "1/10 keys · 1 stuck · 1 no-expiry in all") {
		t.Errorf("at 40 columns, with a filter, the counts say %q", line)
	}
}

// The header names what is watched: the patterns, the database and the
// config file read. Where they do not fit, the patterns after the first
// give way to a count, and the config file loses its middle.
func TestTheHeaderNamesWhatIsWatched(t *testing.T) {
	o := Options{Patterns: []string{"ratelimit:*", "billing:*", "views:*"}, DB: 3, ConfigFile: "/home/ops/countertop.toml"}
	for _, tc := range []struct {
		width int
		want  string
	}{
		{120, "watching ratelimit:*, billing:*, views:* in db 3 · config /home/ops/countertop.toml"},
		{72, "watching ratelimit:* +2 more in db 3 · config /home/ops/countertop.toml"},
		{60, "watching ratelimit:* +2 more in db 3 · config /home/…op.toml"},
		{40, "watching ratelimit:* +2 more in db 3"},
	} {
		m := newModelWith(t, o, tc.width, 24, fixture()...)
		if line := strings.Split(plain(m), "\n")[1]; strings.TrimRight(line, " ") != tc.want {
			t.Errorf("at %d columns the header's second line is\n%q, want\n%q", tc.width, line, tc.want)
		}
	}
	// No config file read: none is named.
	m := newModelWith(t, Options{Patterns: []string{"ratelimit:*"}}, 80, 24, fixture()...)
	if line := strings.Split(plain(m), "\n")[1]; strings.TrimRight(line, " ") != "watching ratelimit:* in db 0" {
		t.Errorf("without a config file the header's second line is %q", line)
	}
}

// An empty screen after a full pass names the patterns that matched
// nothing and the database, and says what to check: a typo in a pattern
// looks like an empty keyspace otherwise.
func TestAnEmptyScreenSaysWhatMatchedNothing(t *testing.T) {
	m := newModelWith(t, Options{Patterns: []string{"ratelimt:*"}}, 120, 40)
	want := "No key matches ratelimt:* in db 0. Check the pattern (--pattern) and the database (--url .../N)."
	if !strings.Contains(plain(m), want) {
		t.Errorf("the empty screen does not say %q:\n%s", want, plain(m))
	}
	m = newModelWith(t, Options{Patterns: []string{"a:*", "b:\x1b[2J*"}, DB: 5}, 120, 40)
	want = `No key matches a:* or b:\e[2J* in db 5. Check the patterns (--pattern) and the database (--url .../N).`
	if !strings.Contains(plain(m), want) {
		t.Errorf("the empty screen does not say %q:\n%s", want, plain(m))
	}
}

// On a wide screen KEY is as wide as the longest name on screen, and the
// room left goes to the right end: a value stays next to its key. A name
// far longer than the rest takes at most 60% of the row, cut in its
// middle, so that it does not push every value away from its key.
func TestKeyIsAsWideAsTheNames(t *testing.T) {
	m := newModel(t, nil, 200, 50, fixture()...)
	m = selectKey(t, m, "ratelimit:api:expired") // the longest name, 21 cells
	line := selectedLine(t, m)
	// KEY is 24 (minKeyWidth) wide, VALUE 5 ("VALUE"): 3 cells pad the
	// name, a gap of 2, then 4 pad the value.
	if !strings.HasPrefix(line, "▸ ratelimit:api:expired"+strings.Repeat(" ", 3+2+4)+"4  ") {
		t.Errorf("the value is not next to the longest key: %q", line)
	}
	if !strings.HasSuffix(strings.TrimRight(line, " "), " ok") || len(strings.TrimRight(line, " ")) > 120 {
		t.Errorf("the row does not end at its STATUS, well before the screen's end: %q", line)
	}

	long := "ratelimit:" + strings.Repeat("x", 190)
	m = newModel(t, nil, 200, 50, append(fixture(), str(long, "1", 50_000))...)
	m = selectKey(t, m, long)
	name := strings.Fields(strings.TrimPrefix(selectedLine(t, m), "▸ "))[0]
	if w := cells(name); w != 120 || !strings.Contains(name, "…") {
		t.Errorf("a 200-cell name takes %d cells (%q), want 120 (60%% of 200), cut in its middle", w, name)
	}
}

// TestHeaderSaysHowFarBehind: while events come faster than countertop
// takes them in, the header's first line says so, and by how much, where
// it would say live; and says live again once it has caught up.
func TestHeaderSaysHowFarBehind(t *testing.T) {
	c := &clock{t: t0}
	m := newModel(t, nil, 120, 40, fixture()...)
	m.now = c.now
	events := &model.FeedState{Mode: model.WatchEvents, Phase: model.FeedWatching, Addr: "127.0.0.1:7000", Connected: true}
	m, _ = send(m, batchesMsg{batches: []model.Batch{{State: events}, {Health: &model.Health{At: t0, Behind: 1800 * time.Millisecond}}}})
	if !strings.Contains(plain(m), "events · behind by 1.8s") {
		t.Errorf("the header does not say how far behind:\n%s", plain(m))
	}
	m, _ = send(m, batchesMsg{batches: []model.Batch{{Health: &model.Health{At: t0.Add(time.Second)}}}})
	if !strings.Contains(plain(m), "events · live") {
		t.Errorf("the header does not say live once caught up:\n%s", plain(m))
	}
}

// The header keeps the topology (which server is master, how many
// replicas, how many are up: what an address cannot tell) in sight at 120
// columns, with three Sentinels' addresses and a badge: the addresses are
// shortened first, then the cost goes. Narrower still, the topology loses
// its end before it goes; the mode and the age stay throughout.
func TestTheHeaderKeepsTheTopologyAt120Columns(t *testing.T) {
	sentinels := "10.0.0.5:26379,10.0.0.6:26379,10.0.0.7:26379/0"
	sentinel := "sentinel mymaster: master 10.0.0.8:6379, 1 replica"
	cluster := "cluster: 3 masters (2 up), 3 replicas (2 up)"
	for _, tc := range []struct {
		name, addr, topology string
		mode                 model.WatchMode
		width                int
		paused, readOnly     bool
		want                 []string
	}{
		{"sentinel, polling, read-only", sentinels, sentinel, model.WatchPoll, 120, false, true,
			[]string{"countertop · 10.0.", "(" + sentinel + ")", "polling 1s", "read 1.5s ago", "READ-ONLY"}},
		{"sentinel, as the issue saw it", sentinels, sentinel, model.WatchPoll, 140, false, false,
			[]string{"(" + sentinel + ")", "polling 1s", "read 1.5s ago", "240 cmd/s"}},
		{"sentinel, events, paused", sentinels, sentinel, model.WatchEvents, 120, true, true,
			[]string{"(" + sentinel + ")", "events", "frozen at", "PAUSED", "READ-ONLY"}},
		{"cluster", "redis-cluster-seed-01.internal.example:7000/0", cluster, model.WatchPoll, 120, false, true,
			[]string{":7000/0 (" + cluster + ")", "polling 1s", "read 1.5s ago"}},
		{"sentinel at 80 columns: the topology's end goes", sentinels, sentinel, model.WatchPoll, 80, false, false,
			[]string{"(sentinel mymaster", "…)", "polling 1s", "read 1.5s ago"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newModelWith(t, Options{ReadOnly: tc.readOnly}, tc.width, 30, fixture()...)
			m, _ = send(m, batchesMsg{batches: []model.Batch{{State: &model.FeedState{
				Mode: tc.mode, Phase: model.FeedWatching, Interval: time.Second, Addr: tc.addr, Topology: tc.topology, Connected: true, UpdatedAt: t0,
			}}}})
			if tc.paused {
				m, _ = press(m, "p")
			}
			first := strings.Split(plain(m), "\n")[0]
			for _, want := range tc.want {
				if !strings.Contains(first, want) {
					t.Errorf("at %d columns the header's first line is\n%q\nwant it to show %q", tc.width, first, want)
				}
			}
		})
	}
}
