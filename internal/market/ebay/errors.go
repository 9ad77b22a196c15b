package ebay

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/sniped/sniped/internal/market"
)

// ErrorDetail is one entry of eBay's REST error envelope (eBay's
// ErrorDetailV3).
type ErrorDetail struct {
	ErrorID     int              `json:"errorId"`
	Domain      string           `json:"domain"`
	Category    string           `json:"category"`
	Message     string           `json:"message"`
	LongMessage string           `json:"longMessage,omitempty"`
	Parameters  []ErrorParameter `json:"parameters,omitempty"`
}

// ErrorParameter names a request value an error is about.
type ErrorParameter struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ErrorResponse is eBay's REST error envelope, {"errors":[...]}.
type ErrorResponse struct {
	Errors []ErrorDetail `json:"errors"`
}

// parseErrors reads eBay's error envelope; a body that is not one gives no
// entries.
func parseErrors(body []byte) []ErrorDetail {
	var env ErrorResponse
	if json.Unmarshal(body, &env) != nil {
		return nil
	}
	return env.Errors
}

// eBay error ids the adapter tells apart (docs/outcomes.md has the table).
const (
	idInvalidToken      = 1001
	idNoPermission      = 1100
	idItemNotFound      = 11001
	idLegacyNotFound    = 11003
	idBrowseUnavailable = 11004
	idOfferInternal     = 120000
	idNotActive         = 120001
	idEndedByBIN        = 120002
	idSellerCannotBid   = 120003
	idAboveBIN          = 120005
	idBidTooLow         = 120008
	idWrongCurrency     = 120009
	idCannotLower       = 120010
	idAuctionEnded      = 120012
	idNoBid             = 120033
)

// sentinelOf maps an eBay error id to the market sentinel it means; nil
// when the id is not one the adapter knows.
func sentinelOf(id int) error {
	switch {
	case id == idItemNotFound, id == idLegacyNotFound:
		return market.ErrNotFound
	case id == idBrowseUnavailable, id == idOfferInternal:
		return market.ErrUnavailable
	case id == idAuctionEnded:
		return market.ErrEnded
	case id == idNotActive:
		// Not (any more) an active auction before its end time: the seller
		// ended it early (or it never was an auction).
		return market.ErrCancelled
	case id == idEndedByBIN:
		return market.ErrEndedByBuyItNow
	case id == idSellerCannotBid:
		return market.ErrSellerCannotBid
	case id == idAboveBIN:
		return market.ErrBINPriceReached
	case id == idBidTooLow:
		return market.ErrTooLow
	case id == idCannotLower:
		return market.ErrCannotLowerMax
	case id == 120004, id == 120006, id == idWrongCurrency, id >= 120019 && id <= 120031:
		return market.ErrIneligible
	case id == idInvalidToken, id == idNoPermission:
		return market.ErrNotAuthorized
	}
	return nil
}

// apiError turns an answer that is not a success into an error wrapping a
// market sentinel, with eBay's own message where it helps the user.
func (a *Adapter) apiError(api string, ans answer) error {
	errs := parseErrors(ans.body)
	var first ErrorDetail
	if len(errs) > 0 {
		first = errs[0]
	}
	text := first.LongMessage
	if text == "" {
		text = first.Message
	}
	text = clean(text)
	if first.ErrorID == idNoPermission || (ans.status == http.StatusForbidden && api == apiOffer) {
		return &explained{
			err: fmt.Errorf("eBay refused the call (403, error %d %q): the eBay application lacks Offer API approval, a Limited Release that eBay grants on request (see docs/ebay.md); the sandbox needs no approval: %w",
				first.ErrorID, text, market.ErrNotAuthorized),
			explain: "eBay refused the bid because this sniped's eBay application lacks Offer API approval (403, Insufficient permissions). Reconnecting your eBay account does not help: the operator must get eBay's approval for the Offer API before sniped can bid.",
		}
	}
	if s := sentinelOf(first.ErrorID); s != nil {
		if text == "" {
			return fmt.Errorf("ebay %s: error %d: %w", api, first.ErrorID, s)
		}
		return fmt.Errorf("ebay %s: error %d (%s): %w", api, first.ErrorID, text, s)
	}
	switch {
	case ans.status == http.StatusUnauthorized:
		return fmt.Errorf("ebay %s: the access token was refused (401): %w", api, market.ErrNotAuthorized)
	case ans.status == http.StatusForbidden:
		return fmt.Errorf("ebay %s: permission refused (403 %s): %w", api, text, market.ErrNotAuthorized)
	case ans.status == http.StatusNotFound:
		return fmt.Errorf("ebay %s: not found (404): %w", api, market.ErrNotFound)
	case ans.status >= 500 || ans.status == http.StatusTooManyRequests:
		return fmt.Errorf("ebay %s: HTTP %d: %w", api, ans.status, market.ErrUnavailable)
	}
	// An id or status the adapter does not know: a request it got wrong,
	// or something eBay added. Not transient, never guessed into a loss.
	return fmt.Errorf("ebay %s: HTTP %d, error %d %q: %w", api, ans.status, first.ErrorID, text, errUnexpected)
}

// errUnexpected marks an answer the adapter cannot interpret.
var errUnexpected = errors.New("unexpected answer from eBay")

// clean bounds and flattens eBay's message text before it reaches a user.
func clean(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}

// explained is an error with a user-facing explanation (market.Explainer).
type explained struct {
	err     error
	explain string
}

func (e *explained) Error() string   { return e.err.Error() }
func (e *explained) Unwrap() error   { return e.err }
func (e *explained) Explain() string { return e.explain }
