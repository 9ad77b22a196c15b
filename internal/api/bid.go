package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/httperr"
	"github.com/sniped/sniped/internal/outcome"
	"github.com/sniped/sniped/internal/store"
)

// bidHandler serves the snipe operations: addBid, deleteBid,
// checkSnipeStatus and getUserItems.
type bidHandler struct{ s *server }

// Message colours of addBid.
const (
	colorOK      = "green"
	colorWarning = "orange"
)

type addBidResponse struct {
	Bid          string `json:"bid"`
	Delay        int    `json:"delay"`
	GroupID      int64  `json:"group_id"`
	GroupName    string `json:"groupName"`
	ItemNo       string `json:"item_no"`
	Status       string `json:"status"`
	Alert        string `json:"alert"`
	ShortMessage string `json:"short_message"`
	Message      string `json:"message"`
	MessageColor string `json:"message_color"`
	NewSnipe     bool   `json:"new_snipe"`
}

func sentConflict(itemNo int64, verb string) error {
	return httperr.Conflict(fmt.Sprintf("the bid for item %d is being placed or has been sent; it can no longer be %s", itemNo, verb))
}

func (h *bidHandler) add(w http.ResponseWriter, r *http.Request, c *call) error {
	s := h.s
	ctx := r.Context()
	itemNo, err := c.p.itemNo()
	if err != nil {
		return err
	}
	var ch store.SnipeChange
	bid, hasBid, err := c.p.bid()
	if err != nil {
		return err
	}
	if hasBid {
		ch.Bid = &bid
	}
	if ch.GroupName, err = c.p.groupName(); err != nil {
		return err
	}
	delay, hasDelay, err := c.p.optInt("delay", MinDelay, MaxDelay)
	if err != nil {
		return err
	}
	if hasDelay {
		ch.Delay = &delay
	}
	enabled, hasEnabled, err := c.p.optBool("enabled")
	if err != nil {
		return err
	}
	if hasEnabled {
		ch.Enabled = &enabled
	}
	force, hasForce, err := c.p.optBool("force")
	if err != nil {
		return err
	}
	if hasForce {
		ch.Force = &force
	}

	prev, err := s.cfg.Store.Snipe(ctx, c.acct.ID, itemNo)
	exists := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return httperr.Internal(err)
	}
	if exists && (prev.State == store.StateFiring || prev.State == store.StatePlaced) {
		return sentConflict(itemNo, "changed")
	}
	it, err := s.marketItem(ctx, itemNo)
	if err != nil {
		return err
	}
	if it.Ended {
		e := httperr.Conflict(fmt.Sprintf("item_no %d has already ended; a snipe can only be added or changed while the auction runs", itemNo))
		e.Param = "item_no"
		return e
	}
	ch.Item = snapshot(it)
	ch.Exists = exists

	// The minimum rule applies to a bid set by this request. force falls
	// back to the stored flag so that re-sending only bid keeps its meaning.
	forced := force
	if !hasForce && exists {
		forced = prev.Force
	}
	color, warning := colorOK, ""
	if hasBid && bid > 0 && bid < it.MinimumToBid {
		if !forced {
			return httperr.Invalid("bid", fmt.Sprintf("bid %s is below the minimum to bid on item %d, which is %s %s; bid at least that, or pass force=1 to store it as given",
				bid, itemNo, it.MinimumToBid, it.Currency))
		}
		color = colorWarning
		warning = fmt.Sprintf(" Warning: %s %s is below the current minimum to bid of %s %s; it is stored as given (force=1) and will lose unless the price is still lower when it fires.",
			bid, it.Currency, it.MinimumToBid, it.Currency)
	}

	sn, created, err := s.cfg.Store.UpsertSnipe(ctx, c.acct.ID, itemNo, ch, s.marketNow())
	if errors.Is(err, store.ErrConflict) {
		return sentConflict(itemNo, "changed")
	}
	if err != nil {
		return httperr.Internal(err)
	}
	s.notify(sn.ID)

	short, msg := "Snipe updated", ""
	if created {
		short = "Snipe added"
	}
	switch {
	case sn.Bid == 0:
		if created {
			short = "Item watched"
		} else {
			short = "Watched item updated"
		}
		msg = fmt.Sprintf("Item %d (%s) is on your watch list; no bid will be placed until you set a bid above 0.", itemNo, it.Title)
	case !sn.Enabled:
		msg = fmt.Sprintf("Snipe of %s %s on item %d (%s) is stored but switched off; pass enabled=1 to arm it.", sn.Bid, it.Currency, itemNo, it.Title)
	default:
		msg = fmt.Sprintf("Snipe of %s %s on item %d (%s) will be placed %d seconds before the auction ends at %s UTC.",
			sn.Bid, it.Currency, itemNo, it.Title, sn.Delay, clock.FormatUTC(it.End))
	}
	if sn.Bid > 0 && sn.Enabled {
		if lw := s.linkWarning(r.Context(), c.acct); lw != "" {
			color, warning = colorWarning, warning+" Warning: "+lw
		}
	}
	return ok(w, addBidResponse{
		Bid:          sn.Bid.String(),
		Delay:        sn.Delay,
		GroupID:      sn.GroupID,
		GroupName:    sn.GroupName,
		ItemNo:       strconv.FormatInt(itemNo, 10),
		Status:       "OK",
		Alert:        "success",
		ShortMessage: short,
		Message:      msg + warning,
		MessageColor: color,
		NewSnipe:     created,
	})
}

type deleteBidResponse struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	ItemNo  string `json:"item_no"`
}

func (h *bidHandler) delete(w http.ResponseWriter, r *http.Request, c *call) error {
	s := h.s
	itemNo, err := c.p.itemNo()
	if err != nil {
		return err
	}
	sn, err := s.ownSnipe(r.Context(), c.acct.ID, itemNo)
	if err != nil {
		return err
	}
	switch err := s.cfg.Store.DeleteSnipe(r.Context(), c.acct.ID, itemNo); {
	case errors.Is(err, store.ErrNotFound):
		return notInAccount(itemNo)
	case errors.Is(err, store.ErrConflict):
		return sentConflict(itemNo, "deleted")
	case err != nil:
		return httperr.Internal(err)
	}
	s.notify(sn.ID)
	return ok(w, deleteBidResponse{Status: "OK", Message: fmt.Sprintf("The snipe on item %d was deleted.", itemNo),
		ItemNo: strconv.FormatInt(itemNo, 10)})
}

// bidResult is spec 2.4.
type bidResult struct {
	Success   int    `json:"success"`
	Status    string `json:"status"`
	Message   string `json:"message"`
	Shorthand string `json:"shorthand"`
	Color     string `json:"color"`
}

func newBidResult(sn store.ListEntry) bidResult {
	o := outcome.Of(sn.Outcome)
	msg := o.Message
	// Pending's standard text promises a bid; say so when none will come.
	switch {
	case o.Code != outcome.Pending:
	case sn.Bid == 0:
		msg = "This is a watched item (bid 0.00): no bid will be placed. Add a bid with addBid to snipe it."
	case !sn.Enabled:
		msg = "This snipe is disabled: no bid will be placed unless you enable it (addBid with enabled=1) before its moment."
	}
	if sn.OutcomeDetail != "" {
		msg += " " + sn.OutcomeDetail
	}
	return bidResult{Success: int(o.Code), Status: o.Status, Message: msg, Shorthand: o.Shorthand, Color: o.Color}
}

type statusResponse struct {
	Status    string    `json:"status"`
	BidResult bidResult `json:"bidResult"`
	ItemInfo  itemInfo  `json:"item_info"`
}

func (h *bidHandler) status(w http.ResponseWriter, r *http.Request, c *call) error {
	s := h.s
	itemNo, err := c.p.itemNo()
	if err != nil {
		return err
	}
	sn, err := s.ownSnipe(r.Context(), c.acct.ID, itemNo)
	if err != nil {
		return err
	}
	info, err := s.itemInfoFor(r.Context(), sn)
	if err != nil {
		return err
	}
	return ok(w, statusResponse{Status: "OK", BidResult: newBidResult(sn.ListEntry()), ItemInfo: info})
}

// userItem is one getUserItems entry: every stored parameter of the snipe,
// the item's summary and the outcome.
type userItem struct {
	ItemNo       string  `json:"item_no"`
	Bid          string  `json:"bid"`
	Delay        int     `json:"delay"`
	Enabled      int     `json:"enabled"`
	Force        int     `json:"force"`
	GroupID      int64   `json:"group_id"`
	GroupName    string  `json:"groupName"`
	Title        string  `json:"title"`
	CurrentPrice float64 `json:"currentPrice"`
	Currency     string  `json:"currency"`
	Bids         int     `json:"bids"`
	StartTime    string  `json:"startTime"`
	EndTime      string  `json:"endTime"`
	TimeLeft     string  `json:"timeLeft"`
	FireTime     string  `json:"fireTime"`
	GalleryURL   string  `json:"galleryUrl"`
	Success      int     `json:"success"`
	Status       string  `json:"status"`
	Shorthand    string  `json:"shorthand"`
	Color        string  `json:"color"`
	Message      string  `json:"message"`
}

type userItemsResponse struct {
	Status  string     `json:"status"`
	Message string     `json:"message"`
	Filter  string     `json:"filter"`
	OrderBy string     `json:"orderby"`
	Dir     string     `json:"dir"`
	ShowWon int        `json:"show_won"`
	Total   int        `json:"total"`
	Offset  int        `json:"offset"`
	Limit   int        `json:"limit"`
	Items   []userItem `json:"items"`
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (h *bidHandler) list(w http.ResponseWriter, r *http.Request, c *call) error {
	s := h.s
	filter, err := c.p.enum("filter", true, "", string(store.FilterWatched), string(store.FilterCurrent), string(store.FilterCompleted), string(store.FilterArchive))
	if err != nil {
		return err
	}
	orderBy, err := c.p.enum("orderby", false, DefaultOrderBy, "ends", "bids")
	if err != nil {
		return err
	}
	dir, err := c.p.enum("dir", false, DefaultDir, "ASC", "DESC")
	if err != nil {
		return err
	}
	offset, _, err := c.p.optInt("offset", 0, MaxOffset)
	if err != nil {
		return err
	}
	limit, hasLimit, err := c.p.optInt("limit", 1, MaxLimit)
	if err != nil {
		return err
	}
	if !hasLimit {
		limit = DefaultLimit
	}
	showWon, _, err := c.p.optBool("show_won")
	if err != nil {
		return err
	}
	now := s.marketNow()
	page, total, err := s.cfg.Store.ListEntries(r.Context(), c.acct.ID, store.ListQuery{
		Filter: parseFilter(filter), OrderBy: orderBy, Desc: dir == "DESC",
		Offset: offset, Limit: limit, ShowWon: showWon, Now: now,
	})
	if err != nil {
		return httperr.Internal(err)
	}
	items := make([]userItem, 0, len(page))
	for i := range page {
		sn := &page[i]
		o := outcome.Of(sn.Outcome)
		fire := ""
		if !sn.FireAt.IsZero() {
			fire = clock.FormatUTC(sn.FireAt)
		}
		items = append(items, userItem{
			ItemNo: strconv.FormatInt(sn.ItemNo, 10), Bid: sn.Bid.String(), Delay: sn.Delay,
			Enabled: b2i(sn.Enabled), Force: b2i(sn.Force), GroupID: sn.GroupID, GroupName: sn.GroupName,
			Title: sn.Item.Title, CurrentPrice: sn.Item.CurrentPrice.Float(), Currency: sn.Item.Currency,
			Bids: sn.Item.Bids, StartTime: clock.FormatUTC(sn.Item.Start), EndTime: clock.FormatUTC(sn.Item.End),
			TimeLeft: timeLeft(sn.Item.End, sn.Item.Ended, now), FireTime: fire, GalleryURL: sn.Item.GalleryURL,
			Success: int(o.Code), Status: o.Status, Shorthand: o.Shorthand, Color: o.Color,
			Message: newBidResult(*sn).Message,
		})
	}
	return ok(w, &userItemsResponse{
		Status: "OK", Message: fmt.Sprintf("%d of %d %s items", len(items), total, filter),
		Filter: filter, OrderBy: orderBy, Dir: dir, ShowWon: b2i(showWon),
		Total: total, Offset: offset, Limit: limit, Items: items,
	})
}
