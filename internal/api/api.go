// Package api serves the snipe interface: every operation of the spec as
// GET {BasePath}/{operationName}?{params}, plus {BasePath}/openapi.json.
//
// Each request goes through the same pipeline: request logging with the key
// redacted (log.go), method check, parameter parsing (param.go), key to
// account (auth.go), per-account rate limit (ratelimit.go), then the
// operation's handler. Failures are rendered by internal/httperr.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/httperr"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/marketlink"
	"github.com/sniped/sniped/internal/notify"
	"github.com/sniped/sniped/internal/store"
)

// Version is the interface version justTesting reports (spec section 9).
const Version = "1"

// Notifier learns that a snipe changed so that it can be re-armed at once.
// *sniper.Sniper implements it.
type Notifier interface {
	// Changed is called after a snipe was created, updated or deleted.
	Changed(snipeID int64)
}

// Config holds the API's dependencies and settings.
type Config struct {
	Store  store.Store
	Market market.Market
	// Clock defaults to clock.Real.
	Clock clock.Clock
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Notifier may be nil.
	Notifier Notifier
	// ClockOffset, when set, is the marketplace clock minus Clock (the
	// sniper's measured offset, sniper.ClockOffset). Item end times are
	// marketplace times: timeLeft, the current/completed filters and
	// re-arming compare them with Clock corrected by it. Nil means 0.
	ClockOffset func() time.Duration
	// FetchAnyItem lets fetchItem look up any marketplace item, not only
	// those in the caller's account (serve --fetch-any-item).
	FetchAnyItem bool
	// RateLimit is requests per second per account; 0 turns limiting off.
	// serve passes DefaultRateLimit unless told otherwise.
	RateLimit float64
	// RateBurst is the token bucket size; 0 means DefaultRateBurst.
	RateBurst int
	// BasePath is the prefix before the operation name, e.g. "/snipe";
	// "" or "/" for none. The handler strips it itself, so mount it at
	// "{BasePath}/" (or "/").
	BasePath string
	// ImportTimeout bounds one importWatchList run; 0 means DefaultImportTimeout.
	ImportTimeout time.Duration
	// Notify delivers notifications and runs saved searches; nil answers
	// the notifier operations with 503 and runs getSearchResults?id=N as
	// a plain search.
	Notify *notify.Service
	// MarketLinks links accounts to their marketplace users (serve
	// --market ebay). nil with the built-in simulator, where each account
	// bids as the marketplace user of its own name and nothing is linked.
	MarketLinks *marketlink.Links
	// BaseContext is the parent of work that outlives its request
	// (importWatchList runs); cancel it at shutdown, then call
	// Handler.Wait. Defaults to context.Background().
	BaseContext context.Context
}

// Handler serves the interface. Wait blocks until background work started
// by requests has stopped.
type Handler struct {
	http.Handler
	s *server
}

// Wait blocks until every importWatchList run has finished; cancel
// Config.BaseContext first to make them stop early.
func (h *Handler) Wait() { h.s.imports.wg.Wait() }

// operation is one interface operation. handle runs after authentication.
type operation func(w http.ResponseWriter, r *http.Request, c *call) error

// route is an operation and whether it changes state: those refuse HEAD
// (httperr.AllowGetOnly), reads accept it.
type route struct {
	op      operation
	changes bool
}

// call is what an authenticated request carries into its operation.
type call struct {
	acct store.Account
	p    params
}

type server struct {
	cfg     Config
	log     *slog.Logger
	clock   clock.Clock
	base    string
	ops     map[string]route
	limits  *limiter
	imports *importRuns
	openapi http.Handler
	market  *marketHandler
}

// New returns the interface handler.
func New(cfg Config) *Handler {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RateBurst <= 0 {
		cfg.RateBurst = DefaultRateBurst
	}
	if cfg.ImportTimeout <= 0 {
		cfg.ImportTimeout = DefaultImportTimeout
	}
	if cfg.BaseContext == nil {
		cfg.BaseContext = context.Background()
	}
	s := &server{
		cfg:     cfg,
		log:     cfg.Logger,
		clock:   cfg.Clock,
		base:    strings.TrimRight(cfg.BasePath, "/"),
		limits:  newLimiter(cfg.RateLimit, cfg.RateBurst),
		imports: newImportRuns(),
	}
	bids := &bidHandler{s}
	items := &itemHandler{s}
	searches := &searchHandler{s}
	watch := &watchListHandler{s}
	sets := &datasetHandler{s}
	notes := &notifyHandler{s}
	lookups := &lookupHandler{s}
	mkt := &marketHandler{s}
	s.market = mkt
	read := func(op operation) route { return route{op: op} }
	change := func(op operation) route { return route{op: op, changes: true} }
	s.ops = map[string]route{
		"justTesting":          read(justTesting(s)),
		"addBid":               change(bids.add),
		"deleteBid":            change(bids.delete),
		"checkSnipeStatus":     read(bids.status),
		"getUserItems":         read(bids.list),
		"fetchItem":            read(items.fetch),
		"addSearch":            change(searches.add),
		"deleteSearch":         change(searches.delete),
		"getUserSearches":      read(searches.list),
		"getSearchResults":     read(searches.results),
		"importWatchList":      change(watch.importList),
		"getBidHistoryDataset": read(sets.bidHistory),
		"getBidderDataset":     read(sets.bidder),
		"addNotifier":          change(notes.add),
		"getNotifiers":         read(notes.list),
		"deleteNotifier":       change(notes.delete),
		// testNotifier sends a message: a side effect HEAD must not cause.
		"testNotifier": change(notes.test),
		"getEvents":    read(notes.events),
		"lookupItem":   read(lookups.lookup),
		// Extensions: the account's link to its marketplace user.
		"connectMarketAccount": change(mkt.connect),
		"getMarketAccount":     read(mkt.get),
		"unlinkMarketAccount":  change(mkt.unlink),
	}
	s.openapi = openAPIHandler()
	return &Handler{Handler: logRequests(s.log, s.clock, httperr.Handler(s.log, s.serve)), s: s}
}

// serve routes one request: prefix, operation name, method, then the
// authenticated pipeline.
func (s *server) serve(w http.ResponseWriter, r *http.Request) error {
	rest, ok := strings.CutPrefix(r.URL.Path, s.base+"/")
	if ok && rest == callbackPath {
		return s.market.callback(w, r)
	}
	if !ok || strings.Contains(rest, "/") {
		return unknownOperation()
	}
	if rest == "openapi.json" {
		if err := httperr.AllowGet(w, r); err != nil {
			return err
		}
		s.openapi.ServeHTTP(w, r)
		return nil
	}
	rt, ok := s.ops[rest]
	if !ok {
		return unknownOperation()
	}
	allow := httperr.AllowGet
	if rt.changes {
		allow = httperr.AllowGetOnly
	}
	if err := allow(w, r); err != nil {
		return err
	}
	p, err := parseParams(r.URL.RawQuery)
	if err != nil {
		return err
	}
	acct, err := s.authenticate(r, p)
	if err != nil {
		return err
	}
	markAuthenticated(w)
	if err := s.limits.allow(acct.ID, s.clock.Now()); err != nil {
		return err
	}
	return rt.op(w, r, &call{acct: acct, p: p})
}

func unknownOperation() error {
	return &httperr.Error{Status: http.StatusNotFound, Code: httperr.CodeUnknownOperation,
		Message: "unknown operation; operation names are case-sensitive, see /openapi.json"}
}

// marketNow is the current time on the marketplace's clock, as well as
// sniped knows it: the one "now" to compare with item end times.
func (s *server) marketNow() time.Time {
	if s.cfg.ClockOffset == nil {
		return s.clock.Now()
	}
	return s.clock.Now().Add(s.cfg.ClockOffset())
}

// notify tells the Notifier about a changed snipe; nil-safe.
func (s *server) notify(id int64) {
	if s.cfg.Notifier != nil && id != 0 {
		s.cfg.Notifier.Changed(id)
	}
}

// ok writes a success body.
func ok(w http.ResponseWriter, v any) error {
	httperr.WriteJSON(w, http.StatusOK, v)
	return nil
}

// plural renders "1 item" or "2 items" for messages.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
