//go:build race

package protocols

// classicRace: the race detector slows exploration about tenfold, so the
// classic and readonly tests use their smallest bounds under it.
const classicRace = true
