// Command sniped is a self-hostable snipe service. See README.md.
package main

import (
	"os"

	"github.com/sniped/sniped/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr))
}
