package specs

import (
	"context"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// Random walks find every shipped mutation's violation: each mutated spec,
// simulated from a fixed seed with its own selection of invariants, fails
// with the invariant it expects (the trace need not be shortest).
func TestSimulateFindsMutations(t *testing.T) {
	all, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.Mutation == "" {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			opts := explore.Options{Workers: 1, Simulate: &explore.SimOptions{Seed: 1, Depth: 40, Walks: 20000}}
			o, err := Run(context.Background(), s, opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s after %d walks", o.Got, o.Report.Simulation.Walks)
			if o.Got != s.Expect {
				t.Fatalf("simulation: %s after %d walks, want %s", o.Got, o.Report.Simulation.Walks, s.Expect)
			}
		})
	}
}
