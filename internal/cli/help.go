package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/countertop/countertop/config"
)

// What each command's --help says it does, and its examples. Every flag an
// example uses is one its command has (TestHelpExamplesUseRealFlags).
const (
	aboutCountertop = "countertop watches the rate-limit counters of a Redis server: their values, TTLs, limits and rates. Without a command it opens the interactive dashboard; the commands print, check, increment and repair the counters from scripts and monitors."
	aboutDashboard  = "Opens the interactive dashboard on the counters that match the patterns: their values, TTLs, limits and rates, live, with the stuck and no-expiry ones in red."
	aboutDemo       = "Opens the dashboard on an embedded Redis with simulated rate-limit traffic, stuck counters included. Nothing outside this process is touched."
	aboutSnapshot   = "Prints the counters that match the patterns once, as a table, JSON or CSV, and exits. With --watch it follows them for a while first, and prints their statuses as watched (extending takes more than one reading)."
	aboutCheck      = "Prints a line for each stuck, no-expiry or leaked counter and exits 0 when there is none, 1 when there are some, 2 when it could not check: a probe for monitors and CI. With --watch it follows the counters for a while, and finds the extending ones too: a count that keeps growing past a whole window with its TTL pushed back on every hit (EXPIRE without NX), so the window never closes; a watch shorter than such a key's window could not tell, and exits 2."
	aboutIncr       = "Fires one atomic increment (or --count of them) at KEY and prints its new value and TTL. A key without a TTL is given its window in the same atomic step. A hash field (--field NAME, or a rule's field = \"NAME\") gets HINCRBY of that field; one whose hash's fields carry TTLs of their own (Redis 7.4+) gets HPEXPIRE ... NX of that field in the same step, never a TTL on the hash."
	aboutRepair     = "Gives every stuck and no-expiry counter its window as a TTL: PEXPIRE KEY MS NX, sent only while the key still holds what it was read as and has no TTL. It asks first, unless --yes."
	aboutCompletion = "Prints the script that completes countertop's commands, flags and their values in SHELL: bash (with the bash-completion package), zsh, fish or powershell."
	aboutServe      = "Watches the keys as the dashboard does, without a terminal, and serves what it holds over HTTP: /metrics for Prometheus, /healthz (200 while the feed is live and fresh, 503 with why), /problems (the problem keys as snapshot JSON). A scrape sends nothing to Redis. SIGTERM or ctrl+c stops it."
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
	serveExamples = []string{
		"# Metrics on 127.0.0.1:9127 for Prometheus to scrape",
		"countertop serve --pattern 'ratelimit:*'",
		"# The 20 worst keys as series of their own",
		"countertop serve --listen 127.0.0.1:9127 --metrics-keys 20",
	}
	completionExamples = []string{
		"# In ~/.bashrc, for bash",
		"source <(countertop completion bash)",
		`countertop completion zsh > "${fpath[1]}/_countertop"`,
		"countertop completion fish > ~/.config/fish/completions/countertop.fish",
		"countertop completion powershell >> $PROFILE",
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

// examples returns a command's examples as cobra's Example holds them: a
// line each.
func examples(lines []string) string {
	return strings.Join(lines, "\n")
}

// helpWidth is the width help text is wrapped to: an 80-column terminal's,
// less a margin.
const helpWidth = 78

func (a *app) helpCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "help [COMMAND]",
		Short:   "print the help of countertop, or of a command",
		Long:    aboutHelp,
		Example: examples(helpExamples),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var names []cobra.Completion
			for _, c := range cmd.Root().Commands() {
				if len(args) == 0 && c.IsAvailableCommand() && strings.HasPrefix(c.Name(), toComplete) {
					names = append(names, cobra.CompletionWithDesc(c.Name(), c.Short))
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: a.run(func(cmd *cobra.Command, args []string) (int, error) {
			root := cmd.Root()
			switch {
			case len(args) > 1:
				return exitFailed, fmt.Errorf("help takes one command, not %d: countertop help COMMAND", len(args))
			case len(args) == 0: // countertop help is countertop --help
				return exitOK, root.Help()
			}
			target := subcommand(root, args[0])
			if target == nil {
				return exitFailed, unknownCommand(root, args[0])
			}
			return exitOK, target.Help()
		}),
	}
}

// helpOf returns cmd's --help: for countertop's, the list of commands
// first.
func helpOf(cmd *cobra.Command) string {
	var b strings.Builder
	if !cmd.HasParent() {
		b.WriteString("countertop: a terminal dashboard for live Redis counters\n\n")
		b.WriteString(commandList(cmd))
		b.WriteString("\n" + wrap("Run 'countertop help COMMAND' (or 'countertop COMMAND --help') for the flags of a command.", helpWidth, "") + "\n")
		b.WriteString(wrap(cmd.Long, helpWidth, ""))
	} else {
		fmt.Fprintf(&b, "Usage: %s\n\n", cmd.UseLine())
		b.WriteString(wrap(cmd.Long, helpWidth, ""))
	}
	if cmd.Example != "" {
		b.WriteString("\nExamples:\n")
		for _, e := range strings.Split(cmd.Example, "\n") {
			fmt.Fprintf(&b, "  %s\n", e)
		}
	}
	if flags := helpFlags(cmd); len(flags) > 0 {
		b.WriteString("\nFlags:\n")
		b.WriteString(flagTable(flags))
	}
	return b.String()
}

// listed returns the commands the list of commands shows: root, the
// dashboard, then the others (cobra's hidden ones left out).
func listed(root *cobra.Command) []*cobra.Command {
	return append([]*cobra.Command{root}, slices.DeleteFunc(root.Commands(), func(c *cobra.Command) bool {
		return !c.IsAvailableCommand() && c.Name() != "help" // cobra counts help out
	})...)
}

// commandList returns the list of commands with what each does.
func commandList(root *cobra.Command) string {
	cmds := listed(root)
	var b strings.Builder
	b.WriteString("Usage:\n")
	width := 0
	for _, c := range cmds {
		width = max(width, len(synopsisShort(c)))
	}
	for _, c := range cmds {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, synopsisShort(c), c.Short)
	}
	return b.String()
}

// synopsisShort is cmd's synopsis with only the first of its arguments:
// "countertop incr KEY [flags]" fits the list, the rest is in its --help.
func synopsisShort(cmd *cobra.Command) string {
	line := cmd.UseLine()
	if before, _, ok := strings.Cut(line, " KEY "); ok {
		return before + " KEY [flags]"
	}
	if before, _, ok := strings.Cut(line, " [--"); ok {
		return before + " [flags]"
	}
	return line
}

// A helpFlag is one line of the flag table: "-u, --url URL" and its help.
type helpFlag struct {
	names string
	usage string
}

// helpFlags returns cmd's flags as help lists them: the command's own
// first (alphabetically), then the shared settings in the table's order,
// each with its one-letter spelling (redis-cli's -u for --url) beside it.
func helpFlags(cmd *cobra.Command) []helpFlag {
	isSetting := make(map[string]bool)
	for _, s := range config.Settings() {
		isSetting[s.Flag] = true
	}
	var own, shared []helpFlag
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !isSetting[f.Name] && !f.Hidden {
			own = append(own, describeFlag(f))
		}
	})
	for _, s := range config.Settings() {
		if f := cmd.Flags().Lookup(s.Flag); f != nil && s.Flag != "" {
			shared = append(shared, describeFlag(f))
		}
	}
	return append(own, shared...)
}

// describeFlag returns f's line of the table.
func describeFlag(f *pflag.Flag) helpFlag {
	arg, usage := pflag.UnquoteUsage(f)
	names := "--" + f.Name
	if f.Shorthand != "" {
		names = "-" + f.Shorthand + ", " + names
	}
	if arg != "" && f.NoOptDefVal == "" {
		names += " " + arg
	}
	if d := f.DefValue; d != "" && d != "false" && d != "0" && d != "0s" && d != "[]" {
		usage += " (default " + d + ")"
	}
	return helpFlag{names: names, usage: usage}
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
