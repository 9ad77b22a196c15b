package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/ebay"
	"github.com/sniped/sniped/internal/market/sim"
	"github.com/sniped/sniped/internal/marketlink"
	"github.com/sniped/sniped/internal/secret"
	"github.com/sniped/sniped/internal/store"
)

// Environment variables holding marketplace client secrets (never flags).
const (
	envEBaySecret   = "SNIPED_EBAY_CLIENT_SECRET"
	envMarketSecret = "SNIPED_MARKET_CLIENT_SECRET"
)

// The marketplaces `sniped serve --market` runs on.
const (
	marketSim  = "sim"
	marketEBay = "ebay"
)

// marketConfig is how `sniped serve` chooses its marketplace.
type marketConfig struct {
	kind        string
	env         string
	apiURL      string
	authURL     string
	marketplace string
	clientID    string
	ruName      string
	secretFile  string
}

func (m *marketConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&m.kind, "market", marketSim, "marketplace: sim (the built-in simulator: no real auction is ever bid on) or ebay (real bids through eBay's APIs; see docs/ebay.md)")
	fs.StringVar(&m.env, "ebay-env", "sandbox", "eBay environment: sandbox (test listings, no real money) or production (real auctions and money)")
	fs.StringVar(&m.apiURL, "ebay-api-url", "", "eBay API host, overriding --ebay-env's (e.g. the address of sniped market serve)")
	fs.StringVar(&m.authURL, "ebay-auth-url", "", "eBay consent page host, overriding --ebay-env's")
	fs.StringVar(&m.marketplace, "ebay-marketplace", ebay.DefaultMarketplace, "eBay marketplace bid on (X-EBAY-C-MARKETPLACE-ID), e.g. EBAY_US, EBAY_GB, EBAY_DE")
	fs.StringVar(&m.clientID, "ebay-client-id", "", "the eBay application's client id (App ID); its secret (Cert ID) comes from "+envEBaySecret+" or --ebay-client-secret-file, never a flag")
	fs.StringVar(&m.ruName, "ebay-runame", "", "the eBay application's RuName, whose accept URL is {public-url}/market/callback (needed to connect accounts)")
	fs.StringVar(&m.secretFile, "ebay-client-secret-file", "", "file holding the eBay application's client secret (instead of "+envEBaySecret+")")
}

// check validates the choice; eBay's credentials are checked when the
// marketplace is opened, so that --help and the simulator never need them.
func (m *marketConfig) check() error {
	switch m.kind {
	case marketSim, marketEBay:
	default:
		return usageErr("--market must be sim or ebay, not %q", m.kind)
	}
	switch m.env {
	case "sandbox", "production":
	default:
		return usageErr("--ebay-env must be sandbox or production, not %q", m.env)
	}
	for name, u := range map[string]string{"--ebay-api-url": m.apiURL, "--ebay-auth-url": m.authURL} {
		if u == "" {
			continue
		}
		if !ebay.HTTPURL(u) {
			return usageErr("%s must be an absolute http(s) URL, not %q", name, u)
		}
	}
	if !validMarketplaceID(m.marketplace) {
		return usageErr("--ebay-marketplace must look like EBAY_US, not %q", m.marketplace)
	}
	return nil
}

func validMarketplaceID(s string) bool {
	rest, ok := strings.CutPrefix(s, "EBAY_")
	if !ok || len(rest) < 2 || len(rest) > 8 {
		return false
	}
	for _, r := range rest {
		if (r < 'A' || r > 'Z') && r != '_' {
			return false
		}
	}
	return true
}

// hosts are the API and consent hosts: the environment's, or the overrides.
func (m *marketConfig) hosts() (api, auth string) {
	api, auth = ebay.SandboxAPIURL, ebay.SandboxAuthURL
	if m.env == "production" {
		api, auth = ebay.ProductionAPIURL, ebay.ProductionAuthURL
	}
	if m.apiURL != "" {
		api = m.apiURL
	}
	if m.authURL != "" {
		auth = m.authURL
	}
	return strings.TrimSuffix(api, "/"), strings.TrimSuffix(auth, "/")
}

// clientSecret reads the eBay client secret from its file or environment
// variable: never from a flag, where it would show in `ps`.
func (m *marketConfig) clientSecret(log *slog.Logger) (string, error) {
	env := os.Getenv(envEBaySecret)
	if m.secretFile == "" {
		return strings.TrimSpace(env), nil
	}
	if env != "" {
		return "", usageErr("the eBay client secret is set twice: use %s or --ebay-client-secret-file, not both", envEBaySecret)
	}
	text, exposed, err := secret.ReadFile(m.secretFile)
	if err != nil {
		return "", fmt.Errorf("--ebay-client-secret-file: %w", err)
	}
	if exposed {
		log.Warn("the eBay client secret file is readable by other users; chmod 600 it", "file", m.secretFile)
	}
	return text, nil
}

// servedMarket is the marketplace `sniped serve` runs on.
type servedMarket struct {
	market.Market
	// Exactly one of sim and ebay is set.
	sim  *sim.Sim
	ebay *ebay.Adapter
	// links are the account links; nil on the simulator.
	links *marketlink.Links
	// describe says in one line which marketplace runs (banner and log).
	describe string
}

// Close releases the simulator's database.
func (m *servedMarket) Close() error {
	if m.sim != nil {
		return m.sim.Close()
	}
	return nil
}

// marketKeys are the secrets of --market ebay: the application's client
// secret and the key that seals refresh tokens. Serve reads them before it
// opens the store, so that a missing or bad one stops it before the first
// start creates the admin account and prints its key (which a failed start
// would bury).
type marketKeys struct {
	clientSecret string
	tokenKey     *secret.Key
}

// loadMarketKeys reads the keys --market ebay needs; none for the
// simulator.
func loadMarketKeys(c serveConfig, log *slog.Logger) (marketKeys, error) {
	if c.market.kind != marketEBay {
		return marketKeys{}, nil
	}
	m := c.market
	sec, err := m.clientSecret(log)
	if err != nil {
		return marketKeys{}, err
	}
	if m.clientID == "" || sec == "" {
		return marketKeys{}, usageErr("--market ebay needs the eBay application's keys: its client id (App ID) in --ebay-client-id, and its client secret (Cert ID) in %s or a file named by --ebay-client-secret-file; see docs/ebay.md (\"Getting keys\")", envEBaySecret)
	}
	k, err := loadSecretKey(c.keys, c.store.data, func(msg string) { log.Warn(msg) })
	if err != nil {
		return marketKeys{}, err
	}
	return marketKeys{clientSecret: sec, tokenKey: k}, nil
}

// marketParams is what opening the marketplace needs from serve.
type marketParams struct {
	cfg        serveConfig
	keys       marketKeys // from loadMarketKeys
	base       string     // public URL including the base path
	clock      clock.Clock
	log        *slog.Logger
	store      store.Store
	registerer prometheus.Registerer
}

// openMarket opens the marketplace --market chooses.
func openMarket(ctx context.Context, p marketParams) (*servedMarket, error) {
	c := p.cfg
	if c.market.kind == marketSim {
		if err := os.MkdirAll(c.store.data, 0o700); err != nil {
			return nil, fmt.Errorf("create data folder: %w", err)
		}
		s, err := sim.Open(ctx, c.sim.config(c.store.data, p.clock, p.log, p.base))
		if err != nil {
			return nil, fmt.Errorf("open simulator: %w", err)
		}
		return &servedMarket{Market: s, sim: s, describe: "the built-in auction simulator (--market sim): no real auction is bid on"}, nil
	}
	m := c.market
	if p.keys.clientSecret == "" || p.keys.tokenKey == nil {
		return nil, errors.New("open the eBay marketplace: the keys were not loaded (loadMarketKeys)")
	}
	api, auth := m.hosts()
	if _, err := os.Stat(filepath.Join(c.store.data, "sim.db")); err == nil {
		// Snipes are stored by item number: those made on the simulator
		// would now be looked up, and bid on, on eBay.
		p.log.Warn("this data folder was used with --market sim: snipes made there are on the simulator's item numbers, which --market ebay looks up (and bids on) on eBay; give each marketplace its own --data folder", "data", c.store.data)
	}
	if m.ruName == "" {
		p.log.Warn("no --ebay-runame: accounts cannot be connected through eBay's consent page", "accept_url", p.base+"/market/callback")
	}
	// Account links (cli/link.go): the adapter asks them for refresh
	// tokens, and they run the consent flow through the adapter.
	links, bind, err := ebayLinks(linkSetup{Store: p.store, Key: p.keys.tokenKey, MarketID: api, RuName: m.ruName})
	if err != nil {
		return nil, err
	}
	ad, err := ebay.New(ebay.Config{
		APIURL: api, AuthURL: auth, ClientID: m.clientID, ClientSecret: p.keys.clientSecret, RuName: m.ruName,
		Marketplace: m.marketplace, Links: links,
		Clock: p.clock, Logger: p.log.With("component", "ebay"), Registerer: p.registerer,
	})
	if err != nil {
		return nil, err
	}
	var describe string
	switch {
	case m.apiURL != "":
		describe = fmt.Sprintf("the eBay-shaped marketplace at %s (--market ebay --ebay-api-url), marketplace %s", api, m.marketplace)
	case m.env == "production":
		describe = fmt.Sprintf("eBay PRODUCTION (--market ebay --ebay-env production): real auctions and real money, marketplace %s", m.marketplace)
	default:
		describe = fmt.Sprintf("the eBay sandbox (--market ebay): test listings, no real money, marketplace %s", m.marketplace)
	}
	bind(ad)
	return &servedMarket{Market: ad, ebay: ad, links: links, describe: describe}, nil
}

// keyCheckTimeout bounds serve's start-up check of the eBay keys.
const keyCheckTimeout = time.Minute

// checkKeys asks eBay once, in the background, whether it accepts the
// application's keys, and says in the log when it does not: otherwise wrong
// keys show only when a user's first search fails. Serve starts either way
// (eBay may just be down). Nothing to check on the simulator.
func (m *servedMarket) checkKeys(ctx context.Context, log *slog.Logger) {
	if m.ebay == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, keyCheckTimeout)
	defer cancel()
	switch err := m.ebay.CheckKeys(ctx); {
	case err == nil:
		log.Info("eBay accepted the application's keys")
	case errors.Is(err, market.ErrNotAuthorized):
		log.Error("eBay refused the application's keys: no item can be looked up and no snipe can bid until they are fixed (--ebay-client-id, "+envEBaySecret+", --ebay-env)", "err", err)
	case !errors.Is(ctx.Err(), context.Canceled): // not serve stopping
		log.Warn("could not check the eBay application's keys at start", "err", err)
	}
}
