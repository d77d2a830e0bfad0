// Package open checks the four reconciliation disciplines §6.5 records as
// open — key-range gating, version-max, re-read normalization and
// rewind-by-preimage — each with its obligation as a property and its broken
// variants as modes. Each mode is a choice of the discipline's parts, and
// each discipline a constructor (Keyrange, Versionmax, Reread, Rewind), so a
// variant is a few lines, as for the shipped protocols.
//
// The paper proves none of them; a pass here is bounded evidence, not a
// theorem. Every model is written only through cutcheck's public kit
// (model.Capture, protocols.Define and protocols.Register, the invariants
// package), as a user's own discipline would be: this package is also the
// kit's largest example.
package open
