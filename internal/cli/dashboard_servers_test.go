package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
)

// Among three real servers, one connected to as a user without CLIENT
// SETNAME: what one server's connect says on stderr (its connections
// unnamed, and why) is in that server's feed's note, which its header
// line and detail show, and no other's; serve's log, which no screen
// covers, has it once, naming the server.
func TestWatchServersSayWhatConnectingSaid(t *testing.T) {
	t.Parallel()
	eu, us, ap := redistest.Start(t), redistest.Start(t), redistest.Start(t)
	us.Do(t, "ACL", "SETUSER", "limiter", "on", ">pw", "~*", "&*", "+@all", "-client|setname")
	for _, s := range []*redistest.Server{eu, us, ap} {
		s.Do(t, "SET", "ratelimit:api:1", "3", "EX", "60")
	}
	file := writeFile(t, "countertop.toml", writeConfig+`
[[server]]
name = "eu"
url = "`+eu.URL()+`"

[[server]]
name = "us"
url = "redis://limiter:pw@`+us.Addr+`/0"

[[server]]
name = "ap"
url = "`+ap.URL()+`"
`)
	cfg, err := loadFor(t, "--config", file, "--mode", "poll", "--interval", "200ms", "--pattern", "ratelimit:*")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // the feed closes then, if a server never watches
	defer cancel()
	var log syncBuffer
	_, feed := watchServers(ctx, cfg, false, &log)
	notes := map[string]string{} // each server's latest note once it watches
	for b := range feed {
		if b.State != nil && b.State.Phase == model.FeedWatching {
			notes[b.Server] = b.State.Note
		}
		if len(notes) == 3 {
			cancel()
		}
	}
	const unnamed = "countertop's connections show unnamed in CLIENT LIST and SLOWLOG: CLIENT SETNAME "
	if !strings.HasPrefix(notes["us"], unnamed) || !strings.Contains(notes["us"], "grant it with ACL SETUSER <user> +client|setname") {
		t.Errorf("us's note = %q, want why its connections are unnamed and how to grant the name", notes["us"])
	}
	for _, name := range []string{"eu", "ap"} {
		if strings.Contains(notes[name], "unnamed") {
			t.Errorf("%s's note = %q, though its connections are named", name, notes[name])
		}
	}
	if got := log.String(); strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, "countertop: us: "+unnamed) {
		t.Errorf("the log = %q, want one line naming us", got)
	}
}
