// Package explore is cutcheck's explicit-state model checker: it explores
// every state of a Machine reachable from its initial states, breadth first,
// checks the model's properties on every state and step, and returns a
// shortest counterexample when one fails.
//
// The Machine interface (model.go) is the whole required contract: initial
// states, enabled actions, successors and properties. Everything else is
// optional, with defaults: a codec (encoding/binary for a fixed-size state
// type), descriptions (fmt's %v of the action), action kinds (one, "step"),
// constraints, a symmetry, a shard key, a grade, fields and views for traces. The
// engine knows nothing else about the states it explores. Run returns a
// Result: Pass, Violated (with a trace) or Incomplete (cancelled, or
// MaxDepth reached), with statistics, per-action coverage and the Sometimes
// properties reached. A failed property is a result, not an error; Run's
// error means the run could not be carried out. NewReport renders a Result
// without its type parameters, for printing (Report.Summary,
// TraceReport.Text) and for saving as JSON.
//
// # Determinism
//
// The Result (apart from Stats.Elapsed and Stats.OnDisk) is the same for
// any number of workers, and whether the seen-set and queue live in memory
// or on disk. The search is level-synchronous and every level is kept in the
// order single-threaded FIFO BFS would find it:
//
//   - Level 0 is m.Init() in order, duplicates dropped (the first wins).
//   - State i of a level, taking the action at position j of its Actions
//     (counting only actions; a Next that returns false makes nothing), discovers
//     its successor with key i<<16 | j.
//   - While a level is expanded the seen-set is read-only. Each successor
//     is offered to a per-level map from fingerprint to the smallest key
//     that reached it (a lock-free table with a min-compare-and-swap); an
//     offer holding the smallest key so far is kept as a candidate. On the
//     disk tier it is first looked up in the seen-set's cache and dropped
//     if seen (the map then marks the fingerprint seen, so later offers of
//     it are dropped at once); in memory (without a symmetry) the seen-set
//     is consulted after the level instead, shard by shard, as each
//     fingerprint's winning candidate goes into it: one already there was
//     seen before and is dropped. Workers take contiguous units of the
//     level and keep their candidates in unit order; after the level,
//     keeping only each fingerprint's smallest key (and none of those
//     seen) and concatenating the units gives the next level, sorted by
//     key.
//   - Every check that fails is recorded with the length of its trace and
//     its key (or, for a deadlock, its state's position); once the level is
//     finished the smallest wins: shortest trace first, then smallest key,
//     then the property's position in Properties.
//
// Always and Sometimes properties are checked on each new state, Transition
// properties on every step, including steps to states already seen
// (Options.Only narrows the Always and Transition properties checked;
// opt-in properties are checked only when Options.With or Only names them). A
// state with no successor is a deadlock unless the model is a Doner and
// Done holds, or Options.NoDeadlock is set. Initial states are checked
// too.
//
// Stats: Generated counts steps (successors with ok=true, duplicates
// included), Distinct the states kept, Initial those of level 0,
// Depth the levels completed (for a violation, the depth of the trace's
// last state), and QueuePeak the largest level. After a violation, Distinct
// and QueuePeak cover the levels up to the one whose expansion found it,
// and Generated includes that whole expansion; they are deterministic too.
//
// # Counts compared with TLC
//
// A model ported from TLA+ can be validated by comparing numbers with TLC.
// Distinct is TLC's "distinct states found". TLC's "states generated"
// counts every state its Init produces (duplicates included) besides the
// successors: that is TLCGenerated, len(Init()) + Generated. TLC's depth
// counts the initial state as 1: TLCDepth is Depth + 1. A stuttering step,
// which TLC counts, is Next returning true with t unchanged; false is a
// disabled action, which TLC does not count either.
// Constraints count as in TLC (see Constraints). The figures agree for a
// finished run; after a violation TLC stops part-way through a level, so
// its counts there depend on its workers and are not comparable.
//
// # Constraints
//
// A model may bound its search with a state constraint (StateConstrainer)
// and an action constraint (ActionConstrainer), as TLC's CONSTRAINT and
// ACTION_CONSTRAINT do, and with the same meaning: a successor outside them
// is generated and counted (Generated, coverage), its step's Transition
// properties and its own Always and Sometimes properties are checked (a
// violation there is reported with its trace), but it is not added to the
// seen-set and not expanded. Since it is not remembered, it is checked again
// each time it is generated. A state whose only successors lie outside the
// constraints is not a deadlock (it has successors), as in TLC. An initial
// state outside the state constraint is checked but not kept.
//
// # Symmetry
//
// With Options.Symmetry, a model with a symmetry (Symmetric) is explored up
// to it, as with TLC's SYMMETRY: states are identified by the encoding of
// their canonical form, while the queue keeps concrete states, so traces
// are concrete and replay by their action positions. It is opt-in, as in
// TLC: without it every model's concrete states are counted, and asking
// for it of a model without a symmetry is an error (ErrNoSymmetry). See
// Symmetric for when the reduction is sound; Options.CheckSymmetry verifies
// that on every state of a concrete run.
//
// # Simulation
//
// For bounds too large to exhaust, Simulate (or Options.Simulate) checks
// the same properties along seeded random walks instead, as TLC's
// -simulate does: reproducible from the seed, the same for any number of
// workers, reporting walks, steps and steps per second. A violation's
// trace is real and replays by its Path but is not necessarily a shortest
// one, and a simulation without a violation is Incomplete, never Pass.
//
// # Fingerprints and collisions
//
// A state is identified by the unseeded 64-bit xxhash of its encoding (0 is
// stored as 1). Two distinct states with the same fingerprint would make the
// second look seen, hiding its successors. For n distinct states the
// probability of any collision is at most n(n-1)/2 · 2⁻⁶⁴ < n²/2⁶⁵, which
// Run reports as Result.Collision: about 3·10⁻⁶ for 10⁷ states, 3·10⁻⁴ for
// 10⁸ and 0.03 for 10⁹.
//
// # Graded models
//
// A model whose every step adds one to a grade (Graded) never reaches a
// state at two depths: a new state can only equal another of its own
// level, which the level map finds. A graded run keeps no seen-set. It
// does less work (no insertions into a growing table) and holds less
// memory (none of the seen-set's 9 to 12 bytes a state), with the same
// Result; Stats.Graded says it ran so. The grade is
// checked on every step and initial state, on the state its encoding
// decodes to (what the run keeps of it), and a step that breaks it stops
// the run with an error, never a wrong count. A model with Encode but no
// Decode keeps the seen-set, as does Options.NoGrade, to compare.
//
// # Memory
//
// The in-memory seen-set is an ordered linear-probing table of fingerprints
// in 256 independently growing shards: 9.3 to 11.7 bytes a state. Traces are
// not stored as states: each level keeps its states' keys, delta-coded
// (about 2 bytes a state), and a trace is rebuilt by walking keys back to
// an initial state and re-running the recorded actions (which is why every
// Model method must be deterministic). The frontier is kept as encodings.
//
// # Disk tier
//
// With ForceDisk, or once the engine's memory would exceed its share of
// MemBudget (see below), the run moves to disk:
//
//   - fingerprints go to sorted runs in plain files, fronted by an
//     in-memory cache of recent fingerprints (a tenth of the budget, or
//     32 MiB without one) that is written out as a new run when full, and
//     by a Bloom filter per run (up to 2 bytes a stored state, within a
//     tenth of the budget) that spares most lookups of new states. Runs
//     are merged like a binary counter, so there are O(log n) of them.
//     After each level, the level's fingerprints that the filters cannot
//     rule out are looked up, in order, a 4 KiB block at a time. The files
//     are read with pread, never mapped, so what the system caches of them
//     is page cache, not the run's resident memory (an embedded key-value
//     store was used before; it maps its tables, and the mapped pages
//     alone outgrew small budgets);
//   - the trace keys go to a file, and once the budget is exceeded the
//     frontier and the level's candidates spill to plain files of
//     length-prefixed encodings (decoded with the model's Decode or the
//     default codec).
//
// The files live in a new directory named cutcheck-* inside Options.Dir,
// or inside the system's temporary directory when Dir is empty. That
// directory is removed when Run returns, whatever the outcome (pass,
// violation, cancellation or error); Options.Dir itself is created if
// needed and never removed. Nothing is created when the run stays in memory.
// While the run lasts, the directory holds a file named owner with the
// process id, locked by the run (flock); a run killed with SIGKILL leaves its
// directory, and RemoveOrphans, which the command line calls before every
// run, removes the directories whose owner file no process holds. Runs may
// share a Dir: each has its own directory in it.
//
// # Checkpoints
//
// With Options.Checkpoint a run keeps a level-granular checkpoint in that
// directory (the states of every level as fingerprints and keys, the
// frontier's encodings, the counters) and continues from it when started
// again, reaching the same result as a run never interrupted, whether it
// was cancelled or killed. Unlike the disk tier's files, the checkpoint is
// kept when the run is incomplete; a finished run removes it. It carries
// the search's identity (Options.SearchIdentity) and checksums of its
// files: a checkpoint of another search is refused with a *MismatchError
// naming the field that differs, a damaged one with ErrDamaged, and one a
// live run holds with ErrInUse. See checkpoint.go for its files and limits.
//
// # Memory budget
//
// MemBudget bounds the process's resident memory during the run, from
// 128 MiB up (below that the runtime and the program's code alone take a
// good part of it). Half the budget is for the engine's tables (seen-set
// or cache and filters, queue, trace keys, level map, the level's
// candidates); the other half is room for the collector. The engine moves
// to disk once its tables would exceed their half, and Run sets the Go
// runtime's soft memory limit (debug.SetMemoryLimit) to the budget less
// 16 MiB for what the runtime does not manage (the code), for the duration
// of the run, unless the program or GOMEMLIMIT has set one. It also has
// the collector run at 25 % heap growth instead of 100 (unless the program
// or GOGC has set it): see gcPercent.
//
// A level's own tables grow with the level and cannot go to disk: its
// level map and its candidates' fingerprints and keys, about 60 bytes per
// successor kept. A level that would not fit is expanded in passes, each
// keeping the successors of one slice of the fingerprint space (see
// passes.go): the result is the same, the cost is one expansion of the
// frontier per pass. The first pass is thin and measures the level, which
// may branch far more than the last one did; the rest are cut by what it
// measured. A level takes at most maxPasses passes, so a budget far too
// small for a level is exceeded rather than take hours. A level planned
// for one pass that outgrows its level map is abandoned (errTooWide) and
// redone in one pass with a larger map while it fits, else in passes: a
// run goes to disk only when a level has shown it must. Measured on
// parallel at its defaults (62.5M states, levels of up to 11.3M, graded):
// 126 MiB resident at a 128 MiB budget, 495 MiB at 512 MiB, 1,919 MiB at
// 2 GiB, 3.9 GiB in memory at the default budget.
//
// # Limits
//
// A state may have at most 65,536 actions and a level at most 2⁴⁷ states
// (keys keep 16 bits for the action). Cancellation is checked between units
// of 512 states, so a model whose Next is very slow delays it accordingly.
// With a tight budget the disk tier's filters get fewer bits per state and
// more lookups reach the store, and wide levels take passes, so it slows
// down; a level is never split into more than 64 passes, so a budget far
// too small for a model is exceeded rather than take hours per level.
//
// # JSON
//
// A Report is saved with these keys: verdict ("pass", "violated",
// "incomplete"); stats {generated, distinct, depth, queue, queue_peak,
// on_disk, elapsed_ns, initial, tlc_generated, tlc_depth, symmetry and
// graded (when used), mem_peak_bytes and bytes_per_state (memstat.go)};
// coverage [{name, count}]; sometimes [{name, cite, reached,
// depth}]; collision; violation {property, cite, kind, reason, steps
// [{action, fields [{name, value}], view}], path}, omitted when there is
// none; violations [the same, one per failing property], unfinished, with
// Options.Continue only; unchecked [names], when some property was not
// checked; simulation {seed, depth, walks, steps, walk}, for a simulation
// only; levels and shard_split {depth, auto, sampled, shared, balance},
// for a shard's run only.
package explore
