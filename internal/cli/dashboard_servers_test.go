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
	usURL := "redis://limiter:pw@" + us.Addr + "/0"
	cfg, err := loadFor(t, "--url", eu.URL(), "--url", usURL, "--url", ap.URL(), "--mode", "poll", "--interval", "200ms", "--pattern", "ratelimit:*")
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
	if note := notes[us.Addr]; !strings.HasPrefix(note, unnamed) || !strings.Contains(note, "grant it with ACL SETUSER <user> +client|setname") {
		t.Errorf("us's note = %q, want why its connections are unnamed and how to grant the name", note)
	}
	for _, other := range []string{eu.Addr, ap.Addr} {
		if strings.Contains(notes[other], "unnamed") {
			t.Errorf("%s's note = %q, though its connections are named", other, notes[other])
		}
	}
	if got := log.String(); strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, "countertop: "+us.Addr+": "+unnamed) {
		t.Errorf("the log = %q, want one line naming us (%s)", got, us.Addr)
	}
}
