// Command mangen writes countertop's manual page, countertop(1), to
// stdout, from the text of its --help: make man.
package main

import (
	"fmt"
	"os"

	"github.com/countertop/countertop/internal/cli"
)

func main() {
	if err := cli.Man(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mangen:", err)
		os.Exit(1)
	}
}
