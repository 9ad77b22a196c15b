package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/store"
)

var searchTests = []test{
	{"AddDedupe", func(t *testing.T, b *bundle) {
		s, created, err := b.s.AddSearch(b.ctx, b.alice.ID, "leica m6", b.now)
		if err != nil || !created || s.ID == 0 || s.AccountID != b.alice.ID || s.Query != "leica m6" || !s.CreatedAt.Equal(b.now) {
			t.Fatalf("AddSearch(new) = %+v, created %v, %v; want a new search", s, created, err)
		}
		again, created, err := b.s.AddSearch(b.ctx, b.alice.ID, "leica m6", b.now.Add(hour))
		if err != nil || created || again.ID != s.ID || !again.CreatedAt.Equal(b.now) {
			t.Errorf("AddSearch(same) = %+v, created %v, %v; want the existing %+v", again, created, err, s)
		}
		bobs, created, err := b.s.AddSearch(b.ctx, b.bob.ID, "leica m6", b.now)
		if err != nil || !created || bobs.ID == s.ID {
			t.Errorf("AddSearch(bob, same query) = %+v, created %v, %v; want his own", bobs, created, err)
		}
		// Case and spacing make a different query.
		if _, created, _ := b.s.AddSearch(b.ctx, b.alice.ID, "Leica M6", b.now); !created {
			t.Errorf("AddSearch(%q) created = false, want a distinct query", "Leica M6")
		}
	}},
	{"ListOldestFirst", func(t *testing.T, b *bundle) {
		for i, q := range []string{"c", "a", "b"} {
			if _, _, err := b.s.AddSearch(b.ctx, b.alice.ID, q, b.now.Add(time.Duration(i)*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		// Same instant as "c": ties break by insertion (ID).
		if _, _, err := b.s.AddSearch(b.ctx, b.alice.ID, "z", b.now); err != nil {
			t.Fatal(err)
		}
		b.s.AddSearch(b.ctx, b.bob.ID, "bob's", b.now)
		got, err := b.s.Searches(b.ctx, b.alice.ID)
		var qs []string
		for _, s := range got {
			qs = append(qs, s.Query)
		}
		if want := []string{"c", "z", "a", "b"}; err != nil || !slices.Equal(qs, want) {
			t.Errorf("Searches(alice) = %q, %v; want %q", qs, err, want)
		}
	}},
	{"Delete", func(t *testing.T, b *bundle) {
		s, _, _ := b.s.AddSearch(b.ctx, b.alice.ID, "q", b.now)
		wantErr(t, "DeleteSearch(bob, alice's)", b.s.DeleteSearch(b.ctx, b.bob.ID, s.ID), store.ErrNotFound)
		if err := b.s.DeleteSearch(b.ctx, b.alice.ID, s.ID); err != nil {
			t.Fatalf("DeleteSearch = %v", err)
		}
		wantErr(t, "DeleteSearch(again)", b.s.DeleteSearch(b.ctx, b.alice.ID, s.ID), store.ErrNotFound)
		if got, _ := b.s.Searches(b.ctx, b.alice.ID); len(got) != 0 {
			t.Errorf("Searches after delete = %v, want none", got)
		}
	}},
}
