package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/httperr"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/notify"
	"github.com/sniped/sniped/internal/store"
)

// searchHandler serves saved searches and marketplace search.
type searchHandler struct{ s *server }

type searchEntry struct {
	ID        int64  `json:"id"`
	Query     string `json:"query"`
	CreatedAt string `json:"created_at"`
	// LastRun and NextRun are "" before the first run; NewCount is how many
	// new items the last run found (the first run only remembers).
	LastRun  string `json:"last_run"`
	NextRun  string `json:"next_run"`
	NewCount int    `json:"new_count"`
}

func newSearchEntry(s store.Search) searchEntry {
	return searchEntry{ID: s.ID, Query: s.Query, CreatedAt: clock.FormatUTC(s.CreatedAt),
		LastRun: optTime(s.LastRun), NextRun: optTime(s.NextRun), NewCount: s.NewCount}
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
	if created && h.s.cfg.Notify != nil {
		msg += " It runs every " + h.s.cfg.Notify.SearchEvery().String() + " and notifies you of new items."
	}
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
	// New and FirstSeen are set when a saved search runs (id=N): New is 1
	// for an item the search first saw within NewWithin, after its first
	// run (what was listed when it was saved is not new).
	New       *int   `json:"new,omitempty"`
	FirstSeen string `json:"first_seen,omitempty"`
}

// NewWithin is how long a saved search's item counts as new in
// getSearchResults?id=N.
const NewWithin = 24 * time.Hour

// MaxSearchOffset bounds getSearchResults' offset: results page up to
// MaxSearchOffset+maxSearchResult items deep.
const MaxSearchOffset = 900

type searchResultsResponse struct {
	Status      string         `json:"status"`
	Message     string         `json:"message"`
	Query       string         `json:"query"`
	CountryCode string         `json:"country_code"`
	Count       int            `json:"count"`
	Offset      int            `json:"offset"`
	More        int            `json:"more"`
	ID          int64          `json:"id,omitempty"`
	NewCount    *int           `json:"new_count,omitempty"`
	Items       []searchResult `json:"items"`
}

func (h *searchHandler) results(w http.ResponseWriter, r *http.Request, c *call) error {
	id, byID, err := c.p.optID()
	if err != nil {
		return err
	}
	if byID {
		if _, has, _ := c.p.Optional("query"); has {
			return httperr.Invalid("id", "pass either query (search the marketplace) or id (run a saved search), not both")
		}
		return h.runSaved(w, r, c, id)
	}
	q, err := c.p.query()
	if err != nil {
		return err
	}
	country, err := c.p.country()
	if err != nil {
		return err
	}
	offset, _, err := c.p.optInt("offset", 0, MaxSearchOffset)
	if err != nil {
		return err
	}
	found, err := h.s.cfg.Market.Search(r.Context(), q, country, offset+maxSearchResult+1)
	if err != nil {
		return marketSearchError(err)
	}
	return h.writeResults(w, searchResultsResponse{Query: q, CountryCode: country, Offset: offset}, found, nil)
}

func marketSearchError(err error) error {
	if market.Transient(err) {
		return httperr.Unavailable("the marketplace is temporarily unavailable; try again shortly", err)
	}
	if errors.Is(err, market.ErrNotAuthorized) {
		return marketAuthError(err)
	}
	return httperr.Internal(fmt.Errorf("market search: %w", err))
}

// runSaved runs saved search id now: with the notification service, new
// items are remembered and reported (search.match) as on a scheduled run.
func (h *searchHandler) runSaved(w http.ResponseWriter, r *http.Request, c *call, id int64) error {
	offset, _, err := c.p.optInt("offset", 0, MaxSearchOffset)
	if err != nil {
		return err
	}
	notFound := func() error {
		e := httperr.NotFound(fmt.Sprintf("saved search %d is not in your account", id))
		e.Param = "id"
		return e
	}
	resp := searchResultsResponse{ID: id, Offset: offset, CountryCode: notify.DefaultSearchCountry}
	svc := h.s.cfg.Notify
	if svc == nil {
		sr, err := h.s.cfg.Store.SearchByID(r.Context(), c.acct.ID, id)
		if errors.Is(err, store.ErrNotFound) {
			return notFound()
		}
		if err != nil {
			return httperr.Internal(err)
		}
		found, err := h.s.cfg.Market.Search(r.Context(), sr.Query, resp.CountryCode, offset+maxSearchResult+1)
		if err != nil {
			return marketSearchError(err)
		}
		resp.Query = sr.Query
		return h.writeResults(w, resp, found, nil)
	}
	run, err := svc.RunSearch(r.Context(), c.acct.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return notFound()
	}
	if err != nil {
		if errors.Is(err, market.ErrUnavailable) || market.Transient(err) {
			return httperr.Unavailable("the marketplace is temporarily unavailable; try again shortly", err)
		}
		if errors.Is(err, market.ErrNotAuthorized) {
			return marketSearchError(err)
		}
		return httperr.Internal(err)
	}
	resp.Query = run.Search.Query
	resp.NewCount = &run.Search.NewCount
	return h.writeResults(w, resp, run.Items, run.FirstSeen)
}

// writeResults pages found (asked for one past the page, to tell whether
// there are more) and writes the answer. firstSeen, when not nil, adds
// each item's new flag.
func (h *searchHandler) writeResults(w http.ResponseWriter, resp searchResultsResponse, found []market.Item, firstSeen map[int64]store.Seen) error {
	if len(found) > resp.Offset+maxSearchResult {
		resp.More = 1
	}
	page := found[min(resp.Offset, len(found)):min(resp.Offset+maxSearchResult, len(found))]
	now, local := h.s.marketNow(), h.s.clock.Now() // time left on the marketplace's clock; "new" on ours
	items := make([]searchResult, 0, len(page))
	for _, it := range page {
		res := searchResult{
			ItemNo: strconv.FormatInt(it.ItemNo, 10), Title: it.Title, CurrentPrice: it.CurrentPrice.Float(),
			Currency: it.Currency, Bids: it.Bids, EndTime: clock.FormatUTC(it.End), TimeLeft: timeLeft(it.End, it.Ended, now),
			GalleryURL: it.PictureURL, Country: it.Country, MinimumToBid: it.MinimumToBid.Float(), Category: it.Category,
		}
		if firstSeen != nil {
			isNew := 0
			if seen, ok := firstSeen[it.ItemNo]; ok {
				res.FirstSeen = clock.FormatUTC(seen.At)
				if !seen.Baseline && local.Sub(seen.At) < NewWithin {
					isNew = 1
				}
			}
			res.New = &isNew
		}
		items = append(items, res)
	}
	resp.Status, resp.Count, resp.Items = "OK", len(items), items
	resp.Message = plural(len(items), "item found", "items found")
	if resp.More == 1 {
		resp.Message += fmt.Sprintf("; more with offset=%d", resp.Offset+len(items))
	}
	return ok(w, resp)
}
