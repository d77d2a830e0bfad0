//go:build race

package protocols

// dumpRace: the race detector slows exploration about tenfold, so the dump
// and composite tests use their small bounds under it.
const dumpRace = true
