package ui

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/countertop/countertop/model"
)

// climbing is a counter read once every 7.5 s over the last minute,
// rising from 6% of its limit to 94%, its window's deadline fixed.
func climbing(key string) []model.Observation {
	var obs []model.Observation
	for k, v := range []int{6, 19, 31, 44, 56, 69, 81, 94} {
		at := t0.Add(time.Duration(k-7)*model.TrendStep + 1500*time.Millisecond - 2*time.Second)
		obs = append(obs, model.Observation{Key: key, Type: "string", Raw: strconv.Itoa(v), PTTL: int64(t0.Add(time.Minute).Sub(at) / time.Millisecond), At: at})
	}
	return obs
}

// rowOf is the screen line of key, without its styles.
func rowOf(t *testing.T, m *Model, key string) string {
	t.Helper()
	for _, line := range strings.Split(ansi.Strip(m.View().Content), "\n") {
		if strings.Contains(line, " "+key+" ") {
			return line
		}
	}
	t.Fatalf("no row for %s on the screen:\n%s", key, ansi.Strip(m.View().Content))
	return ""
}

// A key seen rising over the last minute draws a rising sparkline in
// TREND, as a share of its limit; a key that never changed draws none; a
// narrow screen drops TREND before RATE.
func TestTrendColumnShowsAKeyRising(t *testing.T) {
	obs := append(climbing("ratelimit:climb"), fixture()...)
	m := newModel(t, nil, 120, 30, obs...)
	title := rowOf(t, m, "KEY▾")
	col := strings.Index(title, "TREND")
	if col < 0 {
		t.Fatalf("no TREND column at 120 wide:\n%s", title)
	}
	cell := func(key string) string {
		r := []rune(rowOf(t, m, key))
		start := len([]rune(title[:col]))
		return string(r[start : start+model.TrendBuckets])
	}
	if got := cell("ratelimit:climb"); got != "▁▂▃▄▅▆▇█" {
		t.Errorf("TREND of a key rising from 6%% to 94%% of its limit = %q, want ▁▂▃▄▅▆▇█", got)
	}
	if got := cell("ratelimit:api:42"); strings.TrimSpace(got) != "" {
		t.Errorf("TREND of a key read once = %q, want blank", got)
	}
	droppedFirst := false
	for _, width := range []int{60, 70, 80, 90, 100} {
		m, _ = send(m, tea.WindowSizeMsg{Width: width, Height: 30})
		title := rowOf(t, m, "KEY▾")
		trend, rate := strings.Contains(title, "TREND"), strings.Contains(title, "RATE")
		if trend && !rate {
			t.Errorf("at %d wide RATE is gone and TREND stays: %s", width, title)
		}
		droppedFirst = droppedFirst || rate && !trend
	}
	if !droppedFirst {
		t.Error("no width shows RATE without TREND: TREND is not the one dropped first")
	}
}

// The detail screen of a key seen over the last minute draws its value
// with the limit as a dashed line, and its TTL; one read once says it is
// still collecting history.
func TestDetailChartsTheLastMinute(t *testing.T) {
	obs := append(climbing("ratelimit:climb"), fixture()...)
	for _, width := range []int{120, 80, 60, 40} {
		t.Run(fmt.Sprintf("%d columns", width), func(t *testing.T) {
			m := newModel(t, nil, width, 60, obs...)
			m = selectKey(t, m, "ratelimit:climb")
			m, _ = press(m, "<enter>")
			screen := plain(m)
			limitLine, valueLine, ttlAxis := false, false, false
			for _, line := range strings.Split(screen, "\n") {
				if i := strings.Index(line, "100 ┼┄┄┄"); i >= 0 || strings.Contains(line, "100 ┤┄┄┄") {
					limitLine = true
				}
				valueLine = valueLine || strings.ContainsAny(line, "╭╯")
				ttlAxis = ttlAxis || strings.Contains(line, "1m53s ┼") // the TTL a minute ago, its highest
			}
			if !limitLine || !valueLine {
				t.Errorf("at %d wide no chart of the value with its limit of 100 as a line (limit %v, value %v):\n%s", width, limitLine, valueLine, screen)
			}
			if !ttlAxis {
				t.Errorf("at %d wide no chart of the TTL from 1m53s:\n%s", width, screen)
			}
			if !strings.Contains(screen, "limit 100 ┄") {
				t.Errorf("at %d wide the chart does not say which line is the limit:\n%s", width, screen)
			}
			if w := maxLineWidth(screen); w > width {
				t.Errorf("at %d wide a line of the detail is %d wide", width, w)
			}
		})
	}
	m := newModel(t, nil, 120, 60, obs...)
	m = selectKey(t, m, "ratelimit:api:42")
	m, _ = press(m, "<enter>")
	if s := flat(m); !strings.Contains(s, "collecting history: 0 readings so far") {
		t.Errorf("a key read once does not say it is collecting history:\n%s", plain(m))
	}
}

// A bucket's chart is of the tokens it has left, and says so: near its
// line it is full, at 0 empty, the other way up from a counter.
func TestDetailChartsABucket(t *testing.T) {
	var obs []model.Observation
	for k, left := range []string{"90", "75", "60", "44", "31", "19", "8", "2"} {
		at := t0.Add(time.Duration(k-7)*model.TrendStep - 2*time.Second)
		obs = append(obs, model.Observation{Key: "ratelimit:bucket:drain", Type: "hash", Len: 2,
			Fields: []model.Field{{Name: "tokens", Value: left}, {Name: "refilledAt", Value: "1764620400000"}}, PTTL: 60_000, At: at})
	}
	m := newModel(t, nil, 120, 60, append(obs, fixture()...)...)
	m = selectKey(t, m, "ratelimit:bucket:drain")
	m, _ = press(m, "<enter>")
	if s := flat(m); !strings.Contains(s, "tokens left ─, of 100 ┄ (empty at 0)") || strings.Contains(s, "value ─, limit") {
		t.Errorf("a bucket's chart does not say it draws the tokens left:\n%s", plain(m))
	}
}

func maxLineWidth(s string) int {
	w := 0
	for _, l := range strings.Split(s, "\n") {
		w = max(w, ansi.StringWidth(l))
	}
	return w
}
