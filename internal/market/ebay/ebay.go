// Package ebay is the eBay marketplace adapter: it implements market.Market
// over eBay's official REST APIs (Browse for items and search, Offer for
// bids) and the Trading API's GetMyeBayBuying for the watch list, with
// application and per-user OAuth tokens. It never scrapes eBay's web pages.
//
// The same adapter talks to `sniped market serve` (package market/ebaysim),
// which serves the simulator in eBay's shape; docs/ebay.md explains the
// set-up, the error mapping and the call budget.
package ebay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
)

// Hosts of eBay's two environments.
const (
	ProductionAPIURL  = "https://api.ebay.com"
	ProductionAuthURL = "https://auth.ebay.com"
	SandboxAPIURL     = "https://api.sandbox.ebay.com"
	SandboxAuthURL    = "https://auth.sandbox.ebay.com"
)

// OAuth scopes the adapter asks for.
const (
	// ScopeAPI is the public scope: Browse with an application token, and
	// the Trading API with a user token.
	ScopeAPI = "https://api.ebay.com/oauth/api_scope"
	// ScopeOffer lets a user token bid through the Offer API.
	ScopeOffer = "https://api.ebay.com/oauth/api_scope/buy.offer.auction"
	// ScopeIdentity lets a user token read the eBay user name.
	ScopeIdentity = "https://api.ebay.com/oauth/api_scope/commerce.identity.readonly"
)

// UserScopes are the scopes of a user's consent and of every user token.
var UserScopes = []string{ScopeAPI, ScopeOffer, ScopeIdentity}

// Defaults for Config fields left zero.
const (
	DefaultMarketplace = "EBAY_US"
	// DefaultTimeout bounds one HTTP attempt.
	DefaultTimeout = 10 * time.Second
	// DefaultBackoff is the first wait before a retry without Retry-After.
	DefaultBackoff = 250 * time.Millisecond
	// DefaultItemTTL is how long an item lookup is served from the cache.
	DefaultItemTTL = 30 * time.Second
	// tokenMargin: a token is refreshed this long before it expires.
	tokenMargin = 5 * time.Minute
)

// Links supplies each sniped user's eBay refresh token.
type Links interface {
	// RefreshToken returns user's refresh token. An unlinked user is an
	// error wrapping market.ErrNotAuthorized whose message says how to link.
	RefreshToken(ctx context.Context, user string) (string, error)
}

// UserToken is the result of a user's consent: the long-lived refresh token
// and whose it is.
type UserToken struct {
	RefreshToken  string
	RefreshExpiry time.Time
	// User is the eBay user name, from the Identity API.
	User string
}

// Config configures an Adapter.
type Config struct {
	// APIURL is the API host, e.g. SandboxAPIURL, or a `sniped market
	// serve` address.
	APIURL string
	// AuthURL is the host of the consent page, e.g. SandboxAuthURL.
	AuthURL string
	// ClientID and ClientSecret are the application's keys (App ID and
	// Cert ID).
	ClientID     string
	ClientSecret string
	// RuName is the redirect URL name registered for the application; its
	// accept URL is sniped's {public-url}/market/callback.
	RuName string
	// Marketplace is the X-EBAY-C-MARKETPLACE-ID (default EBAY_US).
	Marketplace string
	// Links supplies users' refresh tokens. Required for user calls.
	Links Links
	// HTTPClient sends the requests (default: a client of its own).
	HTTPClient *http.Client
	// Timeout bounds each HTTP attempt (default DefaultTimeout).
	Timeout time.Duration
	// Backoff is the first wait before a retry (default DefaultBackoff).
	Backoff time.Duration
	// ItemTTL is how long item lookups are cached (default DefaultItemTTL;
	// negative: no cache). market.WithFresh bypasses the cache.
	ItemTTL time.Duration
	// Clock is the local clock (default clock.Real): token expiry, the item
	// cache, Now and the clock check. Retry waits are real time.
	Clock clock.Clock
	// Logger receives warnings (default: discarded). Tokens are never logged.
	Logger *slog.Logger
	// Registerer registers the call counter (default: not registered).
	Registerer prometheus.Registerer
}

// Adapter is the eBay marketplace. Every method is safe for concurrent use.
type Adapter struct {
	cfg     Config
	api     string // APIURL without trailing slash
	auth    string
	hc      *http.Client
	clk     clock.Clock
	log     *slog.Logger
	calls   *prometheus.CounterVec
	flights singleflight.Group

	mu         sync.Mutex
	appToken   token
	userTokens map[string]token
	items      map[int64]cachedItem
	cooldown   map[string]time.Time // per API, after a 429 (real time)
	lead       time.Duration        // smoothed one-way time (0: no sample yet)
	skew       skewEstimate
}

var _ market.Market = (*Adapter)(nil)

// token is an access token and when to stop using it.
type token struct {
	access string
	expiry time.Time // local clock
	// from is the tokenHash of the refresh token a user token came from.
	from string
}

func (t token) valid(now time.Time) bool { return t.access != "" && now.Before(t.expiry) }

// New checks cfg and returns an adapter. It makes no calls.
func New(cfg Config) (*Adapter, error) {
	switch {
	case cfg.ClientID == "":
		return nil, errors.New("ebay: the application's client id (App ID) is required")
	case cfg.ClientSecret == "":
		return nil, errors.New("ebay: the application's client secret (Cert ID) is required")
	}
	for name, u := range map[string]string{"API URL": cfg.APIURL, "auth URL": cfg.AuthURL} {
		if !HTTPURL(u) {
			return nil, fmt.Errorf("ebay: the %s must be an absolute http(s) URL, not %q", name, u)
		}
	}
	if cfg.Marketplace == "" {
		cfg.Marketplace = DefaultMarketplace
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.ItemTTL == 0 {
		cfg.ItemTTL = DefaultItemTTL
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	a := &Adapter{
		cfg:        cfg,
		api:        strings.TrimSuffix(cfg.APIURL, "/"),
		auth:       strings.TrimSuffix(cfg.AuthURL, "/"),
		hc:         hc,
		clk:        cfg.Clock,
		log:        cfg.Logger,
		userTokens: make(map[string]token),
		items:      make(map[int64]cachedItem),
		cooldown:   make(map[string]time.Time),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sniped_ebay_calls_total",
			Help: "Calls to eBay's APIs, by API (oauth, identity, browse, offer, trading) and HTTP status (\"error\": no answer).",
		}, []string{"api", "status"}),
	}
	if cfg.Registerer != nil {
		lead := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sniped_ebay_send_lead_seconds",
			Help: "Measured one-way time to eBay: how much earlier than its target a bid is sent.",
		}, func() float64 { return a.SendLead().Seconds() })
		bound := func(hi bool) func() float64 {
			return func() float64 {
				lo, h, _ := a.ClockCheck()
				if hi {
					return h.Seconds()
				}
				return lo.Seconds()
			}
		}
		offLo := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sniped_ebay_clock_offset_min_seconds",
			Help: "Lower bound on eBay's clock minus this host's, from answers' Date headers (see docs/ebay.md, Time).",
		}, bound(false))
		offHi := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sniped_ebay_clock_offset_max_seconds",
			Help: "Upper bound on eBay's clock minus this host's, from answers' Date headers.",
		}, bound(true))
		for _, c := range []prometheus.Collector{a.calls, lead, offLo, offHi} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("ebay: register metrics: %w", err)
			}
		}
	}
	return a, nil
}

// HTTPURL reports whether s is an absolute http(s) URL with a host, as the
// API and consent hosts (and the accept URLs of RuNames) must be.
func HTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// Marketplace is the X-EBAY-C-MARKETPLACE-ID the adapter bids on.
func (a *Adapter) Marketplace() string { return a.cfg.Marketplace }
