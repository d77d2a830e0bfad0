package explore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"
)

// SimOptions configure a simulation: random walks from the initial states,
// for models too large to explore exhaustively (TLC's -simulate).
//
// Walk i draws every choice (the initial state, then at each step one of
// the actions that yield a successor, uniformly) from a generator seeded
// with (Seed, i), so a walk depends only on the seed, its number and the
// model. Walks are judged in order: the result is that of walks 0 to the
// first that finds a violation, the same for any number of workers, and a
// violation's walk can be run again alone from its seed and number.
type SimOptions struct {
	Seed     uint64        // the generators' seed
	Depth    int           // steps per walk at most; 0 = 100
	Walks    int           // walks to take; 0 = until Duration has passed, or 1000 without one
	Duration time.Duration // start no walk after this long; 0 = no limit
}

// SimStats describe a simulation (Result.Simulation).
type SimStats struct {
	Seed  uint64 `json:"seed"`
	Depth int    `json:"depth"` // the bound on steps per walk
	Walks uint64 `json:"walks"` // walks judged (up to the violating one)
	Steps uint64 `json:"steps"` // steps taken in them
	// Walk is the number of the walk that found the violation, or -1.
	Walk int64 `json:"walk"`
}

// Simulate checks m's properties along random walks (see SimOptions), as
// Run does with Options{Simulate: &so}. A violation comes with a trace that
// is real and replays by its Path, but is not necessarily a shortest one.
// A simulation that finds no violation is Incomplete, never Pass: it
// proves nothing about the states it did not visit.
func Simulate[S, A any](ctx context.Context, m Machine[S, A], so SimOptions) (*Result[S, A], error) {
	return Run(ctx, m, Options{Simulate: &so})
}

// simWalk is what one walk found.
type simWalk struct {
	done  bool
	steps uint64
	depth int      // steps taken
	cov   []uint64 // by action kind
	reach []int    // by index in e.sometimes: first depth reached, or -1
	viol  *simViolation
}

type simViolation struct {
	prop   int // index in Properties; -1 for deadlock
	reason string
	path   []int
}

// simWorker is one goroutine's scratch space.
type simWorker[S, A any] struct {
	acts []A
	idx  []int
	path []int
	s, t S // the walk's state and its successor
}

// simulate runs the walks of opts.Simulate.
func (e *engine[S, A]) simulate(ctx context.Context) (*Result[S, A], error) {
	so := *e.opts.Simulate
	if so.Depth <= 0 {
		so.Depth = 100
	}
	if so.Walks <= 0 && so.Duration <= 0 {
		so.Walks = 1000
	}
	if e.opts.Shard.Count != 0 {
		return nil, fmt.Errorf("explore: a simulation cannot be sharded")
	}
	if e.opts.Checkpoint != "" {
		return nil, fmt.Errorf("explore: a simulation keeps no checkpoint")
	}
	inits := e.m.Init()
	if len(inits) == 0 {
		return nil, fmt.Errorf("explore: the model has no initial state to walk from")
	}
	sim := &SimStats{Seed: so.Seed, Depth: so.Depth, Walk: -1}
	deadline := time.Time{}
	if so.Duration > 0 {
		deadline = e.start.Add(so.Duration)
	}
	reach := make([]int, len(e.sometimes))
	for i := range reach {
		reach[i] = -1
	}
	ws := make([]simWorker[S, A], e.nw)
	round := make([]simWalk, 64*e.nw)
	var (
		viol     *simViolation
		longest  int
		next     uint64 // number of the first walk of the round
		timeOver atomic.Bool
	)
	for viol == nil && ctx.Err() == nil && !timeOver.Load() {
		n := len(round)
		if so.Walks > 0 {
			n = min(n, so.Walks-int(next))
		}
		if n <= 0 {
			break
		}
		for i := range round[:n] {
			round[i].done = false
		}
		stop := func() bool {
			if !deadline.IsZero() && time.Now().After(deadline) {
				timeOver.Store(true)
			}
			return ctx.Err() != nil || timeOver.Load()
		}
		forEachIndex(n, e.nw, stop, func(w, i int) error {
			e.walk(&ws[w], inits, so, next+uint64(i), &round[i])
			return nil
		})
		// Judge the walks in order, up to the first not run or violating.
		for i := range round[:n] {
			r := &round[i]
			if !r.done {
				timeOver.Store(true) // stopped part-way: no more rounds
				break
			}
			sim.Walks++
			sim.Steps += r.steps
			longest = max(longest, r.depth)
			for k, c := range r.cov {
				e.coverage[k] += c
			}
			for k, d := range r.reach {
				if d >= 0 && (reach[k] < 0 || d < reach[k]) {
					reach[k] = d
				}
			}
			if r.viol != nil {
				viol, sim.Walk = r.viol, int64(next)+int64(i)
				break
			}
		}
		e.generated.Store(sim.Steps)
		e.depthNow.Store(int64(longest))
		next += uint64(n)
	}
	for k, p := range e.sometimes {
		e.reachDepth[p] = reach[k]
	}
	if viol == nil {
		res := e.result(Incomplete)
		res.Simulation = sim
		return res, nil
	}
	v := &violation{prop: viol.prop, reason: viol.reason}
	steps := []Step[S, A]{{State: inits[viol.path[0]]}}
	for _, j := range viol.path[1:] {
		st, err := e.step(&steps[len(steps)-1].State, j)
		if err != nil {
			return nil, err
		}
		steps = append(steps, st)
	}
	res := e.result(Violated)
	res.Simulation = sim
	res.Stats.Depth = len(steps) - 1
	res.Violation = e.violationOf(v, steps, viol.path)
	return res, nil
}

// walk takes walk number i into r.
func (e *engine[S, A]) walk(w *simWorker[S, A], inits []S, so SimOptions, i uint64, r *simWalk) {
	rng := rand.New(rand.NewPCG(so.Seed, i))
	*r = simWalk{done: true, cov: resize(r.cov, len(e.names)), reach: resize(r.reach, len(e.sometimes))}
	for k := range r.reach {
		r.reach[k] = -1
	}
	fail := func(prop int, reason string) {
		r.viol = &simViolation{prop: prop, reason: reason, path: append([]int(nil), w.path...)}
	}
	check := func(s *S, depth int) bool {
		for _, p := range e.always {
			if reason := e.props[p].Check(s); reason != "" {
				fail(p, reason)
				return false
			}
		}
		for k, p := range e.sometimes {
			if r.reach[k] < 0 && e.props[p].Check(s) != "" {
				r.reach[k] = depth
			}
		}
		return true
	}
	k := rng.IntN(len(inits))
	s, t := &w.s, &w.t
	*s = inits[k]
	w.path = append(w.path[:0], k)
	if !check(s, 0) || !e.cons.inState(s) {
		return
	}
	for depth := 1; depth <= so.Depth; depth++ {
		w.acts = e.m.Actions(s, w.acts[:0])
		w.idx = w.idx[:0]
		for j := range w.acts {
			w.idx = append(w.idx, j)
		}
		var (
			ok bool
			j  int
		)
		for n := len(w.idx); n > 0 && !ok; n-- {
			x := rng.IntN(n)
			j = w.idx[x]
			w.idx[x] = w.idx[n-1]
			*t = *s
			ok = e.m.Next(s, w.acts[j], t)
		}
		if !ok {
			if !e.opts.NoDeadlock && (e.doner == nil || !e.doner.Done(s)) {
				fail(-1, deadlockReason(len(w.acts)))
			}
			return
		}
		a := w.acts[j]
		w.path = append(w.path, j)
		r.steps++
		r.depth = depth
		if kind := e.kinds.ActionKind(a); kind >= 0 && kind < len(r.cov) {
			r.cov[kind]++
		}
		for _, p := range e.transition {
			if reason := e.props[p].CheckStep(s, a, t); reason != "" {
				fail(p, reason)
				return
			}
		}
		if !check(t, depth) || !e.cons.inStep(s, a, t) {
			return
		}
		s, t = t, s
	}
}

// resize returns a zeroed slice of n elements, reusing b's storage.
func resize[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// simSummary renders a simulation's Summary.
func (r Report) simSummary(b *strings.Builder) {
	sim, s := r.Simulation, r.Stats
	fmt.Fprintf(b, "verdict:     %s\n", r.Verdict)
	fmt.Fprintf(b, "simulation:  seed %d, walks of at most %d steps; not exhaustive, traces not necessarily shortest\n", sim.Seed, sim.Depth)
	if sim.Walk >= 0 {
		fmt.Fprintf(b, "walks:       %d (the violation in walk %d)\n", sim.Walks, sim.Walk)
	} else {
		fmt.Fprintf(b, "walks:       %d, no violation found\n", sim.Walks)
	}
	fmt.Fprintf(b, "steps:       %d\n", sim.Steps)
	fmt.Fprintf(b, "longest:     %d steps\n", s.Depth)
	fmt.Fprintf(b, "steps/s:     %.0f\n", sim.Rate(s.Elapsed))
	fmt.Fprintf(b, "elapsed:     %s\n", s.Elapsed.Round(time.Millisecond))
	r.coverageSometimes(b)
}

// Rate is steps per second over the given time.
func (s SimStats) Rate(elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return float64(s.Steps) / elapsed.Seconds()
}
