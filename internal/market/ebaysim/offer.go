package ebaysim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/ebay"
	"github.com/sniped/sniped/internal/money"
)

// offerAuth checks a user token with the Offer scope; an application token
// or a user token without it is refused with 403/1100, as eBay does.
func (s *Server) offerAuth(w http.ResponseWriter, r *http.Request) (string, bool) {
	g, ok := s.authAccess(w, r)
	if !ok {
		return "", false
	}
	if g.User == "" || !g.has(ebay.ScopeOffer) {
		insufficient(w)
		return "", false
	}
	return g.User, true
}

// offerCall checks an Offer call's user token and reads its {item_id};
// false when it answered the call with eBay's error.
func (s *Server) offerCall(w http.ResponseWriter, r *http.Request) (user string, itemNo int64, ok bool) {
	if user, ok = s.offerAuth(w, r); !ok {
		return "", 0, false
	}
	if itemNo, ok = itemNoOf(r.PathValue("item_id")); !ok {
		writeErrors(w, http.StatusNotFound, offerError(11001, "The specified item ID was not found."))
		return "", 0, false
	}
	return user, itemNo, true
}

func offerError(id int, msg string) ebay.ErrorDetail {
	return ebay.ErrorDetail{ErrorID: id, Domain: "API_OFFER", Category: "REQUEST", Message: msg}
}

// bidErrors maps the simulator's refusals to the Offer API's error ids.
var bidErrors = []struct {
	err error
	id  int
	msg string
}{
	{market.ErrTooLow, 120008, "The bid amount is less than the minimum bid amount for this item."},
	{market.ErrIncrementNotMet, 120008, "The bid amount is less than the minimum bid amount for this item."},
	{market.ErrCannotLowerMax, 120010, "Your new maximum bid must be higher than your current maximum bid."},
	{market.ErrEndedByBuyItNow, 120002, "The auction has ended because the item was purchased with Buy It Now."},
	{market.ErrCancelled, 120001, "The item is not an active auction."},
	{market.ErrEnded, 120012, "The auction has ended."},
	{market.ErrSellerCannotBid, 120003, "The seller cannot bid on their own item."},
	{market.ErrIneligible, 120004, "The buyer is not eligible to bid on this item."},
	{market.ErrBINPriceReached, 120005, "The bid amount is equal to or higher than the Buy It Now price; buy the item instead."},
}

// offerFailure writes the Offer error for a simulator error.
func offerFailure(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, market.ErrNotAuthorized):
		insufficient(w) // /sim/fail?kind=unauthorized: an application without Offer approval
		return
	case errors.Is(err, market.ErrNotFound):
		writeErrors(w, http.StatusNotFound, ebay.ErrorDetail{ErrorID: 11001, Domain: "API_OFFER", Category: "REQUEST", Message: "The specified item ID was not found."})
		return
	}
	for _, b := range bidErrors {
		if errors.Is(err, b.err) {
			writeErrors(w, http.StatusBadRequest, offerError(b.id, b.msg))
			return
		}
	}
	writeErrors(w, http.StatusInternalServerError, internalError("API_OFFER"))
}

// placeProxyBid is POST /buy/offer/v1_beta/bidding/{item_id}/place_proxy_bid.
func (s *Server) placeProxyBid(w http.ResponseWriter, r *http.Request) {
	user, no, ok := s.offerCall(w, r)
	if !ok {
		return
	}
	var req ebay.PlaceProxyBidRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil {
		writeErrors(w, http.StatusBadRequest, offerError(120008, "The request body is not a valid PlaceProxyBidRequest."))
		return
	}
	mx, err := money.Parse(req.MaxAmount.Value)
	if err != nil || mx <= 0 {
		writeErrors(w, http.StatusBadRequest, ebay.ErrorDetail{ErrorID: 120008, Domain: "API_OFFER", Category: "REQUEST",
			Message: "The maxAmount value is invalid.", Parameters: []ebay.ErrorParameter{{Name: "maxAmount.value", Value: req.MaxAmount.Value}}})
		return
	}
	it, err := s.sim.Item(r.Context(), no)
	if err != nil {
		offerFailure(w, err)
		return
	}
	if req.MaxAmount.Currency != it.Currency {
		writeErrors(w, http.StatusBadRequest, ebay.ErrorDetail{ErrorID: 120009, Domain: "API_OFFER", Category: "REQUEST",
			Message: fmt.Sprintf("The currency must be the item's currency, %s.", it.Currency)})
		return
	}
	if _, err := s.sim.PlaceBid(r.Context(), user, no, mx); err != nil {
		offerFailure(w, err)
		return
	}
	s.mu.Lock()
	s.bidSeq++
	id := fmt.Sprintf("%d-%d", no, s.bidSeq)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, ebay.PlaceProxyBidResponse{ProxyBidID: id})
}

// getBidding is GET /buy/offer/v1_beta/bidding/{item_id}: the user's
// standing, or 120033 when they have no bid there. On an ended auction
// highBidder stays true for a leader below the reserve, with
// reservePriceMet false, so the two losses can be told apart.
func (s *Server) getBidding(w http.ResponseWriter, r *http.Request) {
	user, no, ok := s.offerCall(w, r)
	if !ok {
		return
	}
	bs, err := s.sim.BidState(r.Context(), user, no)
	if err != nil {
		offerFailure(w, err)
		return
	}
	if !bs.HasBid {
		writeErrors(w, http.StatusNotFound, offerError(120033, "The buyer has not placed a bid on this item."))
		return
	}
	it, err := s.sim.ItemState(r.Context(), no)
	if err != nil {
		offerFailure(w, err)
		return
	}
	b := ebay.Bidding{
		ItemID:          ebay.RESTItemID(no),
		AuctionStatus:   "ACTIVE",
		AuctionEndDate:  it.Item.End.UTC().Format(time.RFC3339Nano),
		HighBidder:      bs.HighBidder,
		CurrentPrice:    &ebay.Amount{Value: bs.CurrentPrice.String(), Currency: it.Item.Currency},
		BidCount:        it.Item.Bids,
		CurrentProxyBid: &ebay.ProxyBid{MaxAmount: ebay.Amount{Value: bs.MaxBid.String(), Currency: it.Item.Currency}},
	}
	if bs.Ended {
		b.AuctionStatus = "ENDED"
		b.HighBidder = bs.Won || (bs.HighBidder && !bs.ReserveMet)
	}
	if it.Item.HasReserve {
		met := bs.ReserveMet
		b.ReservePriceMet = &met
	}
	writeJSON(w, http.StatusOK, b)
}
