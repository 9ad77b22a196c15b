package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/httperr"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/param"
	"github.com/sniped/sniped/internal/store"
)

// MaxNameLen bounds bidder, seller and user names on the control surface.
const MaxNameLen = 64

// Handler serves the /sim/... control surface and the /sim/img/...
// pictures. It routes on the part of the path after "/sim/", so it works
// mounted at {base}/sim/ with or without http.StripPrefix. resolve maps an
// account key to its marketplace user (for /sim/watch); it gets the request
// so that it can limit failed keys per client address, and should return an
// *httperr.Error for a bad key (store.ErrNotFound is also read as a bad key).
// Serve wraps the handler in Guard.
func (s *Sim) Handler(resolve func(r *http.Request, key string) (user string, err error)) http.Handler {
	h := &handler{sim: s, resolve: resolve}
	return httperr.Handler(s.log, h.serve)
}

type handler struct {
	sim     *Sim
	resolve func(r *http.Request, key string) (string, error)
}

func (h *handler) serve(w http.ResponseWriter, r *http.Request) error {
	if err := httperr.AllowGet(w, r); err != nil {
		return err
	}
	name := r.URL.Path
	if i := strings.Index(name, "/sim/"); i >= 0 {
		name = name[i+len("/sim/"):]
	}
	name = strings.TrimPrefix(name, "/")
	if img, ok := strings.CutPrefix(name, "img/"); ok {
		return h.image(w, r, img)
	}
	q, err := param.Parse(r.URL.RawQuery)
	if err != nil {
		return err
	}
	p := params{q}
	switch name {
	case "createItem":
		return h.createItem(w, r, p)
	case "placeBid":
		return h.placeBid(w, r, p)
	case "endItem":
		return h.endItem(w, r, p)
	case "buyItNow":
		return h.buyItNow(w, r, p)
	case "item":
		return h.item(w, r, p)
	case "watch":
		return h.watch(w, r, p)
	case "fail":
		return h.fail(w, r, p)
	case "clock":
		return h.clock(w, r, p)
	}
	return &httperr.Error{Status: http.StatusNotFound, Code: httperr.CodeUnknownOperation,
		Message: fmt.Sprintf("unknown simulator endpoint %q; see docs/simulator.md (createItem, placeBid, endItem, buyItNow, item, watch, fail, clock, img/)", name)}
}

// params is the query (package param) with the control surface's rules.
type params struct{ param.Values }

func (p params) amount(name string, required bool) (money.Amount, error) {
	v, ok, err := p.Optional(name)
	if err != nil {
		return 0, err
	}
	if !ok {
		if required {
			return 0, httperr.Missing(name)
		}
		return 0, nil
	}
	a, err := money.Parse(v)
	if err != nil {
		return 0, httperr.Invalid(name, fmt.Sprintf("parameter %q %v, e.g. 12.50", name, err))
	}
	if a <= 0 && required {
		return 0, httperr.Invalid(name, fmt.Sprintf("parameter %q must be above 0", name))
	}
	return a, nil
}

// name reads a user or seller name: 1 to MaxNameLen letters, digits, and
// . _ - @.
func (p params) name(field string, required bool) (string, error) {
	v, ok, err := p.Optional(field)
	if err != nil {
		return "", err
	}
	if !ok {
		if required {
			return "", httperr.Missing(field)
		}
		return "", nil
	}
	if !ValidName(v) {
		return "", httperr.Invalid(field, fmt.Sprintf("parameter %q must be 1 to %d characters of letters, digits, '.', '_', '-' or '@'", field, MaxNameLen))
	}
	return v, nil
}

// ValidName reports whether v is a marketplace user name the simulator
// accepts: 1 to MaxNameLen letters, digits, '.', '_', '-' or '@'.
func ValidName(v string) bool {
	if v == "" || len(v) > MaxNameLen {
		return false
	}
	for _, r := range v {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-', r == '@':
		default:
			return false
		}
	}
	return true
}

func (p params) flag(name string) (bool, error) {
	v, _, err := p.Bool(name)
	return v, err
}

// notFound renders market.ErrNotFound as a 404 naming the item.
func notFound(itemNo int64) error {
	return httperr.NotFound(fmt.Sprintf("item %d is not on the marketplace", itemNo))
}

// controlErr maps a control method's error to the envelope.
func controlErr(itemNo int64, err error) error {
	switch {
	case errors.Is(err, market.ErrNotFound):
		return notFound(itemNo)
	case errors.Is(err, ErrConflict):
		return &httperr.Error{Status: http.StatusConflict, Code: httperr.CodeConflict, Message: strings.TrimSuffix(err.Error(), ": "+ErrConflict.Error()), Err: err}
	case errors.Is(err, market.ErrEnded), errors.Is(err, market.ErrEndedByBuyItNow), errors.Is(err, market.ErrCancelled), errors.Is(err, market.ErrSellerCannotBid):
		return &httperr.Error{Status: http.StatusConflict, Code: httperr.CodeConflict, Message: fmt.Sprintf("item %d: %v", itemNo, err)}
	}
	return httperr.Internal(err)
}

func (h *handler) createItem(w http.ResponseWriter, r *http.Request, p params) error {
	var n NewItem
	title, err := p.Required("title")
	if err != nil {
		return err
	}
	if !utf8.ValidString(title) || utf8.RuneCountInString(title) > MaxTitleLen || len(title) > 4*MaxTitleLen || strings.TrimSpace(title) == "" || param.HasControl(title) {
		return httperr.Invalid("title", fmt.Sprintf("parameter \"title\" must be 1 to %d printable characters", MaxTitleLen))
	}
	n.Title = strings.TrimSpace(title)
	if n.StartPrice, err = p.amount("start_price", true); err != nil {
		return err
	}
	endsIn, err := p.Required("ends_in")
	if err != nil {
		return err
	}
	secs, err := strconv.ParseFloat(endsIn, 64)
	if err != nil || math.IsNaN(secs) || secs < MinEndsIn.Seconds() || secs > MaxEndsIn.Seconds() {
		return httperr.Invalid("ends_in", fmt.Sprintf("parameter \"ends_in\" must be a number of seconds from %g to %g (fractions allowed)", MinEndsIn.Seconds(), MaxEndsIn.Seconds()))
	}
	n.EndsIn = time.Duration(secs * float64(time.Second))
	if n.Reserve, err = p.amount("reserve", false); err != nil {
		return err
	}
	if n.Reserve != 0 && n.Reserve < n.StartPrice {
		return httperr.Invalid("reserve", "parameter \"reserve\" must be at least start_price")
	}
	if n.BINPrice, err = p.amount("bin_price", false); err != nil {
		return err
	}
	if n.BINPrice != 0 && (n.BINPrice <= n.StartPrice || n.BINPrice < n.Reserve) {
		return httperr.Invalid("bin_price", "parameter \"bin_price\" must be above start_price and at least reserve")
	}
	country, ok, err := p.Optional("country")
	if err != nil {
		return err
	}
	if ok {
		if CurrencyOf(country) == "" {
			return httperr.Invalid("country", "parameter \"country\" must be one of US, GB, DE, CA, AU")
		}
		n.Country = country
	}
	currency, ok, err := p.Optional("currency")
	if err != nil {
		return err
	}
	if ok {
		if !market.KnownCurrency(currency) {
			return httperr.Invalid("currency", "parameter \"currency\" must be one of "+strings.Join(market.Currencies, ", "))
		}
		n.Currency = currency
	}
	if n.Seller, err = p.name("seller", false); err != nil {
		return err
	}
	cat, ok, err := p.Optional("category")
	if err != nil {
		return err
	}
	if ok {
		if !utf8.ValidString(cat) || len(cat) > 200 || param.HasControl(cat) {
			return httperr.Invalid("category", "parameter \"category\" must be at most 200 printable characters, parts joined by ':'")
		}
		n.Category = cat
	}
	no, end, err := h.sim.CreateItem(r.Context(), n)
	if err != nil {
		return httperr.Internal(err)
	}
	httperr.WriteJSON(w, http.StatusOK, map[string]any{
		"status":  "OK",
		"item_no": strconv.FormatInt(no, 10),
		"endTime": clock.FormatUTC(end),
		"end_ms":  end.UnixMilli(),
	})
	return nil
}

func (h *handler) placeBid(w http.ResponseWriter, r *http.Request, p params) error {
	no, err := p.PositiveInt("item_no")
	if err != nil {
		return err
	}
	bidder, err := p.name("bidder", true)
	if err != nil {
		return err
	}
	mx, err := p.amount("max", true)
	if err != nil {
		return err
	}
	rc, err := h.sim.bid(r.Context(), bidder, no, mx)
	var be *market.BidError
	switch {
	case err == nil:
	case errors.Is(err, market.ErrNotFound):
		return notFound(no)
	case !errors.As(err, &be) || market.Transient(err):
		return httperr.Internal(err)
	}
	st, serr := h.sim.ItemState(r.Context(), no)
	if serr != nil {
		return controlErr(no, serr)
	}
	body := map[string]any{
		"status":         "OK",
		"item_no":        strconv.FormatInt(no, 10),
		"bidder":         bidder,
		"max":            mx.Float(),
		"accepted":       err == nil,
		"reason":         "",
		"message":        "",
		"current_price":  st.Item.CurrentPrice.Float(),
		"minimum_to_bid": st.Item.MinimumToBid.Float(),
		"currency":       st.Item.Currency,
		"high_bidder":    st.HighBidder,
		"reserve_met":    st.Item.ReserveMet,
	}
	if err == nil {
		body["reason"] = "outbid"
		if rc.HighBidder {
			body["reason"] = "high-bidder"
		}
	} else {
		body["reason"] = reasonOf(err)
		body["message"] = be.Error()
	}
	httperr.WriteJSON(w, http.StatusOK, body)
	return nil
}

func (h *handler) endItem(w http.ResponseWriter, r *http.Request, p params) error {
	no, err := p.PositiveInt("item_no")
	if err != nil {
		return err
	}
	reason, err := p.Required("reason")
	if err != nil {
		return err
	}
	if reason != "cancel" && reason != "sell" {
		return httperr.Invalid("reason", "parameter \"reason\" must be cancel (all bids void) or sell (to the high bidder)")
	}
	if err := h.sim.EndEarly(r.Context(), no, reason == "sell"); err != nil {
		return controlErr(no, err)
	}
	st, err := h.sim.ItemState(r.Context(), no)
	if err != nil {
		return controlErr(no, err)
	}
	httperr.WriteJSON(w, http.StatusOK, map[string]any{
		"status":        "OK",
		"item_no":       strconv.FormatInt(no, 10),
		"end_reason":    string(st.Item.EndReason),
		"winner":        st.Winner,
		"current_price": st.Item.CurrentPrice.Float(),
	})
	return nil
}

func (h *handler) buyItNow(w http.ResponseWriter, r *http.Request, p params) error {
	no, err := p.PositiveInt("item_no")
	if err != nil {
		return err
	}
	bidder, err := p.name("bidder", true)
	if err != nil {
		return err
	}
	price, err := h.sim.BuyItNow(r.Context(), bidder, no)
	if err != nil {
		return controlErr(no, err)
	}
	httperr.WriteJSON(w, http.StatusOK, map[string]any{
		"status":     "OK",
		"item_no":    strconv.FormatInt(no, 10),
		"winner":     bidder,
		"price":      price.Float(),
		"end_reason": string(market.EndedBuyItNow),
	})
	return nil
}

// itemView is the /sim/item body.
type itemView struct {
	Status        string    `json:"status"`
	ItemNo        string    `json:"item_no"`
	Title         string    `json:"title"`
	Category      string    `json:"category"`
	Seller        string    `json:"seller"`
	Country       string    `json:"country"`
	Currency      string    `json:"currency"`
	StartPrice    float64   `json:"start_price"`
	CurrentPrice  float64   `json:"current_price"`
	MinimumToBid  float64   `json:"minimum_to_bid"`
	Reserve       float64   `json:"reserve"`
	ReserveMet    bool      `json:"reserve_met"`
	BINPrice      float64   `json:"bin_price"`
	BINOffered    bool      `json:"bin_offered"`
	StartMs       int64     `json:"start_ms"`
	EndMs         int64     `json:"end_ms"`
	EndTime       string    `json:"endTime"`
	Ended         bool      `json:"ended"`
	EndReason     string    `json:"end_reason"`
	HighBidder    string    `json:"high_bidder"`
	Winner        string    `json:"winner"`
	BidCount      int       `json:"bid_count"`
	Bids          []BidView `json:"bids"`
	PictureURL    string    `json:"pictureURL"`
	MarketNowMs   int64     `json:"market_now_ms"`
	ShippingType  string    `json:"shipping_type"`
	ShippingCost  float64   `json:"shipping_cost"`
	SellerScore   int       `json:"seller_score"`
	SellerPercent float64   `json:"seller_percent"`
}

func (h *handler) item(w http.ResponseWriter, r *http.Request, p params) error {
	no, err := p.PositiveInt("item_no")
	if err != nil {
		return err
	}
	st, err := h.sim.ItemState(r.Context(), no)
	if err != nil {
		return controlErr(no, err)
	}
	it := st.Item
	httperr.WriteJSON(w, http.StatusOK, itemView{
		Status: "OK", ItemNo: strconv.FormatInt(no, 10), Title: it.Title, Category: it.Category,
		Seller: it.SellerID, Country: it.Country, Currency: it.Currency,
		StartPrice: it.StartPrice.Float(), CurrentPrice: it.CurrentPrice.Float(), MinimumToBid: it.MinimumToBid.Float(),
		Reserve: st.Reserve.Float(), ReserveMet: it.ReserveMet, BINPrice: st.BINPrice.Float(), BINOffered: it.BuyItNow > 0,
		StartMs: it.Start.UnixMilli(), EndMs: it.End.UnixMilli(), EndTime: clock.FormatUTC(it.End),
		Ended: it.Ended, EndReason: string(it.EndReason), HighBidder: st.HighBidder, Winner: st.Winner,
		BidCount: it.Bids, Bids: st.Bids, PictureURL: it.PictureURL, MarketNowMs: h.sim.nowMs(),
		ShippingType: it.ShippingType, ShippingCost: it.ShippingCost.Float(),
		SellerScore: it.SellerScore, SellerPercent: it.SellerPercent,
	})
	return nil
}

func (h *handler) watch(w http.ResponseWriter, r *http.Request, p params) error {
	k, ok, err := p.Optional("key")
	if err != nil {
		return err
	}
	if !ok {
		return &httperr.Error{Status: http.StatusUnauthorized, Code: httperr.CodeMissingKey, Param: "key",
			Message: "parameter \"key\" is required: pass the account key whose watch list to add to"}
	}
	no, err := p.PositiveInt("item_no")
	if err != nil {
		return err
	}
	if h.resolve == nil {
		return httperr.Unavailable("watch lists need account keys, which this server does not resolve", nil)
	}
	user, err := h.resolve(r, k)
	if err != nil {
		var he *httperr.Error
		switch {
		case errors.As(err, &he):
			return he
		case errors.Is(err, store.ErrNotFound):
			return &httperr.Error{Status: http.StatusUnauthorized, Code: httperr.CodeInvalidKey, Param: "key",
				Message: "the key is not valid; check it, or ask the operator for a new one"}
		}
		return httperr.Internal(err)
	}
	if err := h.sim.Watch(r.Context(), user, no); err != nil {
		return controlErr(no, err)
	}
	httperr.WriteJSON(w, http.StatusOK, map[string]any{"status": "OK", "item_no": strconv.FormatInt(no, 10), "user": user})
	return nil
}

// fail is the failure-injection endpoint; see docs/simulator.md.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, p params) error {
	kind, err := p.Required("kind")
	if err != nil {
		return err
	}
	off, err := p.flag("off")
	if err != nil {
		return err
	}
	op, _, err := p.Optional("op")
	if err != nil {
		return err
	}
	if !ValidOp(op) {
		return httperr.Invalid("op", "parameter \"op\" must be one of item, search, watchList, placeBid, bidState, history, now (or absent for all)")
	}
	body := map[string]any{"status": "OK", "kind": kind, "off": off}
	switch kind {
	case "unavailable":
		if _, ok, err := p.Optional("item_no"); err != nil {
			return err
		} else if ok {
			no, err := p.PositiveInt("item_no")
			if err != nil {
				return err
			}
			if _, err := h.sim.lot(no); err != nil {
				return controlErr(no, err)
			}
			h.sim.FailItem(no, op, !off)
			body["item_no"] = strconv.FormatInt(no, 10)
			break
		}
		n, err := p.count(off)
		if err != nil {
			return err
		}
		h.sim.FailNext(op, n)
		body["count"] = n
	case "unauthorized":
		user, err := p.name("user", true)
		if err != nil {
			return err
		}
		h.sim.DenyUser(user, !off)
		body["user"] = user
	case "ineligible":
		user, err := p.name("user", true)
		if err != nil {
			return err
		}
		no, err := p.PositiveInt("item_no")
		if err != nil {
			return err
		}
		h.sim.SetIneligible(user, no, !off)
		body["user"], body["item_no"] = user, strconv.FormatInt(no, 10)
	case "remove":
		no, err := p.PositiveInt("item_no")
		if err != nil {
			return err
		}
		if err := h.sim.RemoveItem(r.Context(), no, !off); err != nil {
			return controlErr(no, err)
		}
		body["item_no"] = strconv.FormatInt(no, 10)
	case "lost-answer":
		if op != OpAny && op != OpPlaceBid {
			return httperr.Invalid("op", "parameter \"op\" must be placeBid or absent for kind lost-answer: only bids have an answer to lose")
		}
		no, err := p.optionalItem(r.Context(), h.sim)
		if err != nil {
			return err
		}
		n, err := p.count(off)
		if err != nil {
			return err
		}
		h.sim.LoseAnswers(no, n)
		body["count"] = n
		if no != 0 {
			body["item_no"] = strconv.FormatInt(no, 10)
		}
	case "slow":
		no, err := p.optionalItem(r.Context(), h.sim)
		if err != nil {
			return err
		}
		n, err := p.count(off)
		if err != nil {
			return err
		}
		ms, err := p.millis("ms", MaxSlow, !off)
		if err != nil {
			return err
		}
		if off {
			n = 0
		}
		h.sim.SetSlow(Slow{Op: op, ItemNo: no, Delay: time.Duration(ms) * time.Millisecond, Count: n})
		body["count"], body["ms"], body["op"] = n, ms, op
		if no != 0 {
			body["item_no"] = strconv.FormatInt(no, 10)
		}
	case "stale":
		if op != OpAny {
			return httperr.Invalid("op", "parameter \"op\" does not apply to kind stale, which affects item and bidState")
		}
		no, err := p.optionalItem(r.Context(), h.sim)
		if err != nil {
			return err
		}
		ms, err := p.millis("ms", MaxStale, !off)
		if err != nil {
			return err
		}
		if off {
			ms = 0
		}
		h.sim.SetStale(no, time.Duration(ms)*time.Millisecond)
		body["ms"] = ms
		if no != 0 {
			body["item_no"] = strconv.FormatInt(no, 10)
		}
	case "clear":
		h.sim.ClearFailures()
	default:
		return httperr.Invalid("kind", "parameter \"kind\" must be one of unavailable, lost-answer, slow, stale, unauthorized, ineligible, remove, clear")
	}
	httperr.WriteJSON(w, http.StatusOK, body)
	return nil
}

// Bounds of the fault parameters on the control surface.
const (
	// MaxSlow bounds a stall (ms of kind=slow): long enough to outlast any
	// snipe's retry window, short enough not to wedge a test run.
	MaxSlow = 10 * time.Minute
	// MaxStale bounds how old the state shown under kind=stale may be.
	MaxStale = time.Hour
	// MaxClockSkew bounds the marketplace clock's offset (/sim/clock).
	MaxClockSkew = 24 * time.Hour
	// maxCount bounds count on /sim/fail.
	maxCount = 1_000_000
)

// count reads the required count of /sim/fail (0 to maxCount); off=1 makes
// it optional and 0.
func (p params) count(off bool) (int, error) {
	cs, ok, err := p.Optional("count")
	if err != nil {
		return 0, err
	}
	if !ok {
		if off {
			return 0, nil
		}
		return 0, httperr.Missing("count")
	}
	n, err := strconv.Atoi(cs)
	if err != nil || !param.AllDigits(cs) || n > maxCount {
		return 0, httperr.Invalid("count", fmt.Sprintf("parameter \"count\" must be a whole number from 0 to %d", maxCount))
	}
	if off {
		return 0, nil
	}
	return n, nil
}

// millis reads a whole number of milliseconds from 0 to limit.
func (p params) millis(name string, limit time.Duration, required bool) (int64, error) {
	v, ok, err := p.Optional(name)
	if err != nil {
		return 0, err
	}
	if !ok {
		if required {
			return 0, httperr.Missing(name)
		}
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || !param.AllDigits(v) || n > limit.Milliseconds() {
		return 0, httperr.Invalid(name, fmt.Sprintf("parameter %q must be a whole number of milliseconds from 0 to %d", name, limit.Milliseconds()))
	}
	return n, nil
}

// optionalItem reads an optional item_no, which must be on the
// marketplace; 0 when absent.
func (p params) optionalItem(ctx context.Context, s *Sim) (int64, error) {
	if _, ok, err := p.Optional("item_no"); err != nil || !ok {
		return 0, err
	}
	no, err := p.PositiveInt("item_no")
	if err != nil {
		return 0, err
	}
	if _, err := s.lot(no); err != nil {
		return 0, controlErr(no, err)
	}
	return no, nil
}

// clock reports the marketplace clock and, with skew, moves it: the
// marketplace then runs skew ahead of this machine (negative: behind).
func (h *handler) clock(w http.ResponseWriter, _ *http.Request, p params) error {
	v, ok, err := p.Optional("skew")
	if err != nil {
		return err
	}
	if ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < -MaxClockSkew || d > MaxClockSkew {
			return httperr.Invalid("skew", fmt.Sprintf("parameter \"skew\" must be a duration such as 5s, -1.5s or 250ms, at most %v either way", MaxClockSkew))
		}
		h.sim.SetClockSkew(d)
	}
	d := h.sim.ClockSkew()
	httperr.WriteJSON(w, http.StatusOK, map[string]any{
		"status":        "OK",
		"skew":          d.String(),
		"skew_ms":       d.Milliseconds(),
		"market_now_ms": h.sim.nowMs(),
	})
	return nil
}

// image serves /sim/img/{item_no}.svg and /sim/img/{item_no}-{view}.svg.
func (h *handler) image(w http.ResponseWriter, r *http.Request, name string) error {
	base, ok := strings.CutSuffix(name, ".svg")
	if !ok {
		return httperr.NotFound("pictures are /sim/img/{item_no}.svg or /sim/img/{item_no}-{2|3}.svg")
	}
	view := 1
	if b, v, ok := strings.Cut(base, "-"); ok {
		switch v {
		case "2", "3":
			view = int(v[0] - '0')
		default:
			return httperr.NotFound("pictures are /sim/img/{item_no}.svg or /sim/img/{item_no}-{2|3}.svg")
		}
		base = b
	}
	no, err := strconv.ParseInt(base, 10, 64)
	if err != nil || no <= 0 {
		return httperr.NotFound("pictures are /sim/img/{item_no}.svg or /sim/img/{item_no}-{2|3}.svg")
	}
	l, err := h.sim.lot(no)
	if err != nil {
		return notFound(no)
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	if r.Method == http.MethodHead {
		return nil
	}
	_ = writeSVG(w, &l.listing, view) // the client may have gone
	return nil
}
