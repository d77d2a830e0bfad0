//go:build race

package certify

// raceEnabled: the race detector slows the cross-check about tenfold, so it
// enumerates shorter logs.
const raceEnabled = true
