package ui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// raceKeys are stuck counters as the dashboard read them; changeRaceKeys
// is what another client does to them before the repair arrives.
var raceKeys = []string{"ratelimit:r:0", "ratelimit:r:1", "ratelimit:r:2", "ratelimit:r:3", "ratelimit:r:4", "ratelimit:r:5"}

// startRace starts a server holding raceKeys as stuck counters and a
// dashboard that has read them, writing through a real Writer.
func startRace(t *testing.T) (*redistest.Server, *Model) {
	t.Helper()
	s := redistest.Start(t)
	c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var obs []model.Observation
	for _, k := range raceKeys {
		s.Do(t, "SET", k, "150")
		obs = append(obs, str(k, "150", model.PTTLNoExpiry))
	}
	return s, newModel(t, c, 120, 40, obs...)
}

// changeRaceKeys turns r:1 into a hash and r:4 into text, deletes r:2 and
// gives r:3 a TTL; r:0 and r:5 stay stuck counters.
func changeRaceKeys(t *testing.T, s *redistest.Server) {
	t.Helper()
	s.Do(t, "DEL", "ratelimit:r:1")
	s.Do(t, "HSET", "ratelimit:r:1", "f", "1")
	s.Do(t, "DEL", "ratelimit:r:2")
	s.Do(t, "EXPIRE", "ratelimit:r:3", "500")
	s.Do(t, "SET", "ratelimit:r:4", "blocked")
}

// checkRaceKeys checks that only the keys still stuck got the window, and
// that the others are as the other client left them.
func checkRaceKeys(t *testing.T, s *redistest.Server, m *Model) {
	t.Helper()
	for _, k := range []string{"ratelimit:r:0", "ratelimit:r:5"} {
		// Bounds, not a value: a slow, parallel run takes seconds off the TTL.
		if ttl := s.Do(t, "TTL", k).(int64); ttl > 60 || ttl <= 0 {
			t.Errorf("%s, still stuck, has TTL %ds; want the repair's 60s", k, ttl)
		}
	}
	for _, k := range []string{"ratelimit:r:1", "ratelimit:r:4"} {
		if ttl := s.Do(t, "TTL", k).(int64); ttl != -1 {
			t.Errorf("%s, no longer a counter, got a TTL of %ds", k, ttl)
		}
	}
	if ttl := s.Do(t, "TTL", "ratelimit:r:3").(int64); ttl > 500 || ttl <= 60 {
		t.Errorf("ratelimit:r:3 has TTL %ds; want the 500s another client gave it", ttl)
	}
	if s.Do(t, "EXISTS", "ratelimit:r:2") != int64(0) {
		t.Error("ratelimit:r:2, deleted, exists again")
	}
	if c, _ := m.store.Get("ratelimit:r:1"); c.Type != "hash" {
		t.Errorf("the row of ratelimit:r:1 shows a %q, not the hash the repair found", c.Type)
	}
	if _, ok := m.store.Get("ratelimit:r:2"); ok {
		t.Error("the row of ratelimit:r:2, found gone, is still shown")
	}
}

// E after another client changed some of the counters it read: only those
// still stuck are repaired, and the summary accounts for every key.
func TestRepairAllLeavesKeysChangedSinceTheRead(t *testing.T) {
	t.Parallel()
	s, m := startRace(t)
	m, _ = press(m, "E")
	if m.confirm == nil {
		t.Fatalf("E did not ask: %q", statusText(m))
	}
	changeRaceKeys(t, s) // while the question is on screen
	m, cmd := press(m, "y")
	m = run(t, m, cmd)
	want := "repaired 2 of 6; 2 had changed since they were read, 1 no longer existed, 1 had a TTL already, 0 failed"
	if s := statusText(m); s != want || m.status.kind == statusFailed {
		t.Errorf("status %q (kind %v), want %q", s, m.status.kind, want)
	}
	checkRaceKeys(t, s, m)
}

// e on each of the keys, after another client changed them: each status
// line says what the repair found.
func TestExpireLeavesAKeyChangedSinceTheRead(t *testing.T) {
	t.Parallel()
	s, m := startRace(t)
	changeRaceKeys(t, s)
	const sent = " 60000 NX (if still a counter without a TTL) -> "
	var cmd tea.Cmd
	for key, want := range map[string]string{
		"ratelimit:r:0": "set, TTL 1m00s",
		"ratelimit:r:1": "left alone: it holds a hash now, not a counter",
		"ratelimit:r:2": "left alone: the key no longer exists",
		"ratelimit:r:3": "left alone: it has a TTL already (", // and what is left of 8m20s
		"ratelimit:r:4": "left alone: it holds text now, not a counter",
		"ratelimit:r:5": "set, TTL 1m00s",
	} {
		t.Run(key, func(t *testing.T) {
			m = selectKey(t, m, key)
			m, cmd = press(m, "e")
			m = run(t, m, cmd)
			got := statusText(m)
			if strings.HasSuffix(want, "(") && strings.HasPrefix(got, "PEXPIRE "+key+sent+want) && strings.HasSuffix(got, "s)") {
				return
			}
			if got != "PEXPIRE "+key+sent+want {
				t.Errorf("e on %s: status %q, want %q", key, got, "PEXPIRE "+key+sent+want)
			}
		})
	}
	checkRaceKeys(t, s, m)
}

// What e and E say they send is what the server runs: the status line's
// command and the dialog's, KEY standing for each key.
func TestRepairShowsWhatItSends(t *testing.T) {
	t.Parallel()
	s, m := startRace(t)
	mon := s.Monitor(t)

	m = selectKey(t, m, "ratelimit:r:0")
	m, cmd := press(m, "e")
	shown := strings.TrimSuffix(statusText(m), " …")
	m = run(t, m, cmd)
	args, _ := mon.Next(t, "PEXPIRE")
	if want := strings.Join(args, " ") + " (if still a counter without a TTL)"; shown != want {
		t.Errorf("e showed %q; the server ran %q", shown, args)
	}

	m, _ = press(m, "E")
	if m.confirm == nil {
		t.Fatalf("E did not ask: %q", statusText(m))
	}
	details := m.confirm.details
	m, cmd = press(m, "y")
	m = run(t, m, cmd)
	if s := statusText(m); !strings.HasPrefix(s, "repaired 5 of 5;") {
		t.Errorf("status %q, want all 5 left repaired", s)
	}
	for range raceKeys[1:] {
		args, _ := mon.Next(t, "PEXPIRE")
		template := slices.Clone(args)
		template[1] = "KEY"
		if want := strings.Join(template, " ") + " (if still a counter without a TTL)"; !slices.Contains(details, want) {
			t.Errorf("the dialog said %q; the server ran %q", details, args)
		}
	}
}

// E on a read-only replica stops at the first refusal, which every key
// would meet: the keys not sent yet are counted as not touched, and the
// status line says why once, not a READONLY a key.
func TestRepairAllStopsOnAReplica(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t, "--repl-diskless-sync-delay", "0") // the replica syncs at once, not 5s later
	replica := redistest.Start(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
	c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: replica.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	const n = 40
	var obs []model.Observation
	for i := range n {
		k := fmt.Sprintf("ratelimit:r:%02d", i)
		master.Do(t, "SET", k, "150")
		obs = append(obs, str(k, "150", model.PTTLNoExpiry))
	}
	for deadline := time.Now().Add(10 * time.Second); replica.Do(t, "DBSIZE").(int64) != n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the replica holds %v keys of the master's %d", replica.Do(t, "DBSIZE"), n)
		}
	}
	m := newModel(t, c, 120, 40, obs...)
	before := replica.CommandCalls(t)
	m, _ = press(m, "E")
	m, cmd := press(m, "y")
	m = run(t, m, cmd)
	after := replica.CommandCalls(t)
	sent := int(after["evalsha"] + after["eval"] - before["evalsha"] - before["eval"])
	failures := min(n, repairInFlight) // the writes under way when the first refusal came back
	want := fmt.Sprintf("repaired 0 of %d; %d failed, %d not touched — stopped at the first refusal, which every key would meet: ratelimit:r:", n, failures, n-failures)
	if s := statusText(m); !strings.HasPrefix(s, want) || !strings.HasSuffix(s, replica.Addr+" is a read-only replica — connect to its master to change keys") || m.status.kind != statusFailed {
		t.Errorf("status %q (kind %v), want %q… ending with the replica's sentence", s, m.status.kind, want)
	}
	if sent > 2*repairInFlight { // EVALSHA, and EVAL where the script was not loaded yet
		t.Errorf("the replica was sent %d repair scripts for %d keys; want those under way at the first refusal only", sent, n)
	}
}
