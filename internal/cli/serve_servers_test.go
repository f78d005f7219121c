package cli

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/internal/redistest"
)

// serve over two real servers: /healthz is 200 while both answer; with
// one stopped it is 503 naming that one, and the other's stuck key is
// still in /problems with its server, and in the metrics with its label.
func TestServeOverTwoServers(t *testing.T) {
	t.Parallel()
	a, b := redistest.Start(t), redistest.Start(t)
	a.Do(t, "SET", "ratelimit:api:1", "150") // no TTL, over its limit of 100: stuck
	b.Do(t, "SET", "ratelimit:api:2", "3", "EX", "60")
	file := serversConfig(t, []*redistest.Server{a, b}, []string{"a", "b"}, "")
	cfg, err := loadFor(t, "--config", file, "--mode", "poll", "--interval", "200ms", "--pattern", "ratelimit:*")
	if err != nil {
		t.Fatal(err)
	}
	base, stderr, stop := startServe(t, cfg, 5)
	if !strings.Contains(stderr.String(), "watching 2 servers: a and b") {
		t.Errorf("serve does not name its servers: %q", stderr.String())
	}
	var code int
	var body string
	waitFor(t, "/healthz 200 over both", func() bool {
		code, body = httpGet(t, base+"/healthz")
		return code == 200 && strings.Contains(body, "on 2 servers")
	}, func() string { return body })

	b.Stop()
	waitFor(t, "/healthz 503 naming b", func() bool {
		code, body = httpGet(t, base+"/healthz")
		return code == 503 && strings.Contains(body, "b: ") && !strings.Contains(body, "a: ")
	}, func() string { return body })
	_, problems := httpGet(t, base+"/problems")
	if !strings.Contains(problems, `"key": "ratelimit:api:1"`) || !strings.Contains(problems, `"server": "a"`) {
		t.Errorf("/problems lost a's stuck key with b down:\n%s", problems)
	}
	_, metrics := httpGet(t, base+"/metrics")
	for _, want := range []string{
		`countertop_problem_key{key="ratelimit:api:1",rule="ratelimit:*",server="a",status="stuck"} 1`,
		`countertop_watch_mode{mode="poll",server="a"} 1`,
		`countertop_live 0`,
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("no line %q in /metrics:\n%s", want, metrics)
		}
	}
	stop()
}

// startServe runs serve on cfg on a free port of loopback, with
// --metrics-keys metricsKeys, and returns its base URL once it says where
// it listens, its stderr, and stop, which presses ctrl+c and fails the
// test unless serve ends cleanly within 10s.
func startServe(t *testing.T, cfg config.Config, metricsKeys int) (base string, stderr *syncBuffer, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stderr = &syncBuffer{}
	exited := make(chan error, 1)
	go func() {
		_, err := runServe(ctx, cfg, "127.0.0.1:0", metricsKeys, stderr)
		exited <- err
	}()
	waitFor(t, "serve to say where it listens", func() bool {
		m := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)`).FindStringSubmatch(stderr.String())
		if m != nil {
			base = "http://" + m[1]
		}
		return m != nil
	}, stderr.String)
	return base, stderr, func() {
		t.Helper()
		cancel()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("serve stopped with %v, want nil on ctrl+c", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("serve did not stop within 10s of ctrl+c")
		}
	}
}

// serve over four real servers, two of them declared shards of one ring:
// a key on both shards is counted in countertop_shared_keys, as check
// flags it; the same names on the two servers of no group (regions), or on
// a shard and a region, are not.
func TestServeCountsKeysOnTwoShards(t *testing.T) {
	t.Parallel()
	a, b, eu, us := redistest.Start(t), redistest.Start(t), redistest.Start(t), redistest.Start(t)
	a.Do(t, "SET", "ratelimit:api:1", "3", "EX", "60") // on both shards: counted twice against its limit
	b.Do(t, "SET", "ratelimit:api:1", "4", "EX", "60")
	eu.Do(t, "SET", "ratelimit:api:2", "5", "EX", "60") // on both regions: each its own limit
	us.Do(t, "SET", "ratelimit:api:2", "6", "EX", "60")
	a.Do(t, "SET", "ratelimit:api:3", "1", "EX", "60") // on a shard and a region
	eu.Do(t, "SET", "ratelimit:api:3", "2", "EX", "60")
	file := serversConfig(t, []*redistest.Server{a, b, eu, us}, []string{"a", "b", "eu", "us"}, "\n[[shards]]\nname = \"ring\"\nservers = [\"a\", \"b\"]\n")
	cfg, err := loadFor(t, "--config", file, "--mode", "poll", "--interval", "200ms", "--pattern", "ratelimit:*")
	if err != nil {
		t.Fatal(err)
	}
	base, _, stop := startServe(t, cfg, 0)
	var body string
	waitFor(t, "every server's keys read", func() bool {
		code, b := httpGet(t, base+"/healthz")
		body = b
		return code == 200 && strings.Contains(body, "watching 6 keys on 4 servers")
	}, func() string { return body })
	_, metrics := httpGet(t, base+"/metrics")
	var shared []string
	for _, l := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(l, "countertop_shared_keys") {
			shared = append(shared, l)
		}
	}
	if want := []string{`countertop_shared_keys{group="ring"} 1`}; !slices.Equal(shared, want) {
		t.Errorf("countertop_shared_keys series = %q, want %q:\n%s", shared, want, metrics)
	}
	stop()
}

// waitFor polls ok until it holds, failing with what says after 20s.
func waitFor(t *testing.T, what string, ok func() bool, says func() string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %s: %s", what, says())
		}
	}
}

// httpGet is the status and body of a GET of url; 0 when it fails.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
