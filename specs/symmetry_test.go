package specs

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// Reference: §10, §2.1 — value renaming is sound on every quick spec: the
// verdict with the symmetry is the one without (and the spec's
// expectation), a violation's trace is as long, and a complete run counts
// no more classes than states. Under the race detector the larger quick
// specs are left out (tooLargeForRace).
func TestQuickSpecsSymmetry(t *testing.T) {
	all, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	reduced := 0
	for _, s := range all {
		if !s.Quick || strings.HasPrefix(s.Name, OpenPrefix) {
			continue // the open disciplines declare no symmetry
		}
		// A fixed history names its values, the stream's digest mixes
		// them: both refused.
		if len(s.History) > 0 || s.Expect == "exact-emission" || slices.Contains(s.With, "exact-emission") || slices.Contains(s.Only, "exact-emission") {
			if _, err := Run(context.Background(), s, explore.Options{Workers: 2, Symmetry: true}); !errors.Is(err, explore.ErrNoSymmetry) {
				t.Errorf("%s: with symmetry, got %v, want it refused", s.Name, err)
			}
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			if cfg, _, _ := s.Config(); tooLargeForRace(cfg) {
				t.Skip("too large to run twice under the race detector")
			}
			sym, err := Run(context.Background(), s, explore.Options{Workers: 2, Symmetry: true})
			if err != nil {
				t.Fatal(err)
			}
			if !sym.OK || !sym.Report.Stats.Symmetry {
				t.Fatalf("with symmetry: %s (symmetry used: %v)", sym.Why, sym.Report.Stats.Symmetry)
			}
			plain, err := Run(context.Background(), s, explore.Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			ps, ss := plain.Report.Stats, sym.Report.Stats
			switch {
			case plain.Got != sym.Got:
				t.Errorf("verdict %s with symmetry, %s without", sym.Got, plain.Got)
			case ps.Symmetry:
				t.Errorf("symmetry used without being asked for")
			case plain.Report.Verdict == explore.Pass && ss.Distinct > ps.Distinct:
				t.Errorf("%d classes with symmetry, %d states without", ss.Distinct, ps.Distinct)
			case plain.Report.Violation != nil && len(plain.Report.Violation.Steps) != len(sym.Report.Violation.Steps):
				t.Errorf("trace of %d steps with symmetry, %d without", len(sym.Report.Violation.Steps), len(plain.Report.Violation.Steps))
			}
			if ss.Distinct < ps.Distinct {
				reduced++
			}
		})
	}
	if reduced < 15 {
		t.Errorf("the symmetry reduced only %d quick specs", reduced)
	}
}

// A spec's "symmetry": true runs it up to value renaming, as --symmetry
// does: classic-2's 21,024 states (as bfClassic in protocols counts them)
// fall to 10,516 classes, 21,024 = 2·10,516 − 8: swapping 1 and 2 pairs
// each state holding a value with another and fixes the 8 that hold none
// ({}, [L], [L] read ⊥, [L H] consumed 0..2 from s0 = 0 and 1..2 from
// s0 = lo = 1).
func TestSpecSymmetryField(t *testing.T) {
	data, err := embedded.ReadFile("classic-2.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		field    string
		symmetry bool
		distinct uint64
	}{{"", false, 21024}, {`"symmetry": true, `, true, 10516}} {
		s, err := Parse("classic-2.json", append([]byte("{"+tt.field), data[1:]...))
		if err != nil {
			t.Fatal(err)
		}
		o, err := Run(context.Background(), s, explore.Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if st := o.Report.Stats; !o.OK || st.Symmetry != tt.symmetry || st.Distinct != tt.distinct {
			t.Errorf("%q: %s, symmetry %v, %d distinct; want pass, %v, %d", tt.field, o.Got, st.Symmetry, st.Distinct, tt.symmetry, tt.distinct)
		}
	}
}

// A spec's "check-symmetry": true verifies value renaming on every state,
// as --check-symmetry does: the concrete count, and the check in the
// search identity. With "symmetry" too it is refused, as the flags are.
func TestSpecCheckSymmetryField(t *testing.T) {
	data, err := embedded.ReadFile("classic-2.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("classic-2.json", append([]byte(`{"check-symmetry": true, `), data[1:]...))
	if err != nil {
		t.Fatal(err)
	}
	o, err := Run(context.Background(), s, explore.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if st := o.Report.Stats; !o.OK || st.Symmetry || st.Distinct != 21024 {
		t.Errorf("%s, symmetry %v, %d distinct; want pass, false, 21024", o.Got, st.Symmetry, st.Distinct)
	}
	if id, err := s.Identity(explore.Options{}); err != nil {
		t.Fatal(err)
	} else if v, _ := id.Get("check-symmetry"); v != "true" {
		t.Errorf("identity %v does not name the check", id)
	}
	_, err = Parse("x.json", append([]byte(`{"check-symmetry": true, "symmetry": true, `), data[1:]...))
	if err == nil || !strings.Contains(err.Error(), `x.json: field "check-symmetry": explores every concrete state; it cannot be combined with "symmetry"`) {
		t.Errorf("both: %v", err)
	}
}
