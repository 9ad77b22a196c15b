// Package market is the seam between sniped and an auction marketplace. The
// built-in simulator (package market/sim) implements it today; a real eBay
// REST adapter will implement it later. Everything the sniper and the API
// learn about items and bids comes through Market.
package market

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sniped/sniped/internal/money"
)

// Market is an auction marketplace. User names identify marketplace users:
// each sniped account maps to one user (its account name). Every method is
// safe for concurrent use.
type Market interface {
	// Item returns the current details of an item, ended or not.
	// An unknown item is ErrNotFound.
	Item(ctx context.Context, itemNo int64) (Item, error)
	// Search returns up to limit live items matching query in a country
	// (2-letter code), soonest-ending first.
	Search(ctx context.Context, query, country string, limit int) ([]Item, error)
	// WatchList returns the user's marketplace watch list.
	WatchList(ctx context.Context, user string) ([]Item, error)
	// PlaceBid submits a maximum (proxy) bid for user. A refusal is a
	// *BidError wrapping one of the Err* sentinels below.
	PlaceBid(ctx context.Context, user string, itemNo int64, max money.Amount) (BidReceipt, error)
	// BidState reports user's standing on an item: whether they have a bid
	// there at all (used after a crash to avoid bidding twice), whether they
	// lead, and whether and how the auction ended.
	BidState(ctx context.Context, user string, itemNo int64) (BidState, error)
	// History returns an item's accepted bids in time order.
	History(ctx context.Context, itemNo int64) ([]HistoryEntry, error)
	// Now returns the marketplace's current time, so that sniped can measure
	// and correct the offset between its clock and the marketplace's.
	Now(ctx context.Context) (time.Time, error)
}

// EndReason says how an auction ended.
type EndReason string

// The ways an auction ends.
const (
	// Running means the auction has not ended.
	Running EndReason = ""
	// EndedNormally means it reached its end time.
	EndedNormally EndReason = "ended"
	// EndedCancelled means the seller ended it early and cancelled all bids.
	EndedCancelled EndReason = "cancelled"
	// EndedSold means the seller ended it early, selling to the high bidder.
	EndedSold EndReason = "sold-early"
	// EndedBuyItNow means a buyer used Buy It Now.
	EndedBuyItNow EndReason = "bin"
)

// Item is a listing's details: every field of the interface's item details
// (spec 2.3) plus what bidding needs.
type Item struct {
	ItemNo        int64
	Title         string
	Category      string // category path, parts joined by ":"
	Currency      string // ISO 4217, e.g. USD
	Country       string // ISO 3166 alpha-2, e.g. US
	SellerID      string
	SellerScore   int
	SellerPercent float64
	ShippingType  string
	ShippingCost  money.Amount // the interface's "cost"
	StartPrice    money.Amount
	CurrentPrice  money.Amount
	// MinimumToBid is the lowest maximum a new bidder may place now: the
	// start price with no bids, otherwise the current price plus increment.
	MinimumToBid money.Amount
	Bids         int
	HasReserve   bool
	ReserveMet   bool
	BuyItNow     money.Amount // 0 when not offered (any more)
	Start        time.Time
	End          time.Time
	Ended        bool
	EndReason    EndReason
	PictureURL   string
	Images       []string
}

// BidReceipt is the marketplace's answer to an accepted bid.
type BidReceipt struct {
	// HighBidder is true when the bid made user the high bidder.
	HighBidder   bool
	CurrentPrice money.Amount
	// Time is when the marketplace recorded the bid.
	Time time.Time
}

// BidState is a user's standing on one item.
type BidState struct {
	// HasBid is true when user has at least one accepted bid on the item.
	HasBid bool
	// MaxBid is user's highest accepted maximum.
	MaxBid     money.Amount
	HighBidder bool
	Ended      bool
	EndReason  EndReason
	// Won is true when the auction ended and user bought the item.
	Won          bool
	ReserveMet   bool
	CurrentPrice money.Amount
}

// HistoryEntry is one accepted bid in an item's history.
type HistoryEntry struct {
	Time time.Time
	// Price is the item's visible price after this bid.
	Price  money.Amount
	Bidder string
}

// Rejections and failures. A *BidError wraps one of these; match with errors.Is.
var (
	// ErrTooLow: the bid is below the current price (or the start price).
	ErrTooLow = errors.New("bid is below the current price")
	// ErrIncrementNotMet: at or above the current price but below price+increment.
	ErrIncrementNotMet = errors.New("bid does not meet the minimum bid increment")
	// ErrEnded: the auction has ended.
	ErrEnded = errors.New("auction has ended")
	// ErrEndedByBuyItNow: the item was bought with Buy It Now.
	ErrEndedByBuyItNow = errors.New("auction ended by Buy It Now")
	// ErrCancelled: the seller ended the listing early.
	ErrCancelled = errors.New("listing was ended early by the seller")
	// ErrSellerCannotBid: sellers may not bid on their own items.
	ErrSellerCannotBid = errors.New("seller cannot bid on own item")
	// ErrCannotLowerMax: the high bidder may not lower their maximum.
	ErrCannotLowerMax = errors.New("bid is not above your previous maximum")
	// ErrIneligible: the user may not bid on this item (e.g. buyer requirements).
	ErrIneligible = errors.New("user is not eligible to bid on this item")
	// ErrBINPriceReached: a bid at or above a still-offered Buy It Now price.
	ErrBINPriceReached = errors.New("bid is at or above the Buy It Now price; use Buy It Now")
	// ErrNotFound: no such item.
	ErrNotFound = errors.New("item not found")
	// ErrUnavailable: a transient failure; the call may be retried.
	ErrUnavailable = errors.New("marketplace temporarily unavailable")
	// ErrNotAuthorized: the marketplace refused sniped's credentials for the user.
	ErrNotAuthorized = errors.New("marketplace authorization failed")
)

// BidError is a refused bid with the context a user needs.
type BidError struct {
	Err error // one of the Err* sentinels
	// Minimum is the minimum to bid at the time of the refusal, when known.
	Minimum money.Amount
	// CurrentPrice at the time of the refusal.
	CurrentPrice money.Amount
}

// Error names the refusal and, when known, the minimum to bid.
func (e *BidError) Error() string {
	if e.Minimum > 0 {
		return fmt.Sprintf("%v (minimum to bid %s)", e.Err, e.Minimum)
	}
	return e.Err.Error()
}

// Unwrap lets errors.Is match the sentinel.
func (e *BidError) Unwrap() error { return e.Err }

// Transient reports whether err is worth retrying.
func Transient(err error) bool {
	return errors.Is(err, ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
}
