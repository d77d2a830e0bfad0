// Package invariants holds the paper's theorems as checks on a capture's state
// (model.Capture), usable by every protocol model.
//
// Each check returns "" when its claim holds and otherwise one line naming the
// key, the expected and the actual value. A protocol turns a check into an
// explore.Property with Prop, calling the check on its own state's Capture:
//
//	invariants.Prop[State, Action](invariants.FrontierReplay, func(s State) string {
//		return invariants.CheckFrontierReplay(&s.Cap, cfg.Chunks)
//	})
//
// Calling the check directly on &s.Cap (rather than through an accessor)
// keeps the state on the stack: these run on every explored state.
//
// The replay and cut checks judge what the sink holds (model.Capture.Held:
// the stream's replay under the default last-writer-wins rule, §6); the
// stream checks — per-key monotonicity (Thm 3, Thm 5), exact tags, no
// duplicate delivery — judge the emitted stream, whatever the sink's rule.
package invariants

import (
	"fmt"
	"math/bits"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

// Invariant names a claim of the paper and how it is judged.
type Invariant struct {
	Name  string // kebab-case, used in spec files and reports
	Cite  string // the theorem it checks
	Doc   string // one line
	Kind  explore.Kind
	Class Class // what a failure costs
	OptIn bool  // checked only when asked for (explore.Property.OptIn)
}

// Class is what a failing invariant costs a user of the capture.
type Class string

// The consequence classes, from the most to the least severe for a sink at
// rest. Claim is for the facts a proof rests on (the plan's obligations, the
// membership test): a failure there says the argument is broken, and what it
// costs shows in the replay invariants of the same run.
const (
	Final     Class = "final"     // the sink at rest differs from the source: a lost update or a resurrected row
	Transient Class = "transient" // a reader mid-run sees a regression, or a value from the wrong time
	Delivery  Class = "delivery"  // a row event reaches the sink twice (harmless to an upsert sink)
	Claim     Class = "claim"     // a fact the paper's proof rests on is false
)

// Classes lists the consequence classes with their meaning, for listings.
var Classes = []struct {
	Class Class
	Doc   string
}{
	{Final, "the sink at rest differs from the source: a lost update or a resurrected row"},
	{Transient, "a reader mid-run sees a regression, or a value from the wrong time"},
	{Delivery, "a row event reaches the sink twice: wrong for an exactly-once or append-only sink, harmless to an upsert"},
	{Claim, "a fact the proof rests on is false (plan obligations, membership test); its cost shows in the replay invariants"},
}

// The invariants, in the order reports list them.
var (
	FinalReplay = Invariant{"final-replay", "Thm 1, Cor 2",
		"at rest (every unit closed, the consumer at the end of a log that ends at a transaction boundary) the sink replays to the source", explore.Always, Final, false}
	FrontierReplay = Invariant{"frontier-replay", "Thm 1, Thm 2/4, Cor 4",
		"once every unit has closed and the consumer is at or past the latest high edge, the sink (the emitted stream's replay, under the default rule) holds σ at the consumer's position", explore.Always, Transient, false}
	ClosedUnitCut = Invariant{"closed-unit-cut", "Lemma 4.3, 6.1, 6.3",
		"every key of a closed unit replays to σ at the point the stream has reached for it", explore.Always, Transient, false}
	Monotonic = Invariant{"per-key-monotonicity", "Thm 3, Thm 5",
		"no step emits an entry whose tag is below the key's previous tag", explore.Transition, Transient, false}
	ExactTags = Invariant{"exact-tags", "Thm 3, Lemma 4.1, Lemma 6.2",
		"every emitted entry (k, v, t) has v = σ_t(k): its tag is the coordinate it stands for (tag 0: the base store)", explore.Transition, Transient, false}
	NoDuplicate = Invariant{"no-duplicate-delivery", "Thm 3 (equal tags), §9",
		"no step delivers a log event a key's stream already carries (a copied row sharing the event's tag is not a second delivery): each row event is delivered once (opt-in, for exactly-once sinks)", explore.Transition, Delivery, true}
	Membership = Invariant{"executed-set-membership", "Thm 7",
		"the sampled executed sets decide exactly the half-open window of positions", explore.Always, Claim, false}
	CommittedOnly = Invariant{"committed-only", "§2.1, S-LOG",
		"no partial transaction is visible in the log or to a read", explore.Always, Transient, false}
	TrustedSplice = Invariant{"trusted-splice-trajectory", "Cor 1, Prop 6",
		"once the plan is final, the canonical trajectory equals σ from the claimed splice coordinate on", explore.Always, Transient, false}
	LatestHigh = Invariant{"latest-high-trajectory", "Lemma 4.2, Thm 8",
		"once the plan is final, the canonical trajectory equals σ from the claimed coordinate (the latest high edge) on", explore.Always, Transient, false}
	Contract = Invariant{"contract", "Def. 3.2, O1–O3",
		"the plan recorded so far satisfies O1 (once complete), O2 and O3 on its closed units", explore.Always, Claim, false}
	SingleReadPoint = Invariant{"single-read-point", "Prop 1 (a claim stronger than O2)",
		"every closed unit has one coordinate in its bracket that explains all its reads", explore.Always, Claim, false}
)

// All lists every invariant.
var All = []Invariant{FinalReplay, FrontierReplay, ClosedUnitCut, Monotonic, ExactTags, NoDuplicate, ExactEmission, Membership, CommittedOnly, TrustedSplice, LatestHigh, Contract, SingleReadPoint, SharedWitness}

// Prop makes a state property from a check.
func Prop[S, A any](inv Invariant, check func(*S) string) explore.Property[S, A] {
	return explore.Property[S, A]{Name: inv.Name, Cite: inv.Cite, Kind: inv.Kind, Class: string(inv.Class), OptIn: inv.OptIn, Check: check}
}

// StepProp makes a transition property from a step check.
func StepProp[S, A any](inv Invariant, check func(s *S, a A, t *S) string) explore.Property[S, A] {
	return explore.Property[S, A]{Name: inv.Name, Cite: inv.Cite, Kind: inv.Kind, Class: string(inv.Class), OptIn: inv.OptIn, CheckStep: check}
}

// CheckFrontierReplay: once all units of the run have closed and the consumer
// is at or past the latest high edge (hi_i ⊑ f), replay(emitted) = σ_Pos on
// every scoped key, and nothing on a key outside the scope (Thm 1 with the discipline's equivalence, Cor 4; Cor 2 for
// every later position).
func CheckFrontierReplay(c *model.Capture, units int) string {
	if !c.AllClosed(units) || c.Pos < c.Plan.LatestHigh() {
		return ""
	}
	if k, want, ok := replayDiffers(c); ok {
		return fmt.Sprintf("key %v: replayed %v, expected σ_%d = %v", k, c.Held().Val[k], c.Log.Offset(c.Pos), want)
	}
	return outsideEntry(c)
}

// replayDiffers finds the first scoped key whose replay is not σ_Pos: what
// the sink holds (model.Capture.Held), the replay under the default rule.
func replayDiffers(c *model.Capture) (k model.Key, want model.Value, ok bool) {
	held := c.Held()
	for k := model.Key(0); k < model.Key(c.Plan.Keys); k++ {
		if want := c.Log.Sigma(c.Pos, k); held.Val[k] != want {
			return k, want, true
		}
	}
	return 0, 0, false
}

// outsideEntry says which key outside the scope the sink received an entry
// for, or "": the sink replays σ restricted to the scope, and another
// table's rows (a whole-server log, §7.7) never reach it.
func outsideEntry(c *model.Capture) string {
	for k := model.Key(c.Plan.Keys); k < model.MaxKeys; k++ {
		if c.Out.Val[k] != model.Absent || c.Out.Tag[k] != 0 {
			return fmt.Sprintf("key %v is outside the scope, yet the sink received an entry for it (%v at %d)", k, c.Out.Val[k], c.Log.Offset(c.Out.Tag[k]))
		}
	}
	return ""
}

// CheckFinalReplay: at rest — all units closed, the consumer at the end of
// the log, the log at a transaction boundary — the sink equals the source's
// current state on every key (Thm 1 at f = the end; what an operator sees
// once the capture has caught up and the source is quiet).
func CheckFinalReplay(c *model.Capture, units int) string {
	if !c.AllClosed(units) || c.Partial || c.Pos != c.Log.Len() {
		return ""
	}
	if k, want, ok := replayDiffers(c); ok {
		return fmt.Sprintf("at rest after position %d, key %v: sink holds %v, source holds %v", c.Log.Offset(c.Pos), k, c.Held().Val[k], want)
	}
	return outsideEntry(c)
}

// CheckNoDuplicate: the step s → t delivered no log event again
// (model.Capture.Dup): an event entry whose tag is the key's last tag while
// the event there has already been delivered, not a copied row sharing that
// tag. A repeat at an older tag breaks per-key monotonicity instead.
// Monotonicity allows equal tags, and replay into an upsert sink cannot see
// them; an exactly-once or append-only sink can.
func CheckNoDuplicate(s, t *model.Capture) string {
	added := t.Dup &^ s.Dup
	if added == 0 {
		return ""
	}
	k := model.Key(bits.TrailingZeros16(uint16(added)))
	return fmt.Sprintf("key %v: the log event at position %d was delivered twice", k, t.Log.Offset(t.Out.Tag[k]))
}

// CheckExactTags: every entry the step s → t emitted has v = σ_tag(k)
// (model.Capture.Inexact): the tag is the coordinate the entry stands for —
// an event's own position, a survivor's high edge (Lemma 4.1), a merged
// block's (Lemma 6.2); tag 0 stands for the base store b0. Monotonicity is
// judged on tags, so a tag that is not the entry's coordinate can let the
// sink step back to an older value unseen (Thm 3).
func CheckExactTags(s, t *model.Capture) string {
	added := t.Inexact &^ s.Inexact
	if added == 0 {
		return ""
	}
	k := model.Key(bits.TrailingZeros16(uint16(added)))
	return fmt.Sprintf("key %v: an entry was emitted whose value is not σ at its tag (the key's last entry: %v@%d, σ_%d = %v)", k, t.Out.Val[k], t.Log.Offset(t.Out.Tag[k]), t.Log.Offset(t.Out.Tag[k]), t.Log.Sigma(t.Out.Tag[k], k))
}

// CheckClosedUnitCut: every key of a closed unit i replays to σ_g, where g =
// max(Pos, hi_i) is how far the emitted stream reflects the log for it
// (Lemma 4.3; Lemmas 6.1 and 6.3 for the two disciplines' prefixes).
func CheckClosedUnitCut(c *model.Capture) string {
	for i := 0; i < int(c.Plan.N); i++ {
		if !c.UnitClosed(i) {
			continue
		}
		u, held := &c.Plan.Units[i], c.Held()
		g := max(c.Pos, u.Hi)
		for d := u.Domain & (1<<model.MaxKeys - 1); d != 0; d &= d - 1 {
			k := d.Lowest()
			if want := c.Log.Sigma(g, k); held.Val[k] != want {
				return fmt.Sprintf("key %v of closed unit %d: replayed %v, expected σ_%d = %v", k, i+1, held.Val[k], c.Log.Offset(g), want)
			}
		}
	}
	return ""
}

// CheckMonotone: along a step, no key's last tag decreases (Thm 3, Thm 5).
func CheckMonotone(s, t *model.Capture) string {
	if k := t.Out.Regressed(&s.Out); k != model.NoKey {
		return fmt.Sprintf("key %v: emitted an entry tagged %d after one tagged %d", k, t.Log.Offset(t.Out.Tag[k]), t.Log.Offset(s.Out.Tag[k]))
	}
	return ""
}

// CheckMembership: with samples low = G(lo) and high = G(hi) taken at
// coordinates lo ⊑ hi, the test "label in high, not in low" holds exactly for
// the positions of (lo, hi] (Thm 7).
func CheckMembership(c *model.Capture, low, high model.TxnSet, lo, hi model.Coord) string {
	w := model.Window{Lo: lo, Hi: hi}
	for p := model.Coord(1); p <= c.Log.Len(); p++ {
		if got, want := c.Log.InSampledWindow(p, low, high), w.Contains(p); got != want {
			return fmt.Sprintf("position %d: membership test says %v, window (%d, %d] says %v", c.Log.Offset(p), got, c.Log.Offset(w.Lo), c.Log.Offset(w.Hi), want)
		}
	}
	return ""
}

// CheckCommittedOnly: the log never ends inside a transaction, and every read
// reflects a transaction boundary (§2.1; §3.3 "a committed read").
func CheckCommittedOnly(c *model.Capture) string {
	if c.Partial {
		return fmt.Sprintf("transaction %d is visible in part (log ends at position %d inside it)", c.Log.Txns(), c.Log.Offset(c.Log.Len()))
	}
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		for r := u.Read & (1<<model.MaxKeys - 1); r != 0; r &= r - 1 {
			if k := r.Lowest(); !c.Log.Boundary(c.ReadAt[k]) {
				return fmt.Sprintf("key %v was read at position %d, inside transaction %d", k, c.Log.Offset(c.ReadAt[k]), c.Log.At(c.ReadAt[k]).Txn)
			}
		}
	}
	return ""
}

// CheckTrajectory: once the plan is final (all units closed), sink_g = σ_g for
// every g from the claimed coordinate to the consumer's position (Cor 1 from a
// shared witness; Lemma 4.2 from the latest high edge).
func CheckTrajectory(c *model.Capture, units int, claim model.Coord) string {
	if !c.AllClosed(units) || c.Pos < claim {
		return ""
	}
	p := &c.Plan // the trajectory reads no frontier: no copy (c.FinalPlan) is needed
	if g, k, ok := p.Trajectory(&c.Log, claim, c.Pos); !ok {
		return fmt.Sprintf("trajectory claimed from %d: at g = %d key %v has sink %v, expected σ_%d = %v", c.Log.Offset(claim), c.Log.Offset(g), k, p.Sink(&c.Log, g, k), c.Log.Offset(g), c.Log.Sigma(g, k))
	}
	return ""
}

// CheckContract: the units recorded so far satisfy the obligations the model
// can decide — brackets within the log, O3 and O2 on closed units, and O1 once
// all units are recorded (Def. 3.2).
func CheckContract(c *model.Capture, units int) string {
	if err := c.Plan.CheckUnits(c.Closed, &c.Log, c.Log.Len()); err != nil {
		return err.Error()
	}
	if int(c.Plan.N) == units {
		if err := c.Plan.CheckO1(); err != nil {
			return err.Error()
		}
	}
	return ""
}

// CheckSingleReadPoint is the claim Proposition 1 refutes: each closed unit
// has one c in its bracket with R(k) = σ_c(k) for all its keys.
func CheckSingleReadPoint(c *model.Capture) string {
	for i := 0; i < int(c.Plan.N); i++ {
		if !c.UnitClosed(i) {
			continue
		}
		var one model.Plan
		one.Keys = c.Plan.Keys
		one.Add(c.Plan.Units[i])
		if one.SharedWitnesses(&c.Log) == 0 {
			u := &c.Plan.Units[i]
			return fmt.Sprintf("unit %d: no single coordinate in [%d, %d] explains its reads (each key was read at its own position)", i+1, c.Log.Offset(u.Lo), c.Log.Offset(u.Hi))
		}
	}
	return ""
}

// SharedWitness is Corollary 1 read as the composite's T3 claim (Example 5.1:
// "a shared snapshot regains T3"): from every coordinate the capture exhibits
// as a shared state witness, the canonical trajectory is the source's.
var SharedWitness = Invariant{"shared-witness-trajectory", "Cor 1, T3, Example 5.1",
	"once the plan is final, the canonical trajectory equals σ from every exhibited shared state witness on", explore.Always, Transient, false}

// CheckSharedWitness: once all units have closed, the trajectory holds from
// every coordinate of witnesses up to the consumer's position (Cor 1).
func CheckSharedWitness(c *model.Capture, units int, witnesses model.CoordSet) string {
	if !c.AllClosed(units) {
		return ""
	}
	for w := model.Coord(0); w <= c.Pos; w++ {
		if witnesses.Has(w) {
			if r := CheckTrajectory(c, units, w); r != "" {
				return fmt.Sprintf("exhibited witness %d: %s", c.Log.Offset(w), r)
			}
		}
	}
	return ""
}

// Standard is the shared set for a capture whose units close with a block
// tagged by a high edge and whose tags are log positions, as every shipped
// protocol's: final-replay, no-duplicate-delivery (opt-in),
// frontier-replay, closed-unit-cut, per-key-monotonicity, exact-tags,
// committed-only
// and contract, over the model.Capture that S holds (model.CaptureOf). It
// panics if S holds none: a mistake in the program. Append the
// discipline's own obligations and sometimes-properties to it.
func Standard[S, A any](units int) []explore.Property[S, A] {
	c, err := model.CaptureOf[S]()
	if err != nil {
		panic("invariants.Standard: " + err.Error())
	}
	return []explore.Property[S, A]{
		Prop[S, A](FinalReplay, func(s *S) string { return CheckFinalReplay(c(s), units) }),
		StepProp[S, A](NoDuplicate, func(s *S, _ A, t *S) string { return CheckNoDuplicate(c(s), c(t)) }),
		Prop[S, A](FrontierReplay, func(s *S) string { return CheckFrontierReplay(c(s), units) }),
		Prop[S, A](ClosedUnitCut, func(s *S) string { return CheckClosedUnitCut(c(s)) }),
		StepProp[S, A](Monotonic, func(s *S, _ A, t *S) string { return CheckMonotone(c(s), c(t)) }),
		StepProp[S, A](ExactTags, func(s *S, _ A, t *S) string { return CheckExactTags(c(s), c(t)) }),
		Prop[S, A](CommittedOnly, func(s *S) string { return CheckCommittedOnly(c(s)) }),
		Prop[S, A](Contract, func(s *S) string { return CheckContract(c(s), units) }),
	}
}
