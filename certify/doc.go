// Package certify checks recorded capture runs: given an evidence bundle — a
// certificate (scope, frontier, clean replay prefix) and the evidence of a
// real run (chunk plan with key-range domains, brackets, observed rows and
// absences, the source log, the emitted stream) — Verify answers Accept,
// Reject or Unsupported, as the verifier of the companion study of DBLog
// (seed 003, §8–§9) does under its checker obligations:
//
//   - S1 input wellformedness: the bundle parses;
//   - S2 materialization: the evidence assembles into one run;
//   - S3 accessor agreement: the certificate's scope, frontier and prefix are
//     the run's;
//   - S4 the run is wellformed: brackets inside the log, the frontier at or
//     after every high edge, S-OBS, O1–O3 on the scope, the prefix exactly
//     what the named discipline emits (window-discard, range-merge, point
//     splice, as in package model; range-merge key by key, Lemma 6.3),
//     per-key monotonicity;
//
// and then the virtual-cut equality apply(prefix)↾K = src(b0, H, f)↾K itself.
// A Reject names the first failing obligation with its witness; evidence the
// verifier cannot interpret (an unknown version, coordinate kind or field, an
// event without a full image) is Unsupported, never Accept.
//
// An accepted cut advances to a later frontier by a continuation segment and
// restricts to a sub-scope (§11): Options.Segment and Options.Restrict.
//
// Verify streams: keys are arbitrary strings or integers, values arbitrary
// JSON, and memory grows with the keys in scope, not with the log. Past
// Options.Mem a bundle that can be read again is verified as a local split
// by key (partition.go); VerifyPart and MergeParts split a verification
// across machines with the same answer (shard.go).
// WriteModelBundle exports a model capture as a bundle (the cross-check
// against the model checker uses it); FromDebezium converts a Debezium-style
// recording of an incremental snapshot. The format is in FORMAT.md.
//
// The package does no I/O beyond the readers and writers it is given.
package certify
