// Package cli parses sniped's command line and runs its subcommands:
// serve (the service) and account (key and tier administration).
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Version is the build's version; the interface's own version is api.Version.
var Version = "0.1.0-dev"

// Default locations, overridable by flags or environment.
const (
	DefaultAddr = "127.0.0.1:8080"
	DefaultData = "./sniped-data"
	envAddr     = "SNIPED_ADDR"
	envData     = "SNIPED_DATA"
	envDatabase = "SNIPED_DATABASE_URL"
)

const usage = `sniped — a self-hostable snipe service

Usage:
  sniped serve [--addr 127.0.0.1:8080] [--data DIR] [flags]   run the service
  sniped account add --name NAME [--tier paid|free]            create an account; prints its key
  sniped account list                                          list accounts
  sniped account rotate-key --name NAME                        issue a new key; prints it
  sniped account set-tier --name NAME --tier paid|free         change an account's tier
  sniped account remove --name NAME                            delete an account and its data
  sniped account link --name NAME --refresh-token-file FILE    link an account to its eBay user (--market ebay)
  sniped account unlink --name NAME                            remove an account's eBay link
  sniped market serve [--addr 127.0.0.1:9090]                  serve the simulator in eBay's shape (docs/ebay.md)
  sniped version                                               print the version

Every command takes --data DIR (default ./sniped-data, env SNIPED_DATA) or
--database-url postgres://... (env SNIPED_DATABASE_URL) to choose the store.
sniped serve runs on the built-in simulator unless given --market ebay
(real eBay auctions; see docs/ebay.md).
Run "sniped serve --help" or "sniped account add --help" for all flags.
`

// errUsage marks a command-line mistake: exit code 2 after the message.
var errUsage = errors.New("usage")

// Run executes the command in args (without the program name) and returns
// the process exit code: 0 success, 1 failure, 2 bad usage.
func Run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = runServe(args[1:], stderr)
	case "account":
		err = runAccount(args[1:], stdout, stderr)
	case "market":
		err = runMarket(args[1:], stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "sniped", Version)
	case "help", "--help", "-help", "-h":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "sniped: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, "sniped:", strings.TrimPrefix(err.Error(), "usage: "))
		return 2
	default:
		fmt.Fprintln(stderr, "sniped:", err)
		return 1
	}
}

// usageErr formats a command-line mistake.
func usageErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, a...)...)
}

// storeFlags are the flags that choose the store, shared by every command.
type storeFlags struct {
	data        string
	databaseURL string
	// cacheMiB is SQLite's writer page cache cap (serve's --sqlite-cache;
	// 0: the store's default).
	cacheMiB int
}

func (s *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.data, "data", envOr(envData, DefaultData), "data folder for the SQLite store and simulator state (env "+envData+")")
	fs.StringVar(&s.databaseURL, "database-url", os.Getenv(envDatabase), "PostgreSQL URL; when set the store lives there instead of the data folder (env "+envDatabase+")")
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// parse parses fs and refuses stray positional arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v", err)
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	return nil
}
