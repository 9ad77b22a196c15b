package cli

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/sniped/sniped/internal/market/ebay"
	"github.com/sniped/sniped/internal/marketlink"
	"github.com/sniped/sniped/internal/secret"
	"github.com/sniped/sniped/internal/store"
)

// Account links: the secret key that seals refresh tokens, and the wiring
// of package marketlink between the store, the eBay adapter and the API.

// secretFlags choose the key that seals marketplace tokens.
type secretFlags struct {
	keyFile string
}

func (f *secretFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.keyFile, "secret-key-file", "",
		"file holding the key that encrypts marketplace tokens and notification targets (base64 of 32 bytes); default env "+secret.EnvVar+
			", else DATA/"+secret.DefaultFile+", created on first use. Instances sharing a database need the same key")
}

// loadSecretKey finds the key. A newly made one is announced (note),
// since losing it means linking every account again.
func loadSecretKey(f secretFlags, data string, note func(msg string)) (*secret.Key, error) {
	k, src, err := secret.Load(secret.Config{File: f.keyFile, Env: os.Getenv(secret.EnvVar), DataDir: data})
	if err != nil {
		return nil, err
	}
	if src.Created {
		note(fmt.Sprintf("created the secret key that encrypts marketplace tokens and notification targets: %s (mode 0600). Back it up: without it, every account must link again and add its notification targets again.", src.File))
	}
	if src.Exposed {
		note(fmt.Sprintf("the secret key file %s is readable by other users; chmod 600 it", src.File))
	}
	return k, nil
}

// ebayMarketID names the eBay environment a link belongs to: its API URL
// (as serve's flags choose it), so that a sandbox token is never sent to
// production, or to a test server, and the other way round.
func ebayMarketID(env, apiURL string) (string, error) {
	if env != "sandbox" && env != "production" {
		return "", usageErr("--ebay-env must be sandbox or production, not %q", env)
	}
	m := marketConfig{env: env, apiURL: apiURL}
	api, _ := m.hosts()
	return api, nil
}

// linkFlags are the flags of `sniped account link` that make a link for
// the eBay API URL api (ebayMarketID's inverse). A custom URL is left as a
// placeholder: the message reaches users, who need not see hosts.
func linkFlags(api string) string {
	switch api {
	case ebay.SandboxAPIURL:
		return ""
	case ebay.ProductionAPIURL:
		return "--ebay-env production"
	}
	return "--ebay-api-url URL"
}

// linkSetup is what the account links of --market ebay are made of.
type linkSetup struct {
	Store store.Store
	Key   *secret.Key
	// MarketID is the eBay API URL (ebayMarketID).
	MarketID string
	// RuName empty means no consent page: only the operator links.
	RuName string
}

// ebayLinks builds the account links for --market ebay. Pass the result
// as ebay.Config.Links and api.Config.MarketLinks, then call bind with the
// adapter: the consent flow runs through the adapter, which in turn asks
// the links for refresh tokens.
func ebayLinks(c linkSetup) (links *marketlink.Links, bind func(*ebay.Adapter), err error) {
	consent := &ebayConsent{}
	cfg := marketlink.Config{Store: c.Store, Key: c.Key, Market: c.MarketID, MarketName: "eBay",
		LinkFlags: linkFlags(c.MarketID)}
	if c.RuName != "" {
		cfg.Consent = consent
	}
	links, err = marketlink.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	return links, func(a *ebay.Adapter) { consent.a = a }, nil
}

// ebayConsent runs the consent flow through the eBay adapter.
type ebayConsent struct{ a *ebay.Adapter }

func (c *ebayConsent) AuthorizeURL(state string) string { return c.a.AuthorizeURL(state) }

func (c *ebayConsent) ExchangeCode(ctx context.Context, code string) (marketlink.Token, error) {
	t, err := c.a.ExchangeCode(ctx, code)
	if err != nil {
		return marketlink.Token{}, err
	}
	return marketlink.Token{RefreshToken: t.RefreshToken, Expiry: t.RefreshExpiry, User: t.User}, nil
}
