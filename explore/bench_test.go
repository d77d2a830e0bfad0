package explore

import (
	"context"
	"fmt"
	"testing"
)

// benchModel is a product of 4 counters of 64 values: 64⁴ = 16,777,216
// states over 4·63 = 252 levels, 8 bytes each, and 4·64³·63 = 66,060,288
// steps. It is cheap on purpose, so the numbers measure the engine.
func benchModel() Model[uint64, int] { return counters{k: 4, n: 64} }

// benchRun reports distinct states per second and, for the memory tier,
// the seen-set's bytes per state and the trace keys' bytes per state.
func benchRun(b *testing.B, opts Options) {
	var (
		res        *Result[uint64, int]
		seen, keys int64
	)
	for b.Loop() {
		e, err := newEngine(benchModel(), opts)
		if err != nil {
			b.Fatal(err)
		}
		res, err = e.run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if e.seen != nil {
			seen = e.seen.bytes()
		}
		keys = e.trace.bytes()
		if err := e.close(); err != nil {
			b.Fatal(err)
		}
	}
	if res.Verdict != Pass || res.Stats.Distinct != 1<<24 || res.Stats.Generated != 66060288 {
		b.Fatalf("%v %+v", res.Verdict, res.Stats)
	}
	n := float64(res.Stats.Distinct)
	b.ReportMetric(n/(b.Elapsed().Seconds()/float64(b.N)), "states/s")
	if seen > 0 {
		b.ReportMetric(float64(seen)/n, "seen-B/state")
	}
	b.ReportMetric(float64(keys)/n, "trace-B/state")
}

func BenchmarkRunMem(b *testing.B) {
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			benchRun(b, Options{Workers: w})
		})
	}
}

// BenchmarkRunDisk keeps the seen-set on disk from the start, with the
// default 32 MiB cache in front of the run files: the 16.7M fingerprints are
// written out in about six sorted runs.
func BenchmarkRunDisk(b *testing.B) {
	benchRun(b, Options{Workers: 2, ForceDisk: true})
}
