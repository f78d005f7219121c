package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
)

func TestRepair(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:api:legacy", "150") // stuck: over the limit, no TTL
	s.Do(t, "SET", "ratelimit:api:7", "3")        // no-expiry
	s.Do(t, "SET", "ratelimit:api:ok", "3", "EX", "100")
	s.Do(t, "SET", "views:home", "5000") // meant to live forever

	code, out, errOut := cli(t, s, "repair", "--dry-run")
	wantRun(t, code, out, errOut, exitOK, "would repair ratelimit:api:7: TTL 1m00s\nwould repair ratelimit:api:legacy: TTL 1m00s\n"+
		"dry run: 2 to repair, 0 skipped; nothing was changed\n", "")
	for _, k := range []string{"ratelimit:api:legacy", "ratelimit:api:7"} {
		if ttlSeconds(t, s, k) != -1 {
			t.Errorf("--dry-run gave %s a TTL", k)
		}
	}

	code, out, errOut = cli(t, s, "repair", "--yes")
	wantRun(t, code, out, errOut, exitOK, "repaired ratelimit:api:7: TTL 1m00s\nrepaired ratelimit:api:legacy: TTL 1m00s\n"+
		"repaired 2 of 2; 0 failed\n", "")
	for key, want := range map[string]int64{"ratelimit:api:legacy": 60, "ratelimit:api:7": 60, "ratelimit:api:ok": 100, "views:home": -1} {
		t.Run(key, func(t *testing.T) {
			if got := ttlSeconds(t, s, key); got > want || got < want-10 {
				t.Errorf("%s: TTL %ds, want %ds", key, got, want)
			}
		})
	}

	code, out, errOut = cli(t, s, "repair", "--yes")
	wantRun(t, code, out, errOut, exitOK, "nothing to repair: 4 keys checked, no counter stuck or without expiry\n", "")
}

// TestRepairSkips leaves counters whose window nobody knows, and exits 1:
// not everything was repaired.
func TestRepairSkips(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "legacy:1", "50")
	code, out, errOut := cli(t, s, "repair", "--dry-run") // says what the repair would do, exit code included
	wantRun(t, code, out, errOut, exitProblems,
		"skipped legacy:1: no window known; give its [[rule]] a window, or pass --window\ndry run: 0 to repair, 1 skipped; nothing was changed\n", "")
	code, out, errOut = cli(t, s, "repair", "--yes")
	wantRun(t, code, out, errOut, exitProblems,
		"skipped legacy:1: no window known; give its [[rule]] a window, or pass --window\nrepaired 0 of 1; 1 skipped (no window known), 0 failed\n", "")
	code, out, errOut = cli(t, s, "repair", "--yes", "--window", "30s")
	wantRun(t, code, out, errOut, exitOK, "repaired legacy:1: TTL 30s\n", "")
}

// setStdin makes r the stdin of the commands the test runs. Tests that
// call it must not be parallel.
func setStdin(t *testing.T, r io.Reader) {
	old := stdin
	stdin = r
	t.Cleanup(func() { stdin = old })
}

func TestRepairRefuses(t *testing.T) {
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:api:7", "3")

	setStdin(t, strings.NewReader("y\n")) // a yes, but not from a person at a terminal
	code, out, errOut := cli(t, s, "repair")
	wantRun(t, code, out, errOut, exitFailed, "would repair ratelimit:api:7: TTL 1m00s\n",
		"countertop: refusing to write without --yes: stdin is not a terminal; use --dry-run to preview\n")
	code, out, errOut = cli(t, s, "repair", "--yes", "--read-only")
	wantRun(t, code, out, errOut, exitProblems, "", "countertop: --read-only refuses every write, and repair sends PEXPIRE: preview it with --dry-run, or drop --read-only\n")
	if ttlSeconds(t, s, "ratelimit:api:7") != -1 {
		t.Error("a refused repair changed the key")
	}
}

// TestRepairLeavesKeysChangedSinceTheRead is the race of a repair: the
// counters are read stuck, and before the repair arrives another client
// turns a third of them into hashes and deletes another third. The hashes
// keep living without a TTL, as that client made them, nothing deleted
// comes back, and the summary accounts for every key.
func TestRepairLeavesKeysChangedSinceTheRead(t *testing.T) {
	s := redistest.Start(t)
	const n = 300
	key := func(i int) string { return fmt.Sprintf("ratelimit:race:%03d", i) }
	mset := []any{"MSET"}
	for i := range n {
		mset = append(mset, key(i), "150")
	}
	s.Do(t, mset...)
	beforeWrites = func() {
		for i := range n {
			switch i % 3 {
			case 1:
				s.Do(t, "DEL", key(i))
				s.Do(t, "HSET", key(i), "f", "1")
			case 2:
				s.Do(t, "DEL", key(i))
			}
		}
	}
	t.Cleanup(func() { beforeWrites = nil })

	code, out, errOut := cli(t, s, "repair", "--yes")
	wantRun(t, code, out, errOut, exitOK, "\nrepaired 100 of 300; 100 had changed since they were read, 100 no longer existed, 0 failed\n", "")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != n+1 {
		t.Errorf("%d lines; want one per key and the summary:\n%s", len(lines), out)
	}
	for i := range n {
		k := key(i)
		var want string
		switch i % 3 {
		case 0:
			want = "repaired " + k + ": TTL 1m00s"
			if ttl := ttlSeconds(t, s, k); ttl > 60 || ttl < 50 {
				t.Errorf("%s, a stuck counter still, has TTL %ds; want 60s", k, ttl)
			}
		case 1:
			want = "left " + k + " alone: it holds a hash now, not a counter"
			if ttl := ttlSeconds(t, s, k); ttl != -1 || s.Do(t, "TYPE", k) != "hash" {
				t.Errorf("%s, a hash now, has TTL %ds; want it left as the other client made it", k, ttl)
			}
		case 2:
			want = "left " + k + " alone: it no longer exists"
			if s.Do(t, "EXISTS", k) != int64(0) {
				t.Errorf("%s, deleted, exists again", k)
			}
		}
		if !slices.Contains(lines, want) {
			t.Errorf("no line %q", want)
		}
	}
}

// TestCheckShowsWhatRepairSends: the fix check prints is the command
// repair then runs in Redis, word for word.
func TestCheckShowsWhatRepairSends(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:api:legacy", "150")
	_, out, _ := cli(t, s, "check")
	_, shown, ok := strings.Cut(out, "fix: countertop repair, which sends ")
	shown, _, _ = strings.Cut(shown, "\n")
	if !ok {
		t.Fatalf("check shows no repair:\n%s", out)
	}
	m := s.Monitor(t)
	code, out, errOut := cli(t, s, "repair", "--yes")
	wantRun(t, code, out, errOut, exitOK, "repaired ratelimit:api:legacy: TTL 1m00s\n", "")
	sent, _ := m.Next(t, "PEXPIRE")
	if want := strings.Join(sent, " ") + " (if still a counter without a TTL)"; shown != want {
		t.Errorf("check shows %q; repair sent %q", shown, sent)
	}
}

// TestRepairOnAReplica: a repair sent to a read-only replica stops at the
// first key Redis refuses, in one line that says why and how many keys it
// did not touch, instead of one READONLY line a key.
func TestRepairOnAReplica(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t, "--repl-diskless-sync-delay", "0") // the replica syncs at once, not 5s later
	const n = 300
	for i := range n {
		master.Do(t, "SET", fmt.Sprintf("ratelimit:r:%03d", i), "150")
	}
	replica := redistest.Start(t, "--replicaof", "127.0.0.1", fmt.Sprint(master.Port))
	for deadline := time.Now().Add(10 * time.Second); replica.Do(t, "DBSIZE").(int64) != n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the replica holds %v keys of the master's %d", replica.Do(t, "DBSIZE"), n)
		}
	}
	before := replica.CommandCalls(t)
	code, out, errOut := cli(t, replica, "repair", "--yes")
	wantRun(t, code, out, errOut, exitProblems, fmt.Sprintf("repaired 0 of %d; 1 failed, %d not touched\n", n, n-1),
		fmt.Sprintf("countertop: could not repair ratelimit:r:000: PEXPIRE ratelimit:r:000 60000 NX (if still a counter without a TTL) failed: %s is a read-only replica — connect to its master to change keys; stopped there, as every key would be refused alike: %d more keys not touched\n",
			replica.Addr, n-1))
	after := replica.CommandCalls(t)
	if sent := after["evalsha"] + after["eval"] - before["evalsha"] - before["eval"]; sent > 2 {
		t.Errorf("the replica was sent %d repair scripts; want the first key's only (EVALSHA, then EVAL when the script was not loaded)", sent)
	}
}
