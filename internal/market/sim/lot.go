package sim

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
)

// listing is what a seller sets when listing an item; it never changes.
type listing struct {
	ItemNo        int64
	Title         string
	Category      string
	Currency      string
	Country       string
	Seller        string
	SellerScore   int
	SellerPercent float64
	ShippingType  string
	ShippingCost  money.Amount
	StartPrice    money.Amount
	Reserve       money.Amount // 0: none
	BINPrice      money.Amount // 0: none
	StartMs       int64
	EndMs         int64
	// Scripted marks an item made with CreateItem (/sim/createItem): the
	// user's scenario, which background rivals leave alone.
	Scripted bool
}

// bidRecord is one bid as the marketplace received it, accepted or not.
type bidRecord struct {
	Bidder   string
	Max      money.Amount
	TimeMs   int64
	Accepted bool
	// Reason is the rejection reason, or for an accepted bid whether it
	// made the bidder the high bidder ("high-bidder" or "outbid").
	Reason string
	// Price is the item's visible price right after the bid.
	Price money.Amount
}

// lot is one item on the marketplace: its listing, its auction and how it
// ended. mu guards everything but listing.
type lot struct {
	listing

	search string // lower-case title and category, for Search

	mu        sync.Mutex
	auction   *auction
	bids      []bidRecord
	endReason market.EndReason // early ends and BIN only; a normal end is derived from the clock
	endedMs   int64            // when endReason was set
	binBuyer  string
	removed   bool
}

func newLot(l listing) *lot {
	return &lot{listing: l, search: strings.ToLower(l.Title + " " + l.Category),
		auction: newAuction(l.Currency, l.StartPrice, l.Reserve, l.BINPrice)}
}

// status returns how the auction stands at market time nowMs: the end
// reason (Running while live). The end time is hard: at EndMs it is over.
func (l *lot) status(nowMs int64) market.EndReason {
	if l.endReason != market.Running {
		return l.endReason
	}
	if nowMs >= l.EndMs {
		return market.EndedNormally
	}
	return market.Running
}

// endMs is when the auction ended or will end.
func (l *lot) endTimeMs() int64 {
	if l.endReason != market.Running {
		return l.endedMs
	}
	return l.EndMs
}

// winner is who bought the item, "" when nobody did (yet).
func (l *lot) winner(nowMs int64) string {
	switch l.status(nowMs) {
	case market.EndedBuyItNow:
		return l.binBuyer
	case market.EndedSold:
		return l.auction.leader
	case market.EndedNormally:
		if l.auction.reserveMet() {
			return l.auction.leader
		}
	}
	return ""
}

// price is the visible price: the BIN price once bought that way.
func (l *lot) price(nowMs int64) money.Amount {
	if l.endReason == market.EndedBuyItNow {
		return l.BINPrice
	}
	return l.auction.price
}

// item renders the lot as a market.Item. The caller holds l.mu.
func (l *lot) item(nowMs int64, imageBase string) market.Item {
	st := l.status(nowMs)
	a := l.auction
	it := market.Item{
		ItemNo:        l.ItemNo,
		Title:         l.Title,
		Category:      l.Category,
		Currency:      l.Currency,
		Country:       l.Country,
		SellerID:      l.Seller,
		SellerScore:   l.SellerScore,
		SellerPercent: l.SellerPercent,
		ShippingType:  l.ShippingType,
		ShippingCost:  l.ShippingCost,
		StartPrice:    l.StartPrice,
		CurrentPrice:  l.price(nowMs),
		MinimumToBid:  a.minimumToBid(),
		Bids:          a.bids(),
		HasReserve:    l.Reserve > 0,
		ReserveMet:    a.reserveMet(),
		Start:         time.UnixMilli(l.StartMs).UTC(),
		End:           time.UnixMilli(l.endTimeMs()).UTC(),
		Ended:         st != market.Running,
		EndReason:     st,
		PictureURL:    imageURL(imageBase, l.ItemNo, 1),
		Images:        []string{imageURL(imageBase, l.ItemNo, 1), imageURL(imageBase, l.ItemNo, 2), imageURL(imageBase, l.ItemNo, 3)},
	}
	if st == market.Running && a.binOffered() {
		it.BuyItNow = l.BINPrice
	}
	return it
}

// imageURL is the absolute URL of view n (1-based) of an item's picture.
func imageURL(base string, itemNo int64, n int) string {
	u := base + "/sim/img/" + strconv.FormatInt(itemNo, 10)
	if n > 1 {
		u += "-" + strconv.Itoa(n)
	}
	return u + ".svg"
}
