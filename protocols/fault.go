package protocols

import "strings"

// Fault is a documented mistake injected into a protocol or into the claim it
// makes. The faulty behaviour sits next to the correct one in the protocol's
// file: a fault that is a choice at one of the protocol's decision points is
// that choice of its parts (low-edge-off-by-one is a ClassicParts.Window),
// the others are a test of Config.Fault. Package mutations names and
// documents each one with the invariant it must break.
type Fault uint8

const (
	None Fault = iota

	// The paper's mutated runs (§10).
	SharedReadInstant      // claim: one read instant explains every read of a chunk (Prop 1)
	WindowOnlyWithholding  // parallel: gate withholds only the window's events (Prop 3)
	EarlyCommonOnset       // composite: trajectory claimed from an onset c* below the frontier, not the latest high (Prop 2)
	FalseRecoveryPoint     // dump trusted: the restore is consistent at a view other than the recorded r
	ClaimInsideUncertainty // dump uncertain: trajectory claimed from inside (b, e)
	InteriorExecutedSet    // readonly: a sample maps to a prefix inside a committed transaction
	SplitTransaction       // source: one transaction appended in two pieces (out of contract)

	// Natural implementation mistakes.
	NoDiscard            // window-discard: an in-window event does not discard the buffered row
	EarlyRelease         // window-discard: survivors released before the high edge is processed
	LowEdgeOffByOne      // the window is taken as (lo+1, hi]: the first in-window event is missed
	HighEdgeOffByOne     // the window is taken as (lo, hi-1]: the last in-window event is missed
	GateDropsBoundary    // range-merge: live gate passes only beyond hi+1, dropping the event after hi
	GateRepeatsWindow    // range-merge: live gate compares with the minimum high, re-emitting window events
	SkippedBackfill      // range-merge: the window is not backfilled (at-least-once mode)
	ScanSkipsRow         // a chunk scan silently omits a present row (§9.1)
	OverlappingChunks    // two chunks own a common key (O1)
	LateStart            // consumption starts after a low edge or after the earliest splice (S-OBS)
	ReleaseBeforeLastRow // readonly: release before the last row event of the window's last transaction
	HighBeforeRead       // the high edge is recorded before the read finishes

	// Environment faults: the capture meets the world the paper's contract
	// describes and drops what only it could supply.
	CopyDropped            // the close emits no copied rows: only the log reaches the sink
	ConsumerRunsDuringRead // readonly: window events are consumed while the chunk is still being read (breaks A-discard)
	LostWatermark          // classic: the watermark rows are filtered out of the consumed log (W3/W4)

	// Handoff faults of range-merge (A-handoff, §7.5), each a choice of a
	// parallel part.
	GatePassesHigh       // the live gate also passes the event at the high offset, already in the merged block
	ReaderBeforeBackfill // the live reader runs once every high offset is recorded, before the merged blocks are emitted

	// Mistakes only a stale read shows (A-read: each key any boundary in
	// its bracket, §4.3).
	BackfillFromRead // parallel: each key's backfill starts where its select returned, not at the low offset

	// Claims of a shared state witness (Cor 1, T3).
	WitnessByBracketOnly // composite: exhibits every coordinate inside all brackets as a shared witness, refreshes unchecked

	// Faults of what an entry says rather than what the sink holds.
	BeginTaggedEvents    // classic: each event is tagged with its transaction's first position, not its own
	EventDeliveredTwice  // classic: log processing resumes after the select at its last position, inclusive
	MarkerOnlyFromStream // classic: a chunk's window opens only when the consumer meets its low watermark in the stream

	// Mistakes only a whole-server log shows (§7.7).
	OutsideEventForwarded // every protocol: the consume path passes an event on a key outside the scope to the sink
	OffsetOnCapturedRows  // readonly: the processed offset the release waits for moves only on captured rows

	// Mistakes only the exact emission shows (§6).
	RedundantCopy // classic, parallel: an exact copy of an inserted row is emitted right after its insert event
)

var faultNames = [...]string{
	None:                   "none",
	SharedReadInstant:      "shared-read-instant",
	WindowOnlyWithholding:  "window-only-withholding",
	EarlyCommonOnset:       "early-common-onset",
	FalseRecoveryPoint:     "false-recovery-point",
	ClaimInsideUncertainty: "claim-inside-uncertainty",
	InteriorExecutedSet:    "interior-executed-set",
	SplitTransaction:       "split-transaction",
	NoDiscard:              "no-discard",
	EarlyRelease:           "early-release",
	LowEdgeOffByOne:        "low-edge-off-by-one",
	HighEdgeOffByOne:       "high-edge-off-by-one",
	GateDropsBoundary:      "gate-drops-boundary",
	GateRepeatsWindow:      "gate-repeats-window",
	SkippedBackfill:        "skipped-backfill",
	ScanSkipsRow:           "scan-skips-row",
	OverlappingChunks:      "overlapping-chunks",
	LateStart:              "late-start",
	ReleaseBeforeLastRow:   "release-before-last-row",
	HighBeforeRead:         "high-before-read",
	CopyDropped:            "copy-dropped",
	ConsumerRunsDuringRead: "consumer-runs-during-read",
	LostWatermark:          "lost-watermark",
	GatePassesHigh:         "gate-passes-high",
	ReaderBeforeBackfill:   "reader-before-backfill",
	BackfillFromRead:       "backfill-from-read",
	WitnessByBracketOnly:   "witness-by-bracket-only",
	BeginTaggedEvents:      "begin-tagged-events",
	EventDeliveredTwice:    "event-delivered-twice",
	MarkerOnlyFromStream:   "marker-only-from-stream",
	OutsideEventForwarded:  "outside-event-forwarded",
	OffsetOnCapturedRows:   "offset-on-captured-rows",
	RedundantCopy:          "redundant-copy",
}

func (f Fault) String() string {
	if int(f) < len(faultNames) {
		return faultNames[f]
	}
	return "fault?"
}

// FaultList names faults for messages, comma-separated: "none" when empty.
func FaultList(fs []Fault) string {
	if len(fs) == 0 {
		return "none"
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.String()
	}
	return strings.Join(names, ", ")
}
