package api

import (
	"errors"
	"net/http"

	"github.com/sniped/sniped/internal/chart"
	"github.com/sniped/sniped/internal/market"
)

// datasetHandler serves the chart operations.
type datasetHandler struct{ s *server }

// chartInput loads the caller's snipe and the item's history.
func (h *datasetHandler) chartInput(r *http.Request, c *call) (chart.Input, error) {
	s := h.s
	itemNo, err := c.p.itemNo()
	if err != nil {
		return chart.Input{}, err
	}
	sn, err := s.ownSnipe(r.Context(), c.acct.ID, itemNo)
	if err != nil {
		return chart.Input{}, err
	}
	hist, err := s.cfg.Market.History(r.Context(), itemNo)
	if err != nil && !errors.Is(err, market.ErrNotFound) {
		return chart.Input{}, marketError(err, itemNo)
	}
	// An item the marketplace no longer knows still has its stored
	// snapshot, as in fetchItem: chart it with no history, not a 404.
	in := chart.Input{Title: sn.Item.Title, Currency: sn.Item.Currency, Snipe: sn.Bid, Start: sn.Item.Start, End: sn.Item.End}
	for _, e := range hist {
		in.History = append(in.History, chart.Bid{Time: e.Time, Price: e.Price})
	}
	return in, nil
}

func (h *datasetHandler) bidHistory(w http.ResponseWriter, r *http.Request, c *call) error {
	in, err := h.chartInput(r, c)
	if err != nil {
		return err
	}
	return ok(w, chart.BidHistory(in))
}

func (h *datasetHandler) bidder(w http.ResponseWriter, r *http.Request, c *call) error {
	in, err := h.chartInput(r, c)
	if err != nil {
		return err
	}
	return ok(w, bidderResponse{Status: "OK", Message: plural(len(in.History), "bid", "bids"), V1Data: chart.Bidder(in)})
}

// bidderResponse adds status and message beside the Chart.js 1 keys, which
// the library ignores. getBidHistoryDataset cannot: the spec makes it a
// bare array.
type bidderResponse struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	chart.V1Data
}
