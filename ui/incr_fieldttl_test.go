package ui

import (
	"strings"
	"testing"

	"github.com/countertop/countertop/model"
)

// What the status line says an increment of a field with a TTL of its own
// sent is what the server ran: + on that field's row sends HINCRBY of the
// row's own field, then HPEXPIRE ... NX of that field in the same step,
// never a TTL on the hash.
func TestIncrOfAFieldWithItsOwnTTLSaysWhatItSent(t *testing.T) {
	m, s := quotaModel(t)
	m = selectKey(t, m, model.RowID("quota:u1", "login"))
	mon := s.Monitor(t)
	m, cmd := press(m, "+")
	m = run(t, m, cmd)
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
	if p := s.Do(t, "PTTL", "quota:u1").(int64); p != -1 {
		t.Errorf("the hash got a TTL of %dms: every field would go with it", p)
	}
}
