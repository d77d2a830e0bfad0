package explore

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// gradedTokens is tokens with its counters' sum as grade: every step adds
// one to a counter.
type gradedTokens struct{ tokens }

func (gradedTokens) Grade(s *tokensState) uint64 { return uint64(s[0]) + uint64(s[1]) + uint64(s[2]) }

// gradedCounters is counters with its counters' sum as grade.
type gradedCounters struct{ counters }

func (c gradedCounters) Grade(s *uint64) uint64 {
	g := uint64(0)
	for i := range c.k {
		g += uint64(c.get(*s, i))
	}
	return g
}

// A graded run keeps no seen-set and finds what a run with one finds:
// the same counts, coverage, sometimes and trace, with any workers, on
// disk, in passes, with a symmetry, passing and failing; Stats.Graded
// says which ran.
func TestGradedRunsAsWithSeenSet(t *testing.T) {
	type tc struct {
		name string
		m    Machine[tokensState, int]
	}
	pass, fail := gradedTokens{}, gradedTokens{tokens{allDistinct: true}}
	for _, opts := range []Options{
		{Workers: 1}, {Workers: 2},
		{Workers: 2, ForceDisk: true, MemBudget: 1},
		{Workers: 2, Symmetry: true},
		{Workers: 2, Symmetry: true, ForceDisk: true, MemBudget: 1},
	} {
		for _, c := range []tc{{"pass", pass}, {"fail", fail}} {
			got := run(t, c.m, opts)
			ungraded := opts
			ungraded.NoGrade = true
			want := run(t, c.m, ungraded)
			if !got.Stats.Graded || want.Stats.Graded {
				t.Fatalf("%s %+v: Graded %v with the grade, %v without", c.name, opts, got.Stats.Graded, want.Stats.Graded)
			}
			want.Stats.Graded = true
			if g, w := zeroTimes(got), zeroTimes(want); !reflect.DeepEqual(g, w) {
				t.Fatalf("%s %+v: graded\n%+v\nwith a seen-set\n%+v", c.name, opts, g, w)
			}
		}
	}
	// The exact counts of TestSymmetryCounts.
	checkStats(t, run(t, Machine[tokensState, int](pass), Options{Workers: 2}).Stats, 54, 27, 6, 7)
	checkStats(t, run(t, Machine[tokensState, int](pass), Options{Workers: 2, Symmetry: true}).Stats, 20, 10, 6, 2)

	// 40³ states, in passes under a small budget, on the disk tier.
	m := gradedCounters{counters{k: 3, n: 40}}
	for _, opts := range []Options{{Workers: 2, MemBudget: 256 << 10, ForceDisk: true}, {Workers: 2}} {
		got := run(t, Machine[uint64, int](m), opts)
		opts.NoGrade = true
		want := run(t, Machine[uint64, int](m), opts)
		if got.Stats.Distinct != 64000 || got.Stats.Generated != want.Stats.Generated || got.Stats.Distinct != want.Stats.Distinct || got.Stats.Depth != want.Stats.Depth || !reflect.DeepEqual(got.Coverage, want.Coverage) {
			t.Fatalf("%+v: graded %+v, with a seen-set %+v", opts, got.Stats, want.Stats)
		}
	}
}

// A graded run resumed from its checkpoint ends as one never stopped.
func TestGradedResume(t *testing.T) {
	m := Machine[uint64, int](gradedCounters{counters{k: 3, n: 12}})
	want := zeroTimes(run(t, m, Options{Workers: 2}))
	dir := filepath.Join(t.TempDir(), "ckpt")
	if r := run(t, m, Options{Workers: 2, Checkpoint: dir, MaxDepth: 7}); r.Verdict != Incomplete {
		t.Fatalf("verdict %v, want incomplete", r.Verdict)
	}
	if got := zeroTimes(run(t, m, Options{Workers: 2, Checkpoint: dir})); !reflect.DeepEqual(got, want) {
		t.Fatalf("resumed\n%+v\nuninterrupted\n%+v", got, want)
	}
}

// jumpy adds to tokens a step that raises a counter by two: a state is
// then reached at two depths, which a run without a seen-set would count
// twice. Its grade is still the sum.
type jumpy struct{ gradedTokens }

func (jumpy) Actions(s *tokensState, buf []int) []int {
	buf = tokens{}.Actions(s, buf)
	if s[0] == 0 {
		buf = append(buf, 3)
	}
	return buf
}
func (jumpy) Next(s *tokensState, a int, t *tokensState) bool {
	if a == 3 {
		t[0] += 2
		return true
	}
	t[a]++
	return true
}

// twoStarts has initial states of grades 0 and 1.
type twoStarts struct{ gradedTokens }

func (twoStarts) Init() []tokensState { return []tokensState{{}, {1, 0, 0}} }

// dropLast's canonical form forgets the last counter, so a class holds
// states of several grades.
type dropLast struct{ gradedTokens }

func (dropLast) Canonical(s *tokensState) tokensState { return tokensState{s[0], s[1], 0} }

// A grade that some step, initial state or canonical form breaks stops
// the run with an error that says which; without the grade, the same
// models run.
func TestGradeChecked(t *testing.T) {
	for _, c := range []struct {
		m    Machine[tokensState, int]
		opts Options
		want string
	}{
		{jumpy{}, Options{Workers: 2}, `the step "3" goes from grade 0 to grade 2`},
		{twoStarts{}, Options{Workers: 2}, "initial states have grades 0 and 1"},
		{dropLast{}, Options{Workers: 2, Symmetry: true}, `the step "2" leads to a state of grade 1 whose canonical form has grade 0`},
	} {
		_, err := Run(context.Background(), c.m, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%T: error %v, want one saying %q", c.m, err, c.want)
		}
		c.opts.NoGrade = true
		if _, err := Run(context.Background(), c.m, c.opts); err != nil {
			t.Fatalf("%T without its grade: %v", c.m, err)
		}
	}
	// Without the grade, jumpy's 27 states are found, (2,x,y) at two depths.
	r := run(t, Machine[tokensState, int](jumpy{}), Options{Workers: 2, NoGrade: true})
	if r.Stats.Distinct != 27 {
		t.Fatalf("jumpy: %d states, want 27", r.Stats.Distinct)
	}
}

// cycle steps through three phases and counts its steps in a field its
// Encode leaves out: three states, and a Grade (the count) that is one up
// on every step but not a function of what identifies a state.
type cycle struct{}

type cycleState struct{ Phase, Steps uint8 }

func (cycle) Init() []cycleState                      { return []cycleState{{}} }
func (cycle) Actions(_ *cycleState, buf []int) []int  { return append(buf, 0) }
func (cycle) Properties() []Property[cycleState, int] { return nil }
func (cycle) Grade(s *cycleState) uint64              { return uint64(s.Steps) }
func (cycle) Encode(s *cycleState, buf []byte) []byte { return append(buf, s.Phase) }
func (cycle) Next(s *cycleState, _ int, t *cycleState) bool {
	t.Phase, t.Steps = (s.Phase+1)%3, s.Steps+1
	return true
}

type cycleCodec struct{ cycle }

func (cycleCodec) Decode(b []byte, s *cycleState) error { s.Phase = b[0]; return nil }

// cycleSym has the trivial symmetry, so its runs identify states by their
// canonical forms and queue them apart.
type cycleSym struct{ cycleCodec }

func (cycleSym) Canonical(s *cycleState) cycleState { return *s }

// The grade is checked on the state a successor's encoding decodes to: a
// Grade that reads a field Encode drops fails at the first step, where it
// had let the three states recur at every level (51 "distinct" states by
// depth 50). Without Decode the grade cannot be checked so, and the run
// keeps a seen-set. Without a symmetry the check is made as the next level
// is expanded; a run stopped at MaxDepth 1 does not expand the level the
// broken step leads to, and checks it at the cut.
func TestGradeCheckedOnDecoded(t *testing.T) {
	for _, opts := range []Options{{Workers: 1, MaxDepth: 50}, {Workers: 2, ForceDisk: true, MemBudget: 1, MaxDepth: 50}} {
		sym := opts
		sym.Symmetry = true
		for _, c := range []struct {
			m    Machine[cycleState, int]
			opts Options
		}{{cycleCodec{}, opts}, {cycleSym{}, sym}} {
			_, err := Run(context.Background(), c.m, c.opts)
			if want := `the step "0" leads to a state of grade 1 whose encoding decodes to a state of grade 0`; err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("%T %+v: error %v, want one saying %q", c.m, c.opts, err, want)
			}
		}
		for _, m := range []Machine[cycleState, int]{cycleCodec{}, cycle{}} {
			o := opts
			o.NoGrade = m == Machine[cycleState, int](cycleCodec{})
			r := run(t, m, o)
			if r.Verdict != Pass || r.Stats.Distinct != 3 || r.Stats.Graded {
				t.Fatalf("%T %+v: %v, %d states, graded %v; want pass, 3 states, no grade", m, o, r.Verdict, r.Stats.Distinct, r.Stats.Graded)
			}
		}
	}
	for _, opts := range []Options{{Workers: 2, MaxDepth: 1}, {Workers: 1, MaxDepth: 1, ForceDisk: true, MemBudget: 1}} {
		_, err := Run(context.Background(), cycleCodec{}, opts)
		if want := `the step "0" leads to a state of grade 1 whose encoding decodes to a state of grade 0`; err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%+v: error %v, want one saying %q", opts, err, want)
		}
	}
}
