package sim

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/auction"
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

// lot is one item on the marketplace: its listing, its auction (the rules
// and how it ended) and every bid received. mu guards everything but
// listing.
type lot struct {
	listing

	search string // lower-case title and category, for Search

	mu      sync.Mutex
	auction *auction.Auction
	bids    []bidRecord
	removed bool
}

func newLot(l listing) *lot {
	return &lot{listing: l, search: strings.ToLower(l.Title + " " + l.Category), auction: auction.New(l.terms())}
}

// terms are the listing's auction terms.
func (l *listing) terms() auction.Terms {
	return auction.Terms{Currency: l.Currency, Seller: l.Seller, Start: l.StartPrice,
		Reserve: l.Reserve, BuyItNow: l.BINPrice, End: time.UnixMilli(l.EndMs).UTC()}
}

// status returns how the auction stands at market time nowMs: the end
// reason (Running while live).
func (l *lot) status(nowMs int64) market.EndReason {
	return l.auction.Status(time.UnixMilli(nowMs))
}

// winner is who bought the item, "" when nobody did (yet).
func (l *lot) winner(nowMs int64) string {
	return l.auction.Winner(time.UnixMilli(nowMs))
}

// item renders the lot as a market.Item. The caller holds l.mu.
func (l *lot) item(nowMs int64, imageBase string) market.Item {
	it := market.Item{
		ItemNo:        l.ItemNo,
		Title:         l.Title,
		Category:      l.Category,
		Country:       l.Country,
		SellerScore:   l.SellerScore,
		SellerPercent: l.SellerPercent,
		ShippingType:  l.ShippingType,
		ShippingCost:  l.ShippingCost,
		Start:         time.UnixMilli(l.StartMs).UTC(),
		PictureURL:    imageURL(imageBase, l.ItemNo, 1),
		Images:        []string{imageURL(imageBase, l.ItemNo, 1), imageURL(imageBase, l.ItemNo, 2), imageURL(imageBase, l.ItemNo, 3)},
	}
	l.auction.Fill(&it, time.UnixMilli(nowMs))
	it.End = it.End.UTC()
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
