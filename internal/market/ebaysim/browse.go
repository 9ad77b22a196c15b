package ebaysim

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/ebay"
	"github.com/sniped/sniped/internal/market/sim"
	"github.com/sniped/sniped/internal/money"
)

// maxLimit is the Browse search's largest page.
const maxLimit = 200

// browseAuth checks an application or user token with the public scope.
func (s *Server) browseAuth(w http.ResponseWriter, r *http.Request) bool {
	g, ok := s.authAccess(w, r)
	if !ok {
		return false
	}
	if !g.has(ebay.ScopeAPI) {
		insufficient(w)
		return false
	}
	return true
}

// browseFailure writes the Browse error for a simulator error.
func browseFailure(w http.ResponseWriter, err error, notFoundID int) {
	switch {
	case errors.Is(err, market.ErrNotFound):
		msg := "The specified item ID was not found."
		if notFoundID == 11003 {
			msg = "The specified legacy item ID was not found."
		}
		writeErrors(w, http.StatusNotFound, ebay.ErrorDetail{ErrorID: notFoundID, Domain: "API_BROWSE", Category: "REQUEST", Message: msg})
	default:
		writeErrors(w, http.StatusServiceUnavailable, ebay.ErrorDetail{ErrorID: 11004, Domain: "API_BROWSE", Category: "APPLICATION",
			Message: "The item service is temporarily unavailable. Please try again later."})
	}
}

// itemByLegacyID is GET /buy/browse/v1/item/get_item_by_legacy_id.
func (s *Server) itemByLegacyID(w http.ResponseWriter, r *http.Request) {
	if !s.browseAuth(w, r) {
		return
	}
	no, err := strconv.ParseInt(r.URL.Query().Get("legacy_item_id"), 10, 64)
	if err != nil || no <= 0 {
		writeErrors(w, http.StatusBadRequest, ebay.ErrorDetail{ErrorID: 11003, Domain: "API_BROWSE", Category: "REQUEST",
			Message: "The legacy_item_id is invalid.", Parameters: []ebay.ErrorParameter{{Name: "legacy_item_id", Value: r.URL.Query().Get("legacy_item_id")}}})
		return
	}
	s.writeItem(w, r, no, 11003)
}

// item is GET /buy/browse/v1/item/{item_id}.
func (s *Server) item(w http.ResponseWriter, r *http.Request) {
	if !s.browseAuth(w, r) {
		return
	}
	no, ok := itemNoOf(r.PathValue("item_id"))
	if !ok {
		writeErrors(w, http.StatusNotFound, ebay.ErrorDetail{ErrorID: 11001, Domain: "API_BROWSE", Category: "REQUEST", Message: "The specified item ID was not found."})
		return
	}
	s.writeItem(w, r, no, 11001)
}

func (s *Server) writeItem(w http.ResponseWriter, r *http.Request, no int64, notFoundID int) {
	it, err := s.sim.Item(r.Context(), no)
	if err != nil {
		browseFailure(w, err, notFoundID)
		return
	}
	bi := s.browseItem(it)
	if st, err := s.sim.ItemState(r.Context(), no); err == nil {
		bi.UniqueBidderCount = uniqueBidders(st.Bids)
	}
	writeJSON(w, http.StatusOK, bi)
}

func uniqueBidders(bids []sim.BidView) int {
	seen := map[string]bool{}
	for _, b := range bids {
		if b.Accepted {
			seen[b.Bidder] = true
		}
	}
	return len(seen)
}

// itemNoOf reads a REST item id v1|N|0.
func itemNoOf(id string) (int64, bool) {
	parts := strings.Split(id, "|")
	if len(parts) != 3 || parts[0] != "v1" || parts[2] != "0" {
		return 0, false
	}
	no, err := strconv.ParseInt(parts[1], 10, 64)
	return no, err == nil && no > 0
}

// browseItem renders a simulator item in Browse's shape (an item, or an
// item summary of a search).
func (s *Server) browseItem(it market.Item) ebay.BrowseItem {
	amt := func(a money.Amount) *ebay.Amount { return &ebay.Amount{Value: a.String(), Currency: it.Currency} }
	bi := ebay.BrowseItem{
		ItemID:            ebay.RESTItemID(it.ItemNo),
		Title:             it.Title,
		CategoryPath:      strings.ReplaceAll(it.Category, ":", "|"),
		CurrentBidPrice:   amt(it.CurrentPrice),
		MinimumPriceToBid: amt(it.MinimumToBid),
		BidCount:          it.Bids,
		BuyingOptions:     []string{"AUCTION"},
		ItemCreationDate:  it.Start.UTC().Format(time.RFC3339Nano),
		ItemEndDate:       it.End.UTC().Format(time.RFC3339Nano),
		ItemWebURL:        it.PictureURL,
	}
	if it.HasReserve {
		met := it.ReserveMet
		bi.ReservePriceMet = &met
	}
	if it.BuyItNow > 0 {
		bi.BuyingOptions = append(bi.BuyingOptions, "FIXED_PRICE")
		bi.Price = amt(it.BuyItNow)
	}
	if len(it.Images) > 0 {
		bi.Image = &ebay.Image{ImageURL: it.Images[0]}
		for _, u := range it.Images[1:] {
			bi.AdditionalImages = append(bi.AdditionalImages, ebay.Image{ImageURL: u})
		}
	}
	if it.ShippingType != "" {
		so := ebay.ShippingOption{ShippingCostType: "FIXED", ShippingCost: amt(it.ShippingCost)}
		if it.ShippingType == "Calculated" {
			so.ShippingCostType = "CALCULATED"
		}
		bi.ShippingOptions = []ebay.ShippingOption{so}
	}
	bi.LegacyItemID = strconv.FormatInt(it.ItemNo, 10)
	bi.Seller = &ebay.Seller{Username: it.SellerID, FeedbackScore: it.SellerScore,
		FeedbackPercentage: strconv.FormatFloat(it.SellerPercent, 'f', 1, 64)}
	bi.ItemLocation = &struct {
		Country string `json:"country"`
	}{Country: it.Country}
	return bi
}

// search is GET /buy/browse/v1/item_summary/search. It reads q, limit,
// sort (endingSoonest is the simulator's only order) and the filters
// buyingOptions:{...} and itemLocationCountry:CC. Like eBay, without
// AUCTION in buyingOptions it leaves out auctions that have bids.
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	if !s.browseAuth(w, r) {
		return
	}
	q := r.URL.Query()
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			writeErrors(w, http.StatusBadRequest, ebay.ErrorDetail{ErrorID: 12001, Domain: "API_BROWSE", Category: "REQUEST",
				Message: "The value of limit is invalid; it must be from 1 to 200.", Parameters: []ebay.ErrorParameter{{Name: "limit", Value: v}}})
			return
		}
		limit = n
	}
	if v := q.Get("sort"); v != "" && v != "endingSoonest" {
		writeErrors(w, http.StatusBadRequest, ebay.ErrorDetail{ErrorID: 12002, Domain: "API_BROWSE", Category: "REQUEST",
			Message: "The simulator sorts only by endingSoonest.", Parameters: []ebay.ErrorParameter{{Name: "sort", Value: v}}})
		return
	}
	country, auctions := "", false
	for _, f := range splitFilter(q.Get("filter")) {
		name, val, _ := strings.Cut(f, ":")
		switch strings.TrimSpace(name) {
		case "buyingOptions":
			auctions = strings.Contains(val, "AUCTION")
		case "itemLocationCountry":
			country = strings.TrimSpace(val)
		}
	}
	items, err := s.sim.Search(r.Context(), q.Get("q"), country, limit)
	if err != nil {
		browseFailure(w, err, 11001)
		return
	}
	page := ebay.SearchPage{Limit: limit, ItemSummaries: []ebay.BrowseItem{}}
	for _, it := range items {
		if !auctions && it.Bids > 0 {
			continue
		}
		page.ItemSummaries = append(page.ItemSummaries, s.browseItem(it))
	}
	page.Total = len(page.ItemSummaries)
	writeJSON(w, http.StatusOK, page)
}

// splitFilter splits a filter parameter at the commas outside {...}.
func splitFilter(v string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range v {
		switch c {
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, v[start:i])
				start = i + 1
			}
		}
	}
	if start < len(v) {
		out = append(out, v[start:])
	}
	return out
}
