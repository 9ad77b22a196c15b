package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/store"
)

// SearchLimit is how many items one run of a saved search asks for.
const SearchLimit = 100

// searchBatch bounds the saved searches one tick picks up; the rest wait
// for the next tick (and the marketplace budget spaces the calls anyway).
const searchBatch = 20

// searchRetry is how soon a saved search whose run failed is tried again.
const searchRetry = time.Minute

// searchLoop runs due saved searches.
func (s *Service) searchLoop(ctx context.Context) {
	s.every(ctx, min(s.cfg.SearchEvery/4, time.Second), s.searchPass)
}

// searchPass runs the saved searches due now, at most searchBatch of them,
// each after waiting for the marketplace budget.
func (s *Service) searchPass(ctx context.Context) {
	due, err := s.st.SearchesDue(ctx, s.clk.Now(), searchBatch)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("saved searches due", "err", err)
		}
		return
	}
	for _, sr := range due {
		if err := s.budget.wait(ctx); err != nil {
			return
		}
		if _, err := s.runSearch(ctx, sr); err != nil && ctx.Err() == nil {
			s.log.Info("saved search run failed", "search", sr.ID, "err", err)
		}
	}
}

// phase spreads saved searches over the interval: search id first runs
// after its own fraction of it (golden-ratio steps keep neighbours apart),
// and then every interval from there.
func phase(id int64, every time.Duration) time.Duration {
	const golden = 0.6180339887498949
	f := float64(id) * golden
	f -= float64(int64(f))
	return time.Duration(f * float64(every))
}

// SearchRun is the result of running a saved search.
type SearchRun struct {
	Search store.Search
	// Items are the live items found, soonest-ending first.
	Items []market.Item
	// FirstSeen is when the search first saw each item.
	FirstSeen map[int64]store.Seen
	// New are the items this run saw for the first time.
	New []int64
}

// RunSearch runs one of the account's saved searches now (getSearchResults
// with id): new items are remembered and reported like a scheduled run's,
// and the schedule is kept.
func (s *Service) RunSearch(ctx context.Context, accountID, id int64) (SearchRun, error) {
	sr, err := s.st.SearchByID(ctx, accountID, id)
	if err != nil {
		return SearchRun{}, err
	}
	return s.runSearch(ctx, sr)
}

// runSearch asks the marketplace and records the run. The first run of a
// search is its baseline: what was listed when it was saved is remembered
// without a notification, so search.match only ever names items listed
// (or first found) later.
func (s *Service) runSearch(ctx context.Context, sr store.Search) (SearchRun, error) {
	now := s.clk.Now()
	found, err := s.mk.Search(ctx, sr.Query, s.cfg.SearchCountry, SearchLimit)
	if err != nil {
		// Deferred in the store, not skipped in memory: searches that keep
		// failing would otherwise fill every batch of SearchesDue.
		retry := now.Add(min(s.cfg.SearchEvery, searchRetry))
		if derr := s.st.DeferSearch(ctx, sr.AccountID, sr.ID, retry); derr != nil && !errors.Is(derr, store.ErrNotFound) {
			s.log.Warn("defer saved search", "search", sr.ID, "err", derr)
		}
		return SearchRun{}, fmt.Errorf("search %q: %w", sr.Query, err)
	}
	live := found[:0:0]
	byNo := map[int64]market.Item{}
	var nos []int64
	for _, it := range found {
		if it.Ended || !it.End.After(now) {
			continue
		}
		if _, dup := byNo[it.ItemNo]; dup {
			continue
		}
		live = append(live, it)
		byNo[it.ItemNo] = it
		nos = append(nos, it.ItemNo)
	}
	baseline := sr.LastRun.IsZero()
	next := sr.NextRun
	switch {
	case baseline:
		next = now.Add(phase(sr.ID, s.cfg.SearchEvery))
	case !next.After(now):
		next = now.Add(s.cfg.SearchEvery)
	}
	fresh, err := s.st.RecordSearchRun(ctx, store.SearchRun{
		AccountID: sr.AccountID, SearchID: sr.ID, Items: nos, Baseline: baseline, Now: now, NextRun: next,
		MatchData: func(items []int64) ([]byte, error) {
			d := store.SearchMatchData{SearchID: sr.ID, Query: sr.Query, Items: make([]store.SearchMatchItem, 0, len(items))}
			for _, no := range items {
				it := byNo[no]
				d.Items = append(d.Items, store.SearchMatchItem{
					ItemNo: strconv.FormatInt(no, 10), Title: it.Title, CurrentPrice: it.CurrentPrice.Float(),
					MinimumToBid: it.MinimumToBid.Float(), Currency: it.Currency, EndTime: clock.FormatUTC(it.End),
					GalleryURL: it.PictureURL,
				})
			}
			return json.Marshal(d)
		},
	})
	if errors.Is(err, store.ErrNotFound) {
		return SearchRun{}, err // deleted meanwhile
	}
	if err != nil {
		return SearchRun{}, err
	}
	seen, err := s.st.SearchSeen(ctx, sr.ID, nos)
	if err != nil {
		return SearchRun{}, err
	}
	sr.LastRun, sr.NextRun = now, next
	sr.NewCount = len(fresh)
	if baseline {
		sr.NewCount = 0
	}
	return SearchRun{Search: sr, Items: live, FirstSeen: seen, New: fresh}, nil
}
