package explore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
)

// Symmetric is implemented by models with a symmetry, such as processes
// or values that can be renamed without changing what the model does (TLC's
// SYMMETRY). Canonical returns one fixed representative of the class of
// states equal to s up to the symmetry: two states are in one class exactly
// when their canonical forms are equal (for process renaming, for instance,
// the state with its processes sorted).
//
// With a symmetry the seen-set holds classes: a state is identified by the
// encoding of its canonical form, and a successor whose class was seen is
// dropped. The queue keeps each class's first concrete state in BFS order
// (the one the smallest discovery key reached), so every state expanded,
// checked and shown in a trace is a real state reached by real steps, and a
// trace replays from Init by its action positions (Violation.Path) like any
// other. Counts are of classes: Distinct and Generated are smaller. The
// reduction is opt-in (Options.Symmetry), as TLC's SYMMETRY is: a model
// that has a symmetry is explored concretely unless asked.
//
// The reduction is sound when the properties, constraints and Done cannot
// tell the states of a class apart (the symmetry maps successors to
// successors and keeps each property's verdict), as TLC also requires:
// then a violation exists exactly when one is found, the trace found is a
// shortest one, and the result is the same for any number of workers. A
// symmetry that breaks a property can hide its violations;
// Options.CheckSymmetry verifies one at given bounds (checkSymmetry). It
// cannot be combined with a sharded run.
type Symmetric[S any] interface {
	Canonical(s *S) S
}

// ErrNoSymmetry is returned by Run when Options.Symmetry asks for the
// symmetry of a model that has none: counting its concrete states instead
// would pass off the full count as a reduced one.
var ErrNoSymmetry = errors.New("explore: symmetry asked for, but the model declares none (Symmetric)")

// useSymmetry makes the engine identify states by their canonical forms
// when the options ask for it, or verify the symmetry on every state when
// they ask for that (CheckSymmetry).
func (e *engine[S, A]) useSymmetry() error {
	if !e.opts.Symmetry && !e.opts.CheckSymmetry {
		return nil
	}
	sym, ok := part[Symmetric[S]](e.m)
	if !ok {
		return ErrNoSymmetry
	}
	if e.opts.CheckSymmetry {
		if e.opts.Symmetry {
			return fmt.Errorf("explore: CheckSymmetry explores every concrete state (a run up to the symmetry would check one state of each class): unset Symmetry")
		}
		if e.opts.Simulate != nil {
			return fmt.Errorf("explore: CheckSymmetry checks the states of a search, not of random walks: unset Simulate")
		}
		e.symCheck = sym
		return nil
	}
	if e.opts.Shard.Count != 0 {
		return fmt.Errorf("explore: a sharded run cannot use the model's symmetry (its shard key is of concrete states): unset Symmetry")
	}
	e.sym = sym
	e.same = false
	e.symmetry = true
	return nil
}

// fpEncode appends the encoding s is identified by: with a symmetry, its
// canonical form's. The form is made in the worker, which lives on the
// heap already: a local handed to the model's Encode would be moved there,
// one allocation per successor.
func (w *worker[S, A]) fpEncode(s *S, buf []byte) []byte {
	e := w.e
	if e.sym == nil {
		return e.fpenc.Encode(s, buf)
	}
	w.canon = e.sym.Canonical(s)
	return e.fpenc.Encode(&w.canon, buf)
}

// symCheck is a worker's scratch for checkSymmetry.
type symCheck[S, A any] struct {
	c, t  S
	acts  []A
	enc   []byte
	succs map[string]string // a canonical successor and its step's verdicts → the step, described
	order []string          // succs' keys in the order of the state's actions
}

// checkSymmetry verifies the model's symmetry at s, a state the run
// reached at depth (Options.CheckSymmetry): s and its canonical form c must
// be alike in every way a run up to the symmetry relies on, which is what
// makes it find a violation exactly when one exists (see Symmetric). Their
// successors must fall in the same classes, by steps the transition
// properties and the action constraint judge alike; every property, Done
// and the state constraint must judge s and c alike; and c must be its own
// canonical form. Actions need not correspond one to one (a renaming moves
// a commit of one value to a commit of another), so the classes reached
// are compared as sets. The first difference is returned as an error that
// names the state and the step.
func (w *worker[S, A]) checkSymmetry(s *S, depth int) error {
	e := w.e
	if w.symc == nil {
		w.symc = &symCheck[S, A]{succs: map[string]string{}}
	}
	x := w.symc
	x.c = e.symCheck.Canonical(s)
	c := &x.c
	x.enc = e.fpenc.Encode(s, x.enc[:0])
	n := len(x.enc)
	x.enc = e.fpenc.Encode(c, x.enc)
	m := len(x.enc)
	if bytes.Equal(x.enc[:n], x.enc[n:]) {
		return nil // s is its canonical form
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("explore: the model's symmetry does not hold (CheckSymmetry): at a state reached at depth %d, %s; the state: %s", depth, fmt.Sprintf(format, a...), e.showState(s))
	}
	cc := e.symCheck.Canonical(c)
	if x.enc = e.fpenc.Encode(&cc, x.enc); !bytes.Equal(x.enc[n:m], x.enc[m:]) {
		return fail("the canonical form's canonical form differs from it")
	}
	judge := func(r string) string {
		if r == "" {
			return "holds"
		}
		return "fails"
	}
	for _, k := range e.checks {
		if a, b := judge(k.fn(s)), judge(k.fn(c)); a != b {
			return fail("property %q %s, and on the canonical form it %s", e.props[k.p].Name, a, b)
		}
	}
	for _, p := range e.sometimes {
		f := e.props[p].Check
		if a, b := f(s) != "", f(c) != ""; a != b {
			return fail("the sometimes-property %q is reached on one of the state and its canonical form only (on the state: %v)", e.props[p].Name, a)
		}
	}
	if e.doner != nil && e.doner.Done(s) != e.doner.Done(c) {
		return fail("Done is %v, and on the canonical form %v", e.doner.Done(s), e.doner.Done(c))
	}
	if a, b := e.cons.inState(s), e.cons.inState(c); a != b {
		return fail("the state constraint says %v, and on the canonical form %v", a, b)
	}
	clear(x.succs)
	x.order = x.order[:0]
	from := func(u *S, record bool) string {
		x.acts = e.m.Actions(u, x.acts[:0])
		for _, a := range x.acts {
			x.t = *u
			if !e.m.Next(u, a, &x.t) {
				continue
			}
			key := w.succKey(u, a)
			if record {
				x.succs[key] = e.describe.Describe(u, a)
				x.order = append(x.order, key)
			} else if _, ok := x.succs[key]; !ok {
				return e.describe.Describe(u, a)
			} else {
				x.succs[key] = ""
			}
		}
		return ""
	}
	from(s, true)
	if step := from(c, false); step != "" {
		return fail("the canonical form's step %q leads to a class no step of the state leads to (or its step is judged otherwise)", step)
	}
	for _, key := range x.order {
		if step := x.succs[key]; step != "" {
			return fail("the step %q leads to a class no step of the canonical form leads to (or is judged otherwise)", step)
		}
	}
	return nil
}

// checkCut verifies the symmetry, and the grade when that is left to the
// expansion (gradeLater), at the states of the frontier, which a run
// stopped by MaxDepth reached (and checked) but does not expand: without it
// a symmetry or an encoding broken only at the cut would pass unnoticed.
func (e *engine[S, A]) checkCut(ctx context.Context) error {
	src, err := newSource(&e.front, e.nw)
	if err != nil {
		return err
	}
	stop := func() bool { return ctx.Err() != nil }
	err = forEachIndex(src.numUnits(), e.nw, stop, func(wi, _ int) error {
		w := e.workers[wi]
		u, ok, err := src.take(wi, &w.scratch)
		if err != nil || !ok {
			return err
		}
		idx := u.base
		for _, seg := range u.segs {
			for i := seg.lo; i < seg.hi; i, idx = i+1, idx+1 {
				if err := w.decodeQueued(seg.b.state(seg.b.data, i)); err != nil {
					return err
				}
				if e.symCheck != nil {
					if err := w.checkSymmetry(&w.cur, e.depth); err != nil {
						return err
					}
				}
				if e.gradeLater {
					if err := e.levelGrade(e.grade.Grade(&w.cur), e.depth, idx); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if err == nil {
		err = ctx.Err()
	}
	if d, ok := err.(decodedAt); ok {
		err = e.decodedError(d)
	}
	return err
}

// succKey is what checkSymmetry compares of the step u -a-> x.t: each
// transition property's verdict on it and the constraints', then the
// encoding of the successor's canonical form.
func (w *worker[S, A]) succKey(u *S, a A) string {
	e, x := w.e, w.symc
	b := make([]byte, 0, len(e.steps)+1+len(x.enc))
	for _, k := range e.steps {
		b = append(b, verdictByte(k.fn(u, a, &x.t) == ""))
	}
	b = append(b, verdictByte(e.cons.inStep(u, a, &x.t)))
	ct := e.symCheck.Canonical(&x.t)
	return string(e.fpenc.Encode(&ct, b))
}

func verdictByte(ok bool) byte {
	if ok {
		return 1
	}
	return 0
}

// showState renders s on one line: its fields, when the model names them.
func (e *engine[S, A]) showState(s *S) string {
	f, ok := part[Fielder[S]](e.m)
	if !ok {
		return fmt.Sprintf("%+v", *s)
	}
	var b strings.Builder
	for i, x := range f.Fields(s) {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(x.Name + " " + x.Value)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
