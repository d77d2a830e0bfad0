package model_test

import (
	"fmt"

	"github.com/cutcheck/cutcheck/model"
)

// Reference: §4.2, Example 4.1 — a stale read evicted, a true absence kept,
// a read superseded after the bracket.
func Example() {
	const a, b, c = model.Key(0), model.Key(1), model.Key(2)
	name := map[model.Key]string{a: "a", b: "b", c: "c"}

	// L = e1 e2 e3: a=1, a=2, c=9, one transaction each.
	var l model.Log
	l.Commit(model.Event{Key: a, Img: 1})
	l.Commit(model.Event{Key: a, Img: 2})
	l.Commit(model.Event{Key: c, Img: 9})

	// One unit over {a, b, c}, bracket (c1, c2), frontier c3,
	// refresh R(a) = 1, R(b) = ⊥, R(c) = ⊥.
	dom := model.Range(a, c+1)
	p := model.Plan{Keys: 3, Frontier: 3}
	p.Add(model.Unit{Domain: dom, Lo: 1, Hi: 2, Refresh: model.Store{a: 1}, Read: dom})

	fmt.Println("contract:", p.Check(&l))
	for _, k := range []model.Key{a, b, c} {
		fmt.Printf("%s: R = %v, sink_f = %v, σ_f = %v\n", name[k], p.Units[0].Refresh[k], p.Sink(&l, 3, k), l.Sigma(3, k))
	}
	_, _, ok := p.Trajectory(&l, p.LatestHigh(), 3)
	fmt.Printf("sink_g = σ_g for g from the latest high c%d to c3: %v\n", p.LatestHigh(), ok)
	s := model.WindowDiscard(&p, &l, 0, 3)
	r := s.Replay()
	fmt.Println("window-discard:", s, "replays to", r[:3])
	// Output:
	// contract: <nil>
	// a: R = 1, sink_f = 2, σ_f = 2
	// b: R = ⊥, sink_f = ⊥, σ_f = ⊥
	// c: R = ⊥, sink_f = 9, σ_f = 9
	// sink_g = σ_g for g from the latest high c2 to c3: true
	// window-discard: [k0=1@1 k0=2@2 k2=9@3] replays to [2 ⊥ 9]
}
