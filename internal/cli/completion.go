package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/countertop/countertop/config"
)

// shells are the shells `countertop completion` writes a script for.
var shells = []string{"bash", "zsh", "fish", "powershell"}

func (a *app) completionCommand() *cobra.Command {
	return &cobra.Command{
		Use:       "completion SHELL",
		Short:     "print the completion script of a shell",
		Long:      aboutCompletion,
		Example:   examples(completionExamples),
		ValidArgs: shells,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 || !slices.Contains(shells, args[0]) {
				return errors.New("completion takes the name of a shell: countertop completion bash, zsh, fish or powershell")
			}
			return nil
		},
		RunE: a.run(func(cmd *cobra.Command, args []string) (int, error) {
			return exitOK, writeCompletion(cmd.Root(), args[0], a.stdout)
		}),
	}
}

// writeCompletion writes root's completion script for shell to w. The
// scripts are cobra's: each asks countertop itself (countertop __complete
// ...) for the words that fit where the cursor is, so that they follow
// the commands and flags of the binary installed.
func writeCompletion(root *cobra.Command, shell string, w io.Writer) error {
	switch shell {
	case "bash":
		return root.GenBashCompletionV2(w, true)
	case "zsh":
		return root.GenZshCompletion(w)
	case "fish":
		return root.GenFishCompletion(w, true)
	default:
		return root.GenPowerShellCompletionWithDesc(w)
	}
}

// completeValues registers, for each of cmd's flags that takes a value,
// what completes it: values, for the command's own flags that take one of
// a list, else the setting's Values; for --server, the names in the
// config file; a file's name for a FILE; nothing for a value to type (a
// URL, a number), where a shell would otherwise offer file names.
func completeValues(cmd *cobra.Command, values map[string][]string) {
	for _, s := range config.Settings() {
		if s.Values != nil && values[s.Flag] == nil {
			values[s.Flag] = s.Values
		}
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.NoOptDefVal != "" || f.Hidden { // a switch
			return
		}
		complete := cobra.NoFileCompletions
		if arg, _ := pflag.UnquoteUsage(f); arg == "FILE" {
			complete = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return nil, cobra.ShellCompDirectiveDefault
			}
		}
		if v := values[f.Name]; v != nil {
			complete = cobra.FixedCompletions(v, cobra.ShellCompDirectiveNoFileComp)
		}
		if f.Name == "server" { // the names in the config file the command line reads
			complete = func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
				file := ""
				if fl := cmd.Flags().Lookup("config"); fl != nil {
					file = fl.Value.String()
				}
				return config.ServerNames(file, os.Getenv), cobra.ShellCompDirectiveNoFileComp
			}
		}
		must(cmd.RegisterFlagCompletionFunc(f.Name, complete))
	})
}

// Completion writes countertop's completion script for shell, one of
// bash, zsh, fish and powershell, to w: what `countertop completion SHELL`
// prints, for the release archives.
func Completion(w io.Writer, shell string) error {
	if !slices.Contains(shells, shell) {
		return fmt.Errorf("no completion for %q: the shells are %s", shell, strings.Join(shells, ", "))
	}
	return writeCompletion((&app{stdout: io.Discard, stderr: io.Discard}).newRoot(), shell, w)
}
