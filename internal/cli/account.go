package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/marketlink"
	"github.com/sniped/sniped/internal/store"
)

// accountName is what an account (and so its marketplace user) may be called.
var accountName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

func runAccount(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageErr("account needs a subcommand: add, list, rotate-key, set-tier, remove, link or unlink")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "add", "list", "rotate-key", "set-tier", "remove":
	case "link", "unlink":
		return runLink(sub, args, stderr)
	default:
		return usageErr("unknown account subcommand %q (want add, list, rotate-key, set-tier, remove, link or unlink)", sub)
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
		fmt.Fprintln(tw, "NAME\tTIER\tCREATED (UTC)\tEBAY LINK")
		for _, a := range accts {
			link, err := linkSummary(ctx, st, a)
			if err != nil {
				return err
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.Name, a.Tier, clock.FormatUTC(a.CreatedAt), link)
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

// runLink is `account link` (store an eBay refresh token for an account,
// sealed by the secret key) and `account unlink`.
func runLink(sub string, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("sniped account "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs)
	name := fs.String("name", "", "account name")
	var (
		keys                     secretFlags
		tokenFile, user, expires *string
		env, apiURL              *string
	)
	if sub == "link" {
		keys.register(fs)
		tokenFile = fs.String("refresh-token-file", "", "file holding the account's eBay refresh token (- reads standard input); never pass a token as a flag value")
		user = fs.String("market-user", "", "the eBay user name the token belongs to (shown to the user; optional)")
		expires = fs.String("token-expires", "", "when the refresh token expires, UTC: YYYY-MM-DD or 'YYYY-MM-DD HH:MM:SS' (optional)")
		env = fs.String("ebay-env", "sandbox", "eBay environment the token is for: sandbox or production (as serve's --ebay-env)")
		apiURL = fs.String("ebay-api-url", "", "eBay API URL the token is for, when serve runs with --ebay-api-url")
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if !accountName.MatchString(*name) {
		return usageErr("--name %q must be 1-64 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit", *name)
	}
	var (
		tok    marketlink.Token
		market string
	)
	if sub == "link" {
		var err error
		if market, err = ebayMarketID(*env, *apiURL); err != nil {
			return err
		}
		if *tokenFile == "" {
			return usageErr("--refresh-token-file is required (a file holding the token, or - for standard input)")
		}
		if tok.RefreshToken, err = readTokenFile(*tokenFile); err != nil {
			return err
		}
		tok.User = strings.TrimSpace(*user)
		if *expires != "" {
			if tok.Expiry, err = parseExpiry(*expires); err != nil {
				return err
			}
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := openStore(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()
	acct, err := st.AccountByName(ctx, *name)
	if err != nil {
		return accountErr(*name, err)
	}

	if sub == "unlink" {
		// Unlinking needs no key: it deletes the sealed token.
		if err := st.DeleteMarketLink(ctx, acct.ID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("account %s has no linked marketplace account", *name)
			}
			return fmt.Errorf("unlink account %s: %w", *name, err)
		}
		// A running serve reads the link on every eBay call: it stops too.
		fmt.Fprintf(stderr, "account %s unlinked: its snipes cannot bid on eBay until it is linked again.\n", *name)
		return nil
	}
	k, err := loadSecretKey(keys, sf.data, func(msg string) { fmt.Fprintln(stderr, "sniped:", msg) })
	if err != nil {
		return err
	}
	links, err := marketlink.New(marketlink.Config{Store: st, Key: k, Market: market, MarketName: "eBay"})
	if err != nil {
		return err
	}
	if err := links.Link(ctx, acct, tok); err != nil {
		return err
	}
	who := "an eBay user (name not given; --market-user names it)"
	if tok.User != "" {
		who = "eBay user " + tok.User
	}
	until := "expiry unknown (--token-expires sets it)"
	if !tok.Expiry.IsZero() {
		until = "token expires " + clock.FormatUTC(tok.Expiry) + " UTC"
	}
	fmt.Fprintf(stderr, "account %s linked to %s at %s; %s\n", *name, who, market, until)
	return nil
}

// linkSummary describes an account's eBay link for account list: the
// eBay user (or "linked") and the token's expiry, or "-".
func linkSummary(ctx context.Context, st store.Store, a store.Account) (string, error) {
	l, err := st.MarketLink(ctx, a.ID)
	if errors.Is(err, store.ErrNotFound) {
		return "-", nil
	}
	if err != nil {
		return "", fmt.Errorf("market link of %s: %w", a.Name, err)
	}
	out := l.User
	if out == "" {
		out = "linked"
	}
	if !l.TokenExpires.IsZero() {
		out += " until " + l.TokenExpires.Format(time.DateOnly)
	}
	return out, nil
}

// readTokenFile reads a refresh token from a file or standard input ("-").
// Errors never quote the file's content.
func readTokenFile(path string) (string, error) {
	var (
		b   []byte
		err error
	)
	if path == "-" {
		b, err = io.ReadAll(io.LimitReader(os.Stdin, 1<<16))
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return "", fmt.Errorf("read --refresh-token-file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	switch {
	case tok == "":
		return "", fmt.Errorf("--refresh-token-file %s is empty", path)
	case strings.ContainsAny(tok, " \t\r\n"):
		return "", fmt.Errorf("--refresh-token-file %s must hold only the refresh token (one line, no spaces)", path)
	case len(tok) > 4096:
		return "", fmt.Errorf("--refresh-token-file %s holds %d bytes, too long for a refresh token", path, len(tok))
	}
	return tok, nil
}

// parseExpiry reads --token-expires as a UTC date or date-time.
func parseExpiry(v string) (time.Time, error) {
	for _, layout := range []string{time.DateTime, time.DateOnly} {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usageErr("--token-expires must be YYYY-MM-DD or 'YYYY-MM-DD HH:MM:SS' (UTC), not %q", v)
}

func accountErr(name string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no account named %q", name)
	}
	return fmt.Errorf("account %s: %w", name, err)
}
