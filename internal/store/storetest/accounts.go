package storetest

import (
	"bytes"
	"slices"
	"testing"

	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/store"
)

var accountTests = []test{
	{"CreateAndGet", func(t *testing.T, b *bundle) {
		a := b.account(t, "carol", store.TierFree)
		if a.ID == 0 || a.Name != "carol" || a.Tier != store.TierFree || !bytes.Equal(a.KeyHash, key.Hash("key-carol")) || !a.CreatedAt.Equal(b.now) {
			t.Errorf("CreateAccount = %+v, want carol/free/hash/%v", a, b.now)
		}
		byName, err := b.s.AccountByName(b.ctx, "carol")
		if err != nil || byName.ID != a.ID || byName.Tier != a.Tier || !byName.CreatedAt.Equal(b.now) {
			t.Errorf("AccountByName(carol) = %+v, %v, want %+v", byName, err, a)
		}
		byKey, err := b.s.AccountByKeyHash(b.ctx, key.Hash("key-carol"))
		if err != nil || byKey.ID != a.ID || byKey.Name != "carol" {
			t.Errorf("AccountByKeyHash(carol) = %+v, %v, want %+v", byKey, err, a)
		}
		_, err = b.s.AccountByKeyHash(b.ctx, key.Hash("nobody"))
		wantErr(t, "AccountByKeyHash(unknown)", err, store.ErrNotFound)
		_, err = b.s.AccountByName(b.ctx, "nobody")
		wantErr(t, "AccountByName(nobody)", err, store.ErrNotFound)
	}},
	{"DuplicateName", func(t *testing.T, b *bundle) {
		_, err := b.s.CreateAccount(b.ctx, "alice", store.TierPaid, key.Hash("another key"), b.now)
		wantErr(t, "CreateAccount(alice again)", err, store.ErrConflict)
		if n, _ := b.s.CountAccounts(b.ctx); n != 2 {
			t.Errorf("CountAccounts() = %d after a duplicate, want 2", n)
		}
	}},
	{"ListAndCount", func(t *testing.T, b *bundle) {
		b.account(t, "aaron", store.TierFree)
		as, err := b.s.Accounts(b.ctx)
		if err != nil {
			t.Fatalf("Accounts() = %v", err)
		}
		var names []string
		for _, a := range as {
			names = append(names, a.Name)
		}
		if want := []string{"aaron", "alice", "bob"}; !slices.Equal(names, want) {
			t.Errorf("Accounts() names = %v, want %v", names, want)
		}
		if n, err := b.s.CountAccounts(b.ctx); n != 3 || err != nil {
			t.Errorf("CountAccounts() = %d, %v, want 3", n, err)
		}
	}},
	{"RotateKey", func(t *testing.T, b *bundle) {
		if err := b.s.SetKeyHash(b.ctx, "alice", key.Hash("new")); err != nil {
			t.Fatalf("SetKeyHash(alice) = %v", err)
		}
		_, err := b.s.AccountByKeyHash(b.ctx, key.Hash("key-alice"))
		wantErr(t, "AccountByKeyHash(old key)", err, store.ErrNotFound)
		if a, err := b.s.AccountByKeyHash(b.ctx, key.Hash("new")); err != nil || a.ID != b.alice.ID {
			t.Errorf("AccountByKeyHash(new key) = %+v, %v, want alice", a, err)
		}
		wantErr(t, "SetKeyHash(nobody)", b.s.SetKeyHash(b.ctx, "nobody", key.Hash("x")), store.ErrNotFound)
	}},
	{"SetTier", func(t *testing.T, b *bundle) {
		if err := b.s.SetTier(b.ctx, "alice", store.TierFree); err != nil {
			t.Fatalf("SetTier(alice) = %v", err)
		}
		if a, _ := b.s.AccountByName(b.ctx, "alice"); a.Tier != store.TierFree {
			t.Errorf("tier after SetTier(free) = %q, want free", a.Tier)
		}
		if a, _ := b.s.AccountByName(b.ctx, "bob"); a.Tier != store.TierPaid {
			t.Errorf("bob's tier = %q, want paid (untouched)", a.Tier)
		}
		wantErr(t, "SetTier(nobody)", b.s.SetTier(b.ctx, "nobody", store.TierPaid), store.ErrNotFound)
	}},
	{"DeleteCascades", func(t *testing.T, b *bundle) {
		sn := b.upsert(t, b.alice.ID, 1, store.SnipeChange{Bid: ptr(money.Amount(100)), GroupName: ptr("G"), Item: item(b.now.Add(hour))})
		if _, _, err := b.s.AddSearch(b.ctx, b.alice.ID, "camera", b.now); err != nil {
			t.Fatal(err)
		}
		bobs := b.snipe(t, b.bob.ID, 1, 500, b.now.Add(hour))
		if err := b.s.DeleteAccount(b.ctx, "alice"); err != nil {
			t.Fatalf("DeleteAccount(alice) = %v", err)
		}
		_, err := b.s.AccountByName(b.ctx, "alice")
		wantErr(t, "AccountByName(deleted)", err, store.ErrNotFound)
		_, err = b.s.SnipeByID(b.ctx, sn.ID)
		wantErr(t, "SnipeByID(deleted account's snipe)", err, store.ErrNotFound)
		if ss, _ := b.s.Searches(b.ctx, b.alice.ID); len(ss) != 0 {
			t.Errorf("Searches(deleted account) = %v, want none", ss)
		}
		if ss, _ := b.s.GroupSnipes(b.ctx, b.alice.ID, sn.GroupID); len(ss) != 0 {
			t.Errorf("GroupSnipes(deleted account) = %v, want none", ss)
		}
		if _, err := b.s.SnipeByID(b.ctx, bobs.ID); err != nil {
			t.Errorf("SnipeByID(bob's snipe) = %v after deleting alice, want it kept", err)
		}
		// The name is free again and the new account starts empty.
		a := b.account(t, "alice", store.TierPaid)
		if _, n, _ := b.list(t, a.ID, store.ListQuery{Now: b.now, ShowWon: true}); n != 0 {
			t.Errorf("new alice has %d snipes, want 0", n)
		}
		wantErr(t, "DeleteAccount(nobody)", b.s.DeleteAccount(b.ctx, "nobody"), store.ErrNotFound)
	}},
}
