package explore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// lockConcrete is the lock model without its symmetry (it has no
// Canonical), so its states are counted concretely.
type lockConcrete struct{ m lock }

func (c lockConcrete) Init() []lockState { return c.m.Init() }
func (c lockConcrete) Actions(s *lockState, buf []lockStep) []lockStep {
	return c.m.Actions(s, buf)
}
func (c lockConcrete) Next(s *lockState, a lockStep, t *lockState) bool { return c.m.Next(s, a, t) }
func (c lockConcrete) Properties() []explore.Property[lockState, lockStep] {
	return c.m.Properties()
}
func (c lockConcrete) StateConstraint(s *lockState) bool { return c.m.StateConstraint(s) }

// BenchmarkProcesses explores the lock of Example_processes, as a model
// that writes only Machine's four methods and a constraint (default codec,
// no symmetry), at up to 227 entries in all: about 40M states over 682
// levels, 2.4 steps a state. It reports distinct states per second; the
// smaller size is for profiling.
//
//	go test -run '^$' -bench Processes/entries=227 -benchtime 1x ./explore
func BenchmarkProcesses(b *testing.B) {
	for _, n := range []int{100, 227} {
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("entries=%d/workers=%d", n, w), func(b *testing.B) {
				var res *explore.Result[lockState, lockStep]
				for b.Loop() {
					var err error
					res, err = explore.Run(context.Background(), explore.Machine[lockState, lockStep](lockConcrete{lock{maxEntries: n}}), explore.Options{Workers: w})
					if err != nil {
						b.Fatal(err)
					}
				}
				if res.Verdict != explore.Pass || res.Stats.Depth != 3*n+3 {
					b.Fatalf("%v %+v", res.Verdict, res.Stats)
				}
				b.ReportMetric(float64(res.Stats.Distinct)/(b.Elapsed().Seconds()/float64(b.N)), "states/s")
				b.ReportMetric(float64(res.Stats.Distinct), "distinct")
			})
		}
	}
}
