package protocols

// Heterogeneous composition (§4.6, Corollary 3, Figure 3, Example 5.1,
// Proposition 2, Lemma 4.2), reconciled by window-discard with point splices
// as its degenerate case (§6.2, §6.4).
//
// C units over disjoint key ranges (chunk i owns keys [i*K/C, (i+1)*K/C)),
// recorded in any order, interleaved with the source's commits:
//
//   - mode mixed (Figure 3): chunk 1 is a chunked scan with an ordinary,
//     write-free bracket — record lo (the log's length), read its keys one by
//     one, each at any transaction boundary in [lo, now] (O2 is per key,
//     §4.3), record hi — chunk 2 a native dump and chunks 3.. point selects,
//     each behind a point bracket of its own: one action records r (the log's
//     length) and reads the chunk's keys at r (the trusted binding v = p = r,
//     Prop 6). The three provenances are one formal object (§3.1, §7.6);
//   - mode tablesync (Example 5.1's per-table dumps, Proposition 2's shape):
//     every unit is a point splice at its own recorded coordinate.
//
// One consumer walks the log one position per step from a start s0 the model
// chooses: while it has consumed nothing it may move s0 on, up to the earliest
// low edge or splice recorded so far (§6.4: s0 ⊑ lo_i for every unit; later
// units are recorded at the log's end, never before s0). Positions at or
// before s0 it never sees, so what they wrote, like the rows of the base store
// b0 (every store with initial=any), reaches the sink only through a copy.
//
// Each unit keeps a real buffer: its keys read present (absence is by
// omission, §6.1). An event the consumer processes inside the chunked unit's
// window (lo, hi] discards its key's buffered row (the log wins, Def. 6.2); a
// point bracket's window is empty. Serialized window lifecycle (A-discard,
// §7.4): the consumer does not pass lo while the chunk's read is pending, so
// every window event meets the filled buffer. A unit closes just before the
// consumer passes beyond its high edge, emitting what is still buffered
// tagged with the high edge, and the consumer never passes the high edge of a
// unit that has not closed. Every data event is emitted at its own place. The
// composite has no shared state witness in general, so its trajectory is
// claimed from the latest high edge only (Lemma 4.2).
//
// The read positions are latent. The plan lists its units in chunk order.
//
// Parts (CompositeParts): Onset, the coordinate the trajectory is claimed
// from (the latest high edge as published, Lemma 4.2; early-common-onset is a
// choice of it: once every unit has closed the capture claims an onset c*
// strictly below the frontier, any c* the model chooses, and Proposition 2
// exhibits a composite where every such claim fails).
//
// Faults that are not parts: late-start (s0 may move one position past the
// earliest lo or splice, S-OBS); copy-dropped (the close emits none of its
// buffered rows); consumer-runs-during-read (the consumer passes lo while the
// chunk is still being read, so a window event met before its key's read
// cannot discard it, A-discard); witness-by-bracket-only (a claim: every
// coordinate inside all brackets is exhibited as a shared state witness,
// Cor 1's refresh clause unchecked; shared-witness-trajectory checks the
// trajectory from every exhibited witness).

import (
	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
)

// Composite modes.
const (
	CompositeMixed     = "mixed"
	CompositeTablesync = "tablesync"
)

// compScan is how far the chunked unit (mode mixed) has got.
type compScan uint8

const (
	compScanIdle compScan = iota // not started
	compScanLow                  // lo recorded: the consumer waits at lo for the read
	compScanRead                 // its keys read into the buffer
	compScanHigh                 // hi recorded: the bracket is complete
)

var compScanNames = [...]string{"idle", "lo recorded", "read", "hi recorded"}

// compositeState is one state of the composite model.
type compositeState struct {
	Cap   model.Capture
	Buf   model.KeySet          // rows buffered by the open units (domains are disjoint: one set); values in Refresh
	Scan  compScan              // the chunked unit's progress (mixed)
	Onset model.Coord           // with an Onset part: the claimed c* plus one; 0 = no claim yet
	Chunk [model.MaxUnits]uint8 // the chunk of plan unit i (chunks are recorded in any order); last, after the fields it is encoded with (Layout)
}

type compositeKind uint8

const (
	compCommit     compositeKind = iota // the source commits a transaction (§2.1)
	compRecordLo                        // chunked unit: record its low edge, the log's length (write-free bracket)
	compRead                            // chunked unit: read its next key at a boundary of [lo, now] into the buffer
	compRecordHi                        // chunked unit: record its high edge
	compSplice                          // point splice: record r and read its keys there, one action (§6.4)
	compClose                           // a unit closes: its buffered rows emitted, tagged with its high edge (Def. 6.2)
	compConsume                         // the consumer processes the next log position
	compStartLater                      // the consumer's start s0 moves one position on (S-OBS, retention)
	compClaim                           // with an Onset part: claim the trajectory from c* (Prop 2)
	compKinds
)

var compositeKindNames = [compKinds]string{"commit", "record-lo", "read-chunk", "record-hi", "splice", "close", "consume", "start-later", "claim-onset"}

// compositeAction is one step of the composite model.
type compositeAction struct {
	Kind compositeKind
	Txn  Txn         // compCommit
	Unit uint8       // compSplice: the chunk; compClose: the plan unit
	At   model.Coord // compClaim: the claimed onset c*
}

// CompositeParts are the decision points of a heterogeneous composition
// (§4.6, Corollary 3, Proposition 2) a variant may change. Each nil or zero
// field takes the composition as published.
type CompositeParts struct {
	// Onset, when set, makes the capture claim its trajectory from a
	// coordinate of its own choosing: once every unit has closed and the
	// consumer stands at frontier c.Pos, at or beyond the latest high edge,
	// the model claims in one step each at in [0, c.Pos] for which Onset
	// holds, and the trajectory property is checked from it. As published
	// (nil) nothing is chosen: the trajectory is claimed from the latest
	// high edge, all that composition supplies (Lemma 4.2, Cor. 3); an
	// earlier onset needs one shared state witness, which Proposition 2
	// shows composition cannot promise. Onset must accept some coordinate
	// at every frontier beyond 0, or the run cannot finish (a deadlock).
	Onset func(c model.Capture, at model.Coord) bool
	// Discard is the per-key merge rule of the chunked unit (MergeRule;
	// nil = the log wins): whether an in-window event discards its key's
	// buffered row.
	Discard MergeRule
	// ValueBlind declares that the parts set here do not depend on which
	// value is which: renaming the values they receive leaves their answer
	// unchanged (they compare values only with each other and with ⊥), as in
	// the published parts and the shipped faults. Onset receives values (the
	// whole capture). A variant that sets one without this declaration has
	// no value renaming: --symmetry is refused for it, naming the part.
	// --check-symmetry verifies the declaration at the bounds it runs.
	ValueBlind bool
}

// withFault maps the faults that are choices of a part onto it, on top of
// the variant's own part.
func (p CompositeParts) withFault(f Fault) CompositeParts {
	if f == EarlyCommonOnset { // any c* strictly below the frontier, besides the variant's own
		onset := p.Onset
		if onset == nil {
			onset = func(model.Capture, model.Coord) bool { return false }
		}
		p.Onset = func(c model.Capture, at model.Coord) bool { return onset(c, at) || at < c.Pos }
	}
	return p
}

// composite is the model under one Config.
type composite struct {
	cfg       Config
	parts     CompositeParts
	tablesync bool
	domain    [model.MaxUnits]model.KeySet // chunk → its keys
	kinds     []compositeKind
	kindIndex [compKinds]int
	*Layout[compositeState]
}

func newComposite(cfg Config) *composite { return CompositeParts{}.model(cfg) }

func (p CompositeParts) model(cfg Config) *composite {
	m := &composite{cfg: cfg, parts: p.withFault(cfg.Fault), tablesync: cfg.Mode == CompositeTablesync}
	if cfg.Onset > 0 { // Prop 2's one c*, claimed at the run's end: f is the end of the whole history
		cstar := model.Coord(cfg.Onset - 1)
		m.parts.Onset = func(c model.Capture, at model.Coord) bool {
			return at == cstar && at < c.Pos && c.Pos == c.Log.Len() && DataEvents(&c.Log) == cfg.Events
		}
	}
	for c := 0; c < cfg.Chunks; c++ {
		m.domain[c] = ChunkKeys(c, cfg.Keys, cfg.Chunks)
	}
	m.kinds = []compositeKind{compCommit}
	if !m.tablesync {
		m.kinds = append(m.kinds, compRecordLo, compRead, compRecordHi)
	}
	if m.tablesync || cfg.Chunks > 1 {
		m.kinds = append(m.kinds, compSplice)
	}
	m.kinds = append(m.kinds, compClose, compConsume, compStartLater)
	if m.parts.Onset != nil {
		m.kinds = append(m.kinds, compClaim)
	}
	for i, k := range m.kinds {
		m.kindIndex[k] = i
	}
	scan := Phase("Scan", compScanNames[:])
	if !m.tablesync {
		scan = scan.As("chunk 1")
	}
	m.Layout = NewLayout[compositeState](cfg.Keys, scan, Keys("Buf"), Coords("Onset"), Bytes("Chunk").PerUnit()).
		Show("buffer", func(s *compositeState) (string, bool) { return m.bufferText(s), true }).
		Show("claimed onset", m.onsetText).
		Note("mode", m.modeName())
	return m
}

// Init: one state per base store, the empty log, nothing recorded, the
// consumer at s0 = 0 with its start still open.
func (m *composite) Init() []compositeState {
	var out []compositeState
	for _, c := range InitialCaptures(&m.cfg) {
		out = append(out, compositeState{Cap: c})
	}
	return out
}

// isSplice reports whether plan unit i is a point splice (not the chunked scan).
func (m *composite) isSplice(s *compositeState, i int) bool {
	return m.tablesync || s.Chunk[i] != 0
}

// complete reports whether plan unit i has its whole bracket and its read.
func (m *composite) complete(s *compositeState, i int) bool {
	return m.isSplice(s, i) || s.Scan == compScanHigh
}

// scanUnit is the plan index of the chunked unit, or -1.
func (m *composite) scanUnit(s *compositeState) int {
	for i := 0; i < int(s.Cap.Plan.N); i++ {
		if !m.isSplice(s, i) {
			return i
		}
	}
	return -1
}

// unitOf is the plan index of chunk ch, or -1 if it is not recorded.
func (m *composite) unitOf(s *compositeState, ch int) int {
	for i := 0; i < int(s.Cap.Plan.N); i++ {
		if int(s.Chunk[i]) == ch {
			return i
		}
	}
	return -1
}

func (m *composite) recorded(s *compositeState) (chunks uint8) {
	for i := 0; i < int(s.Cap.Plan.N); i++ {
		chunks |= 1 << s.Chunk[i]
	}
	return chunks
}

// blocked reports whether a complete, unclosed unit has its high edge at or
// before the consumer: it must close before the consumer moves on.
func (m *composite) blocked(s *compositeState) bool {
	c := &s.Cap
	for i := 0; i < int(c.Plan.N); i++ {
		if !c.UnitClosed(i) && m.complete(s, i) && c.Plan.Units[i].Hi <= c.Pos {
			return true
		}
	}
	return false
}

// consumerMay: a next position exists, no unit is due to close, and the
// consumer is not at the low edge of a chunk whose read is still pending
// (A-discard: the buffer is filled before any window event is processed).
func (m *composite) consumerMay(s *compositeState) bool {
	c := &s.Cap
	if c.Pos >= c.Log.Len() || m.blocked(s) {
		return false
	}
	if s.Scan == compScanLow && c.Pos >= c.Plan.Units[m.scanUnit(s)].Lo && m.cfg.Fault != ConsumerRunsDuringRead {
		return false
	}
	return true
}

// startBound is the latest start allowed so far: the earliest low edge or
// splice recorded (§6.4); one past it for the late consumer.
func (m *composite) startBound(c *model.Capture) model.Coord {
	b := EarliestLow(&c.Plan)
	if m.cfg.Fault == LateStart && b != NoBound {
		b++
	}
	return b
}

// Actions: the capture's steps (records, the chunk's read and high edge,
// closes), then the source's commits, then the consumer's step, and with an
// Onset part the claims. The order only breaks ties between equally short
// traces: capture steps first lets the shortest early-common-onset
// counterexample show Proposition 2's shape (a splice before the commits).
func (m *composite) Actions(s *compositeState, buf []compositeAction) []compositeAction {
	c := &s.Cap
	done := m.recorded(s)
	for ch := 0; ch < m.cfg.Chunks; ch++ {
		if done&(1<<ch) != 0 {
			continue
		}
		if ch == 0 && !m.tablesync {
			buf = append(buf, compositeAction{Kind: compRecordLo})
		} else {
			buf = append(buf, compositeAction{Kind: compSplice, Unit: uint8(ch)})
		}
	}
	switch s.Scan {
	case compScanLow:
		u := &c.Plan.Units[m.scanUnit(s)]
		for at := u.Lo; at <= c.Log.Len(); at++ {
			if PublishedRead(&c.Log, u.Lo, at) {
				buf = append(buf, compositeAction{Kind: compRead, At: at})
			}
		}
	case compScanRead:
		buf = append(buf, compositeAction{Kind: compRecordHi})
	}
	for i := 0; i < int(c.Plan.N); i++ {
		if !c.UnitClosed(i) && m.complete(s, i) && c.Pos >= c.Plan.Units[i].Hi {
			buf = append(buf, compositeAction{Kind: compClose, Unit: uint8(i)})
		}
	}
	for t := range Commits(&m.cfg, &s.Cap.Log) {
		buf = append(buf, compositeAction{Kind: compCommit, Txn: t})
	}
	if m.consumerMay(s) {
		buf = append(buf, compositeAction{Kind: compConsume})
		if MayStartLater(c, m.startBound(c)) {
			buf = append(buf, compositeAction{Kind: compStartLater})
		}
	}
	if m.parts.Onset != nil && s.Onset == 0 && c.AllClosed(m.cfg.Chunks) && c.Pos >= c.Plan.LatestHigh() {
		for at := model.Coord(0); at <= c.Pos; at++ {
			if m.parts.Onset(*c, at) {
				buf = append(buf, compositeAction{Kind: compClaim, At: at})
			}
		}
	}
	return buf
}

// Next makes the successor in t, a copy of s on entry, which each step below
// changes in place.
func (m *composite) Next(s *compositeState, a compositeAction, t *compositeState) bool {
	switch a.Kind {
	case compCommit:
		ok := t.Cap.Log.Commit(a.Txn.Events()...)
		return ok
	case compRecordLo:
		m.recordLo(t)
	case compRead:
		m.readChunk(t, a.At)
	case compRecordHi:
		m.recordHi(t)
	case compSplice:
		m.splice(t, int(a.Unit))
	case compClose:
		m.closeUnit(t, int(a.Unit))
	case compConsume:
		m.consume(t)
	case compStartLater:
		StartLater(&t.Cap)
	case compClaim:
		t.Onset = a.At + 1
	default:
		return false
	}
	return true
}

// addUnit records a unit for chunk ch with its bracket at the log's length.
// The plan keeps its units in chunk order, whatever order they were recorded
// in, so one situation has one encoding; closed flags move with their units.
func (m *composite) addUnit(s *compositeState, ch int) int {
	c := &s.Cap
	at := c.Log.Len()
	i := 0
	for i < int(c.Plan.N) && int(s.Chunk[i]) < ch {
		i++
	}
	for j := int(c.Plan.N); j > i; j-- {
		c.Plan.Units[j], s.Chunk[j] = c.Plan.Units[j-1], s.Chunk[j-1]
	}
	c.Plan.Units[i], s.Chunk[i] = model.Unit{Domain: m.domain[ch], Lo: at, Hi: at}, uint8(ch)
	c.Plan.N++
	below := uint8(1)<<i - 1
	c.Closed = c.Closed&below | (c.Closed&^below)<<1
	return i
}

// readKeys reads every key of unit i at the log's length, R(k) = σ_len(k),
// and buffers the keys read present.
func (m *composite) readKeys(s *compositeState, i int) {
	c := &s.Cap
	u := &c.Plan.Units[i]
	at := c.Log.Len()
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if u.Domain.Has(k) {
			u.Refresh[k] = c.Log.Sigma(at, k)
			u.Read = u.Read.With(k)
			c.ReadAt[k] = at
			if u.Refresh[k] != model.Absent {
				s.Buf = s.Buf.With(k)
			}
		}
	}
}

// recordLo opens the chunked unit's bracket at the log's length; its high
// edge is not recorded yet.
func (m *composite) recordLo(s *compositeState) {
	i := m.addUnit(s, 0)
	s.Cap.Plan.Units[i].Hi = 0
	s.Scan = compScanLow
}

// readChunk reads the chunked unit's next key as it stood at boundary at,
// lo ⊑ at ⊑ now: O2 allows each key a coordinate of its own (Prop 1, §4.3).
// A present row goes into the buffer. The last key completes the read.
func (m *composite) readChunk(s *compositeState, at model.Coord) {
	c := &s.Cap
	u := &c.Plan.Units[m.scanUnit(s)]
	k := nextKey(u)
	u.Refresh[k], u.Read, c.ReadAt[k] = c.Log.Sigma(at, k), u.Read.With(k), at
	if u.Refresh[k] != model.Absent {
		s.Buf = s.Buf.With(k)
	}
	if u.Read == u.Domain {
		s.Scan = compScanRead
	}
}

// recordHi closes the chunked unit's bracket at the log's length.
func (m *composite) recordHi(s *compositeState) {
	s.Cap.Plan.Units[m.scanUnit(s)].Hi = s.Cap.Log.Len()
	s.Scan = compScanHigh
}

// splice records r, the log's length, and reads chunk ch's keys there.
func (m *composite) splice(s *compositeState, ch int) {
	m.readKeys(s, m.addUnit(s, ch))
}

// closeUnit emits unit i's buffered rows tagged with its high edge (Def. 6.2;
// for a point splice every key read present, §6.4) and empties its buffer.
func (m *composite) closeUnit(s *compositeState, i int) {
	c := &s.Cap
	u := &c.Plan.Units[i]
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if s.Buf.Has(k) && u.Domain.Has(k) && m.cfg.Fault != CopyDropped {
			c.EmitCopy(k, u.Refresh[k], u.Hi)
		}
	}
	s.Buf &^= u.Domain
	c.Closed |= 1 << i
}

// inWindow reports whether position p lies in the window of open unit i:
// (lo, hi], or beyond lo while the high edge is not recorded yet (it will be
// at or after the log's present end). A point bracket's window is empty.
func (m *composite) inWindow(s *compositeState, i int, p model.Coord) bool {
	u := &s.Cap.Plan.Units[i]
	return p > u.Lo && (!m.complete(s, i) || p <= u.Hi)
}

// consume processes the next position: an in-window event for a buffered
// key discards the buffered row (the log wins, Def. 6.2); every data event is
// emitted at its own place.
func (m *composite) consume(s *compositeState) {
	c := &s.Cap
	c.Pos++
	e := c.Log.At(c.Pos)
	if e.Key == model.NoKey || !captured(&m.cfg, c, e.Key) {
		return // a marker, or another table's row (a whole-server log, §7.7)
	}
	if s.Buf.Has(e.Key) {
		if i := c.Plan.Owner(e.Key); m.inWindow(s, i, c.Pos) && m.parts.Discard.discards(c, i, c.Pos) {
			s.Buf = s.Buf.Without(e.Key)
		}
	}
	c.Emit(e.Key, e.Img, c.Pos)
}

// claim is the coordinate the trajectory is claimed from: the latest high
// edge (Lemma 4.2), or with an Onset part the claimed c* (ok=false while
// nothing is claimed).
func (m *composite) claim(s *compositeState) (model.Coord, bool) {
	if m.parts.Onset != nil {
		return s.Onset - 1, s.Onset != 0
	}
	return s.Cap.Plan.LatestHigh(), true
}

// Done: every unit has closed, the consumer is at the log's end, the source
// has committed all E events (and the claim is made, with an Onset part).
func (m *composite) Done(s *compositeState) bool {
	c := &s.Cap
	done := c.AllClosed(m.cfg.Chunks) && c.Pos == c.Log.Len() && DataEvents(&c.Log) == m.cfg.Events
	if m.parts.Onset != nil && c.Pos > 0 {
		done = done && s.Onset != 0
	}
	return done
}

// Properties: the shared invariants, the latest-high trajectory, and the
// shapes that show composition is not vacuous here.
func (m *composite) Properties() []explore.Property[compositeState, compositeAction] {
	type P = explore.Property[compositeState, compositeAction]
	units := m.cfg.Chunks
	sometimes := func(name, cite string, check func(s *compositeState) string) P {
		return P{Name: name, Cite: cite, Kind: explore.Sometimes, Check: check}
	}
	props := []P{
		invariants.Prop[compositeState, compositeAction](invariants.FinalReplay, func(s *compositeState) string {
			return invariants.CheckFinalReplay(&s.Cap, units)
		}),
		invariants.StepProp[compositeState, compositeAction](invariants.NoDuplicate, func(s *compositeState, _ compositeAction, t *compositeState) string {
			return invariants.CheckNoDuplicate(&s.Cap, &t.Cap)
		}),
		invariants.Prop[compositeState, compositeAction](invariants.FrontierReplay, func(s *compositeState) string {
			return invariants.CheckFrontierReplay(&s.Cap, units)
		}),
		invariants.Prop[compositeState, compositeAction](invariants.ClosedUnitCut, func(s *compositeState) string {
			return invariants.CheckClosedUnitCut(&s.Cap)
		}),
		invariants.StepProp[compositeState, compositeAction](invariants.Monotonic, func(s *compositeState, _ compositeAction, t *compositeState) string {
			return invariants.CheckMonotone(&s.Cap, &t.Cap)
		}),
		invariants.StepProp[compositeState, compositeAction](invariants.ExactTags, func(s *compositeState, _ compositeAction, t *compositeState) string {
			return invariants.CheckExactTags(&s.Cap, &t.Cap)
		}),
		invariants.Prop[compositeState, compositeAction](invariants.CommittedOnly, func(s *compositeState) string {
			return invariants.CheckCommittedOnly(&s.Cap)
		}),
		invariants.Prop[compositeState, compositeAction](invariants.LatestHigh, func(s *compositeState) string {
			claim, ok := m.claim(s)
			if !ok || !s.Cap.AllClosed(units) {
				return ""
			}
			return invariants.CheckTrajectory(&s.Cap, units, claim)
		}),
		invariants.Prop[compositeState, compositeAction](invariants.Contract, func(s *compositeState) string {
			return invariants.CheckContract(&s.Cap, units)
		}),
		invariants.Prop[compositeState, compositeAction](invariants.SharedWitness, func(s *compositeState) string {
			if !s.Cap.AllClosed(units) {
				return ""
			}
			return invariants.CheckSharedWitness(&s.Cap, units, m.exhibited(&s.Cap))
		}),
		sometimes("distinct-splice-coordinates", "Prop 2, Example 5.1", m.distinctSplices),
		sometimes("no-shared-witness", "Prop 2, Cor 3", func(s *compositeState) string {
			if c := &s.Cap; c.AllClosed(units) {
				if p := c.FinalPlan(); p.SharedWitnesses(&c.Log) == 0 {
					return "the final plan has no shared state witness"
				}
			}
			return ""
		}),
	}
	if !m.tablesync {
		// Point splices share a witness only at one common r, the latest
		// high; a chunked bracket lets a shared witness lie below it.
		props = append(props, sometimes("buffered-row-discarded", "Def. 6.2, Thm 2", m.bufferedRowDiscarded),
			sometimes("shared-witness-below-latest-high", "Cor 1, Example 5.1", m.witnessBelowHigh))
	}
	props = append(props,
		sometimes("survivor-emitted", "Def. 6.2, §6.4", m.survivorEmitted),
		sometimes("copy-decides-frontier", "Thm 1, S-OBS", func(s *compositeState) string { return CopyDecides(&s.Cap, units, false) }),
		sometimes("copy-shares-event-tag", "§9, §6.4", func(s *compositeState) string { return CopySharesEventTag(&s.Cap) }))
	if !m.tablesync && units >= 3 {
		props = append(props, sometimes("three-provenances", "Figure 3, Cor 3", m.threeProvenances))
	}
	// A point splice is window-discard over a point bracket (§6.4).
	props = append(props, EmissionProps[compositeState, compositeAction](&m.cfg, invariants.WindowDiscard, func(*compositeState) int { return units },
		func(s *compositeState) *model.Capture { return &s.Cap })...)
	if m.cfg.WholeServer && !m.tablesync { // every tablesync unit is a splice: its window (r, r] is empty
		props = append(props, sometimes("outside-event-in-window", "§7.7", func(s *compositeState) string { return OutsideInWindow(&s.Cap) }))
	}
	return props
}

// exhibited is the set of coordinates the capture exhibits as shared state
// witnesses of its final plan (T3): those lying in every unit's bracket at
// which every refresh matches the source (Cor 1's two clauses). Under
// witness-by-bracket-only, every coordinate inside all brackets.
func (m *composite) exhibited(c *model.Capture) model.CoordSet {
	if m.cfg.Fault != WitnessByBracketOnly {
		return c.Plan.SharedWitnesses(&c.Log)
	}
	var s model.CoordSet
	for g := model.Coord(0); g <= c.Log.Len(); g++ {
		in := true
		for i := 0; i < int(c.Plan.N); i++ {
			u := &c.Plan.Units[i]
			in = in && u.Lo <= g && g <= u.Hi
		}
		if in {
			s |= 1 << g
		}
	}
	return s
}

// Composite returns the composite protocol built from parts. It is
// registered as "composite" with the zero CompositeParts; a variant is the
// same call with other parts and another Name, registered with Register:
//
//	p := protocols.Composite(protocols.CompositeParts{Onset: ...})
//	p.Name = "composite-first-splice"
//	err := protocols.Register(p) // an error for a name already taken
func Composite(parts CompositeParts) *Protocol {
	return withParts(parts, Define(&Protocol{
		Name:        "composite",
		Doc:         "heterogeneous composition: a chunked scan plus point splices at their own coordinates, one window-discard consumer",
		Cite:        "§4.6, Cor 3, Example 5.1, Prop 2",
		Defaults:    Config{Keys: 3, Values: 2, Events: 4, Chunks: 2, Txn: 2, Mode: CompositeMixed},
		Limits:      Limits{Keys: model.MaxKeys, Values: 7, Events: model.MaxLog, Chunks: model.MaxUnits, Txn: MaxTxn, WholeServer: true, Modes: []string{CompositeMixed, CompositeTablesync}},
		Disciplines: map[string]string{CompositeMixed: WindowDiscard},
		Faults:      []Fault{EarlyCommonOnset, LateStart, CopyDropped, WitnessByBracketOnly, ConsumerRunsDuringRead, OutsideEventForwarded},
	}, func(cfg Config) explore.Model[compositeState, compositeAction] { return parts.model(cfg) }))
}

func init() { mustRegister(Composite(CompositeParts{})) }
