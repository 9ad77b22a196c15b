package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/httperr"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/store"
)

// lookupHandler serves lookupItem (an extension): what the add-snipe
// dialog shows as you type an item number. It tells what a search result
// would tell about one listing, for any item, so it discloses nothing that
// getSearchResults does not; fetchItem stays limited to the account's items
// as the spec requires.
type lookupHandler struct{ s *server }

type lookupResponse struct {
	Status       string  `json:"status"`
	Message      string  `json:"message"`
	ItemNo       string  `json:"item_no"`
	Title        string  `json:"title"`
	CurrentPrice float64 `json:"currentPrice"`
	Currency     string  `json:"currency"`
	MinimumToBid float64 `json:"minimumToBid"`
	Bids         int     `json:"bids"`
	EndTime      string  `json:"endTime"`
	TimeLeft     string  `json:"timeLeft"`
	GalleryURL   string  `json:"galleryUrl"`
	Ended        int     `json:"ended"`
	// Bid is the account's maximum on the item ("" when it has none).
	Bid string `json:"bid"`
}

func (h *lookupHandler) lookup(w http.ResponseWriter, r *http.Request, c *call) error {
	no, err := c.p.itemNo()
	if err != nil {
		return err
	}
	it, err := h.s.cfg.Market.Item(r.Context(), no)
	switch {
	case errors.Is(err, market.ErrNotFound):
		e := httperr.NotFound(fmt.Sprintf("the marketplace has no item %d", no))
		e.Param = "item_no"
		return e
	case err != nil && market.Transient(err):
		return httperr.Unavailable("the marketplace is temporarily unavailable; try again shortly", err)
	case err != nil:
		return httperr.Internal(fmt.Errorf("market item: %w", err))
	}
	out := lookupResponse{
		Status: "OK", ItemNo: strconv.FormatInt(no, 10), Title: it.Title, CurrentPrice: it.CurrentPrice.Float(),
		Currency: it.Currency, MinimumToBid: it.MinimumToBid.Float(), Bids: it.Bids, EndTime: clock.FormatUTC(it.End),
		TimeLeft: timeLeft(it.End, it.Ended, h.s.marketNow()), GalleryURL: it.PictureURL,
	}
	out.Message = fmt.Sprintf("%s: %s %s now; bid at least %s %s.", it.Title, it.CurrentPrice, it.Currency, it.MinimumToBid, it.Currency)
	if it.Ended || !it.End.After(h.s.marketNow()) {
		out.Ended = 1
		out.Message = fmt.Sprintf("%s has ended; it cannot be sniped.", it.Title)
	}
	switch sn, err := h.s.cfg.Store.Snipe(r.Context(), c.acct.ID, no); {
	case err == nil && sn.Bid > 0:
		out.Bid = sn.Bid.String()
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return httperr.Internal(err)
	}
	return ok(w, out)
}
