package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/store"
)

// link is a marketplace link for accountID made at the suite's now.
func (b *bundle) link(accountID int64, user string) store.MarketLink {
	return store.MarketLink{
		AccountID:    accountID,
		Market:       "https://api.sandbox.ebay.com",
		User:         user,
		SealedToken:  []byte("\x01sealed\x00bytes-" + user),
		TokenExpires: b.now.Add(540 * day),
		LinkedAt:     b.now,
	}
}

func sameLink(a, b store.MarketLink) bool {
	return a.AccountID == b.AccountID && a.Market == b.Market && a.User == b.User &&
		bytes.Equal(a.SealedToken, b.SealedToken) && a.TokenExpires.Equal(b.TokenExpires) && a.LinkedAt.Equal(b.LinkedAt)
}

var marketLinkTests = []test{
	{"SetGetRoundTrip", func(t *testing.T, b *bundle) {
		_, err := b.s.MarketLink(b.ctx, b.alice.ID)
		wantErr(t, "MarketLink(unlinked)", err, store.ErrNotFound)
		want := b.link(b.alice.ID, "alice_ebay")
		if err := b.s.SetMarketLink(b.ctx, want); err != nil {
			t.Fatalf("SetMarketLink = %v", err)
		}
		got, err := b.s.MarketLink(b.ctx, b.alice.ID)
		if err != nil || !sameLink(got, want) {
			t.Errorf("MarketLink = %+v, %v; want %+v", got, err, want)
		}
	}},
	{"UnknownExpiryIsZero", func(t *testing.T, b *bundle) {
		want := b.link(b.alice.ID, "u")
		want.TokenExpires = time.Time{}
		if err := b.s.SetMarketLink(b.ctx, want); err != nil {
			t.Fatalf("SetMarketLink = %v", err)
		}
		if got, err := b.s.MarketLink(b.ctx, b.alice.ID); err != nil || !got.TokenExpires.IsZero() {
			t.Errorf("MarketLink.TokenExpires = %v, %v; want zero (unknown)", got.TokenExpires, err)
		}
	}},
	{"RelinkReplaces", func(t *testing.T, b *bundle) {
		if err := b.s.SetMarketLink(b.ctx, b.link(b.alice.ID, "first")); err != nil {
			t.Fatal(err)
		}
		want := b.link(b.alice.ID, "second")
		want.Market = "https://api.ebay.com"
		want.LinkedAt = b.now.Add(hour)
		want.TokenExpires = b.now.Add(100 * day)
		if err := b.s.SetMarketLink(b.ctx, want); err != nil {
			t.Fatalf("SetMarketLink(again) = %v", err)
		}
		if got, err := b.s.MarketLink(b.ctx, b.alice.ID); err != nil || !sameLink(got, want) {
			t.Errorf("MarketLink after relink = %+v, %v; want %+v", got, err, want)
		}
	}},
	{"ScopedByAccount", func(t *testing.T, b *bundle) {
		if err := b.s.SetMarketLink(b.ctx, b.link(b.alice.ID, "alice_ebay")); err != nil {
			t.Fatal(err)
		}
		_, err := b.s.MarketLink(b.ctx, b.bob.ID)
		wantErr(t, "MarketLink(bob)", err, store.ErrNotFound)
		wantErr(t, "DeleteMarketLink(bob)", b.s.DeleteMarketLink(b.ctx, b.bob.ID), store.ErrNotFound)
		if err := b.s.SetMarketLink(b.ctx, b.link(b.bob.ID, "bob_ebay")); err != nil {
			t.Fatal(err)
		}
		if got, _ := b.s.MarketLink(b.ctx, b.alice.ID); got.User != "alice_ebay" {
			t.Errorf("alice's link after bob linked = %+v, want alice_ebay's", got)
		}
	}},
	{"UnknownAccount", func(t *testing.T, b *bundle) {
		wantErr(t, "SetMarketLink(unknown account)", b.s.SetMarketLink(b.ctx, b.link(b.bob.ID+1000, "x")), store.ErrNotFound)
	}},
	{"Delete", func(t *testing.T, b *bundle) {
		if err := b.s.SetMarketLink(b.ctx, b.link(b.alice.ID, "alice_ebay")); err != nil {
			t.Fatal(err)
		}
		if err := b.s.DeleteMarketLink(b.ctx, b.alice.ID); err != nil {
			t.Fatalf("DeleteMarketLink = %v", err)
		}
		_, err := b.s.MarketLink(b.ctx, b.alice.ID)
		wantErr(t, "MarketLink(after delete)", err, store.ErrNotFound)
		wantErr(t, "DeleteMarketLink(again)", b.s.DeleteMarketLink(b.ctx, b.alice.ID), store.ErrNotFound)
	}},
	{"GoesWithTheAccount", func(t *testing.T, b *bundle) {
		if err := b.s.SetMarketLink(b.ctx, b.link(b.alice.ID, "alice_ebay")); err != nil {
			t.Fatal(err)
		}
		if err := b.s.DeleteAccount(b.ctx, "alice"); err != nil {
			t.Fatal(err)
		}
		// A new account must not inherit a removed one's link, even if
		// an engine reuses the ID.
		again := b.account(t, "alice", "paid")
		_, err := b.s.MarketLink(b.ctx, again.ID)
		wantErr(t, "MarketLink(recreated account)", err, store.ErrNotFound)
		_, err = b.s.MarketLink(b.ctx, b.alice.ID)
		wantErr(t, "MarketLink(removed account)", err, store.ErrNotFound)
	}},
}
