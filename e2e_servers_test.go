package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
)

// The real dashboard over three servers the test starts, named in the
// config: one table with a SERVER column, a key of one name on two
// servers two rows, a header line a server; + on a row writes to that
// row's server alone; server:NAME keeps one server's rows; a server
// stopped goes stale, its rows marked and kept, while the others stay live.
func TestDashboardOverThreeServersEndToEnd(t *testing.T) {
	eu, us, ap := redistest.Start(t), redistest.Start(t), redistest.Start(t)
	eu.Do(t, "SET", "rl:shared", "7")
	us.Do(t, "SET", "rl:shared", "40")
	ap.Do(t, "SET", "rl:ap-only", "3", "EX", "300")
	cfg := serversFile(t, []string{"eu", eu.URL(), "us", us.URL(), "ap", ap.URL()}, `
[[rule]]
pattern = "rl:*"
limit = 100
window = "60s"
`)
	term := startTerminal(t, 120, 30, []string{"TERM=xterm-256color"},
		binary(t), "--config", cfg, "--pattern", "rl:*", "--mode", "poll", "--interval", "200ms")

	s := term.waitFor("three servers' rows", func(s string) bool {
		return strings.Count(s, "rl:shared") == 2 && strings.Contains(s, "rl:ap-only")
	})
	if !strings.Contains(s, "SERVER") || !strings.Contains(s, "3 servers") {
		t.Errorf("no SERVER column or servers' count:\n%s", s)
	}
	for _, name := range []string{"eu", "us", "ap"} {
		if line := lineWith(s, name+" · poll"); line == "" {
			t.Errorf("no header line for %s:\n%s", name, s)
		}
	}
	// The rows of rl:shared come in the servers' name order: eu, then us.
	term.keys("/", "server:us", "Enter")
	term.waitFor("server:us to keep us's row alone", func(s string) bool {
		row := lineWith(s, "rl:shared")
		return strings.Contains(row, " us ") && strings.Contains(row, " 40 ") && strings.Count(s, "rl:shared") == 1 && !strings.Contains(s, "rl:ap-only")
	})
	term.keys("+")
	term.waitText("INCRBY rl:shared 1 -> 41")
	if got := us.Do(t, "GET", "rl:shared"); got != "41" {
		t.Errorf("us's rl:shared = %v after +, want 41", got)
	}
	if got := eu.Do(t, "GET", "rl:shared"); got != "7" {
		t.Errorf("eu's rl:shared = %v after + on us's row, want 7 untouched", got)
	}

	term.keys("/", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "Enter")
	term.waitFor("every server's rows again", func(s string) bool { return strings.Count(s, "rl:shared") == 2 })
	us.Stop()
	s = term.waitFor("us to go stale while eu and ap stay", func(s string) bool {
		return strings.Contains(lineWith(s, "us · "), "stale since") && strings.Contains(s, "(1 stale)")
	})
	if row := rowWith(s, "rl:shared", " 41 "); !strings.Contains(row, "us ✗") {
		t.Errorf("us's row is not kept and marked stale: %q\n%s", row, s)
	}
	eu.Do(t, "SET", "rl:shared", "9")
	term.waitFor("eu's rows to go on live", func(s string) bool {
		return rowWith(s, "rl:shared", " eu ", " 9 ") != ""
	})
}

// serversFile writes a config file of a [[server]] table for each name
// and URL of nameURLs, in order, then extra, and returns its path.
func serversFile(t *testing.T, nameURLs []string, extra string) string {
	t.Helper()
	var text strings.Builder
	for i := 0; i+1 < len(nameURLs); i += 2 {
		fmt.Fprintf(&text, "[[server]]\nname = %q\nurl = %q\n\n", nameURLs[i], nameURLs[i+1])
	}
	return writeFile(t, "countertop.toml", text.String()+extra)
}

// The real dashboard over ten servers, the first of which accepts and never
// answers: the other nine's rows and lines are on screen while it is still
// connecting (its dial timeout is longer than the test waits), its line
// first, saying so, and the summary counting it apart from those answering.
func TestDashboardOverTenServersOneHanging(t *testing.T) {
	toml := `
[[server]]
name = "hang"
url = "redis://` + redistest.Silent(t) + `/0?dial_timeout=60s"
`
	for i := range 9 {
		srv := redistest.Start(t)
		srv.Do(t, "SET", fmt.Sprintf("rl:s%d", i), fmt.Sprint(i+1), "EX", "300")
		toml += fmt.Sprintf("\n[[server]]\nname = \"s%d\"\nurl = \"%s\"\n", i, srv.URL())
	}
	cfg := writeFile(t, "countertop.toml", toml)
	term := startTerminal(t, 120, 30, []string{"TERM=xterm-256color"},
		binary(t), "--config", cfg, "--pattern", "rl:*", "--mode", "poll", "--interval", "200ms")

	s := term.waitFor("the nine servers' rows", func(s string) bool {
		for i := range 9 {
			if rowWith(s, fmt.Sprintf("rl:s%d ", i), fmt.Sprintf(" s%d ", i)) == "" {
				return false
			}
		}
		return true
	})
	lines := strings.Split(s, "\n")
	if !strings.HasPrefix(lines[0], "countertop · 10 servers · ") || strings.Contains(lines[0], "stale") {
		t.Errorf("the title = %q, want 10 servers, none stale", lines[0])
	}
	if !strings.HasPrefix(lines[1], "hang · connecting…") {
		t.Errorf("the hanging server's line = %q, want it first, connecting:\n%s", lines[1], s)
	}
	if !strings.HasPrefix(lines[2], "s0 · polling") || !strings.HasPrefix(lines[3], "s1 · polling") {
		t.Errorf("the lines after it = %q, %q, want s0's and s1's, polling:\n%s", lines[2], lines[3], s)
	}
	if lines[4] != "7 more answering" {
		t.Errorf("the summary line = %q, want the other seven answering:\n%s", lines[4], s)
	}
}

// rowWith is the first line of screen that holds every one of texts: a
// row told by its key and value, where one text alone may also be in a
// header line (a server's port can hold "41").
func rowWith(screen string, texts ...string) string {
	for _, l := range strings.Split(screen, "\n") {
		all := true
		for _, t := range texts {
			all = all && strings.Contains(l, t)
		}
		if all {
			return l
		}
	}
	return ""
}

// What one server's connection says (a user without CLIENT SETNAME
// leaves countertop's connections unnamed), which one server's dashboard
// puts on its status line, reaches the screen among three real servers:
// on that server's header line, and whole, with how to grant the name, in
// its rows' detail; the other servers' lines do not say it.
func TestDashboardSaysWhatEachServerSaid(t *testing.T) {
	eu, us, ap := redistest.Start(t), redistest.Start(t), redistest.Start(t)
	us.Do(t, "ACL", "SETUSER", "limiter", "on", ">pw", "~*", "&*", "+@all", "-client|setname")
	for _, s := range []*redistest.Server{eu, us, ap} {
		s.Do(t, "SET", "rl:api:1", "3", "EX", "300")
	}
	cfg := serversFile(t, []string{"eu", eu.URL(), "us", "redis://limiter:pw@" + us.Addr + "/0", "ap", ap.URL()}, "")
	term := startTerminal(t, 120, 40, []string{"TERM=xterm-256color"},
		binary(t), "--config", cfg, "--pattern", "rl:*", "--mode", "poll", "--interval", "200ms")
	s := term.waitFor("us's line to say its connections are unnamed", func(s string) bool {
		return strings.Contains(lineWith(s, "us · "), "countertop's connections show unnamed") && strings.Count(s, "rl:api:1") == 3
	})
	for _, name := range []string{"eu", "ap"} {
		if line := lineWith(s, name+" · "); strings.Contains(line, "unnamed") {
			t.Errorf("%s's line says its connections are unnamed: %q", name, line)
		}
	}
	term.keys("/", "server:us", "Enter")
	term.waitFor("us's row alone", func(s string) bool { return strings.Count(s, "rl:api:1") == 1 })
	term.keys("Enter")
	s = term.waitFor("the detail to say why and how to grant the name", func(s string) bool {
		return strings.Contains(s, "note      countertop's connections show unnamed") && strings.Contains(s, "+client|setname")
	})
	if !strings.Contains(s, `server    "us" at `+us.Addr) {
		t.Errorf("the detail does not say where us is:\n%s", s)
	}
}
