package ebaysim

import (
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/ebay"
)

// tradingAnswer is a GetMyeBayBuying answer.
type tradingAnswer struct {
	XMLName   xml.Name        `xml:"urn:ebay:apis:eBLBaseComponents GetMyeBayBuyingResponse"`
	Timestamp string          `xml:"Timestamp"`
	Ack       string          `xml:"Ack"`
	Errors    []tradingError  `xml:"Errors,omitempty"`
	Version   string          `xml:"Version"`
	WatchList *watchListReply `xml:"WatchList,omitempty"`
}

type tradingError struct {
	ShortMessage string `xml:"ShortMessage"`
	LongMessage  string `xml:"LongMessage"`
	ErrorCode    string `xml:"ErrorCode"`
	SeverityCode string `xml:"SeverityCode"`
}

type watchListReply struct {
	ItemArray struct {
		Item []watchedItem `xml:"Item"`
	} `xml:"ItemArray"`
	PaginationResult struct {
		TotalNumberOfPages   int `xml:"TotalNumberOfPages"`
		TotalNumberOfEntries int `xml:"TotalNumberOfEntries"`
	} `xml:"PaginationResult"`
}

type watchedItem struct {
	ItemID string `xml:"ItemID"`
	Title  string `xml:"Title"`
}

// trading is POST /ws/api.dll; only GetMyeBayBuying's watch list is served.
func (s *Server) trading(w http.ResponseWriter, r *http.Request) {
	ans := tradingAnswer{Timestamp: s.now().UTC().Format("2006-01-02T15:04:05.000Z"), Ack: "Success", Version: ebay.TradingCompatLevel}
	reply := func() {
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		_, _ = io.WriteString(w, xml.Header)
		_ = xml.NewEncoder(w).Encode(ans)
	}
	failure := func(code, short, long string) {
		ans.Ack = "Failure"
		ans.Errors = []tradingError{{ShortMessage: short, LongMessage: long, ErrorCode: code, SeverityCode: "Error"}}
		reply()
	}
	if call := r.Header.Get("X-EBAY-API-CALL-NAME"); call != "GetMyeBayBuying" {
		failure("2", "Unsupported call.", "The simulator serves only GetMyeBayBuying, not "+strconv.Quote(call)+".")
		return
	}
	if r.Header.Get("X-EBAY-API-SITEID") == "" || r.Header.Get("X-EBAY-API-COMPATIBILITY-LEVEL") == "" {
		failure("10", "Missing header.", "X-EBAY-API-SITEID and X-EBAY-API-COMPATIBILITY-LEVEL are required.")
		return
	}
	s.mu.Lock()
	g, ok := s.access[hash(r.Header.Get("X-EBAY-API-IAF-TOKEN"))]
	s.mu.Unlock()
	if !ok || s.clk.Now().After(g.Expiry) || g.User == "" || !g.has(ebay.ScopeAPI) {
		failure("931", "Auth token is invalid.", "Validation of the authentication token in API request failed.")
		return
	}
	var req ebay.GetMyeBayBuyingRequest
	if err := xml.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil || req.WatchList == nil || !req.WatchList.Include {
		failure("37", "Input data is invalid.", "The request must be a GetMyeBayBuyingRequest with WatchList/Include true.")
		return
	}
	per, page := req.WatchList.Pagination.EntriesPerPage, req.WatchList.Pagination.PageNumber
	if per < 1 || per > 200 {
		per = 25
	}
	page = max(page, 1)
	items, err := s.sim.WatchList(r.Context(), g.User)
	switch {
	case errors.Is(err, market.ErrNotAuthorized):
		failure("931", "Auth token is invalid.", "Validation of the authentication token in API request failed.")
		return
	case err != nil:
		failure("10007", "Internal error to the application.", "Internal error to the application.")
		return
	}
	rep := &watchListReply{}
	rep.PaginationResult.TotalNumberOfEntries = len(items)
	rep.PaginationResult.TotalNumberOfPages = (len(items) + per - 1) / per
	for _, it := range items[min(len(items), (page-1)*per):min(len(items), page*per)] {
		rep.ItemArray.Item = append(rep.ItemArray.Item, watchedItem{ItemID: strconv.FormatInt(it.ItemNo, 10), Title: it.Title})
	}
	ans.WatchList = rep
	reply()
}
