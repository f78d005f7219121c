package ui

import (
	"strings"
	"testing"

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

// In events mode the header says what the periodic re-scan is, next to the
// rest of what it says about the feed, not a bare "re-scan every 30s".
func TestEventsModeSaysWhatTheReScanIs(t *testing.T) {
	for _, tc := range []struct{ note, want string }{
		{"re-scan every 30s", "events · full re-scan every 30s, in case an event was lost"},
		{"turned on keyspace events (notify-keyspace-events K$gxe); re-scan every 1m0s",
			"turned on keyspace events (notify-keyspace-events K$gxe); events · full re-scan every 1m0s, in case an event was lost"},
	} {
		m := newModel(t, nil, 120, 40, fixture()...)
		m, _ = send(m, batchesMsg{batches: []model.Batch{{State: &model.FeedState{
			Mode: "events", Addr: "127.0.0.1:7000", Connected: true, Note: tc.note, UpdatedAt: t0,
		}}}})
		lines := strings.Split(plain(m), "\n")
		if strings.TrimSpace(lines[2]) != tc.want {
			t.Errorf("the header's third line is %q, want %q", lines[2], tc.want)
		}
	}
}

// At 40 columns the key, which tells the rows apart, keeps a fair share of
// the row (a third); VALUE, TTL and STATUS stay.
func TestANarrowTableGivesTheKeyItsShare(t *testing.T) {
	long := str("ratelimit:"+strings.Repeat("x", 40), "12345678901234567", 50_000)
	m := newModel(t, nil, 40, 20, append(fixture(), long)...)
	m = selectKey(t, m, "ratelimit:api:42")
	line := selectedLine(t, m)
	for _, want := range []string{"▸ ratelimit:a…", " 17 ", " 41s ", " ok"} {
		if !strings.Contains(line, want) {
			t.Errorf("the row does not show %q: %q", want, line)
		}
	}
	if screen := plain(m); !strings.Contains(screen, "  ratelimit:x…") || !strings.Contains(screen, "∞") {
		t.Errorf("a long key and value, or views:home's ∞:\n%s", screen)
	}

	// Short names take no more than they need: the value stays whole.
	m = newModel(t, nil, 40, 20, str("rl:a", "123456789012", 50_000), str("rl:b", "7", 50_000))
	if line := selectedLine(t, m); !strings.Contains(line, "▸ rl:a ") || !strings.Contains(line, " 123456789012 ") {
		t.Errorf("the row does not show the key and its whole value: %q", line)
	}
}
