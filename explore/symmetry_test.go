package explore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// tokens is three counters 0..2 with an increment each, symmetric under
// renaming the counters: the canonical form sorts them. With allDistinct
// set, "not-all-distinct" fails on every state holding 0, 1 and 2.
type tokens struct{ allDistinct bool }

type tokensState [3]uint8

func (tokens) Init() []tokensState { return []tokensState{{}} }
func (tokens) Actions(s *tokensState, buf []int) []int {
	for i, v := range s {
		if v < 2 {
			buf = append(buf, i)
		}
	}
	return buf
}
func (tokens) Next(s *tokensState, a int, t *tokensState) bool { t[a]++; return true }
func (tokens) Canonical(s *tokensState) tokensState            { t := *s; slices.Sort(t[:]); return t }
func (tokens) Done(*tokensState) bool                          { return true }
func (m tokens) Properties() []Property[tokensState, int] {
	if !m.allDistinct {
		return nil
	}
	return []Property[tokensState, int]{{Name: "not-all-distinct", Kind: Always, Check: func(s *tokensState) string {
		if s[0] != s[1] && s[1] != s[2] && s[0] != s[2] {
			return fmt.Sprintf("counters %v all differ", *s)
		}
		return ""
	}}}
}

// Without symmetry: 3³ = 27 states and 3·3²·2 = 54 steps. With it, the
// classes are the 10 multisets of three values from {0,1,2}, and each is
// expanded once, with one step per counter below 2: 3+3+2+3+2+1+3+2+1+0 =
// 20 for 000 001 002 011 012 022 111 112 122 222. Depth 6 either way; the
// largest level has 7 states (sum 3) or 2 classes (sums 2, 3 and 4).
func TestSymmetryCounts(t *testing.T) {
	m := Machine[tokensState, int](tokens{})
	for _, w := range []int{1, 2} {
		r := run(t, m, Options{Workers: w})
		mustPass(t, r)
		checkStats(t, r.Stats, 54, 27, 6, 7)
		if r.Stats.Symmetry {
			t.Fatal("symmetry reported without it")
		}
		for _, opts := range []Options{{Workers: w, Symmetry: true}, {Workers: w, ForceDisk: true, MemBudget: 1, Symmetry: true}} {
			r = run(t, m, opts)
			mustPass(t, r)
			checkStats(t, r.Stats, 20, 10, 6, 2)
			if !r.Stats.Symmetry {
				t.Fatal("symmetry not reported")
			}
		}
	}
}

// With symmetry, level 1 keeps only (1,0,0) (the other two are its class),
// level 2 keeps (2,0,0) and (1,1,0) ((1,0,1) is the class of (1,1,0)), and
// the first state of level 3 with 0, 1 and 2 is (2,1,0), reached from
// (2,0,0) by the first of its actions, inc c1. The trace is concrete (not
// the canonical (0,1,2)) and replays by its path. Distinct counts levels
// 0..2, 1+1+2 classes, and Generated their expansion, 3+3+2+3 = 11 steps
// (without symmetry 1+3+6 states and 3+9+15 steps).
func TestSymmetryTrace(t *testing.T) {
	m := Machine[tokensState, int](tokens{allDistinct: true})
	want := []tokensState{{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {2, 1, 0}}
	for _, opts := range []Options{{Workers: 1, Symmetry: true}, {Workers: 2, Symmetry: true}, {Workers: 2, ForceDisk: true, MemBudget: 1, Symmetry: true}, {}} {
		r := run(t, m, opts)
		mustViolate(t, r, "not-all-distinct", want)
		if !slices.Equal(r.Violation.Path, []int{0, 0, 0, 0}) {
			t.Fatalf("path %v", r.Violation.Path)
		}
		// Replay the path by hand: initial state, then actions by position.
		s := m.Init()[r.Violation.Path[0]]
		for i, j := range r.Violation.Path[1:] {
			u := s
			m.Next(&s, m.Actions(&s, nil)[j], &u)
			s = u
			if s != r.Violation.Trace[i+1].State {
				t.Fatalf("replay step %d gives %v, trace has %v", i+1, s, r.Violation.Trace[i+1].State)
			}
		}
		if !opts.Symmetry {
			checkStats(t, r.Stats, 27, 10, 3, 6)
		} else {
			checkStats(t, r.Stats, 11, 4, 3, 2)
		}
	}
}

// tokensRev orders actions from the last counter down and sorts its
// canonical form in descending order, so the first state of a class in
// BFS order is not its canonical form: level 1 keeps (0,0,1), whose
// canonical form is (1,0,0). The queue holds the concrete states, so the
// trace runs (0,0,0) (0,0,1) (0,0,2) (0,1,2), path [0,0,0,0]; a queue of
// canonical forms would give (1,0,0) (2,0,0) … and fail to replay.
type tokensRev struct{ tokens }

func (tokensRev) Actions(s *tokensState, buf []int) []int {
	for i := 2; i >= 0; i-- {
		if s[i] < 2 {
			buf = append(buf, i)
		}
	}
	return buf
}
func (tokensRev) Canonical(s *tokensState) tokensState {
	t := *s
	slices.Sort(t[:])
	slices.Reverse(t[:])
	return t
}

func TestSymmetryConcreteQueue(t *testing.T) {
	m := Machine[tokensState, int](tokensRev{tokens{allDistinct: true}})
	r := run(t, m, Options{Workers: 2, Symmetry: true})
	mustViolate(t, r, "not-all-distinct", []tokensState{{0, 0, 0}, {0, 0, 1}, {0, 0, 2}, {0, 1, 2}})
	if !slices.Equal(r.Violation.Path, []int{0, 0, 0, 0}) {
		t.Fatalf("path %v", r.Violation.Path)
	}
}

// A sharded run refuses the symmetry, and runs without it.
func TestSymmetryNotSharded(t *testing.T) {
	type sharded struct {
		tokens
		tapeKey
	}
	m := Machine[tokensState, int](sharded{})
	if _, err := Run(context.Background(), m, Options{Shard: Shard{Index: 0, Count: 2}, Symmetry: true}); err == nil {
		t.Fatal("a sharded run used the symmetry")
	}
	if _, err := Run(context.Background(), m, Options{Shard: Shard{Index: 0, Count: 2}}); err != nil {
		t.Fatal(err)
	}
}

// plainTokens is tokens without its symmetry.
type plainTokens struct{ Machine[tokensState, int] }

func (plainTokens) Done(*tokensState) bool { return true }

// Symmetry is opt-in: asked of a model without one, Run refuses rather
// than report concrete counts as reduced ones.
func TestSymmetryAskedOfModelWithout(t *testing.T) {
	m := Machine[tokensState, int](plainTokens{tokens{}})
	if _, err := Run(context.Background(), m, Options{Symmetry: true}); !errors.Is(err, ErrNoSymmetry) {
		t.Fatalf("got %v, want ErrNoSymmetry", err)
	}
	r := run(t, m, Options{})
	mustPass(t, r)
	checkStats(t, r.Stats, 54, 27, 6, 7)
}

type tapeKey struct{}

func (tapeKey) ShardKey(s *tokensState, _ int) (uint64, bool) { return uint64(s[0]), true }

// A checkpoint made with the symmetry is refused without it, and one made
// without it is refused with it: they count different things.
func TestSymmetryCheckpoint(t *testing.T) {
	m := Machine[tokensState, int](tokens{})
	for _, made := range []bool{true, false} {
		dir := t.TempDir()
		if r := run(t, m, Options{Checkpoint: dir, MaxDepth: 2, Symmetry: made}); r.Verdict != Incomplete {
			t.Fatal(r.Verdict)
		}
		if _, err := Run(context.Background(), m, Options{Checkpoint: dir, Symmetry: !made}); err == nil {
			t.Errorf("a checkpoint made with symmetry %v was resumed with %v", made, !made)
		}
		r := run(t, m, Options{Checkpoint: dir, Symmetry: made})
		mustPass(t, r)
		if made {
			checkStats(t, r.Stats, 20, 10, 6, 2)
		} else {
			checkStats(t, r.Stats, 54, 27, 6, 7)
		}
	}
}

// capped is tokens whose last counter stops at 1: not symmetric, since
// (1,0,0) can reach (2,0,0) and its canonical form (0,0,1) nothing of
// that class.
type capped struct{ tokens }

func (capped) Actions(s *tokensState, buf []int) []int {
	for i, v := range s {
		if v < 2 && (i < 2 || v < 1) {
			buf = append(buf, i)
		}
	}
	return buf
}

// firstTwo is tokens with a property of the first counter only.
type firstTwo struct{ tokens }

func (firstTwo) Properties() []Property[tokensState, int] {
	return []Property[tokensState, int]{{Name: "first-two", Kind: Sometimes, Check: func(s *tokensState) string {
		if s[0] == 2 {
			return "the first counter is 2"
		}
		return ""
	}}}
}

// rotated's "canonical form" rotates the counters: not a fixed
// representative, since rotating it again gives another state.
type rotated struct{ tokens }

func (rotated) Canonical(s *tokensState) tokensState { return tokensState{s[1], s[2], s[0]} }

// CheckSymmetry explores every concrete state and verifies the symmetry on
// each: a true one passes with the concrete counts; one that some step, a
// property or the canonical form itself breaks stops the run with an error
// naming the state and the step.
func TestCheckSymmetry(t *testing.T) {
	for _, opts := range []Options{{Workers: 1, CheckSymmetry: true}, {Workers: 2, CheckSymmetry: true, ForceDisk: true, MemBudget: 1}} {
		r := run(t, Machine[tokensState, int](tokens{}), opts)
		mustPass(t, r)
		checkStats(t, r.Stats, 54, 27, 6, 7)
		if r.Stats.Symmetry {
			t.Fatal("a checking run reports counts up to the symmetry")
		}
		for _, c := range []struct {
			m    Machine[tokensState, int]
			want string
		}{
			{capped{}, `at a state reached at depth 1, the step "0" leads to a class no step of the canonical form leads to`},
			{firstTwo{}, `at a state reached at depth 2, the sometimes-property "first-two" is reached on one of the state and its canonical form only (on the state: true); the state: [2 0 0]`},
			{rotated{}, `at a state reached at depth 1, the canonical form's canonical form differs from it`},
		} {
			if _, err := Run(context.Background(), c.m, opts); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%T %+v: error %v, want one saying %q", c.m, opts, err, c.want)
			}
		}
	}
	if _, err := Run(context.Background(), Machine[tokensState, int](tokens{}), Options{CheckSymmetry: true, Symmetry: true}); err == nil || !strings.Contains(err.Error(), "unset Symmetry") {
		t.Fatalf("CheckSymmetry with Symmetry: error %v", err)
	}
	if _, err := Run(context.Background(), Machine[tokensState, int](tokens{}), Options{CheckSymmetry: true, Simulate: &SimOptions{}}); err == nil || !strings.Contains(err.Error(), "unset Simulate") {
		t.Fatalf("CheckSymmetry with Simulate: error %v", err)
	}
	if _, err := Run(context.Background(), Machine[uint64, int](counters{k: 2, n: 2}), Options{CheckSymmetry: true}); !errors.Is(err, ErrNoSymmetry) {
		t.Fatalf("CheckSymmetry of a model without symmetry: error %v, want ErrNoSymmetry", err)
	}
}

// A run stopped by MaxDepth expands no state of its last level, yet checks
// their symmetry: each model here breaks it first at the cut.
func TestCheckSymmetryAtTheCut(t *testing.T) {
	for _, c := range []struct {
		m     Machine[tokensState, int]
		depth int
		want  string
	}{
		{capped{}, 1, `at a state reached at depth 1, the step "0" leads to a class no step of the canonical form leads to`},
		{firstTwo{}, 2, `at a state reached at depth 2, the sometimes-property "first-two" is reached on one of the state and its canonical form only (on the state: true); the state: [2 0 0]`},
		{rotated{}, 1, `at a state reached at depth 1, the canonical form's canonical form differs from it`},
	} {
		for _, opts := range []Options{{Workers: 1}, {Workers: 2, ForceDisk: true, MemBudget: 1}, {Workers: 2, Checkpoint: t.TempDir()}} {
			opts.CheckSymmetry, opts.MaxDepth = true, c.depth
			if _, err := Run(context.Background(), c.m, opts); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%T %+v: error %v, want one saying %q", c.m, opts, err, c.want)
			}
			// One level less reaches no broken state.
			opts.MaxDepth--
			if opts.Checkpoint != "" {
				opts.Checkpoint = t.TempDir()
			}
			if opts.MaxDepth > 0 {
				if r := run(t, c.m, opts); r.Verdict != Incomplete {
					t.Fatalf("%T %+v: verdict %v, want incomplete", c.m, opts, r.Verdict)
				}
			}
		}
	}
	r := run(t, Machine[tokensState, int](tokens{}), Options{CheckSymmetry: true, MaxDepth: 3})
	if r.Verdict != Incomplete {
		t.Fatalf("a true symmetry cut at depth 3: verdict %v", r.Verdict)
	}
}
