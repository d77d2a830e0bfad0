package explore

import (
	"errors"
	"fmt"
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
// symmetry that breaks a property can hide its violations. It cannot be
// combined with a sharded run.
type Symmetric[S any] interface {
	Canonical(s *S) S
}

// ErrNoSymmetry is returned by Run when Options.Symmetry asks for the
// symmetry of a model that has none: counting its concrete states instead
// would pass off the full count as a reduced one.
var ErrNoSymmetry = errors.New("explore: symmetry asked for, but the model declares none (Symmetric)")

// useSymmetry makes the engine identify states by their canonical forms
// when the options ask for it.
func (e *engine[S, A]) useSymmetry() error {
	if !e.opts.Symmetry {
		return nil
	}
	sym, ok := part[Symmetric[S]](e.m)
	if !ok {
		return ErrNoSymmetry
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
