//go:build race

package model_test

// raceEnabled: the race detector slows the exhaustive test about tenfold, so
// it enumerates plans over the one-event-transaction logs only.
const raceEnabled = true
