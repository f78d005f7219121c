package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// What the status line says an increment of a field with a TTL of its own
// sent is what the server ran: HINCRBY, then HPEXPIRE ... NX of that field
// in the same step, never a TTL on the hash.
func TestIncrOfAFieldWithItsOwnTTLSaysWhatItSent(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.RequireFieldTTL(t)
	s.Do(t, "HSET", "quota:u1", "api", "17", "login", "3")
	s.Do(t, "HPEXPIRE", "quota:u1", "60000", "FIELDS", "1", "api")
	c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	m := newModel(t, c, 120, 40)
	mon := s.Monitor(t)
	one, _ := model.ParseAmount("1")
	m = run(t, m, m.sendIncr("quota:u1", "login", one, time.Minute))
	s.Do(t, "ECHO", "writes end here")
	var writes []string
	for _, r := range mon.Until(t, "ECHO") {
		switch strings.ToUpper(r.Args[0]) {
		case "HINCRBY", "HPEXPIRE", "PEXPIRE", "EXPIRE":
			writes = append(writes, strings.Join(r.Args, " "))
		}
	}
	want := "HINCRBY quota:u1 login 1, HPEXPIRE quota:u1 60000 NX FIELDS 1 login"
	if strings.Join(writes, ", ") != want {
		t.Errorf("the server ran %q, want %q", writes, want)
	}
	if got := statusText(m); !strings.HasPrefix(got, strings.Join(writes, ", ")+" -> 4; the field had no TTL, now 1m00s") {
		t.Errorf("the status line says %q; the server ran %q", got, writes)
	}
}
