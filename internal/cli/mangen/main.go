// Command mangen writes countertop's manual page, countertop(1), generated
// from its commands: to stdout (make man), or with a folder's name as its
// argument into that folder, with the completion scripts beside it in
// completions/, for the release archives (.goreleaser.yaml).
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/countertop/countertop/internal/cli"
)

func main() {
	var err error
	switch len(os.Args) {
	case 1:
		err = cli.Man(os.Stdout)
	case 2:
		err = writeAssets(os.Args[1])
	default:
		err = fmt.Errorf("takes at most one argument, the folder to write into")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mangen:", err)
		os.Exit(1)
	}
}

// completionFiles are the completion scripts' names, by shell, as each
// shell's completion folders expect them.
var completionFiles = map[string]string{
	"bash":       "countertop.bash",
	"zsh":        "_countertop",
	"fish":       "countertop.fish",
	"powershell": "countertop.ps1",
}

// writeAssets writes dir/countertop.1 and dir/completions/*.
func writeAssets(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "completions"), 0o755); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "countertop.1"), cli.Man); err != nil {
		return err
	}
	for shell, name := range completionFiles {
		err := writeFile(filepath.Join(dir, "completions", name), func(w io.Writer) error { return cli.Completion(w, shell) })
		if err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes what write writes to the file at path.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
