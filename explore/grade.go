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
// loudly rather than miscounting. It checks it on what the run keeps: the
// state a successor's encoding decodes to (its canonical form's, with a
// symmetry), so a Grade that reads a field Encode leaves out fails too. A
// model with Encode but no Decode is therefore run with a seen-set. A model
// with stuttering steps, or one whose steps can return to an earlier
// state, has no grade.
type Graded[S any] interface {
	Grade(s *S) uint64
}

// useGrade takes the model's grade unless the options keep a seen-set. A
// model that encodes its states by hand is graded only if it decodes them
// too: the grade is checked on what a state is identified by (keptGrade),
// and without Decode that cannot be read back, so a seen-set is kept.
func (e *engine[S, A]) useGrade() {
	g, ok := part[Graded[S]](e.m)
	if !ok || e.opts.NoGrade {
		return
	}
	if _, own := part[Encoder[S]](e.m); own {
		if e.gradeDec, ok = part[Decoder[S]](e.m); !ok {
			return
		}
	}
	e.grade = g
	// When the queue holds a state's identifying encoding (the model's own
	// codec, no symmetry), the state keptGrade would decode is the one the
	// next level decodes to expand, and there the grade is read anyway: the
	// check is made then (levelGrade), saving a decode of every successor
	// (5–10 % of a shipped protocol's CPU).
	e.gradeLater = e.gradeDec != nil && e.same
}

// decodedAt is a frontier state, index idx of the level being expanded,
// that decoded to a state of grade, not the level's.
type decodedAt struct{ idx, grade uint64 }

func (d decodedAt) Error() string {
	return fmt.Sprintf("explore: state %d of the level decodes to a state of grade %d", d.idx, d.grade)
}

// levelGrade checks g, the grade of frontier state idx at depth as decoded
// from the queue, when the check was left to it (gradeLater): every state
// at depth d has the initial grade plus d. A level not expanded, where a
// run stops at MaxDepth, is checked on its own (checkCut). The error,
// decodedAt, becomes keptGrade's once the workers are done (decodedError).
func (e *engine[S, A]) levelGrade(g uint64, depth int, idx uint64) error {
	if e.gradeLater && g != e.grade0+uint64(depth) {
		return decodedAt{idx, g}
	}
	return nil
}

// decodedError is keptGrade's error for d, found at the level being
// expanded, once the workers are done: the path to the state names the step.
func (e *engine[S, A]) decodedError(d decodedAt) error {
	steps, err := e.path(e.depth, d.idx)
	if err != nil {
		return err
	}
	t := &steps[len(steps)-1]
	g := e.grade.Grade(&t.State)
	if len(steps) < 2 {
		return fmt.Errorf("explore: the model is Graded, but an initial state of grade %d has an encoding that decodes to a state of grade %d (Grade must read only what Encode keeps; %s)", g, d.grade, noGradeHint)
	}
	return fmt.Errorf("explore: the model is Graded, but the step %q leads to a state of grade %d whose encoding decodes to a state of grade %d (Grade must read only what Encode keeps; %s)", e.describe.Describe(&steps[len(steps)-2].State, t.Action), g, d.grade, noGradeHint)
}

// keptInitGrade is the grade of the first initial state a run keeps (a
// resumed run's grade0; initLevel checks that all kept have the same).
func (e *engine[S, A]) keptInitGrade() uint64 {
	inits := e.m.Init()
	for i := range inits {
		if _, mine := e.owns(&inits[i]); mine && e.cons.inState(&inits[i]) {
			return e.grade.Grade(&inits[i])
		}
	}
	return 0
}

// noGradeHint says how to run a model whose grade is wrong.
const noGradeHint = "Options.NoGrade, or --no-grade, runs it with a seen-set"

// gradeError reports a step that does not move the state one grade up.
func (e *engine[S, A]) gradeError(s *S, a A, from, to uint64) error {
	return fmt.Errorf("explore: the model is Graded, but the step %q goes from grade %d to grade %d (every step must add one; %s)", e.describe.Describe(s, a), from, to, noGradeHint)
}

// keptGrade checks that the successor t of the step s -a-> t, of grade g,
// is kept at grade g: its canonical form, with a symmetry, and the state
// its identifying encoding enc decodes to have grade g too, and so, with a
// symmetry, does the state its queued encoding decodes to. A run without a
// seen-set tells states apart only by level, so a grade that reads what the
// encoding leaves out (or that the symmetry changes) would let one state
// recur at every level, each time counted as new.
func (w *worker[S, A]) keptGrade(s *S, a A, t *S, g uint64, enc []byte) error {
	e := w.e
	if e.sym != nil {
		if c := e.grade.Grade(&w.canon); c != g {
			return fmt.Errorf("explore: the model is Graded, but the step %q leads to a state of grade %d whose canonical form has grade %d (its symmetry must keep grades; %s)", e.describe.Describe(s, a), g, c, noGradeHint)
		}
	}
	d, err := w.decodedGrade(enc, g)
	if err == nil && d == g && e.sym != nil && e.gradeDec != nil {
		w.enc = e.qcodec.Encode(t, w.enc[:0]) // w.enc is free until flush
		d, err = w.decodedGrade(w.enc, g)
	}
	if err == nil && d != g {
		err = fmt.Errorf("explore: the model is Graded, but the step %q leads to a state of grade %d whose encoding decodes to a state of grade %d (Grade must read only what Encode keeps; %s)", e.describe.Describe(s, a), g, d, noGradeHint)
	}
	return err
}

// initGrade is keptGrade for an initial state s, whose identifying
// encoding is enc (few states: the queued one is made afresh).
func (w *worker[S, A]) initGrade(s *S, enc []byte) error {
	e := w.e
	if e.grade == nil {
		return nil
	}
	g := e.grade.Grade(s)
	if e.sym != nil {
		if c := e.grade.Grade(&w.canon); c != g {
			return fmt.Errorf("explore: the model is Graded, but an initial state of grade %d has a canonical form of grade %d (its symmetry must keep grades; %s)", g, c, noGradeHint)
		}
	}
	d, err := w.decodedGrade(enc, g)
	if err == nil && d == g && e.sym != nil && e.gradeDec != nil {
		d, err = w.decodedGrade(e.qcodec.Encode(s, nil), g) // as queued
	}
	if err == nil && d != g {
		err = fmt.Errorf("explore: the model is Graded, but an initial state of grade %d has an encoding that decodes to a state of grade %d (Grade must read only what Encode keeps; %s)", g, d, noGradeHint)
	}
	return err
}

// decodedGrade is the grade of the state enc decodes to. The default
// codec keeps every field, so without the model's Decode that is g, the
// grade of the state encoded.
func (w *worker[S, A]) decodedGrade(enc []byte, g uint64) (uint64, error) {
	e := w.e
	if e.gradeDec == nil {
		return g, nil
	}
	var zero S
	w.dec = zero // Decode fills a zero state
	if err := e.gradeDec.Decode(enc, &w.dec); err != nil {
		return 0, fmt.Errorf("explore: decoding a state to check its grade: %w", err)
	}
	return e.grade.Grade(&w.dec), nil
}
