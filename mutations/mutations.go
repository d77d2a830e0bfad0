// Package mutations names and documents the mistakes cutcheck must catch: the
// paper's mutated runs (§10) and the natural implementation mistakes of each
// merge discipline. A mutation is a value: what it changes, where in the paper
// the claim it breaks lives, the protocols it applies to, and the invariant
// that must fail. The faulty behaviour itself sits in the protocol's file next
// to the correct one, behind protocols.Config.Fault.
package mutations

import (
	"fmt"
	"strings"

	"github.com/cutcheck/cutcheck/protocols"
)

// Mutation is one documented fault and its expected outcome.
type Mutation struct {
	Fault     protocols.Fault
	Doc       string   // what changes, first line is the summary
	Cite      string   // the paper's claim or section
	Protocols []string // protocols it applies to
	Mode      string   // the protocol mode it needs ("" = any)
	Breaks    string   // the invariant expected to fail
	Paper     bool     // one of the paper's mutated runs (§10)
}

// Name is the mutation's name, as used by --mutation and spec files.
func (m Mutation) Name() string { return m.Fault.String() }

// All lists every mutation: the paper's first, then the implementation mistakes.
var All = []Mutation{
	{protocols.SharedReadInstant, "Claims one read instant explains every read of a chunk (a single read point instead of O2's per-key witnesses).",
		"Prop 1, §10", []string{"readonly"}, "", "single-read-point", true},
	{protocols.WindowOnlyWithholding, "The live gate withholds only the owning chunk's window and streams every other event, pre-low events included.",
		"Prop 3, §6.3 clause (a), §10", []string{"parallel"}, "", "frontier-replay", true},
	{protocols.EarlyCommonOnset, "Claims the composite's trajectory from an onset c* below the frontier (any c* the model chooses, the earliest splice included) instead of the latest high edge.",
		"Prop 2, Example 5.1, §10", []string{"composite"}, "", "latest-high-trajectory", true},
	{protocols.FalseRecoveryPoint, "The restore is consistent at a view earlier than the recorded, trusted recovery point r: a stale splice.",
		"Prop 6, O4, §10", []string{"dump"}, "trusted", "frontier-replay", true},
	{protocols.ClaimInsideUncertainty, "Claims the trajectory from inside the widened uncertainty bracket (b, e) instead of from e.",
		"Thm 8, Lemma 4.2, §10", []string{"dump"}, "uncertain", "latest-high-trajectory", true},
	{protocols.InteriorExecutedSet, "A sampled executed set maps to a prefix inside an already committed multi-row transaction.",
		"Thm 7, §10", []string{"readonly"}, "", "executed-set-membership", true},
	{protocols.SplitTransaction, "The source exposes one multi-row transaction in two pieces (out of contract).",
		"§2.1 S-LOG, §10", []string{"readonly"}, "", "committed-only", true},
	{protocols.NoDiscard, "An in-window event does not discard the buffered row, so a stale read survives the close.",
		"Def. 6.2, Thm 2", []string{"classic", "readonly", "dump"}, "", "frontier-replay", false},
	{protocols.EarlyRelease, "Survivors are released when the high watermark is written, before the window's events are processed.",
		"Def. 6.2, Lemma 6.1", []string{"classic"}, "", "closed-unit-cut", false},
	{protocols.LowEdgeOffByOne, "The window is taken as (lo+1, hi]: the first in-window event is missed.",
		"§2.3 half-open windows", []string{"classic", "parallel"}, "", "frontier-replay", false},
	{protocols.HighEdgeOffByOne, "The window is taken as (lo, hi-1]: the last in-window event is missed.",
		"§2.3 half-open windows", []string{"classic", "parallel"}, "", "frontier-replay", false},
	{protocols.GateDropsBoundary, "The live gate passes only events beyond hi+1, dropping the first event after the high edge.",
		"Def. 6.4 clause (a), §2.3", []string{"parallel"}, "", "frontier-replay", false},
	{protocols.GateRepeatsWindow, "The live gate compares every event with the minimum high offset, re-emitting window events after the merged unit.",
		"Def. 6.4 clause (a), Thm 5", []string{"parallel"}, "", "per-key-monotonicity", false},
	{protocols.GatePassesHigh, "The live gate passes events at or beyond the high offset, so the event at hi reaches the sink in the merged block and again from the stream.",
		"Def. 6.4 clause (a), A-handoff §7.5", []string{"parallel"}, "", "no-duplicate-delivery", false},
	{protocols.ReaderBeforeBackfill, "The live reader starts once every chunk has recorded its high offset, streaming while backfills are still to come; a later merged block overwrites newer events.",
		"Def. 6.4 (the merged block is the unit's sole emission at or before hi), §7.5", []string{"parallel"}, "", "final-replay", false},
	{protocols.SkippedBackfill, "The window is not backfilled: the unit emits its raw read (the documented at-least-once mode).",
		"§7.5, Def. 6.3", []string{"parallel"}, "", "frontier-replay", false},
	{protocols.ScanSkipsRow, "The chunk scan silently omits a present row, recording it as absent: a row whose last write precedes the consumption start (or the history) never reaches the sink.",
		"§9.1, O2+O3", []string{"classic", "parallel"}, "", "frontier-replay", false},
	{protocols.OverlappingChunks, "Two chunks own a common key.",
		"O1", []string{"classic", "parallel"}, "", "contract", false},
	{protocols.LateStart, "Consumption starts after a low edge or after the earliest splice.",
		"S-OBS, §6.2, §6.4", []string{"classic", "composite"}, "", "frontier-replay", false},
	{protocols.ReleaseBeforeLastRow, "The buffer is released before the last row event of the window's last transaction is processed.",
		"§7.4 A-discard", []string{"readonly"}, "", "closed-unit-cut", false},
	{protocols.HighBeforeRead, "The high offset is recorded before the chunk's read finishes.",
		"§7.5 A-read, O2", []string{"parallel"}, "", "contract", false},
	{protocols.CopyDropped, "The close emits no copied rows: the sink gets only what the log carries from the consumption start on, so rows written before it (or before the history) never arrive.",
		"Thm 1, Thm 2/4, S-OBS", []string{"classic", "readonly", "parallel", "dump", "composite"}, "", "frontier-replay", false},
	{protocols.ConsumerRunsDuringRead, "The consumer processes window events while the chunk is still being read (readonly) or before the restored rows arrive (dump uncertain), and does not remember them, so an event met before its key's older copy arrives cannot discard it: the deleted or overwritten row comes back.",
		"§7.4 A-discard, Thm 8", []string{"readonly", "dump", "composite"}, "", "frontier-replay", false},
	{protocols.LostWatermark, "The watermark rows are filtered out of the consumed log (an include list without the signalling table): the window never opens, the chunk never closes, the capture waits forever.",
		"§7.3 W3/W4", []string{"classic"}, "", "deadlock", false},
	{protocols.BackfillFromRead, "Each key's backfill starts at the log position its select returned at, as if the row reflected the log end then: an event between the state a stale read reflects and that position is never merged.",
		"§4.3, §7.5 A-read, Def. 6.3", []string{"parallel"}, "", "frontier-replay", false},
	{protocols.WitnessByBracketOnly, "Exhibits as a shared state witness every coordinate that lies inside every unit's bracket, checking Cor 1's first clause only: a refresh read elsewhere in its bracket does not match σ there, and the trajectory claimed from it fails.",
		"Cor 1, T3, Example 5.1", []string{"composite"}, "", "shared-witness-trajectory", false},
	{protocols.BeginTaggedEvents, "Each log event is tagged with its transaction's first position (the begin record's LSN) instead of its own: a later row of a multi-row transaction claims a coordinate at which it was not yet written. The sink's values and the tags' order are unchanged; the tags lie.",
		"Thm 3, §2.1 (a tag is a coordinate)", []string{"classic"}, "", "exact-tags", false},
	{protocols.EventDeliveredTwice, "Log processing resumes after the chunk's select at the last position it processed, inclusive (a resume offset taken as inclusive): a log event delivered twice, harmless to an upsert sink.",
		"§9, Thm 3 (equal tags)", []string{"classic"}, "", "no-duplicate-delivery", false},
	{protocols.MarkerOnlyFromStream, "A chunk's window opens only when the consumer meets its low watermark in the stream: a consumer that starts exactly at the low edge (S-OBS allows s0 = lo) never opens it, and the chunk's copied rows never reach the sink.",
		"S-OBS (s0 ⊑ lo_i), §7.3 W3", []string{"classic"}, "", "frontier-replay", false},
	{protocols.OutsideEventForwarded, "The consume path passes every row event of the log to the sink, another table's too (a filter on the captured tables that is missing or never applied): on a whole-server log (§7.7) the sink receives rows outside the scope. On a log of the scope alone it is the protocol as published.",
		"§7.7, Thm 1 (σ restricted to the scope)", []string{"classic", "readonly", "parallel", "dump", "composite"}, "", "frontier-replay", false},
	{protocols.OffsetOnCapturedRows, "The processed offset the release waits for moves only on captured rows (the skipped rows of other tables leave it where it was, as a connector that records its offset per emitted event, until a heartbeat moves it once the consumer is idle): when the window's last transaction lies outside the scope, the buffer is released only after the consumer has gone past the high edge, and its copies overwrite the newer events.",
		"§7.7, §7.4 A-discard, Thm 3", []string{"readonly"}, "", "frontier-replay", false},
	{protocols.RedundantCopy, "Each inserted row is also sent as a copy right after its insert event, with the event's value and tag (a snapshot row re-sent for a key the stream just created): every value, tag and replay stays right, and no log event is delivered twice; only a stream checked against the discipline's emission shows the extra entry.",
		"Def. 6.2–6.4 (the emission), certify S4", []string{"classic", "parallel"}, "", "exact-emission", false},
}

// Lookup finds a mutation by name; the error lists the valid names.
func Lookup(name string) (Mutation, error) {
	for _, m := range All {
		if m.Name() == name {
			return m, nil
		}
	}
	names := make([]string, len(All))
	for i, m := range All {
		names[i] = m.Name()
	}
	return Mutation{}, fmt.Errorf("unknown mutation %q (known: %s)", name, strings.Join(names, ", "))
}
