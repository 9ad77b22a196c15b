// Package outcome defines the result codes a snipe can end with. The numbers,
// status names and shorthands are part of the public interface (checkSnipeStatus
// bidResult and getUserItems entries); docs/outcomes.md documents them.
package outcome

// Code is the bidResult "success" value. Negative codes are losses.
type Code int

// The codes. Keep numbers, names and shorthands stable: clients match on them.
const (
	Won             Code = 1
	Placed          Code = 2
	Pending         Code = 0
	Outbid          Code = -1
	ReserveNotMet   Code = -2
	EndedEarly      Code = -3
	BuyItNow        Code = -4
	GroupWon        Code = -5
	TooLow          Code = -6
	IncrementNotMet Code = -7
	OwnMax          Code = -8
	Disabled        Code = -9
	Ineligible      Code = -10
	MarketDown      Code = -11
	MarketAuth      Code = -12
	Missed          Code = -13
	NotFound        Code = -14
	GroupLead       Code = -15
)

// Info is what a code means, as shown to users.
type Info struct {
	Code      Code
	Status    string
	Shorthand string
	Color     string
	// Message says what happened and what to do next. Callers may append
	// specifics (amounts, times) in a snipe's own detail text.
	Message string
}

var table = map[Code]Info{
	Won:             {Won, "Won", "won", "green", "You won this item. Pay the seller on the marketplace."},
	Placed:          {Placed, "Bid Placed", "placed", "blue", "Your bid was placed and currently leads; the auction is still running."},
	Pending:         {Pending, "Pending", "pending", "gray", "The snipe has not been executed yet; it will be placed shortly before the auction ends."},
	Outbid:          {Outbid, "Outbid", "outbid", "red", "Another bidder's maximum was higher than yours. Bid higher next time if the item is worth more to you."},
	ReserveNotMet:   {ReserveNotMet, "Reserve Not Met", "reserve", "red", "The highest bid did not reach the seller's reserve price, so the item did not sell. Contact the seller or watch for a relisting."},
	EndedEarly:      {EndedEarly, "Auction Ended Early", "ended-early", "orange", "The seller ended the listing before its scheduled end, so your snipe could not win it. Look for a relisting."},
	BuyItNow:        {BuyItNow, "Ended By Buy It Now", "bin", "orange", "Someone bought the item outright with Buy It Now before your snipe was due."},
	GroupWon:        {GroupWon, "Another Group Item Won", "group-won", "gray", "Another item in this Bid Group was won, so this snipe was not placed. Remove it from the group if you want both."},
	TooLow:          {TooLow, "Bid Below Current Price", "too-low", "red", "By the time of the snipe the current price was already above your maximum. Raise your bid if the item is worth more to you."},
	IncrementNotMet: {IncrementNotMet, "Minimum Bid Increment Not Met", "bid-incr", "red", "Your maximum was above the current price but below the minimum next bid (price plus increment). Bid at least the minimum next time."},
	OwnMax:          {OwnMax, "Not Above Your Previous Maximum", "own-max", "red", "You already had a higher or equal maximum on this item; the marketplace does not let you lower it."},
	Disabled:        {Disabled, "Snipe Disabled", "disabled", "gray", "The snipe was switched off when the auction ended, so no bid was placed."},
	Ineligible:      {Ineligible, "Not Eligible To Bid", "ineligible", "red", "The marketplace refused your bid: your marketplace account may not bid on this item (for example the seller's own item or a buyer restriction)."},
	MarketDown:      {MarketDown, "Marketplace Unavailable", "market-down", "red", "The marketplace did not accept the bid in time because it was unavailable; retries ran out before the auction ended."},
	MarketAuth:      {MarketAuth, "Marketplace Authorization Failed", "market-auth", "red", "The marketplace rejected sniped's authorization for your account."},
	Missed:          {Missed, "Missed While Service Was Down", "missed", "red", "The sniped service was not running at the moment this snipe was due, so no bid was placed."},
	NotFound:        {NotFound, "Item Not Found", "not-found", "red", "The marketplace no longer knows this item number; it may have been removed."},
	GroupLead:       {GroupLead, "Group Item May Be Won", "group-lead", "gray", "Not placed yet: you lead an earlier item of this Bid Group. This snipe fires after all if that item is lost while this one is still running."},
}

// Lookup returns the Info for c; ok is false for an unknown code.
func Lookup(c Code) (Info, bool) {
	i, ok := table[c]
	return i, ok
}

// Of returns the Info for c, or the Pending info for an unknown code.
func Of(c Code) Info {
	if i, ok := table[c]; ok {
		return i
	}
	return table[Pending]
}

// All returns every known code's Info, for documentation and tests.
func All() []Info {
	out := make([]Info, 0, len(table))
	for _, c := range []Code{Won, Placed, Pending, Outbid, ReserveNotMet, EndedEarly, BuyItNow, GroupWon, TooLow, IncrementNotMet, OwnMax, Disabled, Ineligible, MarketDown, MarketAuth, Missed, NotFound, GroupLead} {
		out = append(out, table[c])
	}
	return out
}

// Final reports whether c is a settled result that no later event changes.
// Placed and GroupLead are provisional: the auction is still running.
func (c Code) Final() bool { return c != Pending && c != Placed && c != GroupLead }
