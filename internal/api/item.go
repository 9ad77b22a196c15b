package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/httperr"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/store"
)

// itemHandler serves fetchItem.
type itemHandler struct{ s *server }

// itemInfo is the item details object of spec 2.3, returned by fetchItem
// and as checkSnipeStatus' item_info. Both picture fields carry the same
// URL so that clients of either interface variant work.
type itemInfo struct {
	Status            string   `json:"status"`
	Alert             string   `json:"alert"`
	ItemNo            string   `json:"item_no"`
	Bids              int      `json:"bids"`
	Cost              float64  `json:"cost"`
	CurrentPrice      float64  `json:"currentPrice"`
	Currency          string   `json:"currency"`
	Country           string   `json:"country"`
	Ends              string   `json:"ends"`
	EndTime           string   `json:"endTime"`
	StartTime         string   `json:"startTime"`
	TimeLeft          string   `json:"timeLeft"`
	MarketplaceItemID int64    `json:"marketplaceItemId"`
	SellerPercent     float64  `json:"sellerPercent"`
	SellerScore       float64  `json:"sellerScore"`
	SellerUserID      string   `json:"sellerUserId"`
	ShippingType      string   `json:"shippingType"`
	Category          string   `json:"category"`
	Title             string   `json:"title"`
	Images            []string `json:"images"`
	Message           string   `json:"message"`
	PictureURL        string   `json:"pictureURL"`
	GalleryURL        string   `json:"galleryUrl"`
}

func newItemInfo(it market.Item, now time.Time) itemInfo {
	images := it.Images
	if images == nil {
		images = []string{}
	}
	return itemInfo{
		Status:            "OK",
		Alert:             "success",
		ItemNo:            strconv.FormatInt(it.ItemNo, 10),
		Bids:              it.Bids,
		Cost:              it.ShippingCost.Float(),
		CurrentPrice:      it.CurrentPrice.Float(),
		Currency:          it.Currency,
		Country:           it.Country,
		Ends:              clock.FormatUTC(it.End),
		EndTime:           clock.FormatUTC(it.End),
		StartTime:         clock.FormatUTC(it.Start),
		TimeLeft:          timeLeft(it.End, it.Ended, now),
		MarketplaceItemID: it.ItemNo,
		SellerPercent:     it.SellerPercent,
		SellerScore:       float64(it.SellerScore),
		SellerUserID:      it.SellerID,
		ShippingType:      it.ShippingType,
		Category:          it.Category,
		Title:             it.Title,
		Images:            images,
		Message:           "",
		PictureURL:        it.PictureURL,
		GalleryURL:        it.PictureURL,
	}
}

// snapshotInfo is the item details object built from a snipe's stored
// snapshot, for an item the marketplace no longer knows.
func snapshotInfo(itemNo int64, it store.ItemSnapshot, now time.Time) itemInfo {
	info := newItemInfo(market.Item{
		ItemNo: itemNo, Title: it.Title, Currency: it.Currency, CurrentPrice: it.CurrentPrice,
		Bids: it.Bids, PictureURL: it.GalleryURL, Start: it.Start, End: it.End, Ended: true,
	}, now)
	if it.GalleryURL != "" {
		info.Images = []string{it.GalleryURL}
	}
	info.Message = "the marketplace no longer knows this item; these are the last known details"
	return info
}

// snapshot is what the store keeps of an item.
func snapshot(it market.Item) store.ItemSnapshot {
	return store.ItemSnapshot{
		Title: it.Title, Currency: it.Currency, CurrentPrice: it.CurrentPrice, Bids: it.Bids,
		GalleryURL: it.PictureURL, Start: it.Start, End: it.End, Ended: it.Ended,
	}
}

// timeLeft renders the remaining time for humans: "ended", "2d 3h 5m",
// "2h 5m", "5m 30s" or "42s".
func timeLeft(end time.Time, ended bool, now time.Time) string {
	d := end.Sub(now)
	if ended || d <= 0 {
		return "ended"
	}
	d = d.Truncate(time.Second)
	days := int(d / (24 * time.Hour))
	h := int(d % (24 * time.Hour) / time.Hour)
	m := int(d % time.Hour / time.Minute)
	sec := int(d % time.Minute / time.Second)
	// Appended rather than fmt.Sprintf: getUserItems renders it per entry.
	b := make([]byte, 0, 24)
	unit := func(v int, u string) { b = append(strconv.AppendInt(b, int64(v), 10), u...) }
	switch {
	case days > 0:
		unit(days, "d ")
		unit(h, "h ")
		unit(m, "m")
	case h > 0:
		unit(h, "h ")
		unit(m, "m")
	case m > 0:
		unit(m, "m ")
		unit(sec, "s")
	default:
		unit(sec, "s")
	}
	return string(b)
}

// marketItem fetches an item, mapping marketplace failures to HTTP errors.
func (s *server) marketItem(ctx context.Context, itemNo int64) (market.Item, error) {
	it, err := s.cfg.Market.Item(ctx, itemNo)
	if err != nil {
		return market.Item{}, marketError(err, itemNo)
	}
	return it, nil
}

func marketError(err error, itemNo int64) error {
	switch {
	case errors.Is(err, market.ErrNotFound):
		e := httperr.NotFound(fmt.Sprintf("item_no %d does not exist on the marketplace", itemNo))
		e.Param = "item_no"
		return e
	case market.Transient(err):
		return httperr.Unavailable("the marketplace is temporarily unavailable; try again shortly", err)
	case errors.Is(err, market.ErrNotAuthorized):
		// e.g. eBay refusing this server's application keys
		return marketAuthError(err)
	}
	return httperr.Internal(fmt.Errorf("market item %d: %w", itemNo, err))
}

// notInAccount is the 404 for an item the caller has no snipe on. It never
// says whether anyone else has one.
func notInAccount(itemNo int64) error {
	e := httperr.NotFound(fmt.Sprintf("item_no %d is not in your account (no snipe or watched item)", itemNo))
	e.Param = "item_no"
	return e
}

// ownSnipe loads the caller's snipe on itemNo.
func (s *server) ownSnipe(ctx context.Context, acct, itemNo int64) (store.Snipe, error) {
	sn, err := s.cfg.Store.Snipe(ctx, acct, itemNo)
	if errors.Is(err, store.ErrNotFound) {
		return store.Snipe{}, notInAccount(itemNo)
	}
	if err != nil {
		return store.Snipe{}, httperr.Internal(err)
	}
	return sn, nil
}

// refresh stores a fresher snapshot when the item changed, so that lists
// stay current without a marketplace call. Failure only costs freshness.
func (s *server) refresh(ctx context.Context, sn store.Snipe, it market.Item) {
	snap := snapshot(it)
	if sameSnapshot(sn.Item, snap) {
		return
	}
	if err := s.cfg.Store.UpdateItem(ctx, sn.ID, snap); err != nil {
		s.log.Warn("refresh item snapshot", "item_no", sn.ItemNo, "err", err)
		return
	}
	if !sn.Item.End.Equal(snap.End) || sn.Item.Ended != snap.Ended {
		s.notify(sn.ID)
	}
}

func sameSnapshot(a, b store.ItemSnapshot) bool {
	return a.Title == b.Title && a.Currency == b.Currency && a.CurrentPrice == b.CurrentPrice &&
		a.Bids == b.Bids && a.GalleryURL == b.GalleryURL && a.Start.Equal(b.Start) &&
		a.End.Equal(b.End) && a.Ended == b.Ended
}

func (h *itemHandler) fetch(w http.ResponseWriter, r *http.Request, c *call) error {
	s := h.s
	itemNo, err := c.p.itemNo()
	if err != nil {
		return err
	}
	sn, err := s.cfg.Store.Snipe(r.Context(), c.acct.ID, itemNo)
	inAccount := err == nil
	switch {
	case errors.Is(err, store.ErrNotFound):
		if !s.cfg.FetchAnyItem {
			return notInAccount(itemNo)
		}
	case err != nil:
		return httperr.Internal(err)
	}
	if !inAccount {
		it, err := s.marketItem(r.Context(), itemNo)
		if err != nil {
			return err
		}
		return ok(w, newItemInfo(it, s.marketNow()))
	}
	info, err := s.itemInfoFor(r.Context(), sn)
	if err != nil {
		return err
	}
	return ok(w, info)
}

// itemInfoFor fetches a snipe's item, refreshes its snapshot, and falls back
// to the snapshot when the marketplace no longer knows the item.
func (s *server) itemInfoFor(ctx context.Context, sn store.Snipe) (itemInfo, error) {
	it, err := s.cfg.Market.Item(ctx, sn.ItemNo)
	if errors.Is(err, market.ErrNotFound) {
		return snapshotInfo(sn.ItemNo, sn.Item, s.marketNow()), nil
	}
	if err != nil {
		return itemInfo{}, marketError(err, sn.ItemNo)
	}
	s.refresh(ctx, sn, it)
	return newItemInfo(it, s.marketNow()), nil
}
