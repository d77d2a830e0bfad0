package explore

import (
	"slices"
	"testing"
)

// constrained adds optional constraints (nil = none) to a model.
type constrained[S, A any] struct {
	Model[S, A]
	state  func(s S) bool
	action func(s S, a A, t S) bool
	props  []Property[S, A]
}

func (c constrained[S, A]) StateConstraint(s *S) bool {
	return c.state == nil || c.state(*s)
}

func (c constrained[S, A]) ActionConstraint(s *S, a A, t *S) bool {
	return c.action == nil || c.action(*s, a, *t)
}

func (c constrained[S, A]) Done(s *S) bool {
	d, ok := c.Model.(Doner[S])
	return ok && d.Done(s)
}

func (c constrained[S, A]) Properties() []Property[S, A] {
	return append(c.Model.Properties(), c.props...)
}

// sumBelow4 bounds two counters 0..4 by c0+c1 ≤ 3.
func sumBelow4(s uint64) bool { return counters{}.get(s, 0)+counters{}.get(s, 1) <= 3 }

// Two counters 0..4 under the state constraint c0+c1 ≤ 3. The states kept
// are the 1+2+3+4 = 10 with c0+c1 ≤ 3, at depths 0..3 (level 3 has 4
// states, the peak). Each has c0, c1 ≤ 3, so both increments are enabled:
// 10·2 = 20 steps, of which the 2·4 = 8 from level 3 reach the 5 states with
// c0+c1 = 4, generated and counted but not kept. Those steps make the
// states of level 3 no deadlock (as in TLC). TLC: 1 + 20 = 21 generated,
// 10 distinct, depth 4.
func TestStateConstraint(t *testing.T) {
	m := constrained[uint64, int]{Model: counters{k: 2, n: 5}, state: sumBelow4}
	for _, w := range []int{1, 2} {
		r := run(t, Model[uint64, int](m), Options{Workers: w})
		mustPass(t, r)
		checkStats(t, r.Stats, 20, 10, 3, 4)
		if r.Coverage[0].Count != 10 || r.Coverage[1].Count != 10 {
			t.Fatalf("coverage %v, want 10 and 10", r.Coverage)
		}
	}
}

// An Always property is checked on states outside the constraint: "sum-not-4"
// fails first on (4,0), reached from the first state of level 3, (3,0), by
// inc c0 (levels: (0,0) | (1,0) (0,1) | (2,0) (1,1) (0,2) | (3,0) (2,1) (1,2)
// (0,3)). The whole expansion of level 3 is counted: 20 steps, 10 states.
func TestConstraintViolation(t *testing.T) {
	m := constrained[uint64, int]{Model: counters{k: 2, n: 5}, state: sumBelow4,
		props: []Property[uint64, int]{{Name: "sum-not-4", Kind: Always, Check: func(s *uint64) string {
			if !sumBelow4(*s) {
				return "sum is 4"
			}
			return ""
		}}}}
	for _, w := range []int{1, 2} {
		r := run(t, Model[uint64, int](m), Options{Workers: w})
		mustViolate(t, r, "sum-not-4", []uint64{0, 1, 2, 3, 4})
		checkStats(t, r.Stats, 20, 10, 4, 4)
		if want := []int{0, 0, 0, 0, 0}; !slices.Equal(r.Violation.Path, want) {
			t.Fatalf("path %v, want %v", r.Violation.Path, want)
		}
	}
}

// Two counters 0..2 where c1 may be incremented only once c0 > 0 (an action
// constraint). Kept: (0,0) and the 2·3 states with c0 ≥ 1, 7 in all, over
// levels (0,0) | (1,0) | (2,0) (1,1) | (2,1) (1,2) | (2,2). Steps: 2 from
// (0,0) (one to (0,1), not kept), 2+2+1 from c0 = 1 and 1+1+0 from c0 = 2:
// 9. Without the constraint: 9 states and 2·3·2 = 12 steps.
func TestActionConstraint(t *testing.T) {
	base := counters{k: 2, n: 3}
	m := constrained[uint64, int]{Model: base, action: func(s uint64, a int, _ uint64) bool {
		return a != 1 || base.get(s, 0) > 0
	}}
	for _, w := range []int{1, 2} {
		mustPass(t, run(t, Model[uint64, int](base), Options{Workers: w}))
		checkStats(t, run(t, Model[uint64, int](base), Options{Workers: w}).Stats, 12, 9, 4, 3)
		r := run(t, Model[uint64, int](m), Options{Workers: w})
		mustPass(t, r)
		checkStats(t, r.Stats, 9, 7, 4, 2)
	}
}

// A chain 0 → 1 → … → 10 under s ≤ 3 keeps 0..3 and generates 4 steps (the
// last to 4, not kept): no deadlock at 3, since it has a successor.
func TestConstraintIsNoDeadlock(t *testing.T) {
	m := constrained[int, int]{Model: chain{n: 10}, state: func(s int) bool { return s <= 3 }}
	r := run(t, Model[int, int](m), Options{})
	mustPass(t, r)
	checkStats(t, r.Stats, 4, 4, 3, 1)
}

// inits is a chain whose initial states are given.
type inits struct {
	chain
	init []int
}

func (m inits) Init() []int { return m.init }

// An initial state outside the constraint is checked but not kept: with
// Init = [5, 0, 7] and s ≤ 3 only 0 is kept; "not-7" fails on Init[2],
// a trace of one state with path [2].
func TestConstrainedInitialStates(t *testing.T) {
	m := constrained[int, int]{Model: inits{chain{n: 10}, []int{5, 0, 7}}, state: func(s int) bool { return s <= 3 }}
	r := run(t, Model[int, int](m), Options{})
	mustPass(t, r)
	checkStats(t, r.Stats, 4, 4, 3, 1)
	m.props = []Property[int, int]{{Name: "not-7", Kind: Always, Check: func(s *int) string {
		if *s == 7 {
			return "s is 7"
		}
		return ""
	}}}
	r = run(t, Model[int, int](m), Options{})
	mustViolate(t, r, "not-7", []int{7})
	if !slices.Equal(r.Violation.Path, []int{2}) {
		t.Fatalf("path %v, want [2]", r.Violation.Path)
	}
}
