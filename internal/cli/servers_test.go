package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
)

// runIn runs countertop in-process with args, as a user would from the
// shell, and returns its exit code, stdout and stderr.
func runIn(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = Run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// serversConfig writes a config file of writeConfig's rules and a
// [[server]] table for each of servers, named as names, plus extra, and
// returns its path.
func serversConfig(t *testing.T, servers []*redistest.Server, names []string, extra string) string {
	t.Helper()
	text := writeConfig
	for i, s := range servers {
		text += fmt.Sprintf("\n[[server]]\nname = %q\nurl = %q\n", names[i], s.URL())
	}
	path := filepath.Join(t.TempDir(), "countertop.toml")
	if err := os.WriteFile(path, []byte(text+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serverRows returns the rows of a snapshot's JSON as "server key=raw".
func serverRows(t *testing.T, out string) []string {
	t.Helper()
	var doc struct {
		Counters []struct {
			Server string `json:"server"`
			Key    string `json:"key"`
			Raw    string `json:"raw"`
		} `json:"counters"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	var rows []string
	for _, c := range doc.Counters {
		rows = append(rows, c.Server+" "+c.Key+"="+c.Raw)
	}
	return rows
}

// Two servers are one table: a key on both is two rows, each naming its
// server, in the order the servers are given; the table has a SERVER
// column, and --url given twice reads the same as the servers' tables.
func TestSnapshotOfTwoServers(t *testing.T) {
	t.Parallel()
	eu, us := redistest.Start(t), redistest.Start(t)
	eu.Do(t, "SET", "ratelimit:api:1", "3", "EX", "60")
	eu.Do(t, "SET", "ratelimit:api:2", "5", "EX", "60")
	us.Do(t, "SET", "ratelimit:api:1", "7", "EX", "60")
	file := serversConfig(t, []*redistest.Server{eu, us}, []string{"eu", "us"}, "")

	code, out, errOut := runIn("snapshot", "--config", file, "--format", "json")
	wantRun(t, code, out, errOut, exitOK, "", "")
	if got, want := serverRows(t, out), []string{"eu ratelimit:api:1=3", "us ratelimit:api:1=7", "eu ratelimit:api:2=5"}; !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}

	code, out, errOut = runIn("snapshot", "--config", file, "--server", "us", "--server", "eu", "--pattern", "ratelimit:*")
	wantRun(t, code, out, errOut, exitOK, "", "")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 || strings.Fields(lines[0])[0] != "SERVER" ||
		!strings.HasPrefix(lines[1], "us      ratelimit:api:1") || !strings.HasPrefix(lines[2], "eu      ratelimit:api:1") || !strings.HasPrefix(lines[3], "eu      ratelimit:api:2") {
		t.Errorf("the table of us, then eu:\n%s", out)
	}

	code, out, errOut = runIn("snapshot", "--url", eu.URL(), "--url", us.URL(), "--format", "csv")
	wantRun(t, code, out, errOut, exitOK, "", "")
	if !strings.Contains(out, "ratelimit:api:1,string,counter,3,,3,") || !strings.HasSuffix(strings.Split(out, "\n")[1], ","+eu.Addr) ||
		!strings.Contains(out, ","+us.Addr+"\n") {
		t.Errorf("CSV of two --url:\n%s", out)
	}
}

// A server that is down is one server down: the others' counters come,
// with one sentence naming it, and the exit says the output is not whole.
func TestSnapshotWithAServerDown(t *testing.T) {
	t.Parallel()
	up, down := redistest.Start(t), redistest.Start(t)
	up.Do(t, "SET", "ratelimit:api:1", "3", "EX", "60")
	down.Stop()
	silent := redistest.Silent(t) // accepts, and never answers
	file := serversConfig(t, []*redistest.Server{up, down}, []string{"up", "down"},
		fmt.Sprintf("\n[[server]]\nname = \"silent\"\nurl = \"redis://%s/0?dial_timeout=500ms\"\n", silent))

	code, out, errOut := runIn("snapshot", "--config", file, "--format", "json")
	if code != exitFailed || !slices.Equal(serverRows(t, out), []string{"up ratelimit:api:1=3"}) {
		t.Errorf("exit %d, rows %q; want 2 and up's row", code, serverRows(t, out))
	}
	for _, want := range []string{"countertop: could not read down: ", "countertop: could not read silent: "} {
		if n := strings.Count(errOut, want); n != 1 {
			t.Errorf("stderr says %q %d times:\n%s", want, n, errOut)
		}
	}
	t.Logf("stderr:\n%s", errOut)

	// None to read is no output, and one sentence that says why.
	code, out, errOut = runIn("snapshot", "--config", file, "--server", "down", "--url", "127.0.0.1:1")
	if code != exitFailed || out != "" || !strings.HasPrefix(errOut, "countertop: none of the 2 servers could be read: down: ") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
}

// check reads every server; a key on two shards of one limiter is a
// problem, with each copy, where the same name on a server of another
// region is none; a server it cannot read makes it no pass.
func TestCheckOfShards(t *testing.T) {
	t.Parallel()
	a, b, region := redistest.Start(t), redistest.Start(t), redistest.Start(t)
	a.Do(t, "SET", "ratelimit:api:42", "7", "EX", "60")
	b.Do(t, "SET", "ratelimit:api:42", "5", "EX", "60")
	b.Do(t, "SET", "ratelimit:api:43", "1", "EX", "60")
	region.Do(t, "SET", "ratelimit:api:43", "9", "EX", "60")
	file := serversConfig(t, []*redistest.Server{a, b, region}, []string{"a", "b", "eu"}, "\n[[shards]]\nname = \"ring\"\nservers = [\"a\", \"b\"]\n")

	code, out, errOut := runIn("check", "--config", file, "--pattern", "ratelimit:*")
	wantRun(t, code, out, errOut, exitProblems, "", "")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "shared     ratelimit:api:42  ring: a (value 7, TTL ") || !strings.Contains(lines[0], "), b (value 5, TTL ") ||
		!strings.Contains(lines[0], "so a client gets up to 2 times its limit") ||
		lines[1] != "problems: 4 keys checked, no counter stuck or without expiry on 3 of 3 servers; 1 key on more than one shard, each copy counting the limit" {
		t.Errorf("check:\n%s", out)
	}

	code, out, errOut = runIn("check", "--config", file, "--pattern", "ratelimit:*", "--format", "json")
	wantRun(t, code, out, errOut, exitProblems, "", "")
	var doc struct {
		Verdict string `json:"verdict"`
		Shared  []struct {
			Key    string `json:"key"`
			Copies []struct {
				Server string `json:"server"`
			} `json:"copies"`
		} `json:"shared"`
		Unreached []struct{ Server string } `json:"unreached"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Verdict != "problems" || len(doc.Shared) != 1 || doc.Shared[0].Key != "ratelimit:api:42" || len(doc.Shared[0].Copies) != 2 || len(doc.Unreached) != 0 {
		t.Errorf("check's JSON: %+v\n%s", doc, out)
	}

	// The region alone with one shard: nothing shared, and a stuck key on
	// the region's named by its server.
	region.Do(t, "SET", "ratelimit:api:44", "500")
	b.Stop()
	code, out, errOut = runIn("check", "--config", file, "--pattern", "ratelimit:*", "--server", "eu", "--server", "b", "--server", "a")
	wantRun(t, code, out, errOut, exitProblems, "", "")
	if !strings.HasPrefix(out, "stuck      eu  ratelimit:api:44  counter    value 500 >= limit 100 and no TTL") || !strings.Contains(out, "\nunreached  b  could not be checked: ") ||
		!strings.HasSuffix(out, "problems: 1 of 3 keys checked (1 stuck) on 2 of 3 servers; and 1 server could not be checked\n") {
		t.Errorf("check with b down:\n%s", out)
	}
	region.Do(t, "DEL", "ratelimit:api:44")
	code, out, errOut = runIn("check", "--config", file, "--pattern", "ratelimit:*", "--format", "json")
	wantRun(t, code, out, errOut, exitFailed, `"verdict": "could-not-check"`, "")
	if !strings.Contains(out, `"server": "b",`) {
		t.Errorf("check's JSON names no server it could not read:\n%s", out)
	}
}

// repair reads every server and repairs each key on its own; --read-only
// refuses it on all of them.
func TestRepairOfTwoServers(t *testing.T) {
	t.Parallel()
	a, b := redistest.Start(t), redistest.Start(t)
	a.Do(t, "SET", "ratelimit:api:1", "500")
	b.Do(t, "SET", "ratelimit:api:1", "3")
	b.Do(t, "SET", "ratelimit:api:2", "4", "EX", "60")
	file := serversConfig(t, []*redistest.Server{a, b}, []string{"a", "b"}, "")

	code, out, errOut := runIn("repair", "--config", file, "--read-only")
	if code != exitProblems || out != "" || !strings.Contains(errOut, "--read-only refuses every write") {
		t.Errorf("--read-only: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runIn("repair", "--config", file, "--dry-run")
	wantRun(t, code, out, errOut, exitOK, "would repair ratelimit:api:1 on a: TTL 1m00s\nwould repair ratelimit:api:1 on b: TTL 1m00s\n", "")
	code, out, errOut = runIn("repair", "--config", file, "--yes")
	wantRun(t, code, out, errOut, exitOK, "repaired ratelimit:api:1 on a: TTL 1m00s\nrepaired ratelimit:api:1 on b: TTL 1m00s\n", "")
	for _, s := range []*redistest.Server{a, b} {
		if ttl := ttlSeconds(t, s, "ratelimit:api:1"); ttl < 50 || ttl > 60 {
			t.Errorf("%s: TTL %d after the repair, want about 60", s.Addr, ttl)
		}
	}
}

// The commands that act on one server say how to pick one when several
// are chosen; --server picks it. (The dashboard watches several: see the
// root package's TestDashboardOverThreeServersEndToEnd; serve too, see
// TestServeOverTwoServers.)
func TestOneServerCommands(t *testing.T) {
	t.Parallel()
	a, b := redistest.Start(t), redistest.Start(t)
	file := serversConfig(t, []*redistest.Server{a, b}, []string{"a", "b"}, "")
	for _, args := range [][]string{
		{"incr", "ratelimit:api:1"},
	} {
		code, out, errOut := runIn(append(args, "--config", file)...)
		if code != exitFailed || out != "" || !strings.Contains(errOut, `, and 2 are chosen (a and b): pick one with --server NAME, or give one --url`) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	code, out, errOut := runIn("incr", "ratelimit:api:1", "--config", file, "--server", "b")
	wantRun(t, code, out, errOut, exitOK, "ratelimit:api:1 = 1 (TTL 1m00s)", "")
	if got := b.Do(t, "GET", "ratelimit:api:1"); got != "1" {
		t.Errorf("b holds %v after incr --server b", got)
	}
	if got := a.Do(t, "EXISTS", "ratelimit:api:1"); got != int64(0) {
		t.Errorf("a holds the key too: %v", got)
	}
}

// syncBuffer is a bytes.Buffer that the servers' goroutines may write
// while a test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The servers connect side by side: one that accepts and never answers,
// named first, holds back no other, whose read runs while it is still
// connecting (ctrl+c then stops it there, not its timeout much later).
func TestServersConnectSideBySide(t *testing.T) {
	t.Parallel()
	up := redistest.Start(t)
	up.Do(t, "SET", "ratelimit:api:1", "3", "EX", "60")
	silent := "redis://" + redistest.Silent(t) + "/0?dial_timeout=30s"
	cfg, err := loadFor(t, "--url", silent, "--url", up.URL())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	var rows []string
	_, err = onServers(ctx, cfg, &stderr, func(c config.Config) config.Config { return c }, func(ctx context.Context, tg *target) error {
		err := readAll(ctx, tg.client, tg.cfg, tg.name, func(obs []model.Observation) {
			for _, o := range obs {
				rows = append(rows, o.Server+" "+o.Key)
			}
		})
		// The silent server is still connecting: it says so after half a
		// second, and is stopped once this read is done.
		for deadline := time.Now().Add(20 * time.Second); !strings.Contains(stderr.String(), ": connecting to "); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Errorf("the silent server never said it was connecting:\n%s", stderr.String())
				break
			}
		}
		cancel()
		return err
	})
	if !errors.Is(err, errConnectInterrupted) || !slices.Equal(rows, []string{up.Addr + " ratelimit:api:1"}) {
		t.Errorf("err %v, rows %q; want up's row read while the silent server was connecting, which ctrl+c then stopped", err, rows)
	}
	if want := "countertop: " + strings.TrimPrefix(strings.TrimSuffix(silent, "/0?dial_timeout=30s"), "redis://") + ": connecting to "; !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("stderr does not name the server it waits for:\n%s\nwant %q", stderr.String(), want)
	}
}

// loadFor loads the config of countertop's common flags args, as a
// command does, without the environment (nor so a config file of HOME's).
func loadFor(t *testing.T, args ...string) (config.Config, error) {
	t.Helper()
	fs := pflag.NewFlagSet("countertop", pflag.ContinueOnError)
	flags := config.Register(fs)
	line, err := config.Prepare(fs, args)
	if err != nil {
		return config.Config{}, err
	}
	if err := fs.Parse(line.Args); err != nil {
		return config.Config{}, err
	}
	return config.Load(flags, line.Typed, func(string) string { return "" })
}
