package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/internal/report"
	"github.com/countertop/countertop/internal/words"
	"github.com/countertop/countertop/model"
)

// shells are the shells `countertop completion` writes a script for.
var shells = []string{"bash", "zsh", "fish"}

// runCompletion prints the completion script of the shell args name.
func runCompletion(_ context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("countertop completion", flag.ContinueOnError)
	rest, err := parseArgs(fs, args, stderr)
	if err != nil {
		return exitFailed, err
	}
	if len(rest) != 1 || !slices.Contains(shells, rest[0]) {
		return exitFailed, errors.New("completion takes the name of a shell: countertop completion bash, zsh or fish")
	}
	cmds := completionCommands()
	var script string
	switch rest[0] {
	case "bash":
		script = bashCompletion(cmds)
	case "zsh":
		script = zshCompletion(cmds)
	case "fish":
		script = fishCompletion(cmds)
	}
	_, err = io.WriteString(stdout, script)
	return exitOK, err
}

// A compCommand is what a completion script knows of one command.
type compCommand struct {
	name    string // "" for the dashboard
	summary string
	flags   []compFlag
	args    []string // what its first argument can be, if it is one of a list
}

// A compFlag is what a completion script knows of one flag.
type compFlag struct {
	name, short string // short is "" for none
	usage       string
	valued      bool     // it takes a value
	values      []string // the values it takes, when they are a list
	files       bool     // its value is a file's name
}

// spelled returns the flag as typed, with its one-letter spelling first.
func (f compFlag) spelled() []string {
	if f.short != "" {
		return []string{words.Flag(f.short), words.Flag(f.name)}
	}
	return []string{words.Flag(f.name)}
}

// completionCommands returns every command with its flags, as its --help
// lists them (each command's flags are read from its own --help, so that
// a flag a command adds is completed without more ado).
func completionCommands() []compCommand {
	var names []string
	for _, c := range commands {
		if c.name != "" {
			names = append(names, c.name)
		}
	}
	shorts, isShort := make(map[string]string), make(map[string]bool)
	for _, s := range config.Settings() {
		if s.Short != "" {
			shorts[s.Flag], isShort[s.Short] = s.Short, true
		}
	}
	var out []compCommand
	for _, c := range commands {
		cc := compCommand{name: c.name, summary: c.summary}
		commandFlags(c).VisitAll(func(f *flag.Flag) {
			if isShort[f.Name] {
				return // beside its long spelling
			}
			arg, usage := flag.UnquoteUsage(f)
			cf := compFlag{name: f.Name, short: shorts[f.Name], usage: usage, valued: !isBool(f), files: arg == "FILE"}
			cf.values = flagValues(c.name, f.Name)
			cc.flags = append(cc.flags, cf)
		})
		switch c.name {
		case "completion":
			cc.args = shells
		case "help":
			cc.args = names
		}
		out = append(out, cc)
	}
	return out
}

// flagValues returns the values flag of command takes, when they are a
// list; nil otherwise.
func flagValues(command, flag string) []string {
	switch {
	case flag == "mode":
		return model.WatchModeNames()
	case command == "snapshot" && flag == "format":
		return report.Formats
	case command == "check" && flag == "format":
		return []string{"text", "json"}
	}
	return nil
}

// commandWords returns the names of the commands but the dashboard.
func commandWords(cmds []compCommand) string {
	var names []string
	for _, c := range cmds {
		if c.name != "" {
			names = append(names, c.name)
		}
	}
	return strings.Join(names, " ")
}

// caseName is how the scripts name a command in their case statements.
func caseName(c compCommand) string {
	if c.name == "" {
		return "dashboard"
	}
	return c.name
}

// A valueCase is the values of a flag of a command, and the pattern that
// matches "command:flag" in the scripts' case statements.
type valueCase struct {
	pattern string
	values  []string
}

// flagCases returns how the bash and zsh scripts complete the word after
// a flag: the flags that take a value from a list, with it; the patterns
// of the flags that take a file's name, and of those that take a value to
// type. A flag takes the same kind of value in every command that has it.
func flagCases(cmds []compCommand) (listed []valueCase, files, free []string) {
	seen := make(map[string]bool)
	for _, c := range cmds {
		for _, f := range c.flags {
			for _, s := range f.spelled() {
				switch {
				case len(f.values) > 0:
					listed = append(listed, valueCase{caseName(c) + ":" + s, f.values})
				case seen[s] || !f.valued:
				case f.files:
					files = append(files, "*:"+s)
				default:
					free = append(free, "*:"+s)
				}
				seen[s] = true
			}
		}
	}
	return listed, files, free
}

// bashCompletion returns the bash script: a function that fills COMPREPLY
// from COMP_WORDS and COMP_CWORD, registered with complete -F.
func bashCompletion(cmds []compCommand) string {
	var b strings.Builder
	b.WriteString(`# bash completion for countertop. Load it in every shell with
#   source <(countertop completion bash)
# in ~/.bashrc, or save it as /etc/bash_completion.d/countertop.

_countertop() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd=dashboard
    # --flag=value: bash splits it at the '=' (see COMP_WORDBREAKS).
    if [[ $cur == = ]]; then
        cur=
    elif [[ $prev == = && $COMP_CWORD -gt 1 ]]; then
        prev=${COMP_WORDS[COMP_CWORD-2]}
    fi
    # A command goes first: countertop CMD [flags].
    if [[ $COMP_CWORD -gt 1 ]]; then
        case ${COMP_WORDS[1]} in
`)
	fmt.Fprintf(&b, "            %s) cmd=${COMP_WORDS[1]} ;;\n", strings.ReplaceAll(commandWords(cmds), " ", "|"))
	b.WriteString(`        esac
    fi
    case $cmd:$prev in
`)
	listed, files, free := flagCases(cmds)
	for _, l := range listed {
		fmt.Fprintf(&b, "        %s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", l.pattern, strings.Join(l.values, " "))
	}
	fmt.Fprintf(&b, "        %s)\n            compopt -o filenames 2>/dev/null\n            COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", strings.Join(files, "|"))
	fmt.Fprintf(&b, "        %s) COMPREPLY=(); return ;; # a value to type\n", strings.Join(free, "|"))
	b.WriteString("    esac\n    local flags\n    case $cmd in\n")
	for _, c := range cmds {
		var words []string
		for _, f := range c.flags {
			words = append(words, f.spelled()...)
		}
		fmt.Fprintf(&b, "        %s) flags=%q ;;\n", caseName(c), strings.Join(words, " "))
	}
	b.WriteString(`    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    elif [[ $COMP_CWORD -eq 1 ]]; then
`)
	fmt.Fprintf(&b, "        COMPREPLY=($(compgen -W %q -- \"$cur\"))\n", commandWords(cmds))
	b.WriteString("    else\n        case $cmd in\n")
	for _, c := range cmds {
		if len(c.args) > 0 {
			fmt.Fprintf(&b, "            %s) [[ $COMP_CWORD -eq 2 ]] && COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", caseName(c), strings.Join(c.args, " "))
		}
	}
	b.WriteString(`        esac
    fi
}
complete -F _countertop countertop
`)
	return b.String()
}

// zshCompletion returns the zsh script: _countertop, for a directory of
// $fpath (autoloaded by compinit) or to source, after compinit.
func zshCompletion(cmds []compCommand) string {
	var b strings.Builder
	b.WriteString(`#compdef countertop
# zsh completion for countertop. Save it as _countertop in a directory of
# $fpath (countertop completion zsh > "${fpath[1]}/_countertop"), or load it
# after compinit with: source <(countertop completion zsh)

_countertop() {
    local cur=${words[CURRENT]} prev=${words[CURRENT-1]} cmd=dashboard
    local -a names descs flags
    if (( CURRENT > 2 )); then
        case ${words[2]} in
`)
	fmt.Fprintf(&b, "            (%s) cmd=${words[2]} ;;\n", strings.ReplaceAll(commandWords(cmds), " ", "|"))
	b.WriteString("        esac\n    fi\n    case $cmd:$prev in\n")
	listed, files, free := flagCases(cmds)
	for _, l := range listed {
		fmt.Fprintf(&b, "        (%s) compadd -- %s; return ;;\n", l.pattern, strings.Join(l.values, " "))
	}
	fmt.Fprintf(&b, "        (%s) _files; return ;;\n", strings.Join(files, "|"))
	fmt.Fprintf(&b, "        (%s) return 1 ;; # a value to type\n", strings.Join(free, "|"))
	b.WriteString("    esac\n    case $cmd in\n")
	for _, c := range cmds {
		var words []string
		for _, f := range c.flags {
			words = append(words, f.spelled()...)
		}
		fmt.Fprintf(&b, "        (%s) flags=(%s) ;;\n", caseName(c), strings.Join(words, " "))
	}
	b.WriteString(`    esac
    if [[ $cur == -* ]]; then
        compadd -- $flags
    elif (( CURRENT == 2 )); then
`)
	var names, descs []string
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name))
	}
	for _, c := range cmds {
		if c.name != "" {
			names = append(names, c.name)
			descs = append(descs, zshQuote(fmt.Sprintf("%-*s -- %s", width, c.name, c.summary)))
		}
	}
	fmt.Fprintf(&b, "        names=(%s)\n        descs=(%s)\n        compadd -l -d descs -a names\n", strings.Join(names, " "), strings.Join(descs, " "))
	b.WriteString("    elif (( CURRENT == 3 )); then\n        case $cmd in\n")
	for _, c := range cmds {
		if len(c.args) > 0 {
			fmt.Fprintf(&b, "            (%s) compadd -- %s ;;\n", caseName(c), strings.Join(c.args, " "))
		}
	}
	b.WriteString(`        esac
    fi
}

if [[ $funcstack[1] == _countertop ]]; then
    _countertop "$@" # autoloaded from $fpath
else
    compdef _countertop countertop
fi
`)
	return b.String()
}

// zshQuote returns s in single quotes, as zsh reads them.
func zshQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fishCompletion returns the fish script: a complete line for each command
// and flag.
func fishCompletion(cmds []compCommand) string {
	var b strings.Builder
	b.WriteString(`# fish completion for countertop. Save it with
#   countertop completion fish > ~/.config/fish/completions/countertop.fish

# __countertop_using succeeds when the command line is of the command named
# (dashboard for none): a command goes first, countertop CMD [flags].
function __countertop_using -a name
    set -l words (commandline -opc)
    set -l cmd dashboard
`)
	fmt.Fprintf(&b, "    if set -q words[2]; and contains -- $words[2] %s\n", commandWords(cmds))
	b.WriteString(`        set cmd $words[2]
    end
    test $cmd = $name
end

# __countertop_arg succeeds when the word being completed is the n-th after
# countertop.
function __countertop_arg -a n
    test (count (commandline -opc)) -eq $n
end

complete -c countertop -f
`)
	for _, c := range cmds {
		if c.name != "" {
			fmt.Fprintf(&b, "complete -c countertop -n '__countertop_arg 1' -a %s -d %s\n", c.name, fishQuote(c.summary))
		}
	}
	for _, c := range cmds {
		if len(c.args) > 0 {
			fmt.Fprintf(&b, "complete -c countertop -n '__countertop_using %s; and __countertop_arg 2' -a %s\n", caseName(c), fishQuote(strings.Join(c.args, " ")))
		}
		for _, f := range c.flags {
			line := fmt.Sprintf("complete -c countertop -n '__countertop_using %s'", caseName(c))
			if len(f.name) == 1 {
				line += " -s " + f.name
			} else {
				line += " -l " + f.name
			}
			if f.short != "" {
				line += " -s " + f.short
			}
			switch {
			case len(f.values) > 0:
				line += " -x -a " + fishQuote(strings.Join(f.values, " "))
			case f.files:
				line += " -r -F"
			case f.valued:
				line += " -x"
			}
			fmt.Fprintf(&b, "%s -d %s\n", line, fishQuote(firstClause(f.usage)))
		}
	}
	return b.String()
}

// fishQuote returns s in single quotes, as fish reads them.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// firstClause returns usage up to its first colon, semicolon or
// parenthesis: a completion menu has room for a few words.
func firstClause(usage string) string {
	if i := strings.IndexAny(usage, ":;("); i > 0 {
		usage = usage[:i]
	}
	return strings.TrimSpace(usage)
}
