package outcome

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestTableIsComplete(t *testing.T) {
	t.Parallel()
	all := All()
	if len(all) != 18 {
		t.Errorf("All() has %d codes, want 18", len(all))
	}
	shorthands := map[string]bool{}
	for _, i := range all {
		if i.Status == "" || i.Shorthand == "" || i.Color == "" || i.Message == "" {
			t.Errorf("code %d has an empty field: %+v", i.Code, i)
		}
		if shorthands[i.Shorthand] {
			t.Errorf("shorthand %q used twice", i.Shorthand)
		}
		shorthands[i.Shorthand] = true
		if got, ok := Lookup(i.Code); !ok || got != i {
			t.Errorf("Lookup(%d) = %+v, %v; want %+v", i.Code, got, ok, i)
		}
	}
	if got := Of(Code(99)); got.Code != Pending {
		t.Errorf("Of(99) = %+v, want the Pending info", got)
	}
}

// TestFixedCodes pins the numbers, names and shorthands clients match on.
func TestFixedCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code                      Code
		status, shorthand, colour string
	}{
		{1, "Won", "won", "green"},
		{2, "Bid Placed", "placed", "blue"},
		{0, "Pending", "pending", "gray"},
		{-1, "Outbid", "outbid", "red"},
		{-2, "Reserve Not Met", "reserve", "red"},
		{-3, "Auction Ended Early", "ended-early", "orange"},
		{-4, "Ended By Buy It Now", "bin", "orange"},
		{-5, "Another Group Item Won", "group-won", "gray"},
		{-6, "Bid Below Current Price", "too-low", "red"},
		{-7, "Minimum Bid Increment Not Met", "bid-incr", "red"},
		{-8, "Not Above Your Previous Maximum", "own-max", "red"},
		{-9, "Snipe Disabled", "disabled", "gray"},
		{-10, "Not Eligible To Bid", "ineligible", "red"},
		{-11, "Marketplace Unavailable", "market-down", "red"},
		{-12, "Marketplace Authorization Failed", "market-auth", "red"},
		{-13, "Missed While Service Was Down", "missed", "red"},
		{-14, "Item Not Found", "not-found", "red"},
		{-15, "Group Item May Be Won", "group-lead", "gray"},
	}
	for _, tt := range tests {
		got := Of(tt.code)
		if got.Status != tt.status || got.Shorthand != tt.shorthand || got.Color != tt.colour {
			t.Errorf("Of(%d) = %q/%q/%q, want %q/%q/%q", tt.code, got.Status, got.Shorthand, got.Color, tt.status, tt.shorthand, tt.colour)
		}
	}
}

func TestFinal(t *testing.T) {
	t.Parallel()
	for _, i := range All() {
		want := i.Code != Pending && i.Code != Placed && i.Code != GroupLead
		if got := i.Code.Final(); got != want {
			t.Errorf("Code(%d).Final() = %v, want %v", i.Code, got, want)
		}
	}
}

// TestEveryCodeIsDocumented keeps docs/outcomes.md in step with the table.
func TestEveryCodeIsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/outcomes.md")
	if err != nil {
		t.Fatalf("read docs/outcomes.md: %v", err)
	}
	for _, i := range All() {
		row := fmt.Sprintf("| %d | %s | %s | %s |", i.Code, i.Status, i.Shorthand, i.Color)
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/outcomes.md has no table row starting %q", row)
		}
	}
}
