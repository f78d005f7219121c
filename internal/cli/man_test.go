package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/countertop/countertop/config"
)

// The manual page has every command, with its examples and its own flags,
// and every shared flag once, in roff that uses only the man macros.
func TestManPage(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if err := Man(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	macro := regexp.MustCompile(`^\.(TH|SH|SS|TP|TQ|B|I|PP|RS|RE|nf|fi|br|nh|ad)( |$)`)
	for i, line := range strings.Split(strings.TrimSuffix(page, "\n"), "\n") {
		if (strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'")) && !macro.MatchString(line) {
			t.Errorf("line %d is no man macro, and roff would take it for one: %q", i+1, line)
		}
	}
	for _, c := range testCommands() {
		if !strings.Contains(page, "\n.SS "+roff(c.UseLine())+"\n") {
			t.Errorf("no section for %q", c.UseLine())
		}
		for _, e := range exampleLines(c) {
			if !strings.Contains(page, "\n"+roff(e)+"\n") {
				t.Errorf("%q: the example %q is missing", c.Name(), e)
			}
		}
	}
	for _, own := range []string{"--format FORMAT", "--by N", "--no-expire", "--dry-run", "--yes"} {
		if !strings.Contains(page, "\n.B "+roff(own)+"\n") {
			t.Errorf("the page does not list %s", own)
		}
	}
	for _, s := range config.Settings() {
		listed := regexp.MustCompile(`\n\.B (\\-[a-z], )?` + regexp.QuoteMeta(roff("--"+s.Flag)) + `( |\n)`)
		if s.Flag != "" && len(listed.FindAllString(page, -1)) != 1 {
			t.Errorf("the page lists --%s other than once", s.Flag)
		}
		if s.Env != "" && !strings.Contains(page, "\n.B "+roff(s.Env)+"\n") {
			t.Errorf("the page does not list %s", s.Env)
		}
	}
}
