package protocols

import (
	"context"
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// BenchmarkProtocols explores each protocol at the paper's largest bounds
// (3 keys, 2 values, 4 events, 2 chunks; T = 2 for readonly, one unit for
// dump; parallel, whose per-key stale reads make those bounds 93 M states,
// at spec parallel-5's, 14.8 M) and reports, for 1 and 2 workers, distinct states per second of
// the runs' own time and the bytes per distinct state the process held at
// the peak (Stats.BytesPerState; each run starts with the memory of the
// one before returned to the system).
func BenchmarkProtocols(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"classic", Config{Keys: 3, Values: 2, Events: 4, Chunks: 2, Txn: 1}},
		{"readonly", Config{Keys: 3, Values: 2, Events: 4, Chunks: 2, Txn: 2}},
		{"parallel", Config{Keys: 3, Values: 3, Events: 3, Chunks: 2, Txn: 2}},
		{"dump", Config{Keys: 3, Values: 2, Events: 4, Chunks: 1, Txn: 1, Mode: "uncertain"}},
		{"composite", Config{Keys: 3, Values: 2, Events: 4, Chunks: 2, Txn: 1, Mode: "mixed"}},
	} {
		p, err := Lookup(tc.name)
		if err != nil {
			b.Fatal(err)
		}
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/workers=%d", tc.name, workers), func(b *testing.B) {
				var distinct uint64
				var secs, perState float64
				for b.Loop() {
					debug.FreeOSMemory()
					rep, err := p.Check(context.Background(), tc.cfg, explore.Options{Workers: workers})
					if err != nil {
						b.Fatal(err)
					}
					if rep.Verdict != explore.Pass {
						b.Fatalf("verdict %v", rep.Verdict)
					}
					distinct += rep.Stats.Distinct
					secs += rep.Stats.Elapsed.Seconds()
					perState = max(perState, rep.Stats.BytesPerState)
				}
				b.ReportMetric(float64(distinct)/secs, "distinct/s")
				b.ReportMetric(perState, "B/state")
				b.ReportMetric(float64(distinct)/float64(b.N), "distinct")
			})
		}
	}
}
