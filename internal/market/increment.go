package market

import "github.com/sniped/sniped/internal/money"

// step is one row of an increment table: from Floor (inclusive) upward the
// increment is Increment, until the next row's Floor.
type step struct {
	Floor     money.Amount
	Increment money.Amount
}

// incrementTables holds the marketplace's bid increment tables by currency,
// keyed by the current price. Each table is the marketplace's own "bid
// increments" help page for the site that lists in that currency.
var incrementTables = map[string][]step{
	// USD: ebay.com, "Bid increments" help page
	// (https://www.ebay.com/help/buying/bidding/automatic-bidding?id=4014),
	// as reproduced in issue 3.
	"USD": {
		{0, 5},
		{1_00, 25},
		{5_00, 50},
		{25_00, 1_00},
		{100_00, 2_50},
		{250_00, 5_00},
		{500_00, 10_00},
		{1000_00, 25_00},
		{2500_00, 50_00},
		{5000_00, 100_00},
	},
	// GBP: ebay.co.uk, "Bid increments"
	// (https://www.ebay.co.uk/pages/help/buy/bid-increments.html and
	// https://www.ebay.co.uk/help/buying/bidding/automatic-bidding?id=4014).
	"GBP": {
		{0, 5},
		{1_00, 20},
		{5_00, 50},
		{15_00, 1_00},
		{60_00, 2_00},
		{150_00, 5_00},
		{300_00, 10_00},
		{600_00, 20_00},
		{1500_00, 50_00},
		{3000_00, 100_00},
	},
	// EUR: ebay.de, "Erhöhungsschritte" section of "Automatisches Bietsystem
	// bei eBay (Maximalgebot)"
	// (https://www.ebay.de/help/buying/bidding/automatisches-bietsystem-bei-ebay-maximalgebot?id=4014);
	// the same table as JBidwatcher's ebayCurrencyTables eu_incrementTable.
	"EUR": {
		{0, 50},
		{50_00, 1_00},
		{500_00, 5_00},
		{1000_00, 10_00},
		{5000_00, 50_00},
	},
	// CAD: ebay.ca, "Bid increments" section of "Automatic bidding"
	// (https://www.ebay.ca/help/buying/bidding/automatic-bidding?id=4014),
	// which follows the US table. (JBidwatcher's older table stops at
	// C$2.50 from C$100; the help page's current table is used here.)
	"CAD": {
		{0, 5},
		{1_00, 25},
		{5_00, 50},
		{25_00, 1_00},
		{100_00, 2_50},
		{250_00, 5_00},
		{500_00, 10_00},
		{1000_00, 25_00},
		{2500_00, 50_00},
		{5000_00, 100_00},
	},
	// AUD: ebay.com.au, "Bid increments" section of "Automatic bidding"
	// (https://www.ebay.com.au/help/buying/bidding/automatic-bidding?id=4014);
	// the same table as JBidwatcher's au_incrementTable.
	"AUD": {
		{0, 5},
		{1_00, 25},
		{5_00, 50},
		{25_00, 1_00},
		{100_00, 2_50},
		{250_00, 5_00},
		{500_00, 10_00},
		{1000_00, 25_00},
		{2500_00, 50_00},
		{5000_00, 100_00},
	},
}

// Currencies lists the currencies with an increment table, in a stable order.
var Currencies = []string{"USD", "GBP", "EUR", "CAD", "AUD"}

// KnownCurrency reports whether currency has an increment table.
func KnownCurrency(currency string) bool {
	_, ok := incrementTables[currency]
	return ok
}

// Increment returns the bid increment at price in currency. An unknown
// currency uses the USD table, so that a bid is never judged against a zero
// increment.
func Increment(currency string, price money.Amount) money.Amount {
	table, ok := incrementTables[currency]
	if !ok {
		table = incrementTables["USD"]
	}
	inc := table[0].Increment
	for _, s := range table[1:] {
		if price < s.Floor {
			break
		}
		inc = s.Increment
	}
	return inc
}

// MinimumToBid is the lowest maximum a new bidder may place: the start price
// while there are no bids, otherwise the current price plus its increment.
func MinimumToBid(currency string, start, current money.Amount, bids int) money.Amount {
	if bids == 0 {
		return start
	}
	return current + Increment(currency, current)
}
