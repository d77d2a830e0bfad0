package explore

import (
	"testing"
)

// Extend adds a property and a constraint to a model and keeps its
// optional parts: the counters' Done still spares their last state from a
// deadlock, and their descriptions still name the steps.
func TestExtend(t *testing.T) {
	m := Machine[uint64, int](counters{k: 2, n: 4})
	c1 := func(s *uint64) int { return int(*s>>8) & 0xff }
	x := Extend(m, Extra[uint64, int]{Properties: []Property[uint64, int]{{Name: "c1-below-2", Kind: Always, Check: func(s *uint64) string {
		if c1(s) >= 2 {
			return "c1 reached 2"
		}
		return ""
	}}}})
	r, err := Run(t.Context(), x, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != Violated || r.Violation.Property != "c1-below-2" || len(r.Violation.Trace) != 3 {
		t.Fatalf("extended: %v %+v", r.Verdict, r.Violation)
	}
	if rep := NewReport(x, r); rep.Violation.Steps[1].Action != "inc c1" {
		t.Errorf("the extension lost the model's descriptions: %q", rep.Violation.Steps[1].Action)
	}
	bounded := Extend(m, Extra[uint64, int]{Constraint: func(s *uint64) bool { return c1(s) < 1 }})
	r, err = Run(t.Context(), bounded, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	// c0 0..3 with c1 = 0 kept (4 states); their c1 = 1 successors checked, not kept.
	if r.Verdict != Pass || r.Stats.Distinct != 4 {
		t.Errorf("constrained: %v, %d distinct, want a pass over 4", r.Verdict, r.Stats.Distinct)
	}
}
