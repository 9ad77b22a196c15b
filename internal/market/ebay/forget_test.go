package ebay_test

import (
	"errors"
	"testing"

	"github.com/sniped/sniped/internal/market"
)

// TestForgetUser: after a user's link is removed, the cached access token
// would go on working for up to two hours; ForgetUser makes the very next
// call ask the links again, and fail.
func TestForgetUser(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := b.ad.WatchList(b.ctx, "alice"); err != nil {
		t.Fatalf("WatchList(alice) = %v", err)
	}
	b.links.mu.Lock()
	delete(b.links.tokens, "alice")
	b.links.mu.Unlock()
	if _, err := b.ad.WatchList(b.ctx, "alice"); err != nil {
		t.Fatalf("WatchList(alice) with a cached access token = %v, want it to work (the reason ForgetUser exists)", err)
	}
	b.ad.ForgetUser("alice")
	if _, err := b.ad.WatchList(b.ctx, "alice"); !errors.Is(err, market.ErrNotAuthorized) {
		t.Errorf("WatchList(alice) after ForgetUser = %v, want market.ErrNotAuthorized", err)
	}
	if _, err := b.ad.WatchList(b.ctx, "bob"); err != nil {
		t.Errorf("WatchList(bob) after forgetting alice = %v", err)
	}
}
