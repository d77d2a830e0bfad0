package protocols_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/specs"
)

var update = flag.Bool("update", false, "rewrite the golden traces under testdata/")

// Reference: Props 1 and 3 (§4.3, §6.3) — the specs reproducing the paper's
// instances end in exactly the paper's trace, step by step: the golden text
// under testdata/ was checked against the paper's proofs by hand (values
// renamed: any present value stands for the paper's 2 and 5).
//
// Prop 1: over the empty store, the low sample at c0; a read as ⊥ before e1
// commits; e1 = a := 1, e2 = b := 1; b read present at c2; the high sample at
// c2; both window events consumed; the release emits nothing. No coordinate
// of [c0, c2] explains both reads (single-read-point fails), while the cut
// holds at c2.
//
// Prop 3: e1 = a := 5 at c1; the low offset at c1; a read as 5 at c1; e2 =
// a := ⊥; the high offset at c2; the merged block is empty; the narrowed gate
// streams e1 from s0 = c0 and withholds e2: a replays to the deleted value.
func TestPaperInstances(t *testing.T) {
	all, err := specs.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"paper-prop1-readonly", "mut-window-only-withholding-parallel"} {
		t.Run(name, func(t *testing.T) {
			var spec *specs.Spec
			for i := range all {
				if all[i].Name == name {
					spec = &all[i]
				}
			}
			if spec == nil {
				t.Fatalf("no spec %s", name)
			}
			o, err := specs.Run(context.Background(), *spec, explore.Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if !o.OK || o.Report.Violation == nil {
				t.Fatalf("%s: got %s: %s", name, o.Got, o.Why)
			}
			got := o.Report.Violation.Property + ": " + o.Report.Violation.Reason + "\n" + o.Report.Violation.Text(false)
			file := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s: the trace differs from %s:\n--- got\n%s\n--- want\n%s", name, file, got, want)
			}
		})
	}
}
