// Package ebaysim serves the built-in simulator (package market/sim) over
// HTTP in eBay's shape: the OAuth token endpoint and consent page, the
// Browse, Offer, Trading (GetMyeBayBuying) and Identity calls with eBay's
// field names and error ids, and the simulator's /sim/ control surface plus
// /sim/token. `sniped market serve` runs it; the eBay adapter's tests use
// it as their test double. docs/ebay.md describes what it models and what
// it does not.
package ebaysim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/httperr"
	"github.com/sniped/sniped/internal/market/ebay"
	"github.com/sniped/sniped/internal/market/sim"
)

// Default application credentials (--client-id, SNIPED_MARKET_CLIENT_SECRET).
const (
	DefaultClientID     = "sniped-sim"
	DefaultClientSecret = "sim-secret"
)

// Token lifetimes, as eBay's.
const (
	AccessTokenLife  = 7200 * time.Second
	RefreshTokenLife = 47304000 * time.Second
	codeLife         = 5 * time.Minute
)

// Config configures a Server.
type Config struct {
	// Sim is the marketplace served.
	Sim *sim.Sim
	// ClientID and ClientSecret are the one application the server accepts
	// (defaults DefaultClientID, DefaultClientSecret).
	ClientID     string
	ClientSecret string
	// RuNames maps each RuName to its accept URL; the consent page accepts
	// no other redirect_uri (SetRuName adds more).
	RuNames map[string]string
	// TokenFile keeps refresh tokens (as SHA-256 hashes) across restarts;
	// "" keeps them in memory only. Access tokens always live in memory.
	TokenFile string
	// Clock is the local clock of token and code lifetimes (default
	// clock.Real). Answers' Date headers show the simulator's own clock
	// (Sim.MarketNow), skew included.
	Clock clock.Clock
	// Logger receives the server's log (default: discarded). Tokens are
	// never logged.
	Logger *slog.Logger
}

// Server is the eBay-shaped marketplace server.
type Server struct {
	cfg  Config
	sim  *sim.Sim
	log  *slog.Logger
	clk  clock.Clock
	ctrl http.Handler

	saveMu  sync.Mutex // serializes token file writes
	mu      sync.Mutex
	runames map[string]string // RuName → accept URL
	access  map[string]grant  // by token hash
	refresh map[string]grant  // by token hash
	codes   map[string]code   // by code hash
	bidSeq  int64
}

// New returns a server for cfg.Sim, loading cfg.TokenFile when it exists.
func New(cfg Config) (*Server, error) {
	if cfg.Sim == nil {
		return nil, errors.New("ebaysim: a simulator is required")
	}
	if cfg.ClientID == "" {
		cfg.ClientID = DefaultClientID
	}
	if cfg.ClientSecret == "" {
		cfg.ClientSecret = DefaultClientSecret
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	for name, u := range cfg.RuNames {
		if !ebay.HTTPURL(u) {
			return nil, fmt.Errorf("ebaysim: the accept URL of RuName %q must be an absolute http(s) URL, not %q", name, u)
		}
	}
	s := &Server{
		cfg: cfg, sim: cfg.Sim, log: cfg.Logger, clk: cfg.Clock,
		access: make(map[string]grant), refresh: make(map[string]grant), codes: make(map[string]code),
		runames: make(map[string]string),
	}
	for name, u := range cfg.RuNames {
		s.runames[name] = u
	}
	s.ctrl = cfg.Sim.Handler(nil)
	if err := s.loadTokens(); err != nil {
		return nil, err
	}
	return s, nil
}

// now is the marketplace's time.
func (s *Server) now() time.Time { return s.sim.MarketNow() }

// Handler serves every endpoint.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /identity/v1/oauth2/token", s.token)
	mux.HandleFunc("GET /oauth2/authorize", s.authorize)
	mux.HandleFunc("GET /commerce/identity/v1/user/", s.identity)
	mux.HandleFunc("GET /buy/browse/v1/item_summary/search", s.search)
	mux.HandleFunc("GET /buy/browse/v1/item/get_item_by_legacy_id", s.itemByLegacyID)
	mux.HandleFunc("GET /buy/browse/v1/item/{item_id}", s.item)
	mux.HandleFunc("POST /buy/offer/v1_beta/bidding/{item_id}/place_proxy_bid", s.placeProxyBid)
	mux.HandleFunc("GET /buy/offer/v1_beta/bidding/{item_id}", s.getBidding)
	mux.HandleFunc("POST /ws/api.dll", s.trading)
	mux.HandleFunc("/sim/token", s.withClient(s.simToken))
	mux.Handle("/sim/watch", httperr.Handler(s.log, s.simWatch))
	mux.HandleFunc("/sim/runame", s.withClient(s.simRuName))
	mux.Handle("/sim/", s.ctrl)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeErrors(w, http.StatusNotFound, ebay.ErrorDetail{ErrorID: 2002, Domain: "API_ROUTING", Category: "REQUEST",
			Message: "Resource not found", LongMessage: "No eBay-shaped endpoint at " + r.URL.Path + "; see docs/ebay.md."})
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Answers carry the marketplace clock, as eBay's carry eBay's.
		w.Header().Set("Date", s.now().UTC().Format(http.TimeFormat))
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("ebaysim: handler panic", "path", r.URL.Path, "panic", p)
				writeErrors(w, http.StatusInternalServerError, internalError("buy"))
			}
		}()
		mux.ServeHTTP(w, r)
	})
}

func writeErrors(w http.ResponseWriter, status int, errs ...ebay.ErrorDetail) {
	writeJSON(w, status, ebay.ErrorResponse{Errors: errs})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may have gone
}

func internalError(domain string) ebay.ErrorDetail {
	return ebay.ErrorDetail{ErrorID: 120000, Domain: domain, Category: "APPLICATION", Message: "There was a problem with an eBay internal system or process. Contact eBay developer support for assistance."}
}

// bearer returns the access token of a request's Authorization header.
func bearer(r *http.Request) string {
	v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(v)
}
