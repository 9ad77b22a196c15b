package ebay

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/sniped/sniped/internal/market"
)

// Trading API constants: the watch list has no REST call.
const (
	// TradingCompatLevel is the X-EBAY-API-COMPATIBILITY-LEVEL sent.
	TradingCompatLevel = "1423"
	// watchPageSize is GetMyeBayBuying's largest page; maxWatchPages
	// bounds the pages read (eBay keeps at most a few hundred watched items).
	watchPageSize = 200
	maxWatchPages = 5
	// TradingNS is the Trading API's XML namespace.
	TradingNS = "urn:ebay:apis:eBLBaseComponents"
)

// siteIDs maps marketplace ids to the Trading API's X-EBAY-API-SITEID.
var siteIDs = map[string]string{
	"EBAY_US": "0", "EBAY_CA": "2", "EBAY_GB": "3", "EBAY_AU": "15", "EBAY_AT": "16",
	"EBAY_FR": "71", "EBAY_DE": "77", "EBAY_IT": "101", "EBAY_ES": "186", "EBAY_IE": "205",
}

// GetMyeBayBuyingRequest asks for one page of the watch list.
type GetMyeBayBuyingRequest struct {
	XMLName   xml.Name         `xml:"urn:ebay:apis:eBLBaseComponents GetMyeBayBuyingRequest"`
	WatchList *WatchListFilter `xml:"WatchList"`
}

// WatchListFilter selects the watch list and its page.
type WatchListFilter struct {
	Include    bool       `xml:"Include"`
	Pagination Pagination `xml:"Pagination"`
}

// Pagination is the Trading API's page selector.
type Pagination struct {
	EntriesPerPage int `xml:"EntriesPerPage"`
	PageNumber     int `xml:"PageNumber"`
}

// GetMyeBayBuyingResponse is the part of the answer sniped reads.
type GetMyeBayBuyingResponse struct {
	XMLName   xml.Name       `xml:"GetMyeBayBuyingResponse"`
	Ack       string         `xml:"Ack"`
	Errors    []TradingError `xml:"Errors"`
	WatchList *struct {
		ItemArray struct {
			Item []struct {
				ItemID string `xml:"ItemID"`
			} `xml:"Item"`
		} `xml:"ItemArray"`
		PaginationResult struct {
			TotalNumberOfPages   int `xml:"TotalNumberOfPages"`
			TotalNumberOfEntries int `xml:"TotalNumberOfEntries"`
		} `xml:"PaginationResult"`
	} `xml:"WatchList"`
}

// TradingError is one error of a Trading API answer.
type TradingError struct {
	ShortMessage string `xml:"ShortMessage"`
	LongMessage  string `xml:"LongMessage"`
	ErrorCode    string `xml:"ErrorCode"`
	SeverityCode string `xml:"SeverityCode"`
}

// Trading error codes that mean the user's token is not accepted.
var tradingAuthCodes = map[string]bool{"931": true, "932": true, "16110": true, "21916984": true, "21917053": true}

// WatchList reads user's watch list with GetMyeBayBuying and looks each
// item up (cached) through Browse, soonest-ending first. Items eBay no
// longer knows are left out.
func (a *Adapter) WatchList(ctx context.Context, user string) ([]market.Item, error) {
	site, ok := siteIDs[a.cfg.Marketplace]
	if !ok {
		site = "0"
	}
	var ids []int64
	for page := 1; page <= maxWatchPages; page++ {
		body, _ := xml.Marshal(GetMyeBayBuyingRequest{WatchList: &WatchListFilter{Include: true,
			Pagination: Pagination{EntriesPerPage: watchPageSize, PageNumber: page}}})
		ans, err := a.tradingCall(ctx, user, site, append([]byte(xml.Header), body...))
		if err != nil {
			return nil, fmt.Errorf("watch list: %w", err)
		}
		var r GetMyeBayBuyingResponse
		if err := xml.Unmarshal(ans.body, &r); err != nil {
			return nil, fmt.Errorf("ebay trading: unreadable GetMyeBayBuying answer: %v: %w", err, market.ErrUnavailable)
		}
		if err := tradingErr(r.Ack, r.Errors, user); err != nil {
			return nil, fmt.Errorf("watch list: %w", err)
		}
		if r.WatchList == nil {
			break
		}
		for _, it := range r.WatchList.ItemArray.Item {
			if no, err := strconv.ParseInt(strings.TrimSpace(it.ItemID), 10, 64); err == nil && no > 0 {
				ids = append(ids, no)
			}
		}
		if page >= r.WatchList.PaginationResult.TotalNumberOfPages {
			break
		}
	}
	// Look the items up a few at a time: a list of 200 would otherwise take
	// 200 round trips end to end.
	items := make([]market.Item, len(ids))
	found := make([]bool, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(watchLookups)
	for i, no := range ids {
		g.Go(func() error {
			it, err := a.Item(gctx, no)
			if errors.Is(err, market.ErrNotFound) {
				return nil // gone from eBay: left out
			}
			if err != nil {
				return err
			}
			items[i], found[i] = it, true
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make([]market.Item, 0, len(ids))
	for i, it := range items {
		if found[i] {
			out = append(out, it)
		}
	}
	slices.SortStableFunc(out, func(x, y market.Item) int { return x.End.Compare(y.End) })
	return out, nil
}

// watchLookups bounds the concurrent item lookups of a watch list import.
const watchLookups = 8

// tradingCall posts a Trading API call with user's token (IAF header).
func (a *Adapter) tradingCall(ctx context.Context, user, site string, body []byte) (answer, error) {
	for refreshed := false; ; refreshed = true {
		access, err := a.userAccess(ctx, user)
		if err != nil {
			return answer{}, err
		}
		ans, err := a.do(ctx, request{
			api: apiTrading, method: http.MethodPost, url: a.api + "/ws/api.dll", body: body,
			retry: true, // a read-only call
			header: http.Header{
				"Content-Type":                   {"text/xml; charset=utf-8"},
				"X-EBAY-API-CALL-NAME":           {"GetMyeBayBuying"},
				"X-EBAY-API-SITEID":              {site},
				"X-EBAY-API-COMPATIBILITY-LEVEL": {TradingCompatLevel},
				"X-EBAY-API-IAF-TOKEN":           {access},
			},
		})
		if err != nil {
			return answer{}, err
		}
		if ans.status == http.StatusOK {
			var probe struct {
				Errors []TradingError `xml:"Errors"`
			}
			if xml.Unmarshal(ans.body, &probe) == nil && !refreshed && anyAuthCode(probe.Errors) {
				a.dropUserToken(user, access)
				continue
			}
			return ans, nil
		}
		if ans.status >= 500 {
			return answer{}, fmt.Errorf("ebay trading: HTTP %d: %w", ans.status, market.ErrUnavailable)
		}
		return answer{}, fmt.Errorf("ebay trading: HTTP %d: %w", ans.status, errUnexpected)
	}
}

func anyAuthCode(errs []TradingError) bool {
	for _, e := range errs {
		if tradingAuthCodes[e.ErrorCode] {
			return true
		}
	}
	return false
}

// tradingErr maps a Trading answer's Ack and errors to an error.
func tradingErr(ack string, errs []TradingError, user string) error {
	if ack == "Success" || ack == "Warning" {
		return nil
	}
	var first TradingError
	if len(errs) > 0 {
		first = errs[0]
	}
	msg := clean(first.LongMessage)
	if msg == "" {
		msg = clean(first.ShortMessage)
	}
	if anyAuthCode(errs) {
		return brokenLink(user, fmt.Sprintf("the Trading API refused its token (error %s %q)", first.ErrorCode, msg))
	}
	return fmt.Errorf("ebay trading: Ack %s, error %s %q: %w", ack, first.ErrorCode, msg, market.ErrUnavailable)
}
