package explore

import "time"

// Options configure a run. The zero value is a valid in-memory run on all CPUs.
type Options struct {
	Workers    int           // goroutines expanding states; 0 = runtime.NumCPU()
	MemBudget  int64         // bytes for the seen-set and queue; 0 = unbounded
	Dir        string        // disk tier directory; "" = a temporary one, removed at the end
	ForceDisk  bool          // use the disk seen-set from the start (--seen disk)
	NoDeadlock bool          // do not report states without successors as violations
	MaxDepth   int           // stop (Incomplete) after this many BFS levels; 0 = no limit
	Only       []string      // check only these Always/Transition properties (all when empty); Sometimes are always reported
	With       []string      // also check these opt-in properties (Property.OptIn)
	Progress   time.Duration // interval between OnProgress calls; 0 = never
	OnProgress func(Stats)   // called from one goroutine, never concurrently
	Shard      Shard         // explore only this shard's part (the model must be a Sharder); zero = all
	Symmetry   bool          // apply the model's symmetry (Symmetric), as TLC's SYMMETRY: count classes of states
	NoGrade    bool          // keep a seen-set even when the model is Graded (to compare the two)
	// CheckSymmetry explores every concrete state and verifies the model's
	// symmetry on each it expands or leaves at a MaxDepth cut, failing at the
	// first that breaks it (see Symmetric); it excludes Symmetry.
	CheckSymmetry bool
	// Simulate, when set, replaces the exhaustive search with random walks
	// (see SimOptions); Dir, MemBudget, ForceDisk and MaxDepth do not apply.
	Simulate *SimOptions
	// Checkpoint is a directory in which the run keeps a checkpoint after
	// every level and from which it continues if one is there (see
	// checkpoint.go); "" = none.
	Checkpoint string
	// OnResume, when set, is called once a run has continued from a
	// checkpoint, with the level it continues from and the states found
	// up to it.
	OnResume func(level int, distinct uint64)
	// Identity names the search for the files a later run reads back
	// (checkpoints, shard results): the fields only the caller knows, such
	// as the build and the model's parameters. SearchIdentity adds the
	// options' own.
	Identity Identity
	// Continue (TLC's -continue) explores every reachable state even after
	// a violation, checks every property (opt-in ones too, unless Only
	// names the properties), and reports each failing property's first,
	// shortest, violation in Result.Violations. Not with Simulate,
	// Checkpoint or Shard.
	Continue bool
}

// Verdict is the outcome of a run.
type Verdict uint8

const (
	Pass       Verdict = iota // every property held in every reachable state
	Violated                  // some property failed (or a deadlock was found)
	Incomplete                // stopped early: cancelled or a limit was reached
)

func (v Verdict) String() string {
	switch v {
	case Pass:
		return "pass"
	case Violated:
		return "violated"
	case Incomplete:
		return "incomplete"
	}
	return "verdict?"
}

// Stats are the counters of a run, so far or final.
type Stats struct {
	Generated uint64        `json:"generated"`  // successor states computed, duplicates included
	Distinct  uint64        `json:"distinct"`   // distinct states (fingerprints) found
	Depth     int           `json:"depth"`      // BFS levels completed (length of the longest shortest path)
	Queue     uint64        `json:"queue"`      // states waiting in the current frontier
	QueuePeak uint64        `json:"queue_peak"` // largest frontier
	OnDisk    bool          `json:"on_disk"`    // the seen-set has spilled to the disk tier
	Elapsed   time.Duration `json:"elapsed_ns"` // wall time since the start
	// MemPeak is the most memory the process held from the system during
	// the run, in bytes (memstat.go says what is counted).
	MemPeak uint64 `json:"mem_peak_bytes,omitempty"`
	// BytesPerState is MemPeak over Distinct, in a finished run's report.
	BytesPerState float64 `json:"bytes_per_state,omitempty"`

	Initial uint64 `json:"initial"` // distinct initial states kept (level 0; part of Distinct)
	// TLC's figures, for comparing a port with TLC (see the package
	// documentation): TLC counts every initial state its Init produces as
	// generated, and its depth counts the initial state as 1.
	TLCGenerated uint64 `json:"tlc_generated"` // len(m.Init()) + Generated
	TLCDepth     int    `json:"tlc_depth"`     // Depth + 1; 0 when no state was kept
	// Symmetry: the model's symmetry was used, so Distinct, Generated and
	// the rest count classes of states (see Symmetric).
	Symmetry bool `json:"symmetry,omitempty"`
	// Graded: the model's grade (Graded) was used, so the run kept no
	// seen-set; the counts are the same as with one.
	Graded bool `json:"graded,omitempty"`
}

// Rate is distinct states per second.
func (s Stats) Rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Distinct) / s.Elapsed.Seconds()
}

// ActionCount is how often one kind of action produced a successor.
type ActionCount struct {
	Name  string `json:"name"`
	Count uint64 `json:"count"` // 0 = never enabled: flagged in reports
}

// Reach says whether a Sometimes property was reached, and at which depth first.
type Reach struct {
	Name    string `json:"name"`
	Cite    string `json:"cite"`
	Reached bool   `json:"reached"`
	Depth   int    `json:"depth"` // first depth reached; 0 when unreached
}

// Step is one state of a trace and the action that led to it (none for the
// first state, which is initial).
type Step[S, A any] struct {
	Action    A
	HasAction bool
	State     S
}

// Violation is a failed property with a shortest trace to it.
type Violation[S, A any] struct {
	Property string // property name, or "deadlock"
	Cite     string
	Kind     Kind
	Class    string // Property.Class
	Reason   string // the property's one-line reason
	Trace    []Step[S, A]
	// Path is the trace as positions: the initial state's index in Init,
	// then each action's position in Actions. BFS order is the
	// lexicographic order of these paths among traces of one length.
	Path []int
}

// Result is the outcome of Run.
type Result[S, A any] struct {
	Verdict   Verdict
	Stats     Stats
	Coverage  []ActionCount // in ActionNames order
	Sometimes []Reach       // in Properties order
	Violation *Violation[S, A]
	// Violations, with Options.Continue, are the first violation of each
	// failing property, in Properties order, deadlock last; Violation is
	// the earliest of them.
	Violations []*Violation[S, A]
	// Unchecked names the Always and Transition properties the run did
	// not check (opt-in ones not asked for, or left out by Only).
	Unchecked []string
	// Unfinished: a run with Continue stopped early (cancelled or
	// MaxDepth), so a property without a violation is undecided, not held.
	Unfinished bool
	// Collision is the estimated probability that a fingerprint collision hid
	// a state: n²/2⁶⁵ for n distinct states (birthday bound over 64-bit hashes).
	Collision float64
	// Levels is what a sharded run explored at each level (nil unless
	// Options.Shard is set): what Merge needs to add shards up exactly.
	Levels []ShardLevel
	// ShardSplit is the key depth a sharded run used (nil unless
	// Options.Shard is set).
	ShardSplit *ShardSplit
	// Simulation describes a simulation's walks (nil for a search). Its
	// Stats count steps taken as Generated, the longest walk as Depth, and
	// no Distinct states.
	Simulation *SimStats
}
