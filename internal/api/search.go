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

// searchHandler serves saved searches and marketplace search.
type searchHandler struct{ s *server }

type searchEntry struct {
	ID        int64  `json:"id"`
	Query     string `json:"query"`
	CreatedAt string `json:"created_at"`
}

func newSearchEntry(s store.Search) searchEntry {
	return searchEntry{ID: s.ID, Query: s.Query, CreatedAt: clock.FormatUTC(s.CreatedAt)}
}

type addSearchResponse struct {
	Status    string `json:"status"`
	Alert     string `json:"alert"`
	Message   string `json:"message"`
	ID        int64  `json:"id"`
	Query     string `json:"query"`
	CreatedAt string `json:"created_at"`
	NewSearch bool   `json:"new_search"`
}

func (h *searchHandler) add(w http.ResponseWriter, r *http.Request, c *call) error {
	q, err := c.p.query()
	if err != nil {
		return err
	}
	sr, created, err := h.s.cfg.Store.AddSearch(r.Context(), c.acct.ID, q, h.s.clock.Now())
	if err != nil {
		return httperr.Internal(err)
	}
	msg := fmt.Sprintf("Search %q saved with id %d.", q, sr.ID)
	if !created {
		msg = fmt.Sprintf("Search %q was already saved with id %d.", q, sr.ID)
	}
	e := newSearchEntry(sr)
	return ok(w, addSearchResponse{Status: "OK", Alert: "success", Message: msg, ID: e.ID, Query: e.Query, CreatedAt: e.CreatedAt, NewSearch: created})
}

type deleteSearchResponse struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	ID      int64  `json:"id"`
}

func (h *searchHandler) delete(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := c.p.id()
	if err != nil {
		return err
	}
	switch err := h.s.cfg.Store.DeleteSearch(r.Context(), c.acct.ID, id); {
	case errors.Is(err, store.ErrNotFound):
		e := httperr.NotFound(fmt.Sprintf("saved search %d is not in your account", id))
		e.Param = "id"
		return e
	case err != nil:
		return httperr.Internal(err)
	}
	return ok(w, deleteSearchResponse{Status: "OK", Message: fmt.Sprintf("Saved search %d was deleted.", id), ID: id})
}

type userSearchesResponse struct {
	Status   string        `json:"status"`
	Message  string        `json:"message"`
	Searches []searchEntry `json:"searches"`
}

func (h *searchHandler) list(w http.ResponseWriter, r *http.Request, c *call) error {
	list, err := h.s.cfg.Store.Searches(r.Context(), c.acct.ID)
	if err != nil {
		return httperr.Internal(err)
	}
	out := make([]searchEntry, 0, len(list))
	for _, sr := range list {
		out = append(out, newSearchEntry(sr))
	}
	return ok(w, userSearchesResponse{Status: "OK", Message: plural(len(out), "saved search", "saved searches"), Searches: out})
}

// searchResult is one getSearchResults entry.
type searchResult struct {
	ItemNo       string  `json:"item_no"`
	Title        string  `json:"title"`
	CurrentPrice float64 `json:"currentPrice"`
	Currency     string  `json:"currency"`
	Bids         int     `json:"bids"`
	EndTime      string  `json:"endTime"`
	TimeLeft     string  `json:"timeLeft"`
	GalleryURL   string  `json:"galleryUrl"`
	Country      string  `json:"country"`
	MinimumToBid float64 `json:"minimumToBid"`
	Category     string  `json:"category"`
}

type searchResultsResponse struct {
	Status      string         `json:"status"`
	Message     string         `json:"message"`
	Query       string         `json:"query"`
	CountryCode string         `json:"country_code"`
	Count       int            `json:"count"`
	Items       []searchResult `json:"items"`
}

func (h *searchHandler) results(w http.ResponseWriter, r *http.Request, c *call) error {
	q, err := c.p.query()
	if err != nil {
		return err
	}
	country, err := c.p.country()
	if err != nil {
		return err
	}
	found, err := h.s.cfg.Market.Search(r.Context(), q, country, maxSearchResult)
	if err != nil {
		if market.Transient(err) {
			return httperr.Unavailable("the marketplace is temporarily unavailable; try again shortly", err)
		}
		return httperr.Internal(fmt.Errorf("market search: %w", err))
	}
	if len(found) > maxSearchResult {
		found = found[:maxSearchResult]
	}
	now := h.s.marketNow()
	items := make([]searchResult, 0, len(found))
	for _, it := range found {
		items = append(items, searchResult{
			ItemNo: strconv.FormatInt(it.ItemNo, 10), Title: it.Title, CurrentPrice: it.CurrentPrice.Float(),
			Currency: it.Currency, Bids: it.Bids, EndTime: clock.FormatUTC(it.End), TimeLeft: timeLeft(it.End, it.Ended, now),
			GalleryURL: it.PictureURL, Country: it.Country, MinimumToBid: it.MinimumToBid.Float(), Category: it.Category,
		})
	}
	return ok(w, searchResultsResponse{Status: "OK", Message: plural(len(items), "item found", "items found"),
		Query: q, CountryCode: country, Count: len(items), Items: items})
}
