package ui

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"

	tea "charm.land/bubbletea/v2"
)

// flat is the screen's text with every run of spaces and line breaks made
// one space, to find a sentence however it was wrapped.
func flat(m *Model) string { return strings.Join(strings.Fields(plain(m)), " ") }

// A write Redis refuses is explained in full on the status line: Redis's
// own error and then what to do, wrapped over the lines it needs (two at
// 120 columns, three or four at 80), on the table and on the detail screen alike.
// The error is the real one, from a real Redis, through the real Writer.
func TestWriteErrorIsShownInFull(t *testing.T) {
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:max", "9223372036854775807", "EX", "600")
	c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })

	_, want := c.Incr(context.Background(), "ratelimit:max", model.Amount{Int: 1}, 0)
	if want == nil || !strings.Contains(want.Error(), "would overflow") || len(want.Error()) <= 120 {
		t.Fatalf("the Writer's overflow error is no longer one that needs two lines; pick another: %v", want)
	}
	obs := append(fixture(), str("ratelimit:max", "9223372036854775807", 600_000))

	for _, tc := range []struct {
		width, height int
		keys          string
	}{
		{120, 40, "+"},
		{120, 40, "<enter>+"},
		{80, 24, "+"},
		{80, 24, "<enter>+"},
	} {
		t.Run(strconv.Itoa(tc.width)+"x"+strconv.Itoa(tc.height)+" "+tc.keys, func(t *testing.T) {
			m := newModel(t, c, tc.width, tc.height, obs...)
			m = selectKey(t, m, "ratelimit:max")
			m, cmd := press(m, tc.keys)
			m = run(t, m, cmd)
			if !strings.Contains(flat(m), want.Error()) {
				t.Errorf("%dx%d %q: the error is not on screen in full (%q):\n%s", tc.width, tc.height, tc.keys, want, plain(m))
			}
			if n, need := len(m.statusView()), len(wrapWords(want.Error(), tc.width)); n != need || n > 4 {
				t.Errorf("%dx%d %q: the error takes %d lines, want the %d it needs (4 at most)", tc.width, tc.height, tc.keys, n, need)
			}
			lines := strings.Split(m.View().Content, "\n")
			if len(lines) != tc.height {
				t.Errorf("%dx%d %q: the frame has %d lines", tc.width, tc.height, tc.keys, len(lines))
			}
			for _, l := range lines {
				if w := lipgloss.Width(l); w > tc.width {
					t.Errorf("%dx%d %q: a line is %d wide: %q", tc.width, tc.height, tc.keys, w, l)
				}
			}
			if v, _ := m.store.Get("ratelimit:max"); v.Raw != "9223372036854775807" {
				t.Errorf("the refused write changed the value shown: %q", v.Raw)
			}
		})
	}
}

// When the status takes a second line the table gets one row fewer; the
// selected row, the last one on screen, stays on screen.
func TestALongStatusKeepsTheSelectionInView(t *testing.T) {
	w := newFakeWriter().seed(fixture()...)
	w.err = errors.New("INCRBY views:home 1 failed: " + strings.Repeat("a long explanation ", 8))
	m := newModel(t, w, 80, 14, fixture()...)
	m, _ = press(m, "G")
	if m.selected.id != "views:home" {
		t.Fatalf("G selected %q", m.selected.id)
	}
	m, cmd := press(m, "+")
	m = run(t, m, cmd)
	if len(m.statusView()) < 2 {
		t.Fatalf("the status should take two lines or more: %q", m.statusView())
	}
	if !strings.Contains(selectedLine(t, m), "views:home") {
		t.Fatalf("the selected key went off screen:\n%s", plain(m))
	}
}

// redisclient's sentences quote key names already escaped: the status line
// shows them as the table does, once, and still escapes what was not.
func TestWriteErrorsShowKeysAsTheTableDoes(t *testing.T) {
	key := `ratelimit:a\b` + "\xff"
	obs := str(key, "3", model.PTTLNoExpiry)
	w := newFakeWriter().seed(obs)
	w.err = errors.New("INCRBY " + model.Printable(key) + " 1 failed: WRONGTYPE \x1b[2J")
	m := newModel(t, w, 120, 20, obs)
	m, cmd := press(m, "+")
	m = run(t, m, cmd)
	if s, want := statusText(m), `INCRBY ratelimit:a\\b\xff 1 failed: WRONGTYPE \e[2J`; s != want {
		t.Errorf("status line %q, want %q", s, want)
	}

	m.feedState.LastError = "NOPERM on channel " + model.Printable("__keyspace@0__:"+key) + "\a"
	if got, want := strings.Join(m.wrapFeed(m.feedState.LastError, maxFeedLines), ""), `NOPERM on channel __keyspace@0__:ratelimit:a\\b\xff\x07`; got != want {
		t.Errorf("header %q, want %q", got, want)
	}
}

// The demo says what to try on the status line, until the first action
// answers there.
func TestHintUntilTheFirstAction(t *testing.T) {
	store := model.NewStore(testRules())
	store.Apply(model.Batch{Observed: fixture()})
	m := New(Options{Store: store, Writer: newFakeWriter().seed(fixture()...), Now: testNow, Hint: "Demo: press e on a red row."})
	m, _ = send(m, tea.WindowSizeMsg{Width: 120, Height: 30})
	if !strings.Contains(plain(m), "Demo: press e on a red row.") {
		t.Fatalf("the hint is not shown:\n%s", plain(m))
	}
	m = selectKey(t, m, "ratelimit:api:42")
	m, cmd := press(m, "+")
	m = run(t, m, cmd)
	if strings.Contains(plain(m), "Demo:") || !strings.HasPrefix(statusText(m), "INCRBY") {
		t.Errorf("the first action's answer should replace the hint: %q", statusText(m))
	}
}

// The answer to an action that went as asked leaves the status line after
// statusFade, so that it does not read as the answer to what comes next; a
// failure stays until the next action, and the hint until the first.
func TestStatusFadesUnlessItIsAFailure(t *testing.T) {
	c := &clock{testNow()}
	w := newFakeWriter().seed(fixture()...)
	m := newModel(t, w, 120, 40, fixture()...)
	m.now = c.now
	m = selectKey(t, m, "ratelimit:api:42")
	m, cmd := press(m, "+")
	m = run(t, m, cmd)
	answer := statusText(m)
	if !strings.HasPrefix(answer, "INCR") {
		t.Fatalf("status line after + is %q", answer)
	}
	c.t = c.t.Add(statusFade - time.Second)
	m, _ = send(m, tickMsg{gen: m.tickGen})
	if statusText(m) != answer {
		t.Fatalf("before %s the status line is %q, want %q", statusFade, statusText(m), answer)
	}
	c.t = c.t.Add(time.Second)
	m, _ = send(m, tickMsg{gen: m.tickGen})
	if s := statusText(m); s != "" {
		t.Errorf("after %s the status line still says %q", statusFade, s)
	}

	// The same words again are an answer anew: shown their whole time.
	m, _ = press(m, "i<esc>")
	cancelled := statusText(m)
	c.t = c.t.Add(statusFade - time.Second)
	m, _ = send(m, tickMsg{gen: m.tickGen})
	m, _ = press(m, "i<esc>")
	c.t = c.t.Add(2 * time.Second)
	m, _ = send(m, tickMsg{gen: m.tickGen})
	if statusText(m) != cancelled {
		t.Errorf("a second %q, 2 s old, was cleared: the status line says %q", cancelled, statusText(m))
	}

	m = selectKey(t, m, "session:abc") // a hash: + is refused
	m, _ = press(m, "+")
	refusal := statusText(m)
	if !strings.HasPrefix(refusal, "Nothing was sent") {
		t.Fatalf("status line after + on a hash is %q", refusal)
	}
	c.t = c.t.Add(time.Minute)
	m, _ = send(m, tickMsg{gen: m.tickGen})
	if statusText(m) != refusal {
		t.Errorf("a minute after a refusal the status line says %q, want it to stay %q", statusText(m), refusal)
	}

	store := model.NewStore(testRules())
	store.Apply(model.Batch{Observed: fixture()})
	h := New(Options{Store: store, Now: c.now, Hint: "Demo: press e on a red row."})
	h, _ = send(h, tea.WindowSizeMsg{Width: 120, Height: 40})
	c.t = c.t.Add(time.Minute)
	h, _ = send(h, tickMsg{gen: h.tickGen})
	if s := statusText(h); s != "Demo: press e on a red row." {
		t.Errorf("the hint became %q before any action", s)
	}
}

// A sentence about a stall goes when the stall ends: once every server
// answers again (the feed's health says so, four times a second), the
// feed's error that came while one was silent leaves the header at once,
// not at the feed's next read, an interval later; and a write that failed
// in the stall says, while it lasts, what the header says, then that Redis
// answers again, rather than staying red with advice for a wrong address.
// An error that came with no silence (a refusal) stays.
func TestAStallsSentencesGoWhenItEnds(t *testing.T) {
	silent := func(at time.Duration) batchesMsg {
		return batchesMsg{batches: []model.Batch{{Health: &model.Health{At: t0.Add(at), Silent: "127.0.0.1:7000", Since: t0}}}}
	}
	answering := func(at time.Duration) batchesMsg {
		return batchesMsg{batches: []model.Batch{{Health: &model.Health{At: t0.Add(at)}}}}
	}
	state := func(lastError string) batchesMsg {
		return batchesMsg{batches: []model.Batch{{State: &model.FeedState{
			Mode: model.WatchEvents, Phase: model.FeedWatching, Addr: "127.0.0.1:7000", Connected: true, LastError: lastError,
		}}}}
	}
	const stalled = "127.0.0.1:7000 stopped answering: it may be busy with a slow command or a save, or frozen — countertop keeps trying, and the values shown are as last read"

	w := newFakeWriter().seed(fixture()...)
	w.err = errors.New("127.0.0.1:7000 did not answer in time — check the host and port in --url, and that nothing in between drops the traffic")
	m := newModel(t, w, 120, 40, fixture()...)
	m = selectKey(t, m, "ratelimit:api:42")
	m, _ = send(m, state(""), silent(time.Second))
	m, cmd := press(m, "+")
	m = run(t, m, cmd)
	outage := "INCRBY ratelimit:api:42 1 failed: Redis does not answer, as the header says; press the key again once it is back."
	if statusText(m) != outage || m.status.kind != statusFailed {
		t.Errorf("a write that failed while the header says a server is silent: status %q", statusText(m))
	}
	m, _ = send(m, state(stalled), silent(2*time.Second))
	if !strings.Contains(flat(m), "stopped answering") {
		t.Fatalf("the header does not show the stall:\n%s", plain(m))
	}

	m, _ = send(m, answering(3*time.Second))
	if screen := flat(m); strings.Contains(screen, "stopped answering") || strings.Contains(screen, "has not answered") {
		t.Errorf("the stall's sentence stays once every server answers:\n%s", plain(m))
	}
	if s := statusText(m); s != outage+" Redis answers again now." || m.status.kind != statusInfo {
		t.Errorf("once the stall ended: status %q (kind %d)", s, m.status.kind)
	}
	m, _ = send(m, state(""), state(stalled), silent(4*time.Second))
	if !strings.Contains(flat(m), "stopped answering") {
		t.Errorf("a second stall's sentence is not shown:\n%s", plain(m))
	}

	const refused = "the Redis user may not read ratelimit:api:42 on 127.0.0.1:7000 (NOPERM)"
	m, _ = send(m, answering(5*time.Second), state(refused), answering(6*time.Second))
	if !strings.Contains(flat(m), "NOPERM") {
		t.Errorf("an error that came with no silence went with a health that names none:\n%s", plain(m))
	}
}

// Keys Redis evicted in the last minute are said under the status, or in
// its place: how many, that their limits were reset early, and, when the
// count is INFO's, that it is of every key on the server. It goes once
// the minute holds none.
func TestEvictionsAreSaid(t *testing.T) {
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		m := newModel(t, nil, size[0], size[1], fixture()...)
		lines := len(strings.Split(m.View().Content, "\n"))
		for _, tc := range []struct {
			h    model.Health
			want string
		}{
			{model.Health{At: t0, Evicted: 1}, "1 watched key evicted in the last minute (maxmemory): its limit was reset early, as if its window had ended"},
			{model.Health{At: t0, Evicted: 3}, "3 watched keys evicted in the last minute (maxmemory): their limits were reset early, as if their windows had ended"},
			{model.Health{At: t0, Evicted: 1200, EvictedAll: true}, "1200 keys evicted on the server in the last minute (maxmemory; without events, INFO counts every key there, watched or not): a rate-limit counter among them had its limit reset early"},
			{model.Health{At: t0}, ""},
		} {
			m, _ = send(m, batchesMsg{batches: []model.Batch{{Health: &tc.h}}})
			m.status = statusLine{} // the sentence in the status's place
			got := strings.Join(strings.Fields(statusText(m)), " ")
			if got != tc.want {
				t.Errorf("%v, %+v: status line %q, want %q", size, tc.h, got, tc.want)
			}
			m.status = info("Cancelled.") // and under a status
			if got := statusText(m); !strings.HasPrefix(got, "Cancelled.") || tc.want != "" && !strings.Contains(got, tc.want[:30]) {
				t.Errorf("%v, %+v: under a status, the status line says %q", size, tc.h, got)
			}
			if n := len(strings.Split(m.View().Content, "\n")); n != lines {
				t.Errorf("%v: the frame has %d lines, want %d", size, n, lines)
			}
		}
	}
}
