package model_test

import (
	"math/rand/v2"
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// randomPlanCase is a seeded log over up to four keys (markers and multi-row
// transactions included) and a plan over it whose units may overlap, leave
// keys unowned, have brackets past the log or reads that are not σ at any
// point: the checks must agree with their definitions on all of it.
func randomPlanCase(r *rand.Rand) (model.Log, model.Plan) {
	var l model.Log
	nk := 1 + r.IntN(4)
	for k := range nk {
		l.Init[k] = model.Value(r.IntN(3))
	}
	for range r.IntN(10) {
		var t []model.Event
		for range 1 + r.IntN(3) {
			k := model.Key(r.IntN(nk + 1))
			if int(k) == nk {
				k = model.NoKey
			}
			t = append(t, model.Event{Key: k, Img: model.Value(r.IntN(3))})
		}
		l.Commit(t...)
	}
	p := model.Plan{Keys: uint8(nk)}
	for range r.IntN(4) {
		u := model.Unit{Domain: model.KeySet(r.IntN(1 << nk)), Read: model.KeySet(r.IntN(1 << nk))}
		u.Lo, u.Hi = model.Coord(r.IntN(int(l.Len())+2)), model.Coord(r.IntN(int(l.Len())+2))
		for k := range nk {
			u.Refresh[k] = l.Sigma(model.Coord(r.IntN(int(l.Len())+1)), model.Key(k))
			if r.IntN(8) == 0 {
				u.Refresh[k] = model.Value(r.IntN(3))
			}
		}
		p.Add(u)
	}
	return l, p
}

// Trajectory finds the first g in [from, to] and the first key where
// sink_g and σ_g differ, exactly as comparing Sink with Sigma g by g does.
func TestTrajectoryMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		l, p := randomPlanCase(r)
		from, to := model.Coord(r.IntN(int(l.Len())+2)), model.Coord(r.IntN(int(l.Len())+2))
		wantG, wantK, wantOK := model.Coord(0), model.NoKey, true
	search:
		for g := from; g <= to; g++ {
			for k := model.Key(0); k < model.Key(p.Keys); k++ {
				if p.Sink(&l, g, k) != l.Sigma(g, k) {
					wantG, wantK, wantOK = g, k, false
					break search
				}
			}
		}
		if g, k, ok := p.Trajectory(&l, from, to); g != wantG || k != wantK || ok != wantOK {
			t.Fatalf("log %v plan %+v: Trajectory(%d, %d) = (%d, %v, %v), want (%d, %v, %v)", l, p, from, to, g, k, ok, wantG, wantK, wantOK)
		}
	}
}

// CheckO1 holds exactly when the domains partition the scope.
func TestCheckO1IsPartition(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		_, p := randomPlanCase(r)
		var seen model.KeySet
		partition := true
		for i := range int(p.N) {
			d := p.Units[i].Domain
			partition = partition && d&seen == 0 && d&^p.Scope() == 0
			seen |= d
		}
		partition = partition && seen == p.Scope()
		if err := p.CheckO1(); (err == nil) != partition {
			t.Fatalf("plan %+v: CheckO1 = %v, want a partition: %v", p, err, partition)
		}
	}
}
