package invariants

import (
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// capture builds a one-unit capture over keys {a=0, b=1}: log, unit, reads,
// consumer position and emitted entries.
func capture(events []model.Event, u model.Unit, readAt [2]model.Coord, pos model.Coord, out []model.Entry, closed bool) model.Capture {
	var c model.Capture
	for _, e := range events {
		c.Log.Commit(e)
	}
	c.Plan.Keys = 2
	c.Plan.Add(u)
	c.ReadAt[0], c.ReadAt[1] = readAt[0], readAt[1]
	c.Pos = pos
	for _, e := range out {
		c.Out.Apply(e)
	}
	if closed {
		c.Closed = 1
	}
	return c
}

func unit(lo, hi model.Coord, a, b model.Value) model.Unit {
	var r model.Store
	r[0], r[1] = a, b
	return model.Unit{Domain: model.Range(0, 2), Lo: lo, Hi: hi, Refresh: r, Read: model.Range(0, 2)}
}

// Reference: Prop 1 (§4.3), Thm 1, Lemma 4.3, Prop 3 (§6.3).
func TestChecks(t *testing.T) {
	a1, b2 := model.Event{Key: 0, Img: 1}, model.Event{Key: 1, Img: 2}
	prop1 := capture([]model.Event{a1, b2}, unit(0, 2, model.Absent, 2), [2]model.Coord{0, 2}, 2,
		[]model.Entry{{Key: 0, Val: 1, Tag: 1}, {Key: 1, Val: 2, Tag: 2}}, true)
	stale := capture([]model.Event{a1, b2}, unit(0, 2, model.Absent, 2), [2]model.Coord{0, 2}, 2,
		[]model.Entry{{Key: 0, Val: 1, Tag: 1}, {Key: 1, Val: 2, Tag: 2}, {Key: 0, Val: model.Absent, Tag: 2}}, true) // a wrongly re-emitted as read
	open := stale
	open.Closed = 0
	// §7.7: a whole-server log's row on k2, outside the scope {k0, k1},
	// reaches the sink; σ restricted to the scope is otherwise replayed.
	c1 := model.Event{Key: 2, Img: 1}
	outside := capture([]model.Event{a1, b2, c1}, unit(0, 2, model.Absent, 2), [2]model.Coord{0, 2}, 3,
		[]model.Entry{{Key: 0, Val: 1, Tag: 1}, {Key: 1, Val: 2, Tag: 2}, {Key: 2, Val: 1, Tag: 3}}, true)
	outsideDelete := capture([]model.Event{a1, b2, {Key: 2, Img: model.Absent}}, unit(0, 2, model.Absent, 2), [2]model.Coord{0, 2}, 3,
		[]model.Entry{{Key: 0, Val: 1, Tag: 1}, {Key: 1, Val: 2, Tag: 2}, {Key: 2, Val: model.Absent, Tag: 3}}, true)
	tests := []struct {
		name  string
		check func() string
		fails string // "" = holds; else a fragment of the reason
	}{
		{"frontier replay holds on Prop 1", func() string { return CheckFrontierReplay(&prop1, 1) }, ""},
		{"closed-unit cut holds on Prop 1", func() string { return CheckClosedUnitCut(&prop1) }, ""},
		{"contract holds on Prop 1 (O2 per key)", func() string { return CheckContract(&prop1, 1) }, ""},
		{"single read point fails on Prop 1", func() string { return CheckSingleReadPoint(&prop1) }, "no single coordinate in [0, 2]"},
		{"latest-high trajectory holds on Prop 1", func() string { return CheckTrajectory(&prop1, 1, 2) }, ""},
		{"trajectory from 0 fails on Prop 1", func() string { return CheckTrajectory(&prop1, 1, 0) }, "at g = 0 key k1 has sink 2"},
		{"frontier replay catches a stale key", func() string { return CheckFrontierReplay(&stale, 1) }, "key k0: replayed ⊥, expected σ_2 = 1"},
		{"frontier replay waits for every unit", func() string { return CheckFrontierReplay(&open, 1) }, ""},
		{"frontier replay waits for all units of the run", func() string { return CheckFrontierReplay(&stale, 2) }, ""},
		{"closed-unit cut catches it too", func() string { return CheckClosedUnitCut(&stale) }, "key k0 of closed unit 1"},
		{"closed-unit cut ignores open units", func() string { return CheckClosedUnitCut(&open) }, ""},
		{"committed-only holds", func() string { return CheckCommittedOnly(&prop1) }, ""},
		{"frontier replay: a sink entry outside the scope", func() string { return CheckFrontierReplay(&outside, 1) }, "key k2 is outside the scope"},
		{"final replay: a sink entry outside the scope", func() string { return CheckFinalReplay(&outside, 1) }, "key k2 is outside the scope"},
		{"final replay: a delete outside the scope is an entry too", func() string { return CheckFinalReplay(&outsideDelete, 1) }, "(⊥ at 3)"},
	}
	for _, tt := range tests {
		got := tt.check()
		if tt.fails == "" && got != "" || tt.fails != "" && !strings.Contains(got, tt.fails) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.fails)
		}
	}
}

// Reference: O2 (§3.3), S-LOG (§2.1), Thm 3, Thm 7.
func TestChecksFailing(t *testing.T) {
	a1, a2 := model.Event{Key: 0, Img: 1}, model.Event{Key: 0, Img: 2}
	// a read as 2 in bracket [0, 1]: σ(a) is ⊥ or 1 there, never 2.
	bad := capture([]model.Event{a1, a2}, unit(0, 1, 2, model.Absent), [2]model.Coord{2, 0}, 2, nil, true)
	if got := CheckContract(&bad, 1); !strings.Contains(got, "O2 unit 1 key k0") {
		t.Errorf("contract: %q", got)
	}
	partial := bad
	partial.Partial = true
	if got := CheckCommittedOnly(&partial); !strings.Contains(got, "visible in part") {
		t.Errorf("committed-only: %q", got)
	}
	var s, tt model.Capture
	s.Out.Apply(model.Entry{Key: 1, Val: 1, Tag: 4})
	tt = s
	tt.Out.Apply(model.Entry{Key: 1, Val: 2, Tag: 3})
	if got := CheckMonotone(&s, &tt); !strings.Contains(got, "tagged 3 after one tagged 4") {
		t.Errorf("monotone: %q", got)
	}
	if got := CheckMonotone(&tt, &tt); got != "" {
		t.Errorf("monotone on a non-step: %q", got)
	}
	// Theorem 7 on labels 1,1,2: samples at boundaries 0 and 2 decide (0, 2];
	// an interior sample G(1) = {1} wrongly excludes position 2.
	var m model.Capture
	m.Log.Commit(model.Event{Key: 0, Img: 1}, model.Event{Key: 1, Img: 1})
	m.Log.Commit(model.Event{Key: 0, Img: 2})
	if got := CheckMembership(&m, m.Log.Executed(0), m.Log.Executed(2), 0, 2); got != "" {
		t.Errorf("membership at boundaries: %q", got)
	}
	if got := CheckMembership(&m, m.Log.Executed(0), m.Log.Executed(1), 0, 1); !strings.Contains(got, "position 2") {
		t.Errorf("membership at an interior sample: %q", got)
	}
}
