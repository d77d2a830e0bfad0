package model_test

import (
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// Reference: §6.3, Proposition 3 (withholding is necessary).
func TestProposition3(t *testing.T) {
	// L = e1 e2, e1: a=5 (insert), e2: a=⊥ (delete); one unit over {a},
	// bracket (c1, c2), f = c2, R(a) = 5; consumption from s0 = c0.
	l := logOf(t, ev(ka, 5), ev(ka, bot))
	p := plan(1, 2, unit(keys(ka), 1, 2, model.Store{ka: 5}))
	if err := p.Check(&l); err != nil {
		t.Fatalf("contract: %v", err)
	}
	if m := p.Units[0].Merged(&l, ka); m != bot {
		t.Errorf("M(a) = %v, want ⊥", m)
	}
	cases := []struct {
		name   string
		emit   func(*model.Plan, *model.Log, model.Coord, model.Coord) model.Stream
		stream model.Stream
		replay model.Value
	}{
		{"RangeMerge (lawful): empty", model.RangeMerge, nil, bot},
		{"WindowNarrowed: the pre-bracket insert leaks", model.WindowNarrowed, model.Stream{{Key: ka, Val: 5, Tag: 1}}, 5},
		{"WindowDiscard: both events in place", model.WindowDiscard, model.Stream{{Key: ka, Val: 5, Tag: 1}, {Key: ka, Val: bot, Tag: 2}}, bot},
	}
	for _, tc := range cases {
		s := tc.emit(&p, &l, 0, 2)
		if !streamEqual(s, tc.stream) {
			t.Errorf("%s: stream %v, want %v", tc.name, s, tc.stream)
		}
		if got := s.Replay()[ka]; got != tc.replay {
			t.Errorf("%s: replays a to %v, want %v", tc.name, got, tc.replay)
		}
	}
	if sigma := l.Sigma(2, ka); sigma != bot || p.Sink(&l, 2, ka) != bot {
		t.Errorf("σ_c2(a) = %v, sink_f(a) = %v, want ⊥", sigma, p.Sink(&l, 2, ka))
	}
}

// Reference: §7.7, Example 7.1 (the degradation bracket at work) and
// Theorem 8; the point member with an untrusted coordinate (O4).
func TestExample71(t *testing.T) {
	// e1: a:=4, e2: a:=6. The backup's view is v = c1 (a = 4), its recorded
	// bounds b = c0 and e = c2, frontier f = c2.
	l := logOf(t, ev(ka, 4), ev(ka, 6))
	const b, v, e, f = 0, 1, 2, 2
	restored := model.Store{ka: l.Sigma(v, ka)}
	if restored[ka] != 4 {
		t.Fatalf("the restore at v holds a = %v", restored[ka])
	}
	widened := plan(1, f, unit(keys(ka), b, e, restored))
	if err := widened.Check(&l); err != nil {
		t.Fatalf("widened bracket (b, e]: %v", err)
	}
	// Theorem 8(2): window-discard from s0 = b. The buffered 4 is discarded
	// (a has an event in (b, e]), the update to 6 flows through.
	s := model.WindowDiscard(&widened, &l, b, f)
	want := model.Stream{{Key: ka, Val: 4, Tag: 1}, {Key: ka, Val: 6, Tag: 2}}
	if !streamEqual(s, want) {
		t.Errorf("window-discard stream %v, want %v", s, want)
	}
	if widened.Units[0].Survivors(&l) != 0 {
		t.Errorf("survivors %b, want none: the restored row is discarded", widened.Units[0].Survivors(&l))
	}
	if got := s.Replay()[ka]; got != 6 || got != l.Sigma(f, ka) {
		t.Errorf("replay a = %v, want 6 = σ_f(a)", got)
	}
	if ok, at := s.Monotone(); !ok {
		t.Errorf("not monotone at %d", at)
	}
	// Theorem 8(1): T2 trajectory from e, and no shared witness beyond v.
	if g, k, ok := widened.Trajectory(&l, e, f); !ok {
		t.Errorf("Trajectory(e, f) fails at %d on %v", g, k)
	}
	if got := widened.SharedWitnesses(&l); got != coords(v) {
		t.Errorf("latent witnesses %b, want {v}", got)
	}

	// A false trusted recovery point: the read reflects v = c1, but the
	// point bracket is placed elsewhere.
	points := []struct {
		name   string
		r      model.Coord
		replay model.Value // PointSplice from s0 = 0
		stream model.Stream
		trajG  model.Coord // where Trajectory(r, f) first fails
	}{
		// r = 0 < v: later events override the copy, so the frontier replay
		// happens to be right, but the T3 claim from r fails at r itself.
		{"r=0 before the view", 0, 6, model.Stream{{Key: ka, Val: 4, Tag: 0}, {Key: ka, Val: 4, Tag: 1}, {Key: ka, Val: 6, Tag: 2}}, 0},
		// r = 2 > v: the update to 6 lies before the splice and the stale 4
		// survives and is spliced after it.
		{"r=2 after the view", 2, 4, model.Stream{{Key: ka, Val: 4, Tag: 1}, {Key: ka, Val: 6, Tag: 2}, {Key: ka, Val: 4, Tag: 2}}, 2},
	}
	for _, tc := range points {
		pt := plan(1, f, unit(keys(ka), tc.r, tc.r, restored))
		err := pt.Check(&l)
		if err == nil || failure(t, err).Obligation != "O2" {
			t.Errorf("%s: Check = %v, want an O2 failure", tc.name, err)
		}
		s, ok := model.PointSplice(&pt, &l, 0, f)
		if !ok {
			t.Fatalf("%s: point bracket refused", tc.name)
		}
		if !streamEqual(s, tc.stream) {
			t.Errorf("%s: stream %v, want %v", tc.name, s, tc.stream)
		}
		if got := s.Replay()[ka]; got != tc.replay || got != pt.Sink(&l, f, ka) {
			t.Errorf("%s: replay a = %v, sink_f = %v, want %v", tc.name, got, pt.Sink(&l, f, ka), tc.replay)
		}
		if g, k, ok := pt.Trajectory(&l, tc.r, f); ok || g != tc.trajG || k != ka {
			t.Errorf("%s: Trajectory(r, f) = (%d, %v, %v), want failure at %d on a", tc.name, g, k, ok, tc.trajG)
		}
	}
}

// Reference: §6.4 (point-splice is the degenerate case of window-discard).
func TestPointSpliceRefusesWideBracket(t *testing.T) {
	l := logOf(t, ev(ka, 1))
	p := plan(2, 1, unit(keys(ka), 1, 1, model.Store{ka: 1}), unit(keys(kb), 0, 1, model.Store{}))
	if s, ok := model.PointSplice(&p, &l, 0, 1); ok || s != nil {
		t.Errorf("PointSplice with a non-point unit = %v, %v", s, ok)
	}
	p.Units[1].Lo = 1
	s, ok := model.PointSplice(&p, &l, 0, 1)
	if !ok || !streamEqual(s, model.WindowDiscard(&p, &l, 0, 1)) {
		t.Errorf("PointSplice = %v, %v; want the window-discard stream", s, ok)
	}
}

// Reference: §6.2, Definition 6.2 and Lemma 6.1 (per-key shape of the discard
// emission: pre-close events, the survivor at the close tagged hi, then
// post-close events), and §6.3, Lemma 6.3 (the gated shape).
func TestEmissionShapes(t *testing.T) {
	// 1:a=1 2:b=1 3:marker 4:a=2 5:b=⊥ 6:a=3
	l := logOf(t, ev(ka, 1), ev(kb, 1), model.Event{Key: model.NoKey}, ev(ka, 2), ev(kb, bot), ev(ka, 3))
	// Unit 0: {a}, (c1, c4], R(a) = 1 read at c1. Unit 1: {b, c}, (c2, c3],
	// R(b) = 1, R(c) = ⊥.
	p := plan(3, 6,
		unit(keys(ka), 1, 4, model.Store{ka: 1}),
		unit(keys(kb, kc), 2, 3, model.Store{kb: 1}))
	if err := p.Check(&l); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		s    model.Stream
		want model.Stream
	}{
		{"WindowDiscard from c0", model.WindowDiscard(&p, &l, 0, 6), model.Stream{
			{Key: ka, Val: 1, Tag: 1}, {Key: kb, Val: 1, Tag: 2},
			{Key: kb, Val: 1, Tag: 3}, // unit 1 closes before position 4: b survives
			{Key: ka, Val: 2, Tag: 4}, // unit 0 closes before 5: a was touched, no survivor
			{Key: kb, Val: bot, Tag: 5}, {Key: ka, Val: 3, Tag: 6},
		}},
		{"WindowDiscard from c1", model.WindowDiscard(&p, &l, 1, 6), model.Stream{
			{Key: kb, Val: 1, Tag: 2}, {Key: kb, Val: 1, Tag: 3},
			{Key: ka, Val: 2, Tag: 4}, {Key: kb, Val: bot, Tag: 5}, {Key: ka, Val: 3, Tag: 6},
		}},
		{"WindowDiscard to c4: unit 0 closes at the end of the pass, a touched", model.WindowDiscard(&p, &l, 0, 4), model.Stream{
			{Key: ka, Val: 1, Tag: 1}, {Key: kb, Val: 1, Tag: 2}, {Key: kb, Val: 1, Tag: 3}, {Key: ka, Val: 2, Tag: 4},
		}},
		{"RangeMerge from c3", model.RangeMerge(&p, &l, 3, 6), model.Stream{
			{Key: kb, Val: 1, Tag: 3}, // M(b) = R(b), no event in (c2, c3]
			{Key: ka, Val: 2, Tag: 4}, // M(a) = the event at c4
			{Key: kb, Val: bot, Tag: 5}, {Key: ka, Val: 3, Tag: 6},
		}},
		{"RangeMerge from c0 withholds everything up to each high edge", model.RangeMerge(&p, &l, 0, 6), model.Stream{
			{Key: kb, Val: 1, Tag: 3}, {Key: ka, Val: 2, Tag: 4},
			{Key: kb, Val: bot, Tag: 5}, {Key: ka, Val: 3, Tag: 6},
		}},
		{"WindowNarrowed from c0 leaks pre-bracket events", model.WindowNarrowed(&p, &l, 0, 6), model.Stream{
			{Key: ka, Val: 1, Tag: 1}, {Key: kb, Val: 1, Tag: 2},
			{Key: kb, Val: 1, Tag: 3}, {Key: ka, Val: 2, Tag: 4},
			{Key: kb, Val: bot, Tag: 5}, {Key: ka, Val: 3, Tag: 6},
		}},
	}
	for _, tc := range cases {
		if !streamEqual(tc.s, tc.want) {
			t.Errorf("%s:\n  got  %v\n  want %v", tc.name, tc.s, tc.want)
		}
	}
	if got := p.Units[1].Survivors(&l); got != keys(kb) {
		t.Errorf("unit 1 survivors %b, want {b}", got)
	}
}

// Reference: §6.2, Theorem 3 and §6.3, Theorem 5 (per-key tags are
// non-decreasing): Replayed.Apply and Stream.Monotone.
func TestReplayedApply(t *testing.T) {
	steps := []struct {
		e        model.Entry
		monotone bool
		val      model.Value
		tag      model.Coord
	}{
		{model.Entry{Key: ka, Val: 1, Tag: 2}, true, 1, 2},
		{model.Entry{Key: ka, Val: 2, Tag: 2}, true, 2, 2}, // equal tag is monotone
		{model.Entry{Key: kb, Val: 5, Tag: 0}, true, 5, 0}, // another key is independent
		{model.Entry{Key: ka, Val: bot, Tag: 4}, true, bot, 4},
		{model.Entry{Key: ka, Val: 3, Tag: 3}, false, 3, 3}, // goes back: still folded in
		{model.Entry{Key: ka, Val: 4, Tag: 3}, true, 4, 3},  // compared with the last tag only
	}
	var r model.Replayed
	for i, s := range steps {
		if got := r.Apply(s.e); got != s.monotone {
			t.Errorf("step %d: Apply(%v) = %v, want %v", i, s.e, got, s.monotone)
		}
		if r.Val[s.e.Key] != s.val || r.Tag[s.e.Key] != s.tag {
			t.Errorf("step %d: key %v = %v@%d, want %v@%d", i, s.e.Key, r.Val[s.e.Key], r.Tag[s.e.Key], s.val, s.tag)
		}
	}
	for _, tc := range []struct {
		s  model.Stream
		ok bool
		at int
	}{
		{nil, true, -1},
		{model.Stream{{Key: ka, Val: 1, Tag: 3}, {Key: kb, Val: 1, Tag: 1}, {Key: ka, Val: 2, Tag: 3}}, true, -1},
		{model.Stream{{Key: ka, Val: 1, Tag: 3}, {Key: kb, Val: 1, Tag: 4}, {Key: ka, Val: 2, Tag: 2}, {Key: kb, Val: 2, Tag: 1}}, false, 2},
	} {
		if ok, at := tc.s.Monotone(); ok != tc.ok || at != tc.at {
			t.Errorf("%v.Monotone() = %v, %d; want %v, %d", tc.s, ok, at, tc.ok, tc.at)
		}
	}
	// Replay: the last entry decides, a key with no entry is absent (Def. 6.1).
	s := model.Stream{{Key: ka, Val: 1, Tag: 1}, {Key: kb, Val: 2, Tag: 1}, {Key: ka, Val: bot, Tag: 2}, {Key: kc, Val: 3, Tag: 2}}
	if got := s.Replay(); got != (model.Store{bot, 2, 3}) {
		t.Errorf("Replay = %v", got)
	}
}
