package open

// Rewind-by-preimage (§6.5, open): "Where the log carries before-images, a
// late read can be rolled backward by applying preimages in reverse until the
// unit's low edge, yielding a refresh valid at lo_i itself. Its obligation is
// to identify the suffix reflected in the read and show that reversing it
// reconstructs each key at lo_i."
//
// The chunks are taken in key order, one at a time. For each, the capture
// records its low edge lo (the log's end then) and, at some later step, reads
// the chunk at one position r — the log's end then, so r ≥ lo and the read
// is late whenever the source committed in between. The read is
// coordinate-bound: it reports r, so the suffix it reflects is (lo, r]. The
// capture rolls each key back over that suffix, applying the before-images of
// the key's events from r down to lo+1; the result is the unit's refresh,
// recorded with the point bracket (lo, lo]. It is reconciled by
// window-discard from lo, whose window is then empty (§6.4: the point splice):
// the consumer walks the log from its start s0 ⊑ lo, emitting every event at
// its place, stops at lo until the refresh is ready, emits the present
// refresh rows tagged lo and walks on. The rollback is what makes the refresh
// placeable at lo: a read valid only at r, spliced at lo, would let the
// events of (lo, r] replay over a row that already reflects them — harmless
// at rest, since the suffix replays afterwards, but a reader at lo sees the
// future.
//
// That is also why a wrong rollback costs only a transient: the only keys it
// can get wrong are those with an event in (lo, r] (for any other key the
// read is σ_lo already), and every such event is replayed after the splice,
// so the sink at rest is right whatever the rollback produced; at lo itself
// (frontier-replay, closed-unit-cut) it is wrong. The obligation is checked directly (rewind-reconstructs-low).
//
// Modes: preimage (every event carries its before-image: σ just before it);
// missing-preimage (a delete carries only its key, as under a replica
// identity that logs keys for deletes — the rollback cannot undo it and
// skips it, so a row deleted in (lo, r] is missing at lo); wrong-suffix (the
// rollback takes the suffix as (lo+1, r]: the first event after the low edge
// is taken as already part of the state at lo, and is never undone).
//
// Latent (§10): ReadAt holds the read position r. The capture knows r as
// well (the read reports it); it is the refresh's claim that moves to lo.

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

// The rewind modes.
const (
	RewindPreimage        = "preimage"
	RewindMissingPreimage = "missing-preimage"
	RewindWrongSuffix     = "wrong-suffix"
)

// rewindPhase is where the current chunk stands.
type rewindPhase uint8

const (
	rewindIdle    rewindPhase = iota // no chunk in progress: the next step records a low edge
	rewindLow                        // lo recorded: the read is next; the consumer may run up to lo
	rewindRewound                    // read and rolled back to lo: the splice waits for the consumer at lo
)

var rewindPhaseNames = [...]string{"idle", "low recorded", "rolled back to lo"}

// rewindState is the shared capture and the chunk's phase.
type rewindState struct {
	Cap   model.Capture
	Phase rewindPhase
}

// rewindKind is the kind of a step.
type rewindKind uint8

const (
	rewindCommit     rewindKind = iota // the source commits a transaction (§2.1)
	rewindRecordLow                    // record the chunk's low edge lo
	rewindRead                         // read the chunk at r and roll it back over (lo, r] (§6.5)
	rewindConsume                      // the consumer processes the next position (Def. 6.2)
	rewindSplice                       // at lo, emit the rolled-back refresh (§6.4 point splice)
	rewindStartLater                   // the consumer's start s0 moves one position on (S-OBS)
)

var rewindActionNames = []string{"commit", "record-low", "read-rewind", "consume", "splice", "start-later"}

// rewindAction is one step; Txn is set for commits.
type rewindAction struct {
	Kind rewindKind
	Txn  protocols.Txn
}

type rewind struct {
	cfg   protocols.Config
	parts RewindParts
}

func newRewind(cfg protocols.Config) explore.Model[rewindState, rewindAction] {
	return &rewind{cfg, RewindParts{}.withMode(cfg.Mode)}
}

// RewindParts are the decision points of rewind-by-preimage; a nil or zero
// part is the run's mode's choice (preimage by default). wrong-suffix is a
// choice of Suffix, missing-preimage is DeleteWithoutPreimage.
type RewindParts struct {
	// Suffix is the part of the log the rollback undoes, given the low
	// edge and the read coordinate r (called once per key rolled back;
	// exact). Default: (lo, r].
	Suffix func(lo, r model.Coord) model.Window
	// DeleteWithoutPreimage: a delete carries no before-image, so the
	// rollback skips it (the missing-preimage mode).
	DeleteWithoutPreimage bool
}

// withMode fills the parts p leaves unset with the mode's choices.
func (p RewindParts) withMode(mode string) RewindParts {
	if p.Suffix == nil {
		p.Suffix = func(lo, r model.Coord) model.Window { return model.Window{Lo: lo, Hi: r} }
		if mode == RewindWrongSuffix {
			p.Suffix = func(lo, r model.Coord) model.Window { return model.Window{Lo: min(lo+1, r), Hi: r} }
		}
	}
	p.DeleteWithoutPreimage = p.DeleteWithoutPreimage || mode == RewindMissingPreimage
	return p
}

func init() {
	if err := protocols.Register(Rewind(RewindParts{})); err != nil {
		panic(err)
	}
}

// Rewind returns rewind-by-preimage built from parts, registered as
// "rewind" with the zero RewindParts.
func Rewind(parts RewindParts) *protocols.Protocol {
	return protocols.Define(&protocols.Protocol{
		Name:     "rewind",
		Doc:      "rewind-by-preimage: a late read rolled back by before-images to the low edge, spliced there (open)",
		Cite:     "§6.5 (open); §6.4",
		Defaults: protocols.Config{Keys: 3, Values: 2, Events: 3, Chunks: 2, Txn: 2, Mode: RewindPreimage},
		Limits: protocols.Limits{Keys: model.MaxKeys, Values: 7, Events: 24, Chunks: model.MaxUnits, Txn: protocols.MaxTxn, WholeServer: true,
			Modes: []string{RewindPreimage, RewindMissingPreimage, RewindWrongSuffix}},
		Faults: []protocols.Fault{protocols.CopyDropped},
	}, func(cfg protocols.Config) explore.Model[rewindState, rewindAction] {
		return &rewind{cfg, parts.withMode(cfg.Mode)}
	})
}

func (m *rewind) Init() []rewindState {
	var out []rewindState
	for _, c := range protocols.InitialCaptures(&m.cfg) {
		out = append(out, rewindState{Cap: c})
	}
	return out
}

// Actions: the source, then the chunk's next step, then the consumer.
func (m *rewind) Actions(s *rewindState, buf []rewindAction) []rewindAction {
	for t := range protocols.Commits(&m.cfg, &s.Cap.Log) {
		buf = append(buf, rewindAction{Kind: rewindCommit, Txn: t})
	}
	c := &s.Cap
	switch {
	case s.Phase == rewindIdle && int(c.Plan.N) < m.cfg.Chunks:
		buf = append(buf, rewindAction{Kind: rewindRecordLow})
	case s.Phase == rewindLow:
		buf = append(buf, rewindAction{Kind: rewindRead})
	case s.Phase == rewindRewound && c.Pos == m.open(s).Lo:
		buf = append(buf, rewindAction{Kind: rewindSplice})
	}
	if m.consumerMay(s) {
		buf = append(buf, rewindAction{Kind: rewindConsume})
		if protocols.MayStartLater(c, protocols.EarliestLow(&c.Plan)) {
			buf = append(buf, rewindAction{Kind: rewindStartLater})
		}
	}
	return buf
}

// open is the chunk in progress.
func (m *rewind) open(s *rewindState) *model.Unit { return &s.Cap.Plan.Units[s.Cap.Plan.N-1] }

// consumerMay: a next position exists, and while a chunk is in progress it
// is at or before the chunk's low edge (the splice comes first).
func (m *rewind) consumerMay(s *rewindState) bool {
	p := s.Cap.Pos + 1
	return p <= s.Cap.Log.Len() && (s.Phase == rewindIdle || p <= m.open(s).Lo)
}

func (m *rewind) Next(s *rewindState, a rewindAction, t *rewindState) bool {
	c := &t.Cap
	switch a.Kind {
	case rewindCommit:
		c.Log.Commit(a.Txn.Events()...)
	case rewindRecordLow:
		i := int(c.Plan.N)
		lo := c.Log.Len()
		c.Plan.Add(model.Unit{Domain: protocols.ChunkKeys(i, m.cfg.Keys, m.cfg.Chunks), Lo: lo, Hi: lo})
		t.Phase = rewindLow
	case rewindRead:
		m.readAndRewind(t)
	case rewindConsume:
		p := c.Pos + 1
		if e := c.Log.At(p); c.Plan.Scope().Has(e.Key) { // not a marker, nor another table's row (§7.7)
			c.Emit(e.Key, e.Img, p)
		}
		c.Pos = p
	case rewindSplice:
		i := int(c.Plan.N) - 1
		u := &c.Plan.Units[i]
		for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
			if u.Domain.Has(k) && u.Refresh[k] != model.Absent && m.cfg.Fault != protocols.CopyDropped {
				c.EmitCopy(k, u.Refresh[k], u.Lo)
			}
		}
		c.Closed |= 1 << i
		t.Phase = rewindIdle
	case rewindStartLater:
		protocols.StartLater(c)
	default:
		return false
	}
	return true
}

// readAndRewind reads every key of the chunk at r, the log's end, and rolls
// each back over the suffix the read reflects; the result is the refresh.
func (m *rewind) readAndRewind(s *rewindState) {
	c := &s.Cap
	u := m.open(s)
	r := c.Log.Len()
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if u.Domain.Has(k) {
			u.Refresh[k], u.Read = m.rollBack(&c.Log, k, c.Log.Sigma(r, k), u.Lo, r), u.Read.With(k)
			c.ReadAt[k] = r
		}
	}
	s.Phase = rewindRewound
}

// suffix is the part of the log the rollback undoes: (lo, r], or, under
// wrong-suffix, (lo+1, r].
func (m *rewind) suffix(lo, r model.Coord) model.Window { return m.parts.Suffix(lo, r) }

// preimage is the before-image the log carries for the event at p: σ just
// before it. Under missing-preimage a delete carries none.
func (m *rewind) preimage(l *model.Log, p model.Coord) (model.Value, bool) {
	e := l.At(p)
	if m.parts.DeleteWithoutPreimage && e.Img == model.Absent {
		return 0, false
	}
	return l.Sigma(p-1, e.Key), true
}

// rollBack applies, from the last position of the suffix down to its first,
// the before-image of every event of k; an event without one is skipped.
func (m *rewind) rollBack(l *model.Log, k model.Key, read model.Value, lo, r model.Coord) model.Value {
	w, v := m.suffix(lo, r), read
	for p := w.Hi; p > w.Lo; p-- {
		if l.At(p).Key != k {
			continue
		}
		if pre, ok := m.preimage(l, p); ok {
			v = pre
		}
	}
	return v
}

func (m *rewind) Done(s *rewindState) bool {
	c := &s.Cap
	return c.AllClosed(m.cfg.Chunks) && c.Pos == c.Log.Len() && protocols.DataEvents(&c.Log) == m.cfg.Events
}

// Grade counts the steps behind s (explore.Graded): each commits a
// transaction, moves the consumer one position on, or takes the chunk one
// phase on: low recorded, read and rolled back, spliced. A spliced chunk,
// closed, counts all three; the chunk in progress, its phase.
func (m *rewind) Grade(s *rewindState) uint64 {
	c := &s.Cap
	return uint64(c.Log.Txns()) + uint64(c.Pos) + 3*uint64(bits.OnesCount8(c.Closed)) + uint64(s.Phase)
}

func (m *rewind) Encode(s *rewindState, buf []byte) []byte {
	return append(s.Cap.AppendTo(buf), byte(s.Phase))
}

func (m *rewind) Decode(b []byte, s *rewindState) error {
	rest, ok := s.Cap.DecodeFrom(b)
	if !ok || len(rest) != 1 {
		return fmt.Errorf("rewind: bad state encoding (%d bytes)", len(b))
	}
	s.Phase = rewindPhase(rest[0])
	return nil
}

func (m *rewind) ActionNames() []string { return rewindActionNames }

func (m *rewind) ActionKind(a rewindAction) int { return int(a.Kind) }

func (m *rewind) Describe(s *rewindState, a rewindAction) string {
	c := &s.Cap
	switch a.Kind {
	case rewindCommit:
		return protocols.DescribeCommit(&c.Log, a.Txn)
	case rewindRecordLow:
		return fmt.Sprintf("chunk %d records its low edge lo = %d; the consumer may run up to it", c.Plan.N+1, c.Log.Offset(c.Log.Len()))
	case rewindRead:
		return m.describeRead(s)
	case rewindConsume:
		p := c.Log.Offset(c.Pos + 1)
		if e := c.Log.At(c.Pos + 1); c.Plan.Scope().Has(e.Key) {
			return fmt.Sprintf("consume position %d: %v := %v, emitted", p, e.Key, e.Img)
		} else if e.Key != model.NoKey {
			return fmt.Sprintf("consume position %d: %v := %v, outside the scope, skipped", p, e.Key, e.Img)
		}
		return fmt.Sprintf("consume position %d", p)
	case rewindSplice:
		t := *s
		m.Next(s, a, &t)
		return fmt.Sprintf("splice chunk %d at lo = %d: emit %s", c.Plan.N, c.Log.Offset(m.open(s).Lo), protocols.DescribeEmitted(c, &t.Cap, m.cfg.Keys))
	case rewindStartLater:
		return protocols.DescribeStartLater(c)
	}
	return "?"
}

// describeRead: "chunk 1 reads at r = 3: k0=⊥ k1=2; rolls back (1, 3] by
// before-images: 3:k0=⊥ undone to 1; refresh at lo = 1: k0=1 k1=2".
func (m *rewind) describeRead(s *rewindState) string {
	c := &s.Cap
	u := m.open(s)
	r := c.Log.Len()
	w := m.suffix(u.Lo, r)
	var read, undo, refresh []string
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if u.Domain.Has(k) {
			read = append(read, fmt.Sprintf("%v=%v", k, c.Log.Sigma(r, k)))
			refresh = append(refresh, fmt.Sprintf("%v=%v", k, m.rollBack(&c.Log, k, c.Log.Sigma(r, k), u.Lo, r)))
		}
	}
	for p := w.Hi; p > w.Lo; p-- {
		if e := c.Log.At(p); u.Domain.Has(e.Key) {
			if pre, ok := m.preimage(&c.Log, p); ok {
				undo = append(undo, fmt.Sprintf("%s undone to %v", protocols.EventString(&c.Log, p), pre))
			} else {
				undo = append(undo, fmt.Sprintf("%s has no before-image, skipped", protocols.EventString(&c.Log, p)))
			}
		}
	}
	if len(undo) == 0 {
		undo = []string{"nothing of the chunk's keys"}
	}
	return fmt.Sprintf("chunk %d reads at r = %d: %s; rolls back %s by before-images: %s; refresh at lo = %d: %s",
		c.Plan.N, c.Log.Offset(r), strings.Join(read, " "), protocols.WindowString(&c.Log, w), strings.Join(undo, ", "), c.Log.Offset(u.Lo), strings.Join(refresh, " "))
}

func (m *rewind) Fields(s *rewindState) []explore.Field {
	return append(protocols.CaptureFields(&s.Cap, m.cfg.Keys), explore.Field{Name: "phase", Value: rewindPhaseNames[s.Phase]})
}

func (m *rewind) View(s *rewindState) any {
	v := protocols.CaptureView(&s.Cap, m.cfg.Keys)
	v.Control = map[string]string{"phase": rewindPhaseNames[s.Phase]}
	return v
}

// RewindReconstructs is §6.5's obligation for this discipline: "reversing
// [the suffix reflected in the read] reconstructs each key at lo_i".
var RewindReconstructs = invariants.Invariant{
	Name: "rewind-reconstructs-low", Cite: "§6.5 (open)",
	Doc:  "every rolled-back read key equals σ at its unit's low edge (the refresh is valid at lo itself)",
	Kind: explore.Always, Class: invariants.Claim,
}

// Properties. Not checked: executed-set-membership (no sampled sets),
// trusted-splice-trajectory and single-read-point (a claim of one shared
// witness for the whole plan, which distinct chunks' low edges do not give).
// no-duplicate-delivery is attached (opt-in) and fails, as for the trusted
// dump: when an event of a key sits at lo itself and s0 < lo, the splice
// delivers that row again with the same tag.
func (m *rewind) Properties() []explore.Property[rewindState, rewindAction] {
	type P = explore.Property[rewindState, rewindAction]
	units := m.cfg.Chunks
	sometimes := func(name, cite string, check func(s *rewindState) string) P {
		return P{Name: name, Cite: cite, Kind: explore.Sometimes, Check: check}
	}
	return append([]P{
		invariants.Prop[rewindState, rewindAction](invariants.FinalReplay, func(s *rewindState) string { return invariants.CheckFinalReplay(&s.Cap, units) }),
		invariants.StepProp[rewindState, rewindAction](invariants.NoDuplicate, func(s *rewindState, _ rewindAction, t *rewindState) string {
			return invariants.CheckNoDuplicate(&s.Cap, &t.Cap)
		}),
		invariants.Prop[rewindState, rewindAction](invariants.FrontierReplay, func(s *rewindState) string { return invariants.CheckFrontierReplay(&s.Cap, units) }),
		invariants.Prop[rewindState, rewindAction](invariants.ClosedUnitCut, func(s *rewindState) string { return invariants.CheckClosedUnitCut(&s.Cap) }),
		invariants.StepProp[rewindState, rewindAction](invariants.Monotonic, func(s *rewindState, _ rewindAction, t *rewindState) string {
			return invariants.CheckMonotone(&s.Cap, &t.Cap)
		}),
		invariants.StepProp[rewindState, rewindAction](invariants.ExactTags, func(s *rewindState, _ rewindAction, t *rewindState) string {
			return invariants.CheckExactTags(&s.Cap, &t.Cap)
		}),
		invariants.Prop[rewindState, rewindAction](invariants.CommittedOnly, func(s *rewindState) string { return invariants.CheckCommittedOnly(&s.Cap) }),
		invariants.Prop[rewindState, rewindAction](invariants.LatestHigh, func(s *rewindState) string {
			return invariants.CheckTrajectory(&s.Cap, units, s.Cap.Plan.LatestHigh())
		}),
		invariants.Prop[rewindState, rewindAction](invariants.Contract, func(s *rewindState) string { return invariants.CheckContract(&s.Cap, units) }),
		invariants.Prop[rewindState, rewindAction](RewindReconstructs, m.checkReconstructs),
		sometimes("rolled-back-across-own-key", "§6.5 (open)", m.rolledBackAcrossOwnKey),
		sometimes("deleted-row-restored", "§6.5 (open), §1.2", m.deletedRowRestored),
		sometimes("copy-decides-frontier", "Thm 1, S-OBS", func(s *rewindState) string { return protocols.CopyDecides(&s.Cap, units, false) }),
	}, // the refresh is spliced at lo: a point splice (§6.4)
		protocols.EmissionProps[rewindState, rewindAction](&m.cfg, invariants.PointSplice, protocols.Chunks[rewindState](&m.cfg),
			func(s *rewindState) *model.Capture { return &s.Cap })...)
}

// checkReconstructs: once a chunk has been read and rolled back, each of its
// keys' refresh is σ_lo.
func (m *rewind) checkReconstructs(s *rewindState) string {
	c := &s.Cap
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
			if u.Read.Has(k) && u.Refresh[k] != c.Log.Sigma(u.Lo, k) {
				return fmt.Sprintf("chunk %d key %v: read %v at r = %d, rolled back to %v, but σ_%d(%v) = %v",
					i+1, k, c.Log.Sigma(c.ReadAt[k], k), c.Log.Offset(c.ReadAt[k]), u.Refresh[k], c.Log.Offset(u.Lo), k, c.Log.Sigma(u.Lo, k))
			}
		}
	}
	return ""
}

// rolledBackAcrossOwnKey (the race the discipline exists for): a read taken
// after its chunk's low edge reflects an event of one of its own keys in
// (lo, r], and the rollback changed that key's value.
func (m *rewind) rolledBackAcrossOwnKey(s *rewindState) string {
	c := &s.Cap
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
			if !u.Read.Has(k) {
				continue
			}
			r := c.ReadAt[k]
			if _, at, ok := c.Log.Last(k, model.Window{Lo: u.Lo, Hi: r}); ok && c.Log.Sigma(r, k) != u.Refresh[k] {
				return fmt.Sprintf("chunk %d: %v read %v at r = %d > lo = %d, rolled back across %s to %v",
					i+1, k, c.Log.Sigma(r, k), c.Log.Offset(r), c.Log.Offset(u.Lo), protocols.EventString(&c.Log, at), u.Refresh[k])
			}
		}
	}
	return ""
}

// deletedRowRestored (what missing-preimage loses): a row read as ⊥ because
// it was deleted in (lo, r] is present in the rolled-back refresh.
func (m *rewind) deletedRowRestored(s *rewindState) string {
	c := &s.Cap
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
			if u.Read.Has(k) && c.Log.Sigma(c.ReadAt[k], k) == model.Absent && u.Refresh[k] != model.Absent {
				return fmt.Sprintf("chunk %d: %v read ⊥ at r = %d, restored to %v at lo = %d", i+1, k, c.Log.Offset(c.ReadAt[k]), u.Refresh[k], c.Log.Offset(u.Lo))
			}
		}
	}
	return ""
}
