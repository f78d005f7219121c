package redisclient_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/redisclient"
	"github.com/redis/go-redis/v9"
)

// TestPasswordRotatedMidSession changes the password while countertop
// reads, and closes its connections, as an operator rotating a password
// does: every read then fails with the sentence a wrong password gets at
// connect time, not with go-redis's words about a reply it never got.
func TestPasswordRotatedMidSession(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--requirepass", "s3cret")
	s.Do(t, "SET", "ratelimit:a", "1")
	s.Do(t, "HSET", "ratelimit:h", "f", "1")
	c := connect(t, s)
	ctx := context.Background()
	keys := []string{"ratelimit:a", "ratelimit:h"}
	if _, err := c.Fetch(ctx, keys); err != nil {
		t.Fatal(err)
	}
	f := startPoll(t, c, redisclient.PollOptions{Patterns: []string{"ratelimit:*"}, Interval: 50 * time.Millisecond})
	f.waitValue("ratelimit:a", "1")

	s.Do(t, "CONFIG", "SET", "requirepass", "newpw")
	s.Do(t, "CLIENT", "KILL", "TYPE", "normal") // all but the caller

	want := s.Addr + " rejected the username or password — check the ones in --url or in REDIS_USERNAME and REDIS_PASSWORD; if they are right, the user is off: turn it on with ACL SETUSER <user> on"
	_, err := c.Fetch(ctx, keys)
	checkSentence(t, err, want, "s3cret")
	if err != nil && err.Error() != want {
		t.Errorf("Fetch: %q\nwant exactly %q", err, want)
	}
	if !redis.IsAuthError(err) {
		t.Errorf("the cause is lost: %v", err)
	}
	_, err = snapshot(ctx, c, []string{"ratelimit:*"}, 0)
	checkSentence(t, err, want, "s3cret")
	_, err = c.Incr(ctx, "ratelimit:a", by(t, "1"), time.Minute)
	checkSentence(t, err, "INCRBY ratelimit:a 1 failed: "+want, "s3cret")
	f.waitFor("the poll to say why it cannot read", func() bool { return f.state.LastError != "" })
	if stale := want + "; countertop keeps trying, and the values shown are as last read"; f.state.LastError != stale {
		t.Errorf("the poll says %q\nwant %q", f.state.LastError, stale)
	}
}

// TestUserSwitchedOffMidSession switches countertop's ACL user off and
// closes its connections: the reads say so in a sentence.
func TestUserSwitchedOffMidSession(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "ACL", "SETUSER", "viewer", "on", ">viewerpw", "~ratelimit:*", "+@read", "+@connection", "+scan", "+type")
	s.Do(t, "SET", "ratelimit:a", "1")
	c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: "redis://viewer:viewerpw@" + s.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Fetch(ctx, []string{"ratelimit:a"}); err != nil {
		t.Fatal(err)
	}
	s.Do(t, "ACL", "SETUSER", "viewer", "off")
	s.Do(t, "CLIENT", "KILL", "USER", "viewer")

	_, err = c.Fetch(ctx, []string{"ratelimit:a"})
	checkSentence(t, err, s.Addr+" rejected the username or password — check the ones in --url or in REDIS_USERNAME and REDIS_PASSWORD; if they are right, the user is off: turn it on with ACL SETUSER <user> on", "viewerpw")
	if err != nil && strings.Contains(err.Error(), "unexpected type") {
		t.Errorf("go-redis's words reached the sentence: %q", err)
	}
}
