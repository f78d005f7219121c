package redisclient_test

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
	"github.com/redis/go-redis/v9"
)

// The page of the README's reference, and its section, whose ACL rules the
// tests apply.
const (
	readmePage    = "../docs/production.md"
	readmeSection = "# Production: Redis Cluster, Sentinel, TLS and ACL users"
)

// The users the README defines, by name.
const (
	pollUser     = "countertop-poll"
	trackingUser = "countertop-tracking"
	eventsUser   = "countertop-events"
	writeUser    = "countertop-write"
)

// aclRules are the ACL SETUSER commands the README tells people to paste,
// as arguments. The tests run exactly these, so the README cannot promise
// rules that do not work.
type aclRules struct {
	users   map[string][]any // each user's own line (the ones with reset), by name
	cluster [][]any          // what a cluster adds to them
}

// readmeACL reads the ACL SETUSER lines of readmeSection, up to the next
// heading (a line that starts with # outside a code block).
func readmeACL(t *testing.T) aclRules {
	t.Helper()
	f, err := os.Open(readmePage)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rules := aclRules{users: map[string][]any{}}
	in, code := false, false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```"):
			code = !code
		case !code && strings.HasPrefix(line, "#"):
			in = line == readmeSection
		case in && code && strings.HasPrefix(line, "ACL SETUSER "):
			var args []any
			for _, f := range strings.Fields(line) {
				args = append(args, f)
			}
			if strings.Contains(line, " reset ") {
				rules.users[args[2].(string)] = args
			} else {
				rules.cluster = append(rules.cluster, args)
			}
		}
	}
	for _, u := range []string{pollUser, trackingUser, eventsUser, writeUser} {
		if rules.users[u] == nil {
			t.Fatalf("%s's %q section has no ACL SETUSER %s reset ... line", readmePage, readmeSection, u)
		}
	}
	if len(rules.cluster) != len(rules.users) {
		t.Fatalf("%s gives cluster rules for %d users, not for each of %d", readmePage, len(rules.cluster), len(rules.users))
	}
	return rules
}

// password is the one the README's rules give user.
func (r aclRules) password(t *testing.T, user string) string {
	t.Helper()
	for _, a := range r.users[user] {
		if pw, ok := strings.CutPrefix(a.(string), ">"); ok {
			return pw
		}
	}
	t.Fatalf("the README gives %s no password", user)
	return ""
}

func TestACLUsersOfTheREADME(t *testing.T) {
	t.Parallel()
	rules := readmeACL(t)
	s := redistest.Start(t, "--notify-keyspace-events", "K$gxe")
	for _, setuser := range rules.users {
		s.Do(t, setuser...)
	}
	checkACLUsers(t, rules, s.URL(), s.Client(t), []string{"ratelimit:a", "ratelimit:b"})
}

// checkACLUsers checks that each user of the README can do what it is
// for, and that the read-only ones can write nothing, on the deployment at
// url, whose counters are read and changed with admin. counters are keys
// that the test may change (in a cluster, one on each master).
func checkACLUsers(t *testing.T, rules aclRules, url string, admin redis.Cmdable, counters []string) {
	ctx := context.Background()
	for _, k := range counters {
		if err := admin.Set(ctx, k, 1, 10*time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// A key of another type, which only TYPE tells.
	const hash = "ratelimit:config"
	if err := admin.HSet(ctx, hash, "limit", 100).Err(); err != nil {
		t.Fatal(err)
	}
	connectAs := func(t *testing.T, user string) *redisclient.Client {
		t.Helper()
		c := connectURL(t, redisclient.Options{URL: url, Username: user, Password: rules.password(t, user)})
		if why := c.Unnamed(); why != "" { // the README's users may name their connections
			t.Errorf("%s: %s", user, why)
		}
		return c
	}
	// watchAuto watches in auto mode, as the dashboard does by default, with
	// no periodic re-scan within the test's time.
	watchAuto := func(t *testing.T, c *redisclient.Client) *feed {
		t.Helper()
		w := startWatch(t, c, redisclient.WatchOptions{PollOptions: redisclient.PollOptions{Patterns: []string{"ratelimit:*"}}, ResyncEvery: time.Hour})
		w.until("the first pass", func() string {
			if w.passes == 0 || w.state.Scanning || w.state.LastError != "" {
				return "not done, or failed"
			}
			for _, k := range append([]string{hash}, counters...) {
				if _, ok := w.store.Get(k); !ok {
					return k + " is missing"
				}
			}
			return ""
		})
		if c, _ := w.store.Get(hash); c.Type != "hash" {
			t.Errorf("%s is a %q, want a hash", hash, c.Type)
		}
		return w
	}
	// followsLive checks that w is live in mode: a change on each counter
	// arrives with no other full pass.
	followsLive := func(t *testing.T, w *feed, mode model.WatchMode) {
		t.Helper()
		if !watchingIn(w.state, mode) {
			t.Fatalf("mode %q, note %q; want %s", w.state.Mode, w.state.Note, mode)
		}
		for _, k := range counters {
			v, err := admin.Incr(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			w.waitValue(k, strconv.FormatInt(v, 10))
		}
		if w.passes != 1 {
			t.Errorf("%d full passes; want the changes to arrive as %s", w.passes, mode)
		}
	}

	for _, user := range []string{pollUser, trackingUser, eventsUser} {
		t.Run(user+" reads and may not write", func(t *testing.T) {
			c := connectAs(t, user)
			w := watchAuto(t, c)
			switch user {
			case pollUser:
				if st := w.state; !watchingIn(st, model.WatchPoll) || !strings.Contains(st.Note, "does not allow CONFIG GET (NOPERM") || !strings.Contains(st.Note, "+config|get") ||
					!strings.Contains(st.Note, "may not use client tracking") {
					t.Errorf("mode %q, note %q; want polling, and the note to say CONFIG GET and client tracking are not allowed", st.Mode, st.Note)
				}
			case trackingUser:
				// Without CONFIG GET, auto cannot tell the notifications are on.
				if note := w.state.Note; !strings.HasPrefix(note, "tracking: ") || !strings.Contains(note, "not allow CONFIG GET (NOPERM") {
					t.Errorf("note %q; want it to say why auto tracks", note)
				}
				followsLive(t, w, model.WatchTracking)
			default:
				followsLive(t, w, model.WatchEvents)
			}

			key := counters[0]
			before, _ := admin.Get(ctx, key).Result()
			one := by(t, "1")
			_, incrErr := c.Incr(ctx, key, one, time.Minute)
			_, burstErr := c.Burst(ctx, key, one, time.Minute, redisclient.BurstOptions{Count: 5, Clients: 2})
			_, _, expireErr := c.Expire(ctx, model.Expiry{Key: key, Window: time.Minute, Shape: model.ShapeCounter})
			_, deleteErr := c.Delete(ctx, key)
			for what, err := range map[string]error{"Incr": incrErr, "Burst": burstErr, "Expire": expireErr, "Delete": deleteErr} {
				if !redisclient.Refused(err) {
					t.Errorf("%s as %s: %v; want it refused", what, user, err)
					continue
				}
				checkSentence(t, err, "the Redis user may not do this", rules.password(t, user))
				checkSentence(t, err, "NOPERM", "")
			}
			if after, _ := admin.Get(ctx, key).Result(); after != before {
				t.Errorf("%s went from %q to %q as %s", key, before, after, user)
			}
		})
	}

	t.Run(writeUser+" increments, repairs and deletes", func(t *testing.T) {
		c := connectAs(t, writeUser)
		followsLive(t, watchAuto(t, c), model.WatchEvents)
		one := by(t, "1")
		for _, key := range counters {
			before, _ := admin.Get(ctx, key).Int()
			if o, err := c.Incr(ctx, key, one, time.Minute); err != nil || o.Raw != strconv.Itoa(before+1) {
				t.Errorf("Incr %s as %s = %q, %v; want %d", key, writeUser, o.Raw, err, before+1)
			}
			r, err := c.Burst(ctx, key, allowFloat(t, "0.5"), time.Minute, redisclient.BurstOptions{Count: 20, Clients: 2})
			if err != nil {
				t.Fatalf("Burst %s as %s: %v", key, writeUser, err)
			}
			checkBurst(t, r, 20, "10")

			if err := admin.Persist(ctx, key).Err(); err != nil {
				t.Fatal(err)
			}
			if got, o, err := c.Expire(ctx, model.Expiry{Key: key, Window: time.Minute, Shape: model.ShapeCounter}); err != nil || got != model.ExpirySet || o.PTTL <= 0 {
				t.Errorf("Expire %s as %s = %v, PTTL %d, %v; want the TTL set", key, writeUser, got, o.PTTL, err)
			}
			if existed, err := c.Delete(ctx, key); err != nil || !existed || admin.Exists(ctx, key).Val() != 0 {
				t.Errorf("Delete %s as %s: %v", key, writeUser, err)
			}
		}
		// The key pattern holds: other keys are out of reach.
		_, err := c.Incr(ctx, "other:1", one, time.Minute)
		checkSentence(t, err, "NOPERM", "")
	})
}
