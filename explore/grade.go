package explore

import "fmt"

// Graded is implemented by models whose every step moves the state one
// grade up: Grade(t) = Grade(s) + 1 for every step s → t, and every
// initial state has the same grade. A state's depth is then its grade less
// the initial one, so no state is found at two levels, and the engine keeps
// no seen-set: the level being built, which the level map deduplicates, is
// all a new state could equal. This is the sweep-line method's progress
// measure (Christensen, Kristensen and Mailund, 2001) in its simplest form,
// where the sweep moves one level at a time. A model whose steps all make
// progress usually has one: a log that grows by a transaction, a consumer
// that moves a position on, a phase that advances.
//
// The seen-set's inserts and its memory are saved; counts, verdicts and
// traces are the same as without it. The engine checks the claim on every
// step it generates and every initial state it keeps, and stops the run
// with an error at the first that breaks it, so a wrong Grade fails
// loudly rather than miscounting. A model with stuttering steps, or one
// whose steps can return to an earlier state, has no grade.
type Graded[S any] interface {
	Grade(s *S) uint64
}

// useGrade takes the model's grade unless the options keep a seen-set.
func (e *engine[S, A]) useGrade() {
	if g, ok := part[Graded[S]](e.m); ok && !e.opts.NoGrade {
		e.grade = g
	}
}

// noGradeHint says how to run a model whose grade is wrong.
const noGradeHint = "Options.NoGrade, or --no-grade, runs it with a seen-set"

// gradeError reports a step that does not move the state one grade up.
func (e *engine[S, A]) gradeError(s *S, a A, from, to uint64) error {
	return fmt.Errorf("explore: the model is Graded, but the step %q goes from grade %d to grade %d (every step must add one; %s)", e.describe.Describe(s, a), from, to, noGradeHint)
}

// canonGrade checks, with a symmetry, that the canonical form of a state of
// grade g, left in w.canon by fpEncode, has that grade too: otherwise two
// states of one class could lie at two levels.
func (e *engine[S, A]) canonGrade(w *worker[S, A], g uint64) error {
	if c := e.grade.Grade(&w.canon); c != g {
		return fmt.Errorf("explore: the model is Graded, but a state of grade %d has a canonical form of grade %d (its symmetry must keep grades; %s)", g, c, noGradeHint)
	}
	return nil
}
