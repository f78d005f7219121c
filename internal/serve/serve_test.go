package serve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/model"
)

func testRules() *model.Rules {
	return &model.Rules{
		List:     []model.Rule{{Pattern: "rl:*", Limit: 10, Window: time.Minute, ExpectTTL: true}},
		Fallback: model.Rule{Limit: 100, Window: time.Minute, ExpectTTL: true},
	}
}

func obs(key, raw string, pttl int64, at time.Time) model.Observation {
	return model.Observation{Key: key, Type: "string", Raw: raw, PTTL: pttl, At: at}
}

func live(at time.Time) *model.FeedState {
	return &model.FeedState{Mode: model.WatchPoll, Phase: model.FeedWatching, Addr: "127.0.0.1:1/0", Connected: true, UpdatedAt: at}
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	body, _ := io.ReadAll(rec.Body)
	return rec.Code, string(body)
}

func has(t *testing.T, text string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(text, l+"\n") {
			t.Errorf("no line %q in:\n%s", l, text)
		}
	}
}

// A stuck key shows in the counts per rule, layout and status, its fill,
// when it was first seen stuck (kept while it stays stuck), and as a key
// series of its own with --metrics-keys, its name escaped.
func TestMetricsOfAStuckKey(t *testing.T) {
	w := NewWatcher(testRules(), Options{Budget: 500, Version: "v1", Commit: "abc", MetricsKeys: 1})
	t0 := time.Unix(1_700_000_000, 0)
	w.Apply(model.Batch{State: live(t0), Observed: []model.Observation{
		obs("rl:a", "12", model.PTTLNoExpiry, t0),
		obs("rl:b", "3", 30_000, t0),
		obs("other:\xff\n", "5", model.PTTLNoExpiry, t0),
	}}, t0)
	t1 := t0.Add(10 * time.Second)
	w.Apply(model.Batch{Observed: []model.Observation{obs("rl:a", "13", model.PTTLNoExpiry, t1)}}, t1)

	code, text := get(t, w.Handler(), "/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, text)
	}
	has(t, text,
		`countertop_keys{layout="counter",rule="rl:*",status="stuck"} 1`,
		`countertop_keys{layout="counter",rule="rl:*",status="ok"} 1`,
		`countertop_keys{layout="counter",rule="",status="no-expiry"} 1`,
		`countertop_fill_ratio_max{rule="rl:*"} 1.3`,
		`countertop_problem_first_seen_timestamp_seconds{rule="rl:*",status="stuck"} 1.7e+09`,
		`countertop_problem_key{key="rl:a",rule="rl:*",status="stuck"} 1`,
		`countertop_command_budget 500`,
		`countertop_watch_mode{mode="poll"} 1`,
		`countertop_live 1`,
		`countertop_build_info{commit="abc",version="v1"} 1`,
	)
	if strings.Contains(text, `key="other`) {
		t.Errorf("--metrics-keys 1 gave more than one key:\n%s", text)
	}

	// Repaired: the key is no longer a problem, and neither series remains.
	t2 := t1.Add(time.Second)
	w.Apply(model.Batch{Observed: []model.Observation{obs("rl:a", "13", 60_000, t2)}}, t2)
	_, text = get(t, w.Handler(), "/metrics")
	if strings.Contains(text, `status="stuck"`) {
		t.Errorf("a repaired key still counts as stuck:\n%s", text)
	}
}

// Any bytes in a key name make a valid label: the key series of a name that
// is not UTF-8 holds its \xNN escape.
func TestProblemKeyEscaped(t *testing.T) {
	w := NewWatcher(testRules(), Options{MetricsKeys: 5})
	t0 := time.Unix(1_700_000_000, 0)
	w.Apply(model.Batch{State: live(t0), Observed: []model.Observation{obs("x:\xff\"", "500", model.PTTLNoExpiry, t0)}}, t0)
	code, text := get(t, w.Handler(), "/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, text)
	}
	has(t, text, `countertop_problem_key{key="x:\\xff\"",rule="",status="stuck"} 1`)
}

// /healthz is 200 while the feed is live, 503 with the feed's sentence when
// it lost Redis, and each loss counts once in countertop_errors_total.
func TestHealthz(t *testing.T) {
	w := NewWatcher(testRules(), Options{})
	h := w.Handler()
	if code, body := get(t, h, "/healthz"); code != 503 {
		t.Errorf("before any state: %d %q, want 503", code, body)
	}
	t0 := time.Now()
	w.Apply(model.Batch{State: &model.FeedState{Phase: model.FeedConnecting}}, t0)
	w.Apply(model.Batch{State: live(t0)}, t0)
	if code, body := get(t, h, "/healthz"); code != 200 || !strings.HasPrefix(body, "live") {
		t.Errorf("live: %d %q, want 200", code, body)
	}
	down := &model.FeedState{Phase: model.FeedReconnecting, LastError: "Redis at 127.0.0.1:1 refused the connection; countertop keeps trying"}
	w.Apply(model.Batch{State: down}, t0)
	w.Apply(model.Batch{State: down}, t0)
	code, body := get(t, h, "/healthz")
	if code != 503 || body != "Redis at 127.0.0.1:1 refused the connection\n" {
		t.Errorf("down: %d %q, want 503 and the feed's sentence", code, body)
	}
	_, text := get(t, h, "/metrics")
	has(t, text, `countertop_errors_total{kind="disconnected"} 1`, `countertop_live 0`)
	w.Apply(model.Batch{State: live(t0), Health: &model.Health{Behind: time.Minute}}, t0)
	if code, body := get(t, h, "/healthz"); code != 503 || !strings.Contains(body, "behind") {
		t.Errorf("behind: %d %q, want 503 saying it is behind", code, body)
	}
}

// /problems is the problem keys as snapshot JSON writes them.
func TestProblems(t *testing.T) {
	w := NewWatcher(testRules(), Options{})
	t0 := time.Now()
	w.Apply(model.Batch{State: live(t0), Observed: []model.Observation{
		obs("rl:a", "12", model.PTTLNoExpiry, t0), obs("rl:b", "1", 5000, t0)}}, t0)
	code, body := get(t, w.Handler(), "/problems")
	if code != 200 || !strings.Contains(body, `"key": "rl:a"`) || !strings.Contains(body, `"status": "stuck"`) || strings.Contains(body, "rl:b") {
		t.Errorf("/problems: %d\n%s", code, body)
	}
}

// Over two servers: /healthz is 200 while both are live and 503 naming
// the one that is not, the per-server metrics carry its name, and
// /problems names each row's server, the live one's rows still there.
func TestServeOverTwoServers(t *testing.T) {
	w := NewWatcher(testRules(), Options{MetricsKeys: 5, Servers: []Server{{Name: "eu", Budget: 500}, {Name: "us", Budget: 200}}})
	h := w.Handler()
	t0 := time.Unix(1_700_000_000, 0)
	w.Apply(model.Batch{Server: "eu", State: live(t0), Observed: []model.Observation{obs("rl:a", "12", model.PTTLNoExpiry, t0)}}, t0)
	w.Apply(model.Batch{Server: "us", State: live(t0), Observed: []model.Observation{obs("rl:a", "3", model.PTTLNoExpiry, t0)}}, t0)
	if code, body := get(t, h, "/healthz"); code != 200 || body != "live: watching 2 keys on 2 servers\n" {
		t.Errorf("both live: %d %q", code, body)
	}
	down := &model.FeedState{Phase: model.FeedReconnecting, LastError: "Redis at 10.0.0.2:6379 refused the connection; countertop keeps trying"}
	w.Apply(model.Batch{Server: "us", State: down}, t0)
	if code, body := get(t, h, "/healthz"); code != 503 || body != "1 of 2 servers not live: us: Redis at 10.0.0.2:6379 refused the connection\n" {
		t.Errorf("us down: %d %q, want 503 naming us", code, body)
	}
	_, text := get(t, h, "/metrics")
	has(t, text,
		`countertop_command_budget{server="eu"} 500`,
		`countertop_command_budget{server="us"} 200`,
		`countertop_watch_mode{mode="poll",server="eu"} 1`,
		`countertop_errors_total{kind="disconnected",server="us"} 1`,
		`countertop_errors_total{kind="disconnected",server="eu"} 0`,
		`countertop_problem_key{key="rl:a",rule="rl:*",server="eu",status="stuck"} 1`,
		`countertop_problem_key{key="rl:a",rule="rl:*",server="us",status="no-expiry"} 1`,
		`countertop_live 0`,
	)
	_, body := get(t, h, "/problems")
	for _, want := range []string{`"server": "eu"`, `"server": "us"`} {
		if !strings.Contains(body, want) {
			t.Errorf("/problems does not name %s:\n%s", want, body)
		}
	}
}

// countertop_shared_keys counts, a shard group at a time, the keys that
// two or more of its servers hold, as rows come and go: 0 before any, a
// key read on two shards counted once, back to 0 when one copy goes; the
// same name on a server of no group (another region) is never counted,
// and a group of which one server alone is watched has no series.
func TestServeCountsKeysOnTwoShards(t *testing.T) {
	w := NewWatcher(testRules(), Options{
		Servers: []Server{{Name: "a"}, {Name: "b"}, {Name: "eu"}, {Name: "us"}, {Name: "x"}},
		Shards: []model.ShardGroup{
			{Name: "ring", Servers: []string{"a", "b"}},
			{Name: "half", Servers: []string{"x", "y"}}, // y is not watched
		},
	})
	h := w.Handler()
	t0 := time.Unix(1_700_000_000, 0)
	scrape := func() string { _, text := get(t, h, "/metrics"); return text }
	has(t, scrape(), `countertop_shared_keys{group="ring"} 0`)
	w.Apply(model.Batch{Server: "a", State: live(t0), Observed: []model.Observation{obs("rl:1", "3", 60_000, t0), obs("rl:2", "1", 60_000, t0)}}, t0)
	w.Apply(model.Batch{Server: "b", State: live(t0), Observed: []model.Observation{obs("rl:1", "4", 60_000, t0)}}, t0)
	w.Apply(model.Batch{Server: "eu", State: live(t0), Observed: []model.Observation{obs("rl:2", "5", 60_000, t0)}}, t0)
	w.Apply(model.Batch{Server: "us", State: live(t0), Observed: []model.Observation{obs("rl:2", "6", 60_000, t0)}}, t0)
	w.Apply(model.Batch{Server: "x", State: live(t0), Observed: []model.Observation{obs("rl:1", "7", 60_000, t0)}}, t0)
	text := scrape()
	has(t, text, `countertop_shared_keys{group="ring"} 1`)
	if strings.Contains(text, `group="half"`) {
		t.Errorf("a group with one server watched has a series:\n%s", text)
	}
	w.Apply(model.Batch{Server: "b", Removed: []string{"rl:1"}}, t0)
	has(t, scrape(), `countertop_shared_keys{group="ring"} 0`)
}
