package model_test

import (
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// symCapture holds values in every place a Capture can: the initial store,
// row images, a marker (whose image 1 names chunk 1, not a value), unit
// refreshes and replayed values; its coordinates, tags and labels are not
// values.
func symCapture() model.Capture {
	var c model.Capture
	c.Log.Init = model.Store{2, 0, 0}
	c.Log.Commit(model.Event{Key: 1, Img: 3})
	c.Log.Commit(model.Event{Key: model.NoKey, Img: 1})
	c.Log.Commit(model.Event{Key: 0, Img: 2}, model.Event{Key: 2, Img: 0})
	c.Plan = model.Plan{Keys: 3, N: 1}
	c.Plan.Units[0] = model.Unit{Domain: model.Range(0, 3), Lo: 1, Hi: 3, Refresh: model.Store{3, 4, 0}, Read: model.Range(0, 3)}
	c.ReadAt = [model.MaxKeys]model.Coord{3, 2, 1}
	c.Out.Apply(model.Entry{Key: 1, Val: 4, Tag: 2})
	c.Pos, c.Start = 3, 1
	return c
}

// The canonical names follow first appearance in the scan: 2 (initial
// store) → 1, 3 (first row) → 2, then 4 (refresh of k1) → 3. The marker's
// image, ⊥, coordinates, tags and labels are unchanged.
func TestNameValues(t *testing.T) {
	c := symCapture()
	want := c
	want.Log.Init = model.Store{1, 0, 0}
	want.Log.Ev[0].Img = 2
	want.Log.Ev[2].Img = 1
	want.Plan.Units[0].Refresh = model.Store{2, 3, 0}
	want.Out.Val[1] = 3
	var n model.Namer
	got := c
	got.NameValues(&n)
	if got != want {
		t.Fatalf("named:\n%+v\nwant\n%+v", got, want)
	}
	// The Namer's renaming, applied to c, gives the same form.
	r := n.Renaming()
	again := c
	again.RenameValues(&r)
	if again != want {
		t.Fatalf("RenameValues(Namer's renaming):\n%+v\nwant\n%+v", again, want)
	}
}

// Renaming returns a permutation: met values first, the rest in order.
func TestNamerRenamingIsPermutation(t *testing.T) {
	var n model.Namer
	for _, v := range []model.Value{5, 0, 2, 5} {
		n.Name(v)
	}
	r := n.Renaming()
	if r[0] != 0 || r[5] != 1 || r[2] != 2 || r[1] != 3 || r[3] != 4 || r[4] != 5 || r[6] != 6 || r[255] != 255 {
		t.Fatalf("renaming starts %v", r[:8])
	}
	var seen [256]bool
	for _, v := range r {
		if seen[v] {
			t.Fatalf("%d named twice", v)
		}
		seen[v] = true
	}
}

// Every renaming of a capture has the capture's canonical form, and a
// renaming that moves a value present changes the capture.
func TestNameValuesConstantOnOrbit(t *testing.T) {
	c := symCapture()
	var n model.Namer
	canon := c
	canon.NameValues(&n)
	perms := [][4]model.Value{{1, 2, 3, 4}, {2, 1, 3, 4}, {4, 3, 2, 1}, {3, 4, 1, 2}, {2, 3, 4, 1}}
	for _, p := range perms {
		r := model.Identity()
		copy(r[1:5], p[:])
		d := c
		d.RenameValues(&r)
		if (d == c) != (p == perms[0]) {
			t.Errorf("renaming by %v: changed %v", p, d != c)
		}
		if d.Log.Ev[1] != c.Log.Ev[1] {
			t.Errorf("renaming by %v changed the marker to %+v", p, d.Log.Ev[1])
		}
		var m model.Namer
		d.NameValues(&m)
		if d != canon {
			t.Errorf("renaming by %v: canonical form\n%+v\nwant\n%+v", p, d, canon)
		}
	}
}
