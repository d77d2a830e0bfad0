package model_test

import (
	"slices"
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// Reference: §2.1 (S-LOG: a committed transaction enters the log as one
// complete block) and §7.4 (transaction labels occupy contiguous blocks).
func TestCommitLabels(t *testing.T) {
	var l model.Log
	steps := []struct {
		events  []model.Event
		ok      bool
		wantN   model.Coord
		wantTxn uint8
	}{
		{[]model.Event{ev(ka, 1), ev(kb, 2)}, true, 2, 1},
		{[]model.Event{ev(kc, 3)}, true, 3, 2},
		{nil, false, 3, 2}, // an empty transaction is refused
		{[]model.Event{{Key: model.NoKey}, ev(ka, bot), ev(kb, 1)}, true, 6, 3},
	}
	for i, s := range steps {
		if got := l.Commit(s.events...); got != s.ok {
			t.Fatalf("step %d: Commit = %v, want %v", i, got, s.ok)
		}
		if l.Len() != s.wantN || l.Txns() != s.wantTxn {
			t.Fatalf("step %d: Len %d Txns %d, want %d %d", i, l.Len(), l.Txns(), s.wantN, s.wantTxn)
		}
	}
	wantLabels := []uint8{1, 1, 2, 3, 3, 3}
	for p := model.Coord(1); p <= l.Len(); p++ {
		if got := l.At(p).Txn; got != wantLabels[p-1] {
			t.Errorf("At(%d).Txn = %d, want %d", p, got, wantLabels[p-1])
		}
	}
	// A label supplied by the caller is overwritten.
	if !l.Commit(model.Event{Key: ka, Img: 1, Txn: 9}) || l.At(7).Txn != 4 {
		t.Errorf("Commit kept the caller's label: %v", l.At(7))
	}
}

// Reference: §2.1 (S-LOG: a transaction is appended whole or not at all).
func TestCommitRefusedWhenFull(t *testing.T) {
	var l model.Log
	for i := 0; i < model.MaxLog-1; i++ {
		if !l.Commit(ev(ka, model.Value(i%3+1))) {
			t.Fatalf("commit %d refused below the bound", i)
		}
	}
	before := l
	if l.Commit(ev(kb, 1), ev(kb, 2)) {
		t.Fatal("a 2-event transaction was accepted with 1 slot left")
	}
	if l != before {
		t.Fatal("a refused Commit changed the log")
	}
	if !l.Commit(ev(kb, 1)) || l.Len() != model.MaxLog {
		t.Fatalf("the last slot was refused: Len %d", l.Len())
	}
	full := l
	if l.Commit(ev(kb, 2)) || l != full {
		t.Fatal("a full log accepted an event or changed")
	}
}

// Reference: §2.1 (σ_c is the per-key fold from the empty store over the first
// c events; events outside the scope are ignored).
func TestSigmaState(t *testing.T) {
	var l model.Log
	l.Commit(ev(ka, 1))
	l.Commit(ev(kb, 2), ev(ka, bot))
	l.Commit(model.Event{Key: model.NoKey})
	l.Commit(ev(kc, 3), ev(ka, 2))
	want := []model.Store{
		{},           // c=0
		{1},          // a=1
		{1, 2},       // b=2
		{bot, 2},     // a deleted
		{bot, 2},     // marker: no change
		{bot, 2, 3},  // c=3
		{2, 2, 3},    // a=2
		{2, 2, 3},    // past the end: the whole log
		{2, 2, 3, 0}, // ...however far past
	}
	for c, w := range want {
		c := model.Coord(c)
		if c == 8 {
			c = 30
		}
		if got := l.State(c); got != w {
			t.Errorf("State(%d) = %v, want %v", c, got, w)
		}
		for k := model.Key(0); k < model.MaxKeys; k++ {
			if got := l.Sigma(c, k); got != w[k] {
				t.Errorf("Sigma(%d, %v) = %v, want %v", c, k, got, w[k])
			}
		}
	}
}

// Reference: §2.3 (windows are half-open: an event at the low edge is
// excluded, an event at the high edge included; the off-by-one can occur at
// lo or at hi) and Def. 2.2.
func TestLastTouchesEdges(t *testing.T) {
	// Positions: 1:a=1 2:b=2 3:a=3 4:marker 5:a=⊥
	l := logOf(t, ev(ka, 1), ev(kb, 2), ev(ka, 3), model.Event{Key: model.NoKey}, ev(ka, bot))
	cases := []struct {
		name string
		k    model.Key
		w    model.Window
		img  model.Value
		at   model.Coord
		ok   bool
	}{
		{"event at lo is excluded", kb, model.Window{Lo: 2, Hi: 5}, bot, 0, false},
		{"event just above lo is included", kb, model.Window{Lo: 1, Hi: 5}, 2, 2, true},
		{"event at hi is included", ka, model.Window{Lo: 1, Hi: 3}, 3, 3, true},
		{"event just above hi is excluded", ka, model.Window{Lo: 3, Hi: 4}, bot, 0, false},
		{"point window is empty", ka, model.Window{Lo: 3, Hi: 3}, bot, 0, false},
		{"last of several wins", ka, model.Window{Lo: 0, Hi: 5}, bot, 5, true},
		{"last below hi", ka, model.Window{Lo: 0, Hi: 4}, 3, 3, true},
		{"window (0,1] holds position 1", ka, model.Window{Lo: 0, Hi: 1}, 1, 1, true},
		{"delete at hi is an event", ka, model.Window{Lo: 4, Hi: 5}, bot, 5, true},
		{"untouched key", kc, model.Window{Lo: 0, Hi: 5}, bot, 0, false},
		{"window past the end", kb, model.Window{Lo: 0, Hi: 20}, 2, 2, true},
	}
	for _, tc := range cases {
		img, at, ok := l.Last(tc.k, tc.w)
		if img != tc.img || at != tc.at || ok != tc.ok {
			t.Errorf("%s: Last(%v, %v) = (%v, %d, %v), want (%v, %d, %v)", tc.name, tc.k, tc.w, img, at, ok, tc.img, tc.at, tc.ok)
		}
		if got := l.Touches(tc.k, tc.w); got != tc.ok {
			t.Errorf("%s: Touches = %v, want %v", tc.name, got, tc.ok)
		}
	}
	// Window.Contains agrees with the same edges.
	w := model.Window{Lo: 2, Hi: 4}
	for p, want := range []bool{false, false, false, true, true, false} {
		if got := w.Contains(model.Coord(p)); got != want {
			t.Errorf("%v.Contains(%d) = %v, want %v", w, p, got, want)
		}
	}
	if w.String() != "(2, 4]" {
		t.Errorf("Window.String = %q", w.String())
	}
}

// Reference: §2.2 (a coordinate denotes a prefix of the committed history):
// positions past the end of the log hold no event, so nothing past the end
// reads as an event for key 0 (the zero Event).
func TestPastTheEnd(t *testing.T) {
	l := logOf(t, ev(ka, 1))
	if got := l.Sigma(5, ka); got != 1 {
		t.Errorf("Sigma(5, a) = %v, want 1", got)
	}
	if got := l.State(5); got != (model.Store{1}) {
		t.Errorf("State(5) = %v", got)
	}
	if img, at, ok := l.Last(ka, model.Window{Lo: 0, Hi: 5}); img != 1 || at != 1 || !ok {
		t.Errorf("Last(a, (0,5]) = %v %d %v", img, at, ok)
	}
	if l.Touches(ka, model.Window{Lo: 1, Hi: 5}) {
		t.Error("Touches(a, (1,5]) on a 1-event log")
	}
	if e := l.At(2); e.Key != model.NoKey {
		t.Errorf("At(2) = %+v, want no event", e)
	}
	if got := l.Executed(5); got != l.Executed(1) {
		t.Errorf("Executed(5) = %b, want %b", got, l.Executed(1))
	}
	// A unit bracketed past the log does not see a phantom delete of a.
	p := plan(1, 3, unit(keys(ka), 1, 3, model.Store{1}))
	if !model.ValidIn(&l, ka, 1, 1, 3) || model.ValidIn(&l, ka, bot, 1, 3) {
		t.Error("ValidIn saw an event past the end")
	}
	if got := p.Sink(&l, 3, ka); got != 1 {
		t.Errorf("Sink(3, a) = %v, want 1", got)
	}
	if s := model.WindowDiscard(&p, &l, 0, 3); !streamEqual(s, model.Stream{{Key: ka, Val: 1, Tag: 1}, {Key: ka, Val: 1, Tag: 3}}) {
		t.Errorf("WindowDiscard past the end = %v", s)
	}
}

// Reference: §7.4, Theorem 7 (transaction-complete executed-set windows are
// faithful) on a log with labels 1,1,2,3,3,3,4.
func TestTheorem7ExecutedSets(t *testing.T) {
	var l model.Log
	for _, txn := range [][]model.Event{
		{ev(ka, 1), ev(kb, 1)},
		{ev(kc, 1)},
		{ev(ka, 2), ev(kb, 2), ev(kc, 2)},
		{ev(ka, bot)},
	} {
		if !l.Commit(txn...) {
			t.Fatal("commit refused")
		}
	}
	wantBoundary := []bool{true, false, true, true, false, false, true, true} // c = 0..7
	var boundaries []model.Coord
	for c, want := range wantBoundary {
		if got := l.Boundary(model.Coord(c)); got != want {
			t.Errorf("Boundary(%d) = %v, want %v", c, got, want)
		}
		if want {
			boundaries = append(boundaries, model.Coord(c))
		}
	}
	wantG := []model.TxnSet{0, 1 << 1, 1 << 1, 1<<1 | 1<<2, 0b1110, 0b1110, 0b1110, 0b11110}
	for c, want := range wantG {
		if got := l.Executed(model.Coord(c)); got != want {
			t.Errorf("Executed(%d) = %b, want %b", c, got, want)
		}
	}
	// Every pair of boundaries, every position.
	pairs := 0
	for _, lo := range boundaries {
		for _, hi := range boundaries {
			if lo > hi {
				continue
			}
			pairs++
			w := model.Window{Lo: lo, Hi: hi}
			for p := model.Coord(1); p <= l.Len(); p++ {
				if got, want := l.InSampledWindow(p, l.Executed(lo), l.Executed(hi)), w.Contains(p); got != want {
					t.Errorf("p=%d, samples G(%d), G(%d): sampled %v, window %v says %v", p, lo, hi, got, w, want)
				}
			}
		}
	}
	if pairs != 15 { // 5 boundaries {0,2,3,6,7}: 5·6/2 pairs
		t.Errorf("%d boundary pairs, want 15", pairs)
	}
	// Non-boundary samples: the straddling transaction enters the window whole.
	nonBoundary := []struct {
		lo, hi model.Coord
		p      model.Coord
		got    bool
	}{
		{0, 4, 5, true},  // high sampled inside txn 3: position 5 looks in-window
		{0, 4, 6, true},  // ... and so does 6
		{1, 3, 2, false}, // low sampled inside txn 1: position 2 looks out-of-window
		{4, 7, 5, false}, // low inside txn 3: positions 5, 6 drop out
	}
	for _, tc := range nonBoundary {
		w := model.Window{Lo: tc.lo, Hi: tc.hi}
		got := l.InSampledWindow(tc.p, l.Executed(tc.lo), l.Executed(tc.hi))
		if got != tc.got || got == w.Contains(tc.p) {
			t.Errorf("non-boundary G(%d), G(%d) at p=%d: sampled %v (want %v), window %v says %v",
				tc.lo, tc.hi, tc.p, got, tc.got, w, w.Contains(tc.p))
		}
	}
}

// Reference: §2.1 (keys, ⊥) — the printed forms the failure messages use.
func TestStrings(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{ka.String(), "k0"},
		{model.NoKey.String(), "marker"},
		{bot.String(), "⊥"},
		{model.Value(9).String(), "9"},
		{model.Entry{Key: kb, Val: 2, Tag: 3}.String(), "k1=2@3"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	s := model.Range(1, 4)
	if s != keys(1, 2, 3) || !s.Has(2) || s.Has(0) || s.Without(2).Has(2) || s.Without(2) != keys(1, 3) {
		t.Errorf("Range(1,4) = %b", s)
	}
	for lo := model.Key(0); lo < 18; lo++ {
		for hi := model.Key(0); hi < 18; hi++ {
			var want model.KeySet // {lo..hi-1}, as many as a KeySet holds
			for k := lo; k < hi && k < 16; k++ {
				want = want.With(k)
			}
			if got := model.Range(lo, hi); got != want {
				t.Errorf("Range(%d, %d) = %b, want %b", lo, hi, got, want)
			}
		}
	}
}

// Keys yields a set's keys in order, only those below MaxKeys, and stops
// when asked to.
func TestKeySetKeys(t *testing.T) {
	var got []model.Key
	for k := range (model.KeySet(0b1_0000_0010_0101) | 1<<15).Keys() {
		got = append(got, k)
	}
	if want := []model.Key{0, 2, 5}; !slices.Equal(got, want) {
		t.Errorf("Keys = %v, want %v", got, want)
	}
	for k := range model.KeySet(0b110).Keys() {
		if k != 1 {
			t.Errorf("first key %v, want k1", k)
		}
		break
	}
	for range model.KeySet(0).Keys() {
		t.Error("the empty set yields a key")
	}
}
