package main

import (
	"strings"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
)

// On a Redis with hash-field TTLs (7.4 and later) the real screen shows a
// hash whose fields carry TTLs as a row a field, KEY reading "key ›
// field", each with its own status: the field that lost its TTL is
// no-expiry, in red. A field that expires leaves the screen, and the
// others stay.
func TestDashboardShowsHashFieldsEndToEnd(t *testing.T) {
	srv := redistest.Start(t)
	srv.RequireFieldTTL(t)
	srv.Do(t, "HSET", "quota:u1", "api", "17", "login", "3", "search", "2")
	srv.Do(t, "HPEXPIRE", "quota:u1", "60000", "FIELDS", "2", "api", "search")
	cfg := writeFile(t, "countertop.toml", `
[[rule]]
pattern = "quota:*"
limit = 10
window = "60s"
`)
	term := startTerminal(t, 120, 40, []string{"TERM=xterm-256color"},
		binary(t), "--url", srv.URL(), "--config", cfg, "--pattern", "quota:*", "--interval", "200ms")

	s := term.waitText("quota:u1 › login")
	api, login := lineWith(s, "quota:u1 › api"), lineWith(s, "quota:u1 › login")
	if !strings.Contains(login, "no-expiry") || !strings.Contains(login, " 3 ") {
		t.Errorf("login's row %q; want 3, no-expiry", login)
	}
	if !strings.Contains(api, "over") || !strings.Contains(api, " 17 ") || strings.Contains(api, "no-expiry") {
		t.Errorf("api's row %q; want 17, over its limit of 10, with its TTL", api)
	}
	if !strings.Contains(s, "3 rows") {
		t.Errorf("the header does not count 3 rows:\n%s", s)
	}
	if coloured := term.screen(true); !hasRed(lineWith(coloured, "quota:u1 › login")) {
		t.Errorf("login's no-expiry row is not red: %q", lineWith(coloured, "quota:u1 › login"))
	}

	srv.Do(t, "HPEXPIRE", "quota:u1", "200", "FIELDS", "1", "api")
	term.waitFor("api's row to leave once its field expired", func(s string) bool {
		return !strings.Contains(s, "quota:u1 › api") && strings.Contains(s, "quota:u1 › login") && strings.Contains(s, "2 rows")
	})
}
