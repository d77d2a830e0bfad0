package explore

import (
	"fmt"
	"slices"
)

// A run with Options.Continue (TLC's -continue) does not stop at a
// violation: it explores every reachable state once, checks every property,
// opt-in ones included, and records the first violation of each. Breadth
// first, a property's first violation is at its least depth, so each
// property gets a shortest counterexample, as a run checking it alone
// would find.

// keepFirsts moves a worker's per-property violations into the run's,
// keeping the earliest of each.
func (e *engine[S, A]) keepFirsts(w *worker[S, A]) {
	for i, v := range w.firsts {
		if v != nil && v.less(e.firsts[i]) {
			e.firsts[i] = v
		}
		w.firsts[i] = nil
	}
}

// continueOK refuses the combinations Continue does not support: a
// checkpoint or a shard would have to carry the violations found so far,
// and a simulation has no shortest traces.
func continueOK(opts *Options) error {
	switch {
	case !opts.Continue:
		return nil
	case opts.Simulate != nil:
		return fmt.Errorf("explore: Continue applies to a search, not a simulation")
	case opts.Checkpoint != "":
		return fmt.Errorf("explore: Continue cannot be combined with a checkpoint")
	case opts.Shard.Count != 0:
		return fmt.Errorf("explore: Continue cannot be combined with a shard")
	}
	return nil
}

// finish ends a run with Continue: Violated with every property's first
// violation when any was found, otherwise v.
func (e *engine[S, A]) finish(v Verdict) (*Result[S, A], error) {
	var first *violation
	for _, f := range e.firsts {
		if f != nil && f.less(first) {
			first = f
		}
	}
	if first == nil {
		res := e.result(v)
		res.Unfinished = v == Incomplete
		return res, nil
	}
	res, err := e.violated(first)
	if err != nil {
		return nil, err
	}
	res.Unfinished = v == Incomplete
	// Properties order, deadlock last.
	order := append(slices.Clip(e.firsts[1:]), e.firsts[0])
	for _, f := range order {
		if f == nil {
			continue
		}
		steps, path, err := e.traceOf(f)
		if err != nil {
			return nil, err
		}
		res.Violations = append(res.Violations, e.violationOf(f, steps, path))
	}
	res.Stats = e.result(v).Stats
	return res, nil
}

// unchecked lists the Always and Transition properties the run does not
// check.
func (e *engine[S, A]) unchecked() []string {
	var out []string
	for i, p := range e.props {
		if p.Kind != Sometimes && !slices.Contains(e.always, i) && !slices.Contains(e.transition, i) {
			out = append(out, p.Name)
		}
	}
	return out
}
