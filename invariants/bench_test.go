package invariants

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// benchCapture is a state as the checks meet it on most explored states of a
// passing run: three keys, two closed chunks whose reads are valid, a log of
// six row events in four transactions, the consumer at the end with the sink
// equal to the source.
func benchCapture() model.Capture {
	var c model.Capture
	c.Log.Commit(model.Event{Key: 0, Img: 1})
	c.Log.Commit(model.Event{Key: 1, Img: 1}, model.Event{Key: 2, Img: 2})
	c.Log.Commit(model.Event{Key: 0, Img: 2})
	c.Log.Commit(model.Event{Key: 2, Img: 1}, model.Event{Key: 1, Img: model.Absent})
	c.Plan.Keys = 3
	var r0, r1 model.Store
	r0[0], r0[1] = c.Log.Sigma(1, 0), c.Log.Sigma(3, 1)
	r1[2] = c.Log.Sigma(3, 2)
	c.Plan.Add(model.Unit{Domain: model.Range(0, 2), Lo: 1, Hi: 4, Refresh: r0, Read: model.Range(0, 2)})
	c.Plan.Add(model.Unit{Domain: model.Range(2, 3), Lo: 3, Hi: 4, Refresh: r1, Read: model.Range(2, 3)})
	c.ReadAt[0], c.ReadAt[1], c.ReadAt[2] = 1, 3, 3
	c.Closed = 3
	for p := model.Coord(5); p <= c.Log.Len(); p++ {
		e := c.Log.At(p)
		c.Out.Apply(model.Entry{Key: e.Key, Val: e.Img, Tag: p})
	}
	for k := model.Key(0); k < 3; k++ {
		if c.Out.Tag[k] == 0 {
			c.Out.Apply(model.Entry{Key: k, Val: c.Log.Sigma(4, k), Tag: 4})
		}
	}
	c.Pos = c.Log.Len()
	return c
}

// BenchmarkChecks times each state check on benchCapture (they run on every
// explored state); each must hold there.
func BenchmarkChecks(b *testing.B) {
	c := benchCapture()
	l := &c.Log
	for _, tc := range []struct {
		name  string
		check func() string
	}{
		{"final-replay", func() string { return CheckFinalReplay(&c, 2) }},
		{"frontier-replay", func() string { return CheckFrontierReplay(&c, 2) }},
		{"closed-unit-cut", func() string { return CheckClosedUnitCut(&c) }},
		{"committed-only", func() string { return CheckCommittedOnly(&c) }},
		{"contract", func() string { return CheckContract(&c, 2) }},
		{"latest-high", func() string { return CheckTrajectory(&c, 2, c.Plan.LatestHigh()) }},
		{"membership", func() string { return CheckMembership(&c, l.Executed(1), l.Executed(4), 1, 4) }},
	} {
		if r := tc.check(); r != "" {
			b.Fatalf("%s: %s", tc.name, r)
		}
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				tc.check()
			}
		})
	}
}

// The replay checks report what comparing each key with Sigma reports, on
// seeded captures whose sink is σ at some position with a few keys changed.
func TestReplayChecksMatchDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 20000 {
		var c model.Capture
		nk := 1 + r.IntN(4)
		c.Plan.Keys = uint8(nk)
		for range r.IntN(8) {
			c.Log.Commit(model.Event{Key: model.Key(r.IntN(nk)), Img: model.Value(r.IntN(3))})
		}
		n := int(c.Log.Len())
		c.Pos = model.Coord(r.IntN(n + 1))
		c.Out.Val = c.Log.State(model.Coord(r.IntN(n + 1)))
		if r.IntN(2) == 0 {
			c.Out.Val[r.IntN(nk)] = model.Value(r.IntN(3))
		}
		for range 1 + r.IntN(3) {
			c.Plan.Add(model.Unit{Domain: model.KeySet(r.IntN(1 << nk)), Hi: model.Coord(r.IntN(n + 2))})
		}
		c.Closed = uint8(r.IntN(1 << c.Plan.N))
		wantFrontier, wantCut := "", ""
		if c.AllClosed(int(c.Plan.N)) && c.Pos >= c.Plan.LatestHigh() {
			for k := model.Key(0); k < model.Key(nk); k++ {
				if want := c.Log.Sigma(c.Pos, k); c.Out.Val[k] != want {
					wantFrontier = fmt.Sprintf("key %v: replayed %v, expected σ_%d = %v", k, c.Out.Val[k], c.Pos, want)
					break
				}
			}
		}
	units:
		for i := range int(c.Plan.N) {
			if !c.UnitClosed(i) {
				continue
			}
			u := &c.Plan.Units[i]
			g := max(c.Pos, u.Hi)
			for k := range u.Domain.Keys() {
				if want := c.Log.Sigma(g, k); c.Out.Val[k] != want {
					wantCut = fmt.Sprintf("key %v of closed unit %d: replayed %v, expected σ_%d = %v", k, i+1, c.Out.Val[k], g, want)
					break units
				}
			}
		}
		if got := CheckFrontierReplay(&c, int(c.Plan.N)); got != wantFrontier {
			t.Fatalf("frontier-replay: %q, want %q", got, wantFrontier)
		}
		if got := CheckClosedUnitCut(&c); got != wantCut {
			t.Fatalf("closed-unit-cut: %q, want %q", got, wantCut)
		}
	}
}
