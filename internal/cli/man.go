package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/internal/words"
)

// Man writes countertop's manual page, countertop(1), in roff, generated
// from its cobra commands: the same commands, examples and flags as
// --help, the shared flags once with the commands that use them, and the
// environment, files and exit codes. (cobra/doc would write a page per
// command, without those three sections.)
func Man(w io.Writer) error {
	root := (&app{stdout: io.Discard, stderr: io.Discard}).newRoot()
	commands := listed(root)
	var b strings.Builder
	b.WriteString(".TH COUNTERTOP 1 \"\" countertop \"User Commands\"\n.nh\n.ad l\n") // URLs and flags are not to be hyphenated
	b.WriteString(".SH NAME\ncountertop \\- a terminal dashboard for live Redis counters\n")
	b.WriteString(".SH SYNOPSIS\n")
	for i, c := range commands {
		if i > 0 {
			b.WriteString(".br\n")
		}
		name, args, _ := strings.Cut(c.Use, " ")
		if c.HasParent() {
			name = "countertop " + name
		}
		fmt.Fprintf(&b, ".B %s\n", roff(name))
		if args != "" {
			fmt.Fprintf(&b, "%s\n", roff(args))
		}
	}
	fmt.Fprintf(&b, ".SH DESCRIPTION\n%s\n", roff(aboutCountertop))

	b.WriteString(".SH COMMANDS\n")
	settingFlags := make(map[string]bool)
	for _, s := range config.Settings() {
		settingFlags[s.Flag] = true
	}
	for _, c := range commands {
		fmt.Fprintf(&b, ".SS %s\n%s\n", roff(c.UseLine()), roff(c.Long))
		if c.Example != "" {
			b.WriteString(".PP\nExamples:\n.PP\n.RS\n.nf\n")
			for _, e := range strings.Split(c.Example, "\n") {
				fmt.Fprintf(&b, "%s\n", roff(e))
			}
			b.WriteString(".fi\n.RE\n")
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if !settingFlags[f.Name] && !f.Hidden {
				own := describeFlag(f)
				fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roff(own.names), roff(own.usage))
			}
		})
	}

	b.WriteString(".SH OPTIONS\nThe flags that several commands share; each is refused by a command it would change nothing in.\n")
	all := pflag.NewFlagSet("countertop", pflag.ContinueOnError)
	config.Register(all)
	for _, s := range config.Settings() {
		if s.Flag == "" {
			continue
		}
		f := describeFlag(all.Lookup(s.Flag))
		var used []string
		for _, c := range s.Commands {
			used = append(used, strings.Replace(c, "dashboard", "the dashboard", 1))
		}
		fmt.Fprintf(&b, ".TP\n.B %s\n%s. For %s.\n", roff(f.names), roff(f.usage), roff(words.And(used)))
	}

	b.WriteString(".SH ENVIRONMENT\nFlags beat the environment, which beats the config file.\n")
	for _, s := range config.Settings() {
		if s.Env == "" {
			continue
		}
		same := s.Key + " in the config file"
		if s.Flag != "" {
			same = words.Flag(s.Flag)
		}
		fmt.Fprintf(&b, ".TP\n.B %s\nthe same as %s.\n", roff(s.Env), roff(same))
	}
	b.WriteString(`.SH FILES
.TP
.I ./countertop.toml
.TQ
.I $XDG_CONFIG_HOME/countertop/config.toml
the config file, when --config names none: the first of them that exists.
.SH EXIT STATUS
.TP
.B 0
done: check found nothing wrong, every increment or repair landed.
.TP
.B 1
check found stuck or no-expiry counters; a write was refused and changed nothing; incr \-\-count observed other than expected; repair skipped or failed some keys.
.TP
.B 2
could not do the job: a bad flag, config or URL, no connection, ctrl+c before the command was done, a repair not confirmed, stdout closed or not written to (a full disk).
`)
	_, err := io.WriteString(w, b.String())
	return err
}

// roff returns s as the text of a roff line: backslashes and dashes
// escaped, and a line that would begin with a control character kept text.
func roff(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
