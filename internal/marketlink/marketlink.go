// Package marketlink links sniped accounts to their marketplace (eBay)
// users. It keeps each account's refresh token sealed by the server key
// (package secret) in the store, hands the plaintext to the marketplace
// adapter when it asks (Links.RefreshToken), and runs the consent flow:
// Start signs a short-lived state naming the account, Finish checks it and
// exchanges the marketplace's code for a token.
//
// The store never sees a plaintext token, and no error or log line here
// ever contains one.
package marketlink

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/secret"
	"github.com/sniped/sniped/internal/store"
)

// DefaultStateTTL is how long a consent flow may take, from Start to the
// marketplace redirecting back. eBay's own code lasts five minutes; the
// rest is for signing in (and two-factor checks) on eBay's page.
const DefaultStateTTL = 15 * time.Minute

// Token is what a user's consent yields.
type Token struct {
	RefreshToken string
	// Expiry is when the refresh token expires; zero when unknown.
	Expiry time.Time
	// User is the marketplace user name.
	User string
}

// Consent is the marketplace's side of the consent flow; the eBay adapter
// provides it (see cli's wiring).
type Consent interface {
	// AuthorizeURL is the consent page, carrying state back to the callback.
	AuthorizeURL(state string) string
	// ExchangeCode turns the code the consent page returned into a token.
	ExchangeCode(ctx context.Context, code string) (Token, error)
}

// Config is what Links needs.
type Config struct {
	Store store.Store
	Key   *secret.Key
	// Market identifies the marketplace the tokens belong to (the eBay API
	// URL). A link made for another marketplace is not used.
	Market string
	// MarketName names the marketplace in messages, e.g. "eBay".
	MarketName string
	// Consent runs the consent flow; nil when only operators link
	// accounts (sniped account link).
	Consent Consent
	// LinkFlags are the flags `sniped account link` needs to make a link
	// for Market (e.g. "--ebay-env production"), named in HowToLink so
	// that an operator who copies the command makes a usable link.
	LinkFlags string
	// Clock defaults to clock.Real.
	Clock clock.Clock
	// StateTTL defaults to DefaultStateTTL.
	StateTTL time.Duration
}

// Links keeps account links; it implements the eBay adapter's Links.
type Links struct {
	cfg   Config
	state []byte // HMAC key of consent states
}

// New returns Links over cfg.
func New(cfg Config) (*Links, error) {
	if cfg.Store == nil || cfg.Key == nil || cfg.Market == "" {
		return nil, errors.New("marketlink: Store, Key and Market are required")
	}
	if cfg.MarketName == "" {
		cfg.MarketName = "marketplace"
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.StateTTL <= 0 {
		cfg.StateTTL = DefaultStateTTL
	}
	return &Links{cfg: cfg, state: cfg.Key.Derive("sniped marketlink state v1")}, nil
}

// MarketName names the marketplace in messages.
func (l *Links) MarketName() string { return l.cfg.MarketName }

// Error is a link problem, with a message for the account's user that says
// what to do. It wraps market.ErrNotAuthorized, so a snipe that meets it
// settles as Marketplace Authorization Failed, and it is a
// market.Explainer, so that the user sees the message.
type Error struct {
	// Message is complete and never holds a token; it may name hosts.
	Message string
	// Explanation, when set, is Message without hosts, for the user.
	Explanation string
}

// Error is the complete message.
func (e *Error) Error() string { return e.Message }

// Unwrap makes errors.Is(err, market.ErrNotAuthorized) hold.
func (e *Error) Unwrap() error { return market.ErrNotAuthorized }

// Explain is the message for the user (market.Explainer).
func (e *Error) Explain() string {
	if e.Explanation != "" {
		return e.Explanation
	}
	return e.Message
}

var _ market.Explainer = (*Error)(nil)

// HowToLink is the sentence that tells the user of account name how to link.
func (l *Links) HowToLink(name string) string {
	return fmt.Sprintf("Link your %s account in the dashboard (Connect %s) or ask the operator to run \"%s\".",
		l.cfg.MarketName, l.cfg.MarketName, l.LinkCommand(name))
}

// LinkCommand is the operator's command that links account name.
func (l *Links) LinkCommand(name string) string {
	cmd := "sniped account link --name " + name + " --refresh-token-file FILE"
	if l.cfg.LinkFlags != "" {
		cmd += " " + l.cfg.LinkFlags
	}
	return cmd
}

// aad binds a sealed token to its account and marketplace: a ciphertext
// copied to another account's row, or relabelled, does not open.
func (l *Links) aad(accountID int64, mkt string) []byte {
	return []byte("sniped market link v1\x00" + mkt + "\x00" + strconv.FormatInt(accountID, 10))
}

// RefreshToken returns the refresh token of the account named user. An
// unlinked, expired or unreadable link is an *Error (market.ErrNotAuthorized)
// saying how to link; a store failure is market.ErrUnavailable.
func (l *Links) RefreshToken(ctx context.Context, user string) (string, error) {
	acct, err := l.cfg.Store.AccountByName(ctx, user)
	if errors.Is(err, store.ErrNotFound) {
		return "", &Error{Message: fmt.Sprintf("There is no sniped account named %s any more.", user)}
	}
	if err != nil {
		return "", fmt.Errorf("marketlink: %v: %w", err, market.ErrUnavailable)
	}
	link, err := l.cfg.Store.MarketLink(ctx, acct.ID)
	if errors.Is(err, store.ErrNotFound) {
		return "", &Error{Message: fmt.Sprintf("No %s account is linked to sniped account %s, so sniped cannot bid for it. %s",
			l.cfg.MarketName, user, l.HowToLink(user))}
	}
	if err != nil {
		return "", fmt.Errorf("marketlink: %v: %w", err, market.ErrUnavailable)
	}
	if link.Market != l.cfg.Market {
		return "", &Error{
			Message: fmt.Sprintf("Sniped account %s is linked for another %s environment (%s), not the one this server uses (%s). %s",
				user, l.cfg.MarketName, link.Market, l.cfg.Market, l.HowToLink(user)),
			Explanation: fmt.Sprintf("Sniped account %s is linked for another %s environment (sandbox or production) than the one this server uses. %s",
				user, l.cfg.MarketName, l.HowToLink(user)),
		}
	}
	if !link.TokenExpires.IsZero() && !l.cfg.Clock.Now().Before(link.TokenExpires) {
		return "", &Error{Message: fmt.Sprintf("The %s link of sniped account %s expired on %s UTC. %s",
			l.cfg.MarketName, user, clock.FormatUTC(link.TokenExpires), l.HowToLink(user))}
	}
	plain, err := l.cfg.Key.Open(link.SealedToken, l.aad(acct.ID, link.Market))
	if err != nil {
		return "", &Error{Message: fmt.Sprintf("The stored %s token of sniped account %s cannot be decrypted: this server's secret key (--secret-key-file or SNIPED_SECRET_KEY) is not the one it was stored with. Restore that key, or link again. %s",
			l.cfg.MarketName, user, l.HowToLink(user))}
	}
	return string(plain), nil
}

// Link stores acct's link to the marketplace user t.User, replacing any
// earlier one.
func (l *Links) Link(ctx context.Context, acct store.Account, t Token) error {
	if t.RefreshToken == "" {
		return errors.New("marketlink: the refresh token is empty")
	}
	err := l.cfg.Store.SetMarketLink(ctx, store.MarketLink{
		AccountID:    acct.ID,
		Market:       l.cfg.Market,
		User:         t.User,
		SealedToken:  l.cfg.Key.Seal([]byte(t.RefreshToken), l.aad(acct.ID, l.cfg.Market)),
		TokenExpires: t.Expiry,
		LinkedAt:     l.cfg.Clock.Now(),
	})
	if err != nil {
		return fmt.Errorf("link account %s: %w", acct.Name, err)
	}
	return nil
}

// Unlink removes acct's link; store.ErrNotFound when there is none.
func (l *Links) Unlink(ctx context.Context, acct store.Account) error {
	if err := l.cfg.Store.DeleteMarketLink(ctx, acct.ID); err != nil {
		return fmt.Errorf("unlink account %s: %w", acct.Name, err)
	}
	return nil
}

// Status is an account's link as its user may see it (never the token).
type Status struct {
	Linked bool
	// User is the marketplace user name ("" when unknown or unlinked).
	User string
	// TokenExpires is zero when unknown.
	TokenExpires time.Time
	LinkedAt     time.Time
	// Expired: the refresh token's expiry has passed.
	Expired bool
	// OtherMarket: linked, but for another marketplace environment than
	// this server's, so the link is not used.
	OtherMarket bool
	// Unreadable: the stored token does not decrypt under this server's
	// secret key (the key was replaced).
	Unreadable bool
}

// Usable reports whether snipes can bid with this link.
func (s Status) Usable() bool { return s.Linked && !s.Expired && !s.OtherMarket && !s.Unreadable }

// Status reports acct's link.
func (l *Links) Status(ctx context.Context, acct store.Account) (Status, error) {
	link, err := l.cfg.Store.MarketLink(ctx, acct.ID)
	if errors.Is(err, store.ErrNotFound) {
		return Status{}, nil
	}
	if err != nil {
		return Status{}, fmt.Errorf("link status of %s: %w", acct.Name, err)
	}
	return Status{
		Linked:       true,
		User:         link.User,
		TokenExpires: link.TokenExpires,
		LinkedAt:     link.LinkedAt,
		Expired:      !link.TokenExpires.IsZero() && !l.cfg.Clock.Now().Before(link.TokenExpires),
		OtherMarket:  link.Market != l.cfg.Market,
		Unreadable:   !l.opens(link),
	}, nil
}

// opens reports whether link's token decrypts under this server's key.
func (l *Links) opens(link store.MarketLink) bool {
	_, err := l.cfg.Key.Open(link.SealedToken, l.aad(link.AccountID, link.Market))
	return err == nil
}
