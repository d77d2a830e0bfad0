// Package model holds the semantics of Generalized DBLog: keyed stores, the
// commit-ordered log and its prefixes (§2), capture plans and their obligations
// O1–O3 (§3), canonical replay and its trajectory (§4), and emitted streams with
// the merge disciplines that produce them (§6).
//
// It is pure and allocation-light: stores, logs and plans are small fixed-size
// value types, so protocol models can embed them in their states and copy them
// freely. Nothing here does I/O, reads a clock or starts a goroutine.
//
// Positions are 1-based: position p is the p-th committed event. A coordinate
// is a prefix length c and denotes positions 1..c; the window (lo, hi] holds
// positions lo+1..hi (§2.3). Theorem 7's 0-based "lo ≤ p < hi" is the same
// window read with p-1.
package model
