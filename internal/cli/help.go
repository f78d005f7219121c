package cli

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/internal/words"
)

// What each command's --help says it does, and its examples. Every flag an
// example uses is one its command has (TestHelpExamplesUseRealFlags).
const (
	aboutCountertop = "countertop watches the rate-limit counters of a Redis server: their values, TTLs, limits and rates. Without a command it opens the interactive dashboard; the commands print, check, increment and repair the counters from scripts and monitors."
	aboutDashboard  = "Opens the interactive dashboard on the counters that match the patterns: their values, TTLs, limits and rates, live, with the stuck and no-expiry ones in red."
	aboutDemo       = "Opens the dashboard on an embedded Redis with simulated rate-limit traffic, stuck counters included. Nothing outside this process is touched."
	aboutSnapshot   = "Prints the counters that match the patterns once, as a table, JSON or CSV, and exits. With --watch it follows them for a while first, and prints their statuses as watched (extending takes more than one reading)."
	aboutCheck      = "Prints a line for each stuck, no-expiry or leaked counter and exits 0 when there is none, 1 when there are some, 2 when it could not check: a probe for monitors and CI. With --watch it follows the counters for a while, and finds the extending ones too: a count that keeps growing past a whole window with its TTL pushed back on every hit (EXPIRE without NX), so the window never closes; a watch shorter than such a key's window could not tell, and exits 2."
	aboutIncr       = "Fires one atomic increment (or --count of them) at KEY and prints its new value and TTL. A key without a TTL is given its window in the same atomic step. A hash field (--field NAME, or a rule's field = \"NAME\") gets HINCRBY of that field."
	aboutRepair     = "Gives every stuck and no-expiry counter its window as a TTL: PEXPIRE KEY MS NX, sent only while the key still holds what it was read as and has no TTL. It asks first, unless --yes."
	aboutCompletion = "Prints the script that completes countertop's commands and flags in SHELL: bash, zsh or fish."
	aboutHelp       = "Prints countertop's help, or with a command's name what 'countertop COMMAND --help' prints."
	aboutVersion    = "Prints the version, the commit it was built from and the Go release."
)

var (
	dashboardExamples = []string{
		"# Watch the rate-limit counters of a local Redis",
		"countertop --url redis://127.0.0.1:6379/0 --pattern 'ratelimit:*'",
		"# Keys no rule covers get --limit and --window",
		"countertop --pattern 'ratelimit:*' --pattern 'quota:*' --limit 100 --window 1m",
		"# Look, don't touch: every write is refused before it is sent",
		"countertop --read-only",
	}
	demoExamples = []string{
		"countertop demo",
	}
	snapshotExamples = []string{
		"countertop snapshot --pattern 'ratelimit:*'",
		"# The stuck counters, for a script",
		`countertop snapshot --format json | jq '.counters[]|select(.status=="stuck")'`,
		"# Each counter's status as seen over 10 seconds",
		"countertop snapshot --format json --watch 10s",
	}
	checkExamples = []string{
		"# In a monitor: page someone when a counter is stuck",
		"countertop check --pattern 'ratelimit:*' || page-someone",
		"# Watch past the window (60s): a TTL pushed back on every hit is extending",
		"countertop check --pattern 'ratelimit:*' --watch 65s",
		"# redis-cli's flags: host, port, database and ACL user",
		"countertop check -h 10.0.0.5 -p 6380 -n 2 --user monitor",
	}
	incrExamples = []string{
		"# The immortal-counter bug, on purpose: an increment that sets no TTL",
		"countertop incr ratelimit:api:drill --no-expire",
		"# A race drill: 10000 increments over 20 connections; expected vs observed",
		"countertop incr ratelimit:api:race --count 10000 --clients 20 --window 60s",
		"# A per-field limiter: HINCRBY of one hash field, by 5",
		"countertop incr rl:client:42 --field login --by 5 --window 60s",
	}
	repairExamples = []string{
		"# What it would do; sends nothing",
		"countertop repair --dry-run",
		"countertop repair --pattern 'ratelimit:*' --window 60s --yes",
	}
	completionExamples = []string{
		"# In ~/.bashrc, for bash",
		"source <(countertop completion bash)",
		`countertop completion zsh > "${fpath[1]}/_countertop"`,
		"countertop completion fish > ~/.config/fish/completions/countertop.fish",
	}
	helpExamples = []string{
		"countertop help incr",
		"countertop help",
	}
	versionExamples = []string{
		"countertop version",
		"countertop --version",
	}
)

// helpWidth is the width help text is wrapped to: an 80-column terminal's,
// less a margin.
const helpWidth = 78

// helpOf returns the --help of the command whose flags fs holds.
func helpOf(fs *flag.FlagSet) string {
	cmd := commandNamed(strings.TrimSpace(strings.TrimPrefix(fs.Name(), "countertop")))
	var b strings.Builder
	if cmd.name == "" {
		b.WriteString("countertop: a terminal dashboard for live Redis counters\n\n")
		b.WriteString(commandList())
		b.WriteString("\n" + wrap("Run 'countertop help COMMAND' (or 'countertop COMMAND --help') for the flags of a command.", helpWidth, "") + "\n")
		b.WriteString(wrap(cmd.about, helpWidth, ""))
	} else {
		fmt.Fprintf(&b, "Usage: %s\n\n", synopsis(cmd))
		b.WriteString(wrap(cmd.about, helpWidth, ""))
	}
	if len(cmd.examples) > 0 {
		b.WriteString("\nExamples:\n")
		for _, e := range cmd.examples {
			fmt.Fprintf(&b, "  %s\n", e)
		}
	}
	if flags := helpFlags(fs); len(flags) > 0 {
		b.WriteString("\nFlags:\n")
		b.WriteString(flagTable(flags))
	}
	return b.String()
}

// synopsis returns how to call cmd: "countertop incr KEY [flags]".
func synopsis(cmd *command) string {
	return strings.Join(slices.DeleteFunc([]string{"countertop", cmd.name, cmd.args}, func(s string) bool { return s == "" }), " ")
}

// commandList returns the list of commands with what each does.
func commandList() string {
	var b strings.Builder
	b.WriteString("Usage:\n")
	width := 0
	for _, c := range commands {
		width = max(width, len(synopsisShort(c)))
	}
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, synopsisShort(c), c.summary)
	}
	return b.String()
}

// synopsisShort is cmd's synopsis with only the first of its arguments:
// "countertop incr KEY [flags]" fits the list, the rest is in its --help.
func synopsisShort(cmd *command) string {
	args := cmd.args
	if strings.HasPrefix(args, "KEY ") {
		args = "KEY [flags]"
	}
	if strings.HasPrefix(args, "[--") {
		args = "[flags]"
	}
	return synopsis(&command{name: cmd.name, args: args})
}

// A helpFlag is one line of the flag table: "-u, --url URL" and its help.
type helpFlag struct {
	names string
	usage string
}

// helpFlags returns fs's flags as help lists them: the command's own
// first (alphabetically), then the shared settings in the table's order,
// each with its one-letter spelling (redis-cli's -u for --url) beside it.
func helpFlags(fs *flag.FlagSet) []helpFlag {
	settings := config.Settings()
	isSetting := make(map[string]bool)
	for _, s := range settings {
		isSetting[s.Flag], isSetting[s.Short] = true, true
	}
	var own, shared []helpFlag
	fs.VisitAll(func(f *flag.Flag) {
		if !isSetting[f.Name] {
			own = append(own, describeFlag(f, ""))
		}
	})
	for _, s := range settings {
		if f := fs.Lookup(s.Flag); f != nil && s.Flag != "" {
			shared = append(shared, describeFlag(f, s.Short))
		}
	}
	return append(own, shared...)
}

// describeFlag returns f's line of the table; short, when not "", is the
// one-letter flag that means the same.
func describeFlag(f *flag.Flag, short string) helpFlag {
	arg, usage := flag.UnquoteUsage(f)
	names := words.Flag(f.Name)
	if short != "" {
		names = words.Flag(short) + ", " + names
	}
	if isBool(f) {
		arg = ""
	}
	if arg != "" {
		names += " " + arg
	}
	if d := f.DefValue; d != "" && d != "false" && d != "0" && d != "0s" && d != "[]" {
		usage += " (default " + d + ")"
	}
	return helpFlag{names: names, usage: usage}
}

// isBool reports whether f is a switch, which takes no value.
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// flagTable returns flags as two columns, the help wrapped beside the
// names, or under them when the names are too long for the column.
func flagTable(flags []helpFlag) string {
	const maxColumn = 24
	column := 0
	for _, f := range flags {
		if len(f.names) <= maxColumn {
			column = max(column, len(f.names))
		}
	}
	indent := strings.Repeat(" ", 2+column+2)
	var b strings.Builder
	for _, f := range flags {
		text := wrap(f.usage, helpWidth, indent)
		if len(f.names) > column {
			fmt.Fprintf(&b, "  %s\n%s", f.names, text)
			continue
		}
		fmt.Fprintf(&b, "  %-*s  %s", column, f.names, strings.TrimPrefix(text, indent))
	}
	return b.String()
}

// wrap returns text broken into lines of at most width columns (but for a
// word longer than that), each beginning with indent and ending in "\n".
func wrap(text string, width int, indent string) string {
	var b strings.Builder
	line := indent
	for _, w := range strings.Fields(text) {
		if line != indent && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += w
	}
	b.WriteString(line + "\n")
	return b.String()
}
