package ebay

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
)

// Browse limits.
const (
	// MaxSearchLimit is the Browse search's largest page.
	MaxSearchLimit = 200
	// DefaultSearchLimit applies when Search is given limit <= 0.
	DefaultSearchLimit = 100
)

// Amount is eBay's money: a decimal string and an ISO 4217 currency.
type Amount struct {
	Value    string `json:"value"`
	Currency string `json:"currency"`
}

// BrowseItem is the part of a Browse item (getItem, get_item_by_legacy_id)
// and item summary (search) that sniped reads. Field names are eBay's.
type BrowseItem struct {
	ItemID            string   `json:"itemId"`
	LegacyItemID      string   `json:"legacyItemId,omitempty"`
	Title             string   `json:"title"`
	CategoryPath      string   `json:"categoryPath,omitempty"`
	Price             *Amount  `json:"price,omitempty"`
	CurrentBidPrice   *Amount  `json:"currentBidPrice,omitempty"`
	MinimumPriceToBid *Amount  `json:"minimumPriceToBid,omitempty"`
	BidCount          int      `json:"bidCount"`
	UniqueBidderCount int      `json:"uniqueBidderCount,omitempty"`
	ReservePriceMet   *bool    `json:"reservePriceMet,omitempty"`
	BuyingOptions     []string `json:"buyingOptions"`
	ItemCreationDate  string   `json:"itemCreationDate,omitempty"`
	ItemEndDate       string   `json:"itemEndDate"`
	Image             *Image   `json:"image,omitempty"`
	AdditionalImages  []Image  `json:"additionalImages,omitempty"`
	ItemWebURL        string   `json:"itemWebUrl,omitempty"`
	Seller            *Seller  `json:"seller,omitempty"`
	ItemLocation      *struct {
		Country string `json:"country"`
	} `json:"itemLocation,omitempty"`
	ShippingOptions []ShippingOption `json:"shippingOptions,omitempty"`
}

// Image is an item picture.
type Image struct {
	ImageURL string `json:"imageUrl"`
}

// Seller is a listing's seller.
type Seller struct {
	Username           string `json:"username"`
	FeedbackScore      int    `json:"feedbackScore"`
	FeedbackPercentage string `json:"feedbackPercentage"`
}

// ShippingOption is one way the item ships.
type ShippingOption struct {
	ShippingCostType string  `json:"shippingCostType"`
	ShippingCost     *Amount `json:"shippingCost,omitempty"`
}

// SearchPage is a Browse search answer.
type SearchPage struct {
	Total         int          `json:"total"`
	Limit         int          `json:"limit"`
	Offset        int          `json:"offset"`
	ItemSummaries []BrowseItem `json:"itemSummaries"`
}

// cachedItem is an item lookup and when it was made.
type cachedItem struct {
	item market.Item
	at   time.Time
}

// RESTItemID is the REST item id of a site item number: v1|N|0 (auctions
// have no variations).
func RESTItemID(itemNo int64) string { return "v1|" + strconv.FormatInt(itemNo, 10) + "|0" }

// Item looks an item up by its site number (get_item_by_legacy_id). Answers
// are cached for Config.ItemTTL, except in an auction's last FreshWithin
// and after its end, when every lookup (the sniper's pre-flights, its
// settlement) must see eBay's latest; under market.WithFresh the cache is
// skipped too.
func (a *Adapter) Item(ctx context.Context, itemNo int64) (market.Item, error) {
	now := a.clk.Now()
	if !market.Fresh(ctx) && a.cfg.ItemTTL > 0 {
		a.mu.Lock()
		c, ok := a.items[itemNo]
		a.mu.Unlock()
		if ok && now.Sub(c.at) < a.cfg.ItemTTL && c.item.End.Sub(now) > FreshWithin {
			return c.item, nil
		}
	}
	var bi BrowseItem
	u := a.api + "/buy/browse/v1/item/get_item_by_legacy_id?legacy_item_id=" + strconv.FormatInt(itemNo, 10)
	if err := a.browseGet(ctx, u, &bi); err != nil {
		return market.Item{}, fmt.Errorf("item %d: %w", itemNo, err)
	}
	it, err := a.convert(bi)
	if err != nil {
		return market.Item{}, fmt.Errorf("item %d: %w", itemNo, err)
	}
	if a.cfg.ItemTTL > 0 {
		a.mu.Lock()
		a.items[itemNo] = cachedItem{item: it, at: now}
		if len(a.items) > maxCached {
			a.pruneLocked(now)
		}
		a.mu.Unlock()
	}
	return it, nil
}

// FreshWithin is how close to its end an auction's lookups always ask eBay.
// It spans the sniper's pre-flights (a minute and a few seconds before the
// shot), so they see a changed end time or price.
const FreshWithin = 2 * time.Minute

// maxCached bounds the item cache; expired entries go first.
const maxCached = 50_000

func (a *Adapter) pruneLocked(now time.Time) {
	for no, c := range a.items {
		if now.Sub(c.at) >= a.cfg.ItemTTL {
			delete(a.items, no)
		}
	}
	for no := range a.items {
		if len(a.items) <= maxCached {
			break
		}
		delete(a.items, no)
	}
}

// forget drops an item from the cache after a bid changed it.
func (a *Adapter) forget(itemNo int64) {
	a.mu.Lock()
	delete(a.items, itemNo)
	a.mu.Unlock()
}

// Search asks the Browse search for live auctions only, soonest-ending
// first, in country ("" = any).
func (a *Adapter) Search(ctx context.Context, query, country string, limit int) ([]market.Item, error) {
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	limit = min(limit, MaxSearchLimit)
	filter := "buyingOptions:{AUCTION}"
	if country != "" {
		filter += ",itemLocationCountry:" + country
	}
	q := url.Values{"q": {query}, "filter": {filter}, "sort": {"endingSoonest"}, "limit": {strconv.Itoa(limit)}}
	var page SearchPage
	if err := a.browseGet(ctx, a.api+"/buy/browse/v1/item_summary/search?"+q.Encode(), &page); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	out := make([]market.Item, 0, len(page.ItemSummaries))
	for _, bi := range page.ItemSummaries {
		it, err := a.convert(bi)
		if err != nil {
			a.log.Warn("ebay search: skipping an item sniped cannot read", "item_id", bi.ItemID, "err", err)
			continue
		}
		if !slices.Contains(bi.BuyingOptions, "AUCTION") || it.Ended {
			continue
		}
		if country != "" && it.Country == "" {
			it.Country = country // no itemLocation: the filter vouches for it
		}
		if country != "" && it.Country != country {
			continue
		}
		out = append(out, it)
	}
	slices.SortStableFunc(out, func(x, y market.Item) int { return x.End.Compare(y.End) })
	return out[:min(len(out), limit)], nil
}

// browseGet GETs a Browse URL with the application token into v.
func (a *Adapter) browseGet(ctx context.Context, u string, v any) error {
	for refreshed := false; ; refreshed = true {
		access, err := a.appAccess(ctx)
		if err != nil {
			return err
		}
		ans, err := a.do(ctx, request{
			api: apiBrowse, method: http.MethodGet, url: u, retry: true, timing: true,
			header: http.Header{
				"Authorization":           {"Bearer " + access},
				"Accept":                  {"application/json"},
				"X-EBAY-C-MARKETPLACE-ID": {a.cfg.Marketplace},
			},
		})
		if err != nil {
			return err
		}
		if ans.status == http.StatusUnauthorized && !refreshed {
			a.dropAppToken(access) // revoked or expired early: fetch a new one once
			continue
		}
		if ans.status != http.StatusOK {
			return a.apiError(apiBrowse, ans)
		}
		if err := json.Unmarshal(ans.body, v); err != nil {
			return fmt.Errorf("ebay browse: unreadable answer: %v: %w", err, market.ErrUnavailable)
		}
		return nil
	}
}

// convert maps a Browse item (or search summary) to a market.Item; fields
// eBay leaves out stay empty.
func (a *Adapter) convert(bi BrowseItem) (market.Item, error) {
	no, err := legacyNumber(bi)
	if err != nil {
		return market.Item{}, err
	}
	end, err := time.Parse(time.RFC3339, bi.ItemEndDate)
	if err != nil {
		return market.Item{}, fmt.Errorf("ebay: item %s has no readable itemEndDate %q: %w", bi.ItemID, bi.ItemEndDate, errUnexpected)
	}
	it := market.Item{ItemNo: no, Title: bi.Title, End: end.UTC(), Bids: bi.BidCount}
	it.Category = strings.ReplaceAll(bi.CategoryPath, "|", ":")
	if t, err := time.Parse(time.RFC3339, bi.ItemCreationDate); err == nil {
		it.Start = t.UTC()
	}
	price := bi.CurrentBidPrice
	if price == nil {
		price = bi.Price
	}
	if price == nil {
		return market.Item{}, fmt.Errorf("ebay: item %s has no currentBidPrice: %w", bi.ItemID, errUnexpected)
	}
	if it.CurrentPrice, it.Currency, err = parseAmount(*price); err != nil {
		return market.Item{}, fmt.Errorf("ebay: item %s currentBidPrice: %v: %w", bi.ItemID, err, errUnexpected)
	}
	if bi.BidCount == 0 {
		it.StartPrice = it.CurrentPrice // with no bids, eBay shows the start price
	}
	it.MinimumToBid = it.CurrentPrice
	if bi.MinimumPriceToBid != nil {
		if m, _, err := parseAmount(*bi.MinimumPriceToBid); err == nil {
			it.MinimumToBid = m
		}
	} else if bi.BidCount > 0 && market.KnownCurrency(it.Currency) {
		it.MinimumToBid = market.MinimumToBid(it.Currency, it.StartPrice, it.CurrentPrice, bi.BidCount)
	}
	it.ReserveMet = true           // no reserve counts as met
	if bi.ReservePriceMet != nil { // eBay returns it only for items with a reserve
		it.HasReserve, it.ReserveMet = true, *bi.ReservePriceMet
	}
	if slices.Contains(bi.BuyingOptions, "FIXED_PRICE") && bi.Price != nil {
		if p, _, err := parseAmount(*bi.Price); err == nil {
			it.BuyItNow = p
		}
	}
	if bi.Image != nil {
		it.PictureURL = bi.Image.ImageURL
		it.Images = append(it.Images, bi.Image.ImageURL)
	}
	for _, im := range bi.AdditionalImages {
		it.Images = append(it.Images, im.ImageURL)
	}
	if bi.ItemLocation != nil {
		it.Country = bi.ItemLocation.Country
	}
	if bi.Seller != nil {
		it.SellerID, it.SellerScore = bi.Seller.Username, bi.Seller.FeedbackScore
		it.SellerPercent, _ = strconv.ParseFloat(bi.Seller.FeedbackPercentage, 64)
	}
	if len(bi.ShippingOptions) > 0 {
		so := bi.ShippingOptions[0]
		it.ShippingType = shippingType(so.ShippingCostType)
		if so.ShippingCost != nil {
			it.ShippingCost, _, _ = parseAmount(*so.ShippingCost)
		}
	}
	if !a.clk.Now().Before(it.End) {
		it.Ended, it.EndReason = true, market.EndedNormally
		it.BuyItNow = 0
	}
	return it, nil
}

// shippingType maps eBay's shippingCostType to the interface's words.
func shippingType(t string) string {
	switch t {
	case "FIXED":
		return "Flat"
	case "CALCULATED":
		return "Calculated"
	}
	return t
}

// legacyNumber is an item's site number: legacyItemId, or the middle of
// the REST id v1|N|0.
func legacyNumber(bi BrowseItem) (int64, error) {
	s := bi.LegacyItemID
	if s == "" {
		parts := strings.Split(bi.ItemID, "|")
		if len(parts) == 3 && parts[0] == "v1" {
			s = parts[1]
		}
	}
	no, err := strconv.ParseInt(s, 10, 64)
	if err != nil || no <= 0 {
		return 0, fmt.Errorf("ebay: item id %q has no item number: %w", bi.ItemID, errUnexpected)
	}
	return no, nil
}

// parseAmount reads eBay's money. eBay sends decimal strings; more than two
// decimals (which sniped cannot hold exactly) are refused, not rounded.
func parseAmount(am Amount) (money.Amount, string, error) {
	if am.Currency == "" || len(am.Currency) != 3 {
		return 0, "", fmt.Errorf("currency %q is not an ISO 4217 code", am.Currency)
	}
	v := strings.TrimSpace(am.Value)
	if whole, frac, ok := strings.Cut(v, "."); ok && len(frac) > 2 && strings.Trim(frac[2:], "0") == "" {
		v = whole + "." + frac[:2] // 12.500 is 12.50
	}
	m, err := money.Parse(v)
	if err != nil {
		return 0, "", fmt.Errorf("value %q %v", am.Value, err)
	}
	return m, am.Currency, nil
}

// formatAmount writes money the way eBay expects it.
func formatAmount(m money.Amount, currency string) Amount {
	return Amount{Value: m.String(), Currency: currency}
}
