// Package cli parses sniped's command line and runs its subcommands.
package cli

import (
	"fmt"
	"io"
)

// Run executes the command in args (without the program name) and returns
// the process exit code.
func Run(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "sniped: not implemented yet")
	return 2
}
