package ebay_test

import (
	"errors"
	"testing"

	"github.com/sniped/sniped/internal/market"
)

// TestLinkReadOnEveryCall: every call for a user reads the user's link, so
// that a link removed by any process (sniped account unlink, another
// instance) stops the next call although an access token is cached, and a
// relink to another eBay user never bids with the old user's token.
func TestLinkReadOnEveryCall(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const refreshes = "POST /identity/v1/oauth2/token refresh_token"
	if _, err := b.ad.WatchList(b.ctx, "alice"); err != nil {
		t.Fatalf("WatchList(alice) = %v", err)
	}
	if _, err := b.ad.WatchList(b.ctx, "alice"); err != nil || b.count(refreshes) != 1 {
		t.Fatalf("a second WatchList = %v after %d refreshes, want the cached access token used", err, b.count(refreshes))
	}

	b.links.mu.Lock()
	delete(b.links.tokens, "alice")
	b.links.mu.Unlock()
	if _, err := b.ad.WatchList(b.ctx, "alice"); !errors.Is(err, market.ErrNotAuthorized) {
		t.Errorf("WatchList(alice) after the link was removed = %v, want market.ErrNotAuthorized although a token was cached", err)
	}
	if _, err := b.ad.WatchList(b.ctx, "bob"); err != nil {
		t.Errorf("WatchList(bob) after alice's link was removed = %v", err)
	}

	// alice links again, to another eBay user: her calls now act as that
	// user, with a token refreshed from the new link.
	tok, _, err := b.server.MintRefreshToken("alice_other")
	if err != nil {
		t.Fatal(err)
	}
	b.links.set("alice", tok)
	before := b.count(refreshes)
	if _, err := b.ad.WatchList(b.ctx, "alice"); err != nil {
		t.Fatalf("WatchList(alice) after relinking = %v", err)
	}
	if n := b.count(refreshes) - before; n != 1 {
		t.Errorf("relinking made %d refreshes, want 1 (the new link's)", n)
	}
}
