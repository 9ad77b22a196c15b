package contract

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/market"
)

// diffItem lists the fields where got differs from want, leaving out
// what l says the Market cannot know.
func diffItem(got, want market.Item, l Lacks) []string {
	var d []string
	check := func(name string, g, w any) {
		if g != w {
			d = append(d, fmt.Sprintf("%s = %v, want %v", name, g, w))
		}
	}
	check("ItemNo", got.ItemNo, want.ItemNo)
	check("Title", got.Title, want.Title)
	check("Category", got.Category, want.Category)
	check("Currency", got.Currency, want.Currency)
	check("Country", got.Country, want.Country)
	check("SellerID", got.SellerID, want.SellerID)
	check("SellerScore", got.SellerScore, want.SellerScore)
	check("SellerPercent", got.SellerPercent, want.SellerPercent)
	check("ShippingType", got.ShippingType, want.ShippingType)
	check("ShippingCost", got.ShippingCost, want.ShippingCost)
	if !l.StartPriceAfterBids || (want.Bids == 0 && !want.Ended) {
		check("StartPrice", got.StartPrice, want.StartPrice)
	}
	check("CurrentPrice", got.CurrentPrice, want.CurrentPrice)
	check("MinimumToBid", got.MinimumToBid, want.MinimumToBid)
	check("Bids", got.Bids, want.Bids)
	check("HasReserve", got.HasReserve, want.HasReserve)
	check("ReserveMet", got.ReserveMet, want.ReserveMet)
	check("BuyItNow", got.BuyItNow, want.BuyItNow)
	if !got.Start.Equal(want.Start) {
		d = append(d, fmt.Sprintf("Start = %v, want %v", got.Start, want.Start))
	}
	if !got.End.Equal(want.End) {
		d = append(d, fmt.Sprintf("End = %v, want %v", got.End, want.End))
	}
	check("Ended", got.Ended, want.Ended)
	check("EndReason", got.EndReason, want.EndReason)
	check("PictureURL", got.PictureURL, want.PictureURL)
	if !slices.Equal(got.Images, want.Images) {
		d = append(d, fmt.Sprintf("Images = %v, want %v", got.Images, want.Images))
	}
	return d
}

// wantItem fails the test where got differs from the marketplace's truth.
func (b *bundle) wantItem(t *testing.T, what string, got market.Item) {
	t.Helper()
	want, _ := b.expect(b.truth(t, got.ItemNo), market.BidState{})
	for _, d := range diffItem(got, want, b.lacks) {
		t.Errorf("%s: %s", what, d)
	}
}

var itemTests = []test{
	{"EveryField", func(t *testing.T, b *bundle) {
		now, err := b.m.Now(b.ctx)
		if err != nil {
			t.Fatalf("Now() = %v", err)
		}
		l := Listing{Title: "Contract camera with every field", Category: "Cameras & Photo:Film Cameras", Seller: "sam",
			Currency: "GBP", Country: "GB", Start: 5_00, Reserve: 20_00, BuyItNow: 50_00, EndsIn: 2 * time.Hour}
		no := b.create(t, l)
		it := b.item(t, no)
		b.wantItem(t, "Item", it)
		got := []any{it.ItemNo, it.Title, it.Category, it.Currency, it.Country, it.SellerID, it.StartPrice, it.CurrentPrice,
			it.MinimumToBid, it.Bids, it.HasReserve, it.ReserveMet, it.BuyItNow, it.Ended, it.EndReason}
		want := []any{no, l.Title, l.Category, "GBP", "GB", "sam", l.Start, l.Start,
			l.Start, 0, true, false, l.BuyItNow, false, market.Running}
		if !slices.Equal(got, want) {
			t.Errorf("Item(%d) = %v, want %v", no, got, want)
		}
		if d := it.End.Sub(now); d < l.EndsIn-time.Second || d > l.EndsIn+time.Second {
			t.Errorf("End = %v, want about %v after Now() %v", it.End, l.EndsIn, now)
		}
		if it.Start.After(it.End) || it.End.Sub(it.Start) < l.EndsIn-time.Second {
			t.Errorf("Start = %v, want about %v before End %v", it.Start, l.EndsIn, it.End)
		}
		if it.SellerPercent < 0 || it.SellerPercent > 100 || it.SellerScore < 0 || it.ShippingCost < 0 {
			t.Errorf("seller score %d, percent %v, shipping cost %v: want non-negative, percent at most 100", it.SellerScore, it.SellerPercent, it.ShippingCost)
		}
	}},
	{"Defaults", func(t *testing.T, b *bundle) {
		it := b.item(t, b.create(t, Listing{}))
		b.wantItem(t, "Item", it)
		if it.Currency != "USD" || it.Country != "US" || it.SellerID != Seller || it.HasReserve || !it.ReserveMet || it.BuyItNow != 0 {
			t.Errorf("Item = %+v, want USD, US, seller %s, no reserve (met), no Buy It Now", it, Seller)
		}
	}},
	{"AfterBids", func(t *testing.T, b *bundle) {
		no := b.create(t, Listing{Start: 1_00, Reserve: 30_00, BuyItNow: 80_00})
		b.rival(t, "rival1", no, 20_00)
		it := b.item(t, no)
		b.wantItem(t, "Item below the reserve", it)
		if it.Bids != 1 || it.CurrentPrice != 1_00 || it.MinimumToBid != 1_25 || it.ReserveMet || it.BuyItNow != 80_00 {
			t.Errorf("after a bid under the reserve: bids %d price %v minimum %v reserve met %v BIN %v, want 1, 1.00, 1.25, false, 80.00 (still offered)",
				it.Bids, it.CurrentPrice, it.MinimumToBid, it.ReserveMet, it.BuyItNow)
		}
		b.rival(t, "rival2", no, 40_00)
		it = b.item(t, no)
		b.wantItem(t, "Item above the reserve", it)
		if it.Bids != 2 || it.CurrentPrice != 30_00 || it.MinimumToBid != 31_00 || !it.ReserveMet || it.BuyItNow != 0 {
			t.Errorf("after the reserve is met: bids %d price %v minimum %v reserve met %v BIN %v, want 2, 30.00 (the reserve), 31.00, true, 0 (gone)",
				it.Bids, it.CurrentPrice, it.MinimumToBid, it.ReserveMet, it.BuyItNow)
		}
	}},
	{"BuyItNowGoneWithFirstBid", func(t *testing.T, b *bundle) {
		no := b.create(t, Listing{Start: 10_00, BuyItNow: 50_00})
		b.rival(t, "rival1", no, 12_00)
		if it := b.item(t, no); it.BuyItNow != 0 {
			t.Errorf("BuyItNow after the first bid = %v, want 0 (no reserve: gone with the first bid)", it.BuyItNow)
		}
	}},
	{"Ended", func(t *testing.T, b *bundle) {
		normal := b.create(t, Listing{EndsIn: time.Hour})
		cancelled := b.create(t, Listing{EndsIn: 2 * time.Hour})
		sold := b.create(t, Listing{EndsIn: 2 * time.Hour})
		bin := b.create(t, Listing{EndsIn: 2 * time.Hour, Start: 10_00, BuyItNow: 50_00})
		b.rival(t, "rival1", normal, 5_00)
		b.rival(t, "rival1", sold, 5_00)
		b.c.Advance(30 * time.Minute)
		now, err := b.m.Now(b.ctx)
		if err != nil {
			t.Fatalf("Now() = %v", err)
		}
		must(t, "EndEarly(cancel)", b.c.EndEarly(b.ctx, cancelled, false))
		must(t, "EndEarly(sell)", b.c.EndEarly(b.ctx, sold, true))
		must(t, "BuyItNow", b.c.BuyItNow(b.ctx, "rival2", bin))
		b.c.Advance(time.Hour)
		tests := []struct {
			no        int64
			reason    market.EndReason
			earlyEnd  bool
			wantPrice int64
		}{
			{normal, market.EndedNormally, false, 1_00},
			{cancelled, market.EndedCancelled, true, 1_00},
			{sold, market.EndedSold, true, 1_00},
			{bin, market.EndedBuyItNow, true, 50_00},
		}
		for _, tt := range tests {
			it := b.item(t, tt.no)
			b.wantItem(t, fmt.Sprintf("Item(%s)", tt.reason), it)
			if b.lacks.EndReasons {
				tt.reason = market.EndedNormally
			}
			if !it.Ended || it.EndReason != tt.reason || int64(it.CurrentPrice) != tt.wantPrice || it.BuyItNow != 0 {
				t.Errorf("Item(%d) ended %v reason %q price %v BIN %v, want ended %q at %v, no Buy It Now", tt.no, it.Ended, it.EndReason, it.CurrentPrice, it.BuyItNow, tt.reason, tt.wantPrice)
			}
			if tt.earlyEnd && (it.End.Before(now.Add(-time.Second)) || it.End.After(now.Add(time.Second))) {
				t.Errorf("Item(%d) End = %v, want the early end %v", tt.no, it.End, now)
			}
		}
	}},
	{"NotFound", func(t *testing.T, b *bundle) {
		_, err := b.m.Item(b.ctx, unknownItem)
		wantIs(t, "Item(unknown)", err, market.ErrNotFound)
		no := b.create(t, Listing{})
		must(t, "Remove", b.c.Remove(b.ctx, no))
		_, err = b.m.Item(b.ctx, no)
		wantIs(t, "Item(removed)", err, market.ErrNotFound)
	}},
}

// searchWord is in the title of every item the search tests list and
// nowhere else (the simulator's catalogue is made of real-looking titles).
const searchWord = "Zorblat"

var searchTests = []test{
	{"QueryCountryOrderLimit", func(t *testing.T, b *bundle) {
		lampUS := b.create(t, Listing{Title: searchWord + " desk lamp", Country: "US", EndsIn: 3 * time.Hour})
		chairUS := b.create(t, Listing{Title: searchWord + " oak chair", Country: "US", EndsIn: time.Hour})
		lampGB := b.create(t, Listing{Title: "Antique " + searchWord + " Lamp", Country: "GB", EndsIn: 2 * time.Hour})
		b.create(t, Listing{Title: "Desk lamp without the word", Country: "US", EndsIn: time.Hour})
		b.create(t, Listing{Title: searchWord + " vase ending soon", EndsIn: 10 * time.Minute})
		removed := b.create(t, Listing{Title: searchWord + " vase removed", EndsIn: time.Hour})
		cancelled := b.create(t, Listing{Title: searchWord + " vase cancelled", EndsIn: time.Hour})
		must(t, "Remove", b.c.Remove(b.ctx, removed))
		must(t, "EndEarly", b.c.EndEarly(b.ctx, cancelled, false))
		b.c.Advance(20 * time.Minute)
		tests := []struct {
			query, country string
			limit          int
			want           []int64
		}{
			{searchWord, "", 10, []int64{chairUS, lampGB, lampUS}},
			{"zorblat LAMP", "", 10, []int64{lampGB, lampUS}},
			{searchWord + " lamp", "GB", 10, []int64{lampGB}},
			{searchWord, "US", 10, []int64{chairUS, lampUS}},
			{searchWord, "", 2, []int64{chairUS, lampGB}},
			{searchWord, "", 0, []int64{chairUS, lampGB, lampUS}}, // 0: the default limit
			{searchWord + " sofa", "", 10, nil},
			{searchWord, "DE", 10, nil},
		}
		for _, tt := range tests {
			items, err := b.m.Search(b.ctx, tt.query, tt.country, tt.limit)
			if err != nil {
				t.Errorf("Search(%q, %q, %d) = %v", tt.query, tt.country, tt.limit, err)
				continue
			}
			var got []int64
			for _, it := range items {
				got = append(got, it.ItemNo)
				b.wantItem(t, fmt.Sprintf("Search(%q) item %d", tt.query, it.ItemNo), it)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Search(%q, %q, %d) = %v, want %v (live only, soonest-ending first)", tt.query, tt.country, tt.limit, got, tt.want)
			}
		}
	}},
}

// watchOrder returns the positions of want in list (-1: absent).
func watchOrder(list []market.Item, want ...int64) []int {
	pos := make([]int, len(want))
	for i, no := range want {
		pos[i] = slices.IndexFunc(list, func(it market.Item) bool { return it.ItemNo == no })
	}
	return pos
}

var watchTests = []test{
	{"AddedItemsSoonestFirst", func(t *testing.T, b *bundle) {
		late := b.create(t, Listing{Title: "Watched late", EndsIn: 3 * time.Hour})
		soon := b.create(t, Listing{Title: "Watched soon", EndsIn: time.Hour})
		must(t, "Watch(late)", b.c.Watch(b.ctx, Ann, late))
		must(t, "Watch(soon)", b.c.Watch(b.ctx, Ann, soon))
		must(t, "Watch(soon) again", b.c.Watch(b.ctx, Ann, soon))
		// Listed after the watch list was first touched, so no
		// implementation can have put it there on its own.
		other := b.create(t, Listing{Title: "Not watched", EndsIn: 2 * time.Hour})
		list, err := b.m.WatchList(b.ctx, Ann)
		if err != nil {
			t.Fatalf("WatchList(%s) = %v", Ann, err)
		}
		pos := watchOrder(list, soon, late, other)
		if pos[0] < 0 || pos[1] < 0 || pos[0] > pos[1] || pos[2] >= 0 {
			t.Errorf("WatchList positions of soon, late, not watched = %v, want soon before late, not watched absent", pos)
		}
		seen := map[int64]bool{}
		for i, it := range list {
			if seen[it.ItemNo] {
				t.Errorf("WatchList lists item %d twice", it.ItemNo)
			}
			seen[it.ItemNo] = true
			if i > 0 && it.End.Before(list[i-1].End) {
				t.Errorf("WatchList item %d ends %v, before the previous one %v: want soonest-ending first", it.ItemNo, it.End, list[i-1].End)
			}
		}
		if pos[0] >= 0 {
			b.wantItem(t, "WatchList item", list[pos[0]])
		}
	}},
	{"EndedStayRemovedGo", func(t *testing.T, b *bundle) {
		ends := b.create(t, Listing{EndsIn: time.Hour})
		removed := b.create(t, Listing{EndsIn: 2 * time.Hour})
		must(t, "Watch", b.c.Watch(b.ctx, Bob, ends))
		must(t, "Watch", b.c.Watch(b.ctx, Bob, removed))
		must(t, "Remove", b.c.Remove(b.ctx, removed))
		b.c.Advance(90 * time.Minute)
		list, err := b.m.WatchList(b.ctx, Bob)
		if err != nil {
			t.Fatalf("WatchList(%s) = %v", Bob, err)
		}
		pos := watchOrder(list, ends, removed)
		if pos[0] < 0 || pos[1] >= 0 {
			t.Fatalf("WatchList positions of ended, removed = %v, want the ended item listed, the removed one not", pos)
		}
		if it := list[pos[0]]; !it.Ended || it.EndReason != market.EndedNormally {
			t.Errorf("ended watched item: ended %v reason %q, want ended normally", it.Ended, it.EndReason)
		}
	}},
}
