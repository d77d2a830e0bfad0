//go:build race

package specs

import "github.com/cutcheck/cutcheck/protocols"

// tooLargeForRace: the race detector slows exploration about tenfold, so
// the quick specs with three events, or with two-row transactions over two
// chunks, are not run twice under it.
func tooLargeForRace(cfg protocols.Config) bool {
	return cfg.Events >= 3 || cfg.Txn >= 2 && cfg.Chunks >= 2
}
