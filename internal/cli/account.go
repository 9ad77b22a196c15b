package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"text/tabwriter"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/store"
)

// accountName is what an account (and so its marketplace user) may be called.
var accountName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

func runAccount(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageErr("account needs a subcommand: add, list, rotate-key, set-tier or remove")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "add", "list", "rotate-key", "set-tier", "remove":
	default:
		return usageErr("unknown account subcommand %q (want add, list, rotate-key, set-tier or remove)", sub)
	}
	fs := flag.NewFlagSet("sniped account "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs)
	name := fs.String("name", "", "account name: lower-case letters, digits, '.', '_' or '-', at most 64")
	var tier *string
	if sub == "add" || sub == "set-tier" {
		tier = fs.String("tier", string(store.TierPaid), "tier: paid (may use the interface) or free")
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	needName := sub != "list"
	if needName && !accountName.MatchString(*name) {
		return usageErr("--name %q must be 1-64 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit", *name)
	}
	if tier != nil && *tier != string(store.TierPaid) && *tier != string(store.TierFree) {
		return usageErr("--tier must be paid or free, not %q", *tier)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := openStore(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()

	switch sub {
	case "add":
		plain, hash := key.New()
		if _, err := st.CreateAccount(ctx, *name, store.Tier(*tier), hash, clock.Real{}.Now()); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return fmt.Errorf("account %q already exists", *name)
			}
			return fmt.Errorf("create account: %w", err)
		}
		fmt.Fprintln(stdout, plain)
	case "list":
		accts, err := st.Accounts(ctx)
		if err != nil {
			return fmt.Errorf("list accounts: %w", err)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tTIER\tCREATED (UTC)")
		for _, a := range accts {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", a.Name, a.Tier, clock.FormatUTC(a.CreatedAt))
		}
		return tw.Flush()
	case "rotate-key":
		plain, hash := key.New()
		if err := st.SetKeyHash(ctx, *name, hash); err != nil {
			return accountErr(*name, err)
		}
		fmt.Fprintln(stdout, plain)
	case "set-tier":
		if err := st.SetTier(ctx, *name, store.Tier(*tier)); err != nil {
			return accountErr(*name, err)
		}
		fmt.Fprintf(stderr, "account %s is now on the %s tier\n", *name, *tier)
	case "remove":
		if err := st.DeleteAccount(ctx, *name); err != nil {
			return accountErr(*name, err)
		}
		fmt.Fprintf(stderr, "account %s removed with its snipes, groups and searches\n", *name)
	}
	return nil
}

func accountErr(name string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no account named %q", name)
	}
	return fmt.Errorf("account %s: %w", name, err)
}
