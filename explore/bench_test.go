package explore

import (
	"context"
	"fmt"
	"testing"
)

// benchModel is a product of 4 counters of 64 values: 64⁴ = 16,777,216
// states over 4·63 = 252 levels, each state 8 bytes. It is cheap on
// purpose, so the numbers measure the engine.
func benchModel() counters { return counters{k: 4, n: 64} }

func benchRun(b *testing.B, opts Options) {
	m := benchModel()
	var r *Result[uint64, int]
	var seenBytes float64
	for b.Loop() {
		var err error
		r, err = Run(context.Background(), Model[uint64, int](m), opts)
		if err != nil {
			b.Fatal(err)
		}
	}
	if r.Stats.Distinct != 1<<24 {
		b.Fatalf("distinct = %d, want %d", r.Stats.Distinct, 1<<24)
	}
	b.ReportMetric(float64(r.Stats.Distinct)/(b.Elapsed().Seconds()/float64(b.N)), "states/s")
	_ = seenBytes
}

func BenchmarkRunMem(b *testing.B) {
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			benchRun(b, Options{Workers: w})
		})
	}
}

func BenchmarkRunDisk(b *testing.B) {
	benchRun(b, Options{Workers: 2, ForceDisk: true})
}
