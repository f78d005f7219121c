package ui

import (
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
)

// The detail screen of a window key lists the other windows of its
// identity (a sliding window's previous key, a leak's past ones) with
// their values, statuses and TTLs, newest first, and no key of another
// identity however alike its name.
func TestDetailListsTheOtherWindowsOfItsIdentity(t *testing.T) {
	cur := t0.Unix() / 60
	win := func(base string, ago int64) string { return base + ":" + strconv.FormatInt(cur-ago, 10) }
	obs := []model.Observation{
		str(win("ratelimit:win:acme", 0), "7", 50_000),
		str(win("ratelimit:win:acme", 1), "30", 10_000),
		str(win("ratelimit:win:acme", 30), "12", model.PTTLNoExpiry),
		str(win("ratelimit:win:acme:sub", 0), "1", 50_000),
		str(win("ratelimit:win:acmex", 0), "2", 50_000),
	}
	m := newModel(t, newFakeWriter().seed(obs...), 120, 40, obs...)
	m = selectKey(t, m, win("ratelimit:win:acme", 0))
	m, _ = press(m, "<enter>")
	screen := flat(m)
	for _, want := range []string{
		"windows 2 other windows of this identity, newest first:",
		`"` + strconv.FormatInt(cur-1, 10) + `" 30 ok 8.5s`,
		`"` + strconv.FormatInt(cur-30, 10) + `" 12 leak no expiry`,
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("the detail does not say %q:\n%s", want, plain(m))
		}
	}
	if i, j := strings.Index(screen, strconv.FormatInt(cur-1, 10)), strings.Index(screen, strconv.FormatInt(cur-30, 10)); i < 0 || j < i {
		t.Errorf("the previous window is not listed before the older one:\n%s", plain(m))
	}
	for _, other := range []string{"acme:sub", "acmex"} {
		if strings.Contains(screen, other) {
			t.Errorf("a key of another identity (%s) is listed:\n%s", other, plain(m))
		}
	}

	// A key of the others is the one it is listed as, and lists the rest.
	m, _ = press(m, "<esc>")
	m = selectKey(t, m, win("ratelimit:win:acme", 30))
	m, _ = press(m, "<enter>")
	if !strings.Contains(flat(m), `"`+strconv.FormatInt(cur, 10)+`" 7 ok`) {
		t.Errorf("the leaked window's detail does not list the current one:\n%s", plain(m))
	}
}

// More windows than the screen lists are counted, and the way to see them
// all is said; a window that appears while the screen is open is listed
// once the look-up is due again, not on every frame.
func TestDetailBoundsTheOtherWindows(t *testing.T) {
	cur := t0.Unix() / 60
	var obs []model.Observation
	for ago := range int64(maxSiblings + 3) {
		obs = append(obs, str("ratelimit:win:acme:"+strconv.FormatInt(cur-ago, 10), "3", model.PTTLNoExpiry))
	}
	clock := testNow()
	store := model.NewStore(testRules())
	store.Apply(model.Batch{Observed: obs})
	m, _ := send(New(Options{Store: store, Now: func() time.Time { return clock }}), tea.WindowSizeMsg{Width: 120, Height: 60})
	m = selectKey(t, m, obs[0].Key)
	m, _ = press(m, "<enter>")
	want := `windows 5 other windows of this identity, newest first, and 2 more (filter on "ratelimit:win:acme" to see them all):`
	if !strings.Contains(flat(m), want) {
		t.Errorf("the detail does not say %q:\n%s", want, plain(m))
	}
	listed := strings.Count(flat(m), `" 3 `)
	if listed != maxSiblings {
		t.Errorf("%d windows listed, want %d", listed, maxSiblings)
	}

	m.store.Apply(model.Batch{Observed: []model.Observation{str("ratelimit:win:acme:"+strconv.FormatInt(cur+1, 10), "9", 60_000)}})
	m, _ = send(m, tickMsg{gen: m.tickGen})
	if strings.Contains(flat(m), `" 9 `) {
		t.Errorf("the list was looked up again before %v passed", siblingsEvery)
	}
	clock = clock.Add(siblingsEvery)
	m, _ = send(m, tickMsg{gen: m.tickGen})
	if !strings.Contains(flat(m), `"`+strconv.FormatInt(cur+1, 10)+`" 9 ok`) || !strings.Contains(flat(m), "and 3 more") {
		t.Errorf("the new window is not listed first after %v:\n%s", siblingsEvery, plain(m))
	}
}

// Among several servers a window key's detail lists the other windows of
// its identity on its own server only: the same names on another server
// (another region, or another shard) are not its client's windows here.
func TestDetailListsTheWindowsOfItsOwnServer(t *testing.T) {
	cur := t0.Unix() / 60
	win := func(ago int64) string { return "ratelimit:win:acme:" + strconv.FormatInt(cur-ago, 10) }
	var servers []Server
	for _, name := range []string{"eu", "us"} {
		servers = append(servers, Server{Name: name, Writer: newFakeWriter()})
	}
	m := newModelWith(t, Options{Servers: servers}, 140, 40)
	watching := &model.FeedState{Mode: model.WatchPoll, Phase: model.FeedWatching, Interval: time.Second, Connected: true, UpdatedAt: t0}
	m, _ = send(m, batchesMsg{batches: []model.Batch{
		{Server: "eu", State: watching, Observed: []model.Observation{str(win(0), "7", 50_000), str(win(1), "30", 10_000)}},
		{Server: "us", State: watching, Observed: []model.Observation{str(win(0), "4", 50_000), str(win(2), "12", 10_000)}},
	}})
	m = filterTo(t, m, "server:us")
	m = selectKey(t, m, model.RowOf("us", win(0), ""))
	m, _ = press(m, "<enter>")
	screen := flat(m)
	if want := `windows 1 other window of this identity, newest first: "` + strconv.FormatInt(cur-2, 10) + `" 12 ok`; !strings.Contains(screen, want) {
		t.Errorf("us's row does not list us's other window (%q):\n%s", want, plain(m))
	}
	if strings.Contains(screen, strconv.FormatInt(cur-1, 10)) {
		t.Errorf("us's row lists eu's window of the same identity:\n%s", plain(m))
	}
}
