package explore

import (
	"slices"
	"strings"
	"testing"
)

// A run with Continue reports every failing property, opt-in ones too,
// each with the trace a run checking it alone finds, for any number of
// workers; it explores every state, as a passing run does.
func TestContinue(t *testing.T) {
	over := func(i, n int) func(*uint64) string {
		return func(s *uint64) string {
			if int(*s>>(8*i))&0xff > n {
				return "too big"
			}
			return ""
		}
	}
	props := []Property[uint64, int]{
		{Name: "c0-small", Kind: Always, Check: over(0, 3)},
		{Name: "holds", Kind: Always, Check: over(0, 9)},
		{Name: "c1-tiny", Kind: Always, Check: over(1, 0), OptIn: true},
		{Name: "c0-rises-alone", Kind: Transition, CheckStep: func(s *uint64, a int, t *uint64) string {
			if a == 0 && *s>>8 > 2 {
				return "c0 rose after c1 passed 2"
			}
			return ""
		}},
	}
	m := Machine[uint64, int](counters{k: 2, n: 6, props: props})
	plain, err := Run(t.Context(), m, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plain.Unchecked, []string{"c1-tiny"}) {
		t.Errorf("plain run: unchecked %v, want the opt-in c1-tiny", plain.Unchecked)
	}
	if sum := NewReport(m, plain).Summary(); !strings.Contains(sum, "unchecked:   c1-tiny") {
		t.Errorf("plain summary does not name the unchecked property:\n%s", sum)
	}
	full, err := Run(t.Context(), Machine[uint64, int](counters{k: 2, n: 6}), Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, nw := range []int{1, 2} {
		r, err := Run(t.Context(), m, Options{Workers: nw, Continue: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != Violated || r.Unfinished || len(r.Unchecked) != 0 {
			t.Fatalf("workers %d: verdict %v unfinished %v unchecked %v", nw, r.Verdict, r.Unfinished, r.Unchecked)
		}
		var names []string
		for _, v := range r.Violations {
			names = append(names, v.Property)
			alone, err := Run(t.Context(), m, Options{Workers: 1, Only: []string{v.Property}})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(v.Path, alone.Violation.Path) {
				t.Errorf("workers %d: %s: path %v, alone %v", nw, v.Property, v.Path, alone.Violation.Path)
			}
		}
		if want := []string{"c0-small", "c1-tiny", "c0-rises-alone"}; !slices.Equal(names, want) {
			t.Errorf("workers %d: violated %v, want %v", nw, names, want)
		}
		if r.Violation.Property != "c1-tiny" || len(r.Violation.Trace) != 2 {
			t.Errorf("workers %d: first violation %s in %d states, want c1-tiny in 2", nw, r.Violation.Property, len(r.Violation.Trace))
		}
		if r.Stats.Distinct != full.Stats.Distinct || r.Stats.Generated != full.Stats.Generated {
			t.Errorf("workers %d: explored %d/%d states, want all %d/%d", nw, r.Stats.Distinct, r.Stats.Generated, full.Stats.Distinct, full.Stats.Generated)
		}
		if rep := NewReport(m, r); len(rep.Violations) != 3 || rep.Violations[2].Property != "c0-rises-alone" || len(rep.Violations[2].Steps) == 0 {
			t.Errorf("workers %d: report violations %v", nw, rep.Violations)
		}
	}
	cut, err := Run(t.Context(), m, Options{Workers: 1, Continue: true, MaxDepth: 2})
	if err != nil {
		t.Fatal(err)
	}
	if cut.Verdict != Violated || !cut.Unfinished || len(cut.Violations) != 1 {
		t.Errorf("cut at depth 2: verdict %v unfinished %v violations %d", cut.Verdict, cut.Unfinished, len(cut.Violations))
	}
	for _, o := range []Options{{Continue: true, Checkpoint: t.TempDir()}, {Continue: true, Shard: Shard{Index: 0, Count: 2}}, {Continue: true, Simulate: &SimOptions{}}} {
		if _, err := Run(t.Context(), m, o); err == nil || !strings.Contains(err.Error(), "Continue") {
			t.Errorf("%+v: %v, want a refusal", o, err)
		}
	}
}
