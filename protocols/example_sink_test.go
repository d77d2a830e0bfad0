package protocols_test

import (
	"context"
	"fmt"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

// The sink part is one line on any protocol: here parallel chunks into a
// version-max sink (§6.5), which takes an entry only if its tag is at least
// the one it holds. Under reader-before-backfill the live reader streams
// events beyond a chunk's high offset before its merged block, which a
// last-writer-wins sink then lets overwrite them (a lost update); the
// version-max sink rejects the older block. The stream itself is still out
// of order, and per-key monotonicity (Thm 5), a claim about the stream,
// still fails.
func Example_sinkRule() {
	p := protocols.Parallel(protocols.ParallelParts{})
	p.Name, p.Defaults.Sink = "parallel-version-max", model.VersionMax

	cfg := p.Defaults
	cfg.Keys, cfg.Events, cfg.Chunks, cfg.Fault = 2, 3, 1, protocols.ReaderBeforeBackfill
	for _, only := range []string{"final-replay", "per-key-monotonicity"} {
		r, err := p.Check(context.Background(), cfg, explore.Options{Only: []string{only}})
		if err != nil {
			panic(err)
		}
		fmt.Println(only, r.VerdictName)
	}
	// Output:
	// final-replay pass
	// per-key-monotonicity violated
}
