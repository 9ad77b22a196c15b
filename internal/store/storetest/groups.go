package storetest

import (
	"slices"
	"testing"

	"github.com/sniped/sniped/internal/store"
)

var groupTests = []test{
	{"CreateJoinRenameRemove", func(t *testing.T, b *bundle) {
		end := b.now.Add(hour)
		s1 := b.upsert(t, b.alice.ID, 1, store.SnipeChange{GroupName: ptr("cameras"), Item: item(end)})
		if s1.GroupID == 0 || s1.GroupName != "cameras" {
			t.Fatalf("new group: GroupID, GroupName = %d, %q, want a group called cameras", s1.GroupID, s1.GroupName)
		}
		s2 := b.upsert(t, b.alice.ID, 2, store.SnipeChange{GroupName: ptr("cameras"), Item: item(end)})
		if s2.GroupID != s1.GroupID {
			t.Errorf("same name: GroupID = %d, want the existing %d", s2.GroupID, s1.GroupID)
		}
		bobs := b.upsert(t, b.bob.ID, 1, store.SnipeChange{GroupName: ptr("cameras"), Item: item(end)})
		if bobs.GroupID == s1.GroupID || bobs.GroupID == 0 {
			t.Errorf("bob's group cameras has ID %d, want his own (alice's is %d)", bobs.GroupID, s1.GroupID)
		}
		// Moving to another name creates that group; the old one keeps s2.
		moved := b.upsert(t, b.alice.ID, 1, store.SnipeChange{GroupName: ptr("lenses"), Item: item(end)})
		if moved.GroupID == s1.GroupID || moved.GroupName != "lenses" {
			t.Errorf("moved: GroupID, GroupName = %d, %q, want a new group lenses", moved.GroupID, moved.GroupName)
		}
		// Not passing a group keeps it.
		kept := b.upsert(t, b.alice.ID, 1, store.SnipeChange{Item: item(end)})
		if kept.GroupID != moved.GroupID || kept.GroupName != "lenses" {
			t.Errorf("no groupName: GroupID, GroupName = %d, %q, want %d, lenses", kept.GroupID, kept.GroupName, moved.GroupID)
		}
		removed := b.upsert(t, b.alice.ID, 1, store.SnipeChange{GroupName: ptr(""), Item: item(end)})
		if removed.GroupID != 0 || removed.GroupName != "" {
			t.Errorf(`groupName "": GroupID, GroupName = %d, %q, want 0, ""`, removed.GroupID, removed.GroupName)
		}
		if got := b.get(t, b.alice.ID, 1); got.GroupID != 0 {
			t.Errorf("stored GroupID = %d, want 0", got.GroupID)
		}
	}},
	{"GroupSnipes", func(t *testing.T, b *bundle) {
		g := ptr("g")
		// Item 3 and 2 end together: item_no breaks the tie.
		b.upsert(t, b.alice.ID, 3, store.SnipeChange{GroupName: g, Item: item(b.now.Add(2 * hour))})
		b.upsert(t, b.alice.ID, 1, store.SnipeChange{GroupName: g, Item: item(b.now.Add(3 * hour))})
		b.upsert(t, b.alice.ID, 2, store.SnipeChange{GroupName: g, Item: item(b.now.Add(2 * hour))})
		s := b.upsert(t, b.alice.ID, 4, store.SnipeChange{GroupName: g, Item: item(b.now.Add(hour))})
		b.upsert(t, b.alice.ID, 5, store.SnipeChange{GroupName: ptr("other"), Item: item(b.now.Add(hour))})
		b.upsert(t, b.alice.ID, 6, store.SnipeChange{Item: item(b.now.Add(hour))})
		got, err := b.s.GroupSnipes(b.ctx, b.alice.ID, s.GroupID)
		if want := []int64{4, 2, 3, 1}; err != nil || !slices.Equal(itemNos(got), want) {
			t.Errorf("GroupSnipes = %v, %v, want items %v", itemNos(got), err, want)
		}
		for _, sn := range got {
			if sn.GroupName != "g" {
				t.Errorf("GroupSnipes item %d GroupName = %q, want g", sn.ItemNo, sn.GroupName)
			}
		}
		if got, err := b.s.GroupSnipes(b.ctx, b.bob.ID, s.GroupID); err != nil || len(got) != 0 {
			t.Errorf("GroupSnipes(bob, alice's group) = %v, %v, want none", itemNos(got), err)
		}
	}},
}
