package model_test

import (
	"math/rand/v2"
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// randomCase draws a log of up to 6 events over 3 keys (markers among
// them) and a plan of up to two units, valid or not: brackets anywhere in
// 0..len+1, partial reads, refreshes from {⊥, 1, 2}, domains that overlap
// or leave keys out.
func randomCase(r *rand.Rand) (model.Log, model.Plan) {
	var l model.Log
	for range r.IntN(7) {
		e := ev(model.Key(r.IntN(3)), model.Value(r.IntN(3)))
		if r.IntN(5) == 0 {
			e = model.Event{Key: model.NoKey}
		}
		l.Commit(e)
	}
	p := model.Plan{Keys: 3}
	for range r.IntN(3) {
		u := model.Unit{Domain: model.KeySet(r.IntN(8)), Read: model.KeySet(r.IntN(8)),
			Lo: model.Coord(r.IntN(int(l.N) + 2)), Hi: model.Coord(r.IntN(int(l.N) + 2))}
		for k := range 3 {
			u.Refresh[k] = model.Value(r.IntN(3))
		}
		p.Add(u)
	}
	return l, p
}

// TestWalksAreTheirDefinitions holds Trajectory and CheckO2, which walk
// the log once, to their definitions: sink_g(k) = σ_g(k) at every g and k
// in turn, and ValidIn for every unit and key read.
func TestWalksAreTheirDefinitions(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fails := 0
	for range 20000 {
		l, p := randomCase(r)
		for from := model.Coord(0); from <= l.Len()+1; from++ {
			for to := model.Coord(0); to <= l.Len()+1; to++ {
				wg, wk, wok := model.Coord(0), model.NoKey, true
			search:
				for g := from; g <= to; g++ {
					for k := model.Key(0); k < 3; k++ {
						if p.Sink(&l, g, k) != l.Sigma(g, k) {
							wg, wk, wok = g, k, false
							break search
						}
					}
				}
				if g, k, ok := p.Trajectory(&l, from, to); g != wg || k != wk || ok != wok {
					t.Fatalf("log %v, plan %+v: Trajectory(%d, %d) = (%d, %v, %v), want (%d, %v, %v)", l.Ev[:l.N], p.Units[:p.N], from, to, g, k, ok, wg, wk, wok)
				}
				if !wok {
					fails++
				}
			}
		}
		want := -1 // the unit of the first failing key, in order
		var wantKey model.Key
	units:
		for i := range int(p.N) {
			u := &p.Units[i]
			for k := range (u.Domain & u.Read).Keys() {
				if !model.ValidIn(&l, k, u.Refresh[k], u.Lo, u.Hi) {
					want, wantKey = i, k
					break units
				}
			}
		}
		err := p.CheckO2(&l)
		if want < 0 {
			if err != nil {
				t.Fatalf("log %v, plan %+v: CheckO2 = %v, want nil", l.Ev[:l.N], p.Units[:p.N], err)
			}
			continue
		}
		if f := failure(t, err); f.Unit != want || f.Key != wantKey {
			t.Fatalf("log %v, plan %+v: CheckO2 fails on unit %d key %v, want unit %d key %v", l.Ev[:l.N], p.Units[:p.N], f.Unit, f.Key, want, wantKey)
		}
	}
	if fails == 0 {
		t.Fatal("no trajectory failed: the cases never test a failure")
	}
}

// TestRegressed holds Replayed.Regressed, which compares a word at a time,
// to its definition on random tags, small and large.
func TestRegressed(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	found := 0
	for range 200000 {
		var a, b model.Replayed
		limit := 40
		if r.IntN(4) == 0 {
			limit = 256
		}
		for k := range model.MaxKeys {
			a.Tag[k] = model.Coord(r.IntN(limit))
			b.Tag[k] = a.Tag[k]
			if r.IntN(3) == 0 {
				b.Tag[k] = model.Coord(r.IntN(limit))
			}
		}
		want := model.NoKey
		for k := range model.MaxKeys {
			if b.Tag[k] < a.Tag[k] {
				want = model.Key(k)
				break
			}
		}
		if got := b.Regressed(&a); got != want {
			t.Fatalf("%v after %v: Regressed = %v, want %v", b.Tag, a.Tag, got, want)
		}
		if want != model.NoKey {
			found++
		}
	}
	if found == 0 {
		t.Fatal("no regression drawn")
	}
}
