// Command countertop is a terminal dashboard for live Redis counters: it
// finds the keys that match glob patterns, shows each counter's value, a TTL
// that counts down and its limit, and paints every counter without an expiry
// red. See README.md; the subcommands are internal/cli's.
package main

import (
	"os"

	"github.com/countertop/countertop/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr))
}
