package explore

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

func simulate[S, A any](t *testing.T, m Machine[S, A], so SimOptions, opts Options) *Result[S, A] {
	t.Helper()
	opts.Simulate = &so
	r, err := Run(context.Background(), m, opts)
	if err != nil {
		t.Fatalf("simulate: %v", err)
	}
	return r
}

// Random walks find the Die Hard puzzle's 4 gallons. The trace is real (it
// replays by its path and ends with 4 gallons in the big jug) but need not
// be the shortest, 6 steps; the same seed gives the same walk with any
// number of workers.
func TestSimulateFindsViolation(t *testing.T) {
	m := Model[jugState, jugAction](jugs{always: true})
	so := SimOptions{Seed: 7, Depth: 50, Walks: 200}
	r1 := simulate(t, m, so, Options{Workers: 1})
	if r1.Verdict != Violated || r1.Violation.Property != "big-not-4" {
		t.Fatalf("verdict %v %+v", r1.Verdict, r1.Violation)
	}
	tr := r1.Violation.Trace
	if last := tr[len(tr)-1].State; last.Big != 4 || len(tr) < 7 || r1.Stats.Depth != len(tr)-1 {
		t.Fatalf("trace of %d states ends in %+v, depth %d", len(tr), last, r1.Stats.Depth)
	}
	s := m.Init()[r1.Violation.Path[0]]
	for i, j := range r1.Violation.Path[1:] {
		u := s
		m.Next(&s, m.Actions(&s, nil)[j], &u)
		s = u
		if s != tr[i+1].State {
			t.Fatalf("replay step %d: %+v, trace has %+v", i+1, s, tr[i+1].State)
		}
	}
	sim := r1.Simulation
	if sim == nil || sim.Walk < 0 || sim.Walks != uint64(sim.Walk)+1 || r1.Stats.Generated != sim.Steps {
		t.Fatalf("simulation %+v, stats %+v", sim, r1.Stats)
	}
	var cov uint64
	for _, c := range r1.Coverage {
		cov += c.Count
	}
	if cov != sim.Steps {
		t.Fatalf("coverage adds up to %d, steps %d", cov, sim.Steps)
	}
	for _, w := range []int{2, 3} {
		r := simulate(t, m, so, Options{Workers: w})
		if !slices.Equal(r.Violation.Path, r1.Violation.Path) || *r.Simulation != *sim || !slices.Equal(r.Coverage, r1.Coverage) {
			t.Fatalf("%d workers: %+v %v; 1 worker: %+v %v", w, r.Simulation, r.Violation.Path, sim, r1.Violation.Path)
		}
	}
	sum := NewReport(m, r1).Summary()
	if !strings.Contains(sum, "not necessarily shortest") || !strings.Contains(sum, "steps/s:") {
		t.Fatalf("summary:\n%s", sum)
	}
}

// Without a violation a simulation is Incomplete: it proves nothing. Walks
// of the chain 0 → … → 5 all end in its done state after 5 steps; at
// depth 3 they stop early. Sometimes properties are reported from the walks.
func TestSimulateNoViolation(t *testing.T) {
	m := Model[int, int](doneChain{chain{n: 5}})
	r := simulate(t, m, SimOptions{Seed: 1, Walks: 10}, Options{Workers: 2})
	if r.Verdict != Incomplete || r.Simulation.Walks != 10 || r.Simulation.Steps != 50 || r.Stats.Depth != 5 || r.Simulation.Walk != -1 {
		t.Fatalf("%v %+v %+v", r.Verdict, r.Simulation, r.Stats)
	}
	r = simulate(t, m, SimOptions{Seed: 1, Walks: 10, Depth: 3}, Options{})
	if r.Simulation.Steps != 30 || r.Stats.Depth != 3 {
		t.Fatalf("%+v %+v", r.Simulation, r.Stats)
	}
	rot := Model[rotorState, int](rotor{n: 3, bad: -1})
	rr := simulate(t, rot, SimOptions{Seed: 3, Walks: 50, Depth: 20}, Options{Workers: 2})
	if rr.Verdict != Incomplete || len(rr.Sometimes) != 1 || !rr.Sometimes[0].Reached {
		t.Fatalf("%v %+v", rr.Verdict, rr.Sometimes)
	}
}

// A walk that reaches a state without successors reports a deadlock there
// (the chain's end is not done), unless NoDeadlock is set.
func TestSimulateDeadlock(t *testing.T) {
	m := Model[int, int](chain{n: 3})
	r := simulate(t, m, SimOptions{Walks: 1}, Options{})
	mustViolate(t, r, "deadlock", []int{0, 1, 2, 3})
	r = simulate(t, m, SimOptions{Walks: 1}, Options{NoDeadlock: true})
	if r.Verdict != Incomplete {
		t.Fatalf("%v", r.Verdict)
	}
}

// A walk stops at a state outside the constraints, after checking it.
func TestSimulateConstraint(t *testing.T) {
	m := constrained[int, int]{Model: chain{n: 10}, state: func(s int) bool { return s <= 3 }}
	r := simulate(t, Model[int, int](m), SimOptions{Walks: 5}, Options{})
	if r.Verdict != Incomplete || r.Simulation.Steps != 20 || r.Stats.Depth != 4 {
		t.Fatalf("%v %+v %+v", r.Verdict, r.Simulation, r.Stats)
	}
}

// A duration bounds a simulation with no walk count; cancelling stops it.
func TestSimulateDuration(t *testing.T) {
	m := Model[rotorState, int](rotor{n: 3, bad: -1})
	start := time.Now()
	r := simulate(t, m, SimOptions{Duration: 50 * time.Millisecond, Depth: 10}, Options{Workers: 2})
	if r.Verdict != Incomplete || r.Simulation.Walks == 0 || time.Since(start) > 5*time.Second {
		t.Fatalf("%v %+v after %v", r.Verdict, r.Simulation, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Simulate(ctx, Machine[rotorState, int](m), SimOptions{Duration: time.Hour})
	if err != nil || res.Verdict != Incomplete {
		t.Fatalf("%v %v", err, res.Verdict)
	}
}
