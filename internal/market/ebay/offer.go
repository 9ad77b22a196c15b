package ebay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
)

// PlaceProxyBidRequest is the Offer API's place_proxy_bid body.
type PlaceProxyBidRequest struct {
	MaxAmount   Amount      `json:"maxAmount"`
	UserConsent UserConsent `json:"userConsent"`
}

// UserConsent is the buyer's consent to bid on adult-only items.
type UserConsent struct {
	AdultOnlyItem bool `json:"adultOnlyItem"`
}

// PlaceProxyBidResponse is place_proxy_bid's answer.
type PlaceProxyBidResponse struct {
	ProxyBidID string `json:"proxyBidId"`
}

// Bidding is the Offer API's getBidding answer: the user's standing on an
// auction.
type Bidding struct {
	ItemID          string    `json:"itemId"`
	AuctionStatus   string    `json:"auctionStatus"`
	AuctionEndDate  string    `json:"auctionEndDate"`
	HighBidder      bool      `json:"highBidder"`
	CurrentPrice    *Amount   `json:"currentPrice,omitempty"`
	BidCount        int       `json:"bidCount"`
	CurrentProxyBid *ProxyBid `json:"currentProxyBid,omitempty"`
	ReservePriceMet *bool     `json:"reservePriceMet,omitempty"`
	SuggestedBids   []Amount  `json:"suggestedBidAmounts,omitempty"`
}

// ProxyBid is a user's maximum bid.
type ProxyBid struct {
	MaxAmount  Amount `json:"maxAmount"`
	ProxyBidID string `json:"proxyBidId"`
}

// offerURL is the Offer API URL of an item, with the REST id's pipes
// percent-encoded.
func (a *Adapter) offerURL(itemNo int64, suffix string) string {
	return a.api + "/buy/offer/v1_beta/bidding/" + url.PathEscape(RESTItemID(itemNo)) + suffix
}

// PlaceBid places user's maximum bid with place_proxy_bid. It is sent at
// most once, except after a 401 or a 429, which eBay answers before acting
// on the bid: the first refreshes the token, the second waits out the
// limit. Any other failure is returned for the sniper to resolve by asking
// BidState, never by sending again blindly.
func (a *Adapter) PlaceBid(ctx context.Context, user string, itemNo int64, max money.Amount) (market.BidReceipt, error) {
	currency, err := a.currencyOf(ctx, itemNo)
	if err != nil {
		return market.BidReceipt{}, &market.BidError{Err: err}
	}
	body, _ := json.Marshal(PlaceProxyBidRequest{MaxAmount: formatAmount(max, currency)})
	ans, err := a.userCall(ctx, user, request{
		api: apiOffer, method: http.MethodPost, url: a.offerURL(itemNo, "/place_proxy_bid"),
		body: body, timing: true,
		header: http.Header{"Content-Type": {"application/json"}},
	})
	if err != nil {
		return market.BidReceipt{}, &market.BidError{Err: err}
	}
	a.forget(itemNo)
	if ans.status != http.StatusOK && ans.status != http.StatusCreated {
		return market.BidReceipt{}, a.bidRefusal(ctx, itemNo, max, ans)
	}
	at := a.clk.Now()
	if d, err := http.ParseTime(ans.header.Get("Date")); err == nil {
		at = d
	}
	// place_proxy_bid says only that the bid was taken; getBidding says
	// whether it leads. If that second call fails, the bid still stands.
	bs, err := a.bidding(ctx, user, itemNo)
	if err != nil {
		a.log.Warn("ebay: bid placed, but its standing could not be read", "item_no", itemNo, "err", err)
		return market.BidReceipt{HighBidder: false, Time: at}, nil
	}
	rc := market.BidReceipt{HighBidder: bs.HighBidder, Time: at}
	if bs.CurrentPrice != nil {
		rc.CurrentPrice, _, _ = parseAmount(*bs.CurrentPrice)
	}
	return rc, nil
}

// currencyOf is the item's currency, which the bid must be in. An item's
// currency never changes, so any cached lookup serves, however old or near
// the end: the shot must not wait for a Browse call.
func (a *Adapter) currencyOf(ctx context.Context, itemNo int64) (string, error) {
	a.mu.Lock()
	c, ok := a.items[itemNo]
	a.mu.Unlock()
	if ok {
		return c.item.Currency, nil
	}
	it, err := a.Item(ctx, itemNo)
	if err != nil {
		return "", err
	}
	return it.Currency, nil
}

// bidRefusal turns a refused bid into a *market.BidError. For a bid too
// low it looks the item up afresh to tell "below the price" from "below
// the increment" and to name the minimum.
func (a *Adapter) bidRefusal(ctx context.Context, itemNo int64, max money.Amount, ans answer) error {
	err := a.apiError(apiOffer, ans)
	be := &market.BidError{Err: err}
	if !errors.Is(err, market.ErrTooLow) && !errors.Is(err, market.ErrCannotLowerMax) && !errors.Is(err, market.ErrBINPriceReached) {
		return be
	}
	it, lerr := a.Item(market.WithFresh(ctx), itemNo)
	if lerr != nil {
		return be
	}
	be.Minimum, be.CurrentPrice = it.MinimumToBid, it.CurrentPrice
	if errors.Is(err, market.ErrTooLow) && it.Bids > 0 && max >= it.CurrentPrice {
		be.Err = fmt.Errorf("%w (%v)", market.ErrIncrementNotMet, err)
	}
	return be
}

// BidState reads user's standing with getBidding. eBay answers 120033 when
// the user has no bid there; the auction's state then comes from Browse.
func (a *Adapter) BidState(ctx context.Context, user string, itemNo int64) (market.BidState, error) {
	b, err := a.bidding(ctx, user, itemNo)
	if errors.Is(err, errNoBid) {
		it, err := a.Item(market.WithFresh(ctx), itemNo)
		if err != nil {
			return market.BidState{}, err
		}
		return market.BidState{Ended: it.Ended, EndReason: it.EndReason, ReserveMet: !it.HasReserve || it.ReserveMet, CurrentPrice: it.CurrentPrice}, nil
	}
	if err != nil {
		return market.BidState{}, err
	}
	st := market.BidState{HighBidder: b.HighBidder, ReserveMet: b.ReservePriceMet == nil || *b.ReservePriceMet}
	if b.CurrentPrice != nil {
		st.CurrentPrice, _, _ = parseAmount(*b.CurrentPrice)
	}
	if b.CurrentProxyBid != nil {
		if m, _, err := parseAmount(b.CurrentProxyBid.MaxAmount); err == nil && m > 0 {
			st.HasBid, st.MaxBid = true, m
		}
	}
	switch b.AuctionStatus {
	case "ACTIVE", "LIVE":
		// Running, even past auctionEndDate: eBay settles an auction a
		// moment after its end, and only ENDED says who won.
	case "ENDED":
		st.Ended, st.EndReason = true, market.EndedNormally
		st.Won = b.HighBidder && st.ReserveMet
	default:
		return market.BidState{}, fmt.Errorf("ebay offer: item %d: unknown auctionStatus %q: %w", itemNo, b.AuctionStatus, errUnexpected)
	}
	return st, nil
}

// errNoBid is getBidding's 120033: the user has not bid on the item.
var errNoBid = errors.New("no bid by this user")

// bidding calls getBidding.
func (a *Adapter) bidding(ctx context.Context, user string, itemNo int64) (Bidding, error) {
	ans, err := a.userCall(ctx, user, request{
		api: apiOffer, method: http.MethodGet, url: a.offerURL(itemNo, ""), retry: true, timing: true,
	})
	if err != nil {
		return Bidding{}, err
	}
	if ans.status != http.StatusOK {
		for _, e := range parseErrors(ans.body) {
			if e.ErrorID == idNoBid {
				return Bidding{}, errNoBid
			}
		}
		return Bidding{}, fmt.Errorf("item %d: %w", itemNo, a.apiError(apiOffer, ans))
	}
	var b Bidding
	if err := json.Unmarshal(ans.body, &b); err != nil {
		return Bidding{}, fmt.Errorf("ebay offer: unreadable answer: %v: %w", err, market.ErrUnavailable)
	}
	return b, nil
}

// userCall sends req with user's access token and the marketplace header;
// after a 401 it refreshes the token and sends once more (eBay refused the
// call before acting on it).
func (a *Adapter) userCall(ctx context.Context, user string, req request) (answer, error) {
	for refreshed := false; ; refreshed = true {
		access, err := a.userAccess(ctx, user)
		if err != nil {
			return answer{}, err
		}
		h := req.header.Clone()
		if h == nil {
			h = http.Header{}
		}
		h.Set("Authorization", "Bearer "+access)
		h.Set("Accept", "application/json")
		h.Set("X-EBAY-C-MARKETPLACE-ID", a.cfg.Marketplace)
		r := req
		r.header = h
		ans, err := a.do(ctx, r)
		if err != nil {
			return answer{}, err
		}
		if ans.status == http.StatusUnauthorized && !refreshed {
			a.dropUserToken(user, access)
			continue
		}
		return ans, nil
	}
}

// History returns no entries: eBay's REST APIs publish no bid history, and
// the Trading API's bidder list needs a user and gives one line per bidder,
// not the price after each bid (docs/ebay.md). It still looks the item up
// (cached), so an unknown item is market.ErrNotFound as everywhere else.
func (a *Adapter) History(ctx context.Context, itemNo int64) ([]market.HistoryEntry, error) {
	if _, err := a.Item(ctx, itemNo); err != nil {
		return nil, err
	}
	return nil, nil
}
