package protocols

// Native dumps and restores (§7.6–7.7, Proposition 6, Theorem 8, Example 7.1).
//
// One unit owns every key: the whole scope is one dump, or one restored
// backup. Proposition 6 and Theorem 8 are one-unit statements ("the dump as
// the one-unit refresh", §7.7; "O1 holds with the one widened unit"); dumps
// of several tables at their own coordinates are a composition (Cor. 3, §7.6
// Result, Example 5.1, Prop. 2), which the composite model checks.
//
// The consumer walks the log in commit order from a start s0 the model
// chooses (the start-later action): at or before the unit's low edge, r or b
// (S-OBS; §6.4 for the splice, Thm 8(2) "consumption beginning at or before
// b"). What lies at or before s0 it never sees, so rows written there, like
// the rows of the base store b0 (every store with initial=any), reach the
// sink only through the dump's buffer. Every consumed event is emitted at its
// own place. The model has two modes.
//
// trusted (Proposition 6, §6.4 point splice): the dump binds one
// engine-consistent view to the recorded coordinate r (A-cert, A-scope), one
// action: r is the log's length then, every key is read there and the
// present rows go into the buffer. The bracket is the point r and its window
// is empty, so nothing discards. While the dump is in flight the consumer
// may run up to r and no further: the present rows are emitted at r, before
// every later event (copy-before-suffix, §6.4). The unit closes when the
// consumer stands at r: the buffer is emitted, tagged r. The trajectory is
// claimed from r (Cor. 1: r is a shared state witness).
//
// uncertain (Theorem 8, §6.2 window-discard over the widened bracket): a
// physical backup is consistent at one view v somewhere between the recorded
// b and e. Record b (the backup's start); the view is taken at a latent v
// (the capture never learns it); record e (post-recovery); the restored rows
// arrive in the buffer at any time after the view, before or after e. The
// consumer streams the log throughout (§8.6 "streams the log from the
// backup's start"): an event in (b, e] for a buffered key discards it; one
// met before the rows have arrived is remembered and drops its key's row when
// they arrive — Def. 6.2 asks for exactly the survivors, keys with no event
// in (b, e], however late the rows come. The unit closes only once the rows
// have arrived and every event through e has been processed (Thm 8(2)): the
// buffer is emitted, tagged e. The trajectory is claimed from e (Lemma 4.2).
//
// Parts (DumpParts): RecordRAfterView, how the trusted dump's view is bound
// to r (one step as published, Prop 6's A-cert and A-scope;
// false-recovery-point is the other choice); Claim, the coordinate the
// trajectory is claimed from (the high edge as published: r, or e;
// claim-inside-uncertainty is a choice of it).
//
// Faults that are not parts: no-discard (uncertain: an in-window event
// neither discards nor drops the row, Example 7.1's restored 4 survives);
// copy-dropped (the close emits no buffered rows); consumer-runs-during-read
// (uncertain: a window event met before the rows arrive is not remembered).

import (
	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
)

// Dump modes.
const (
	DumpTrusted   = "trusted"
	DumpUncertain = "uncertain"
)

// dumpPhase is how far the unit's bracket and view have got.
type dumpPhase uint8

const (
	dumpIdle     dumpPhase = iota // nothing recorded or read yet
	dumpLow                       // uncertain: b recorded, the view not yet taken
	dumpViewed                    // the view has been taken; the high edge (r or e) is not recorded yet
	dumpRecorded                  // the bracket is complete: the point r, or (b, e]
)

var dumpPhaseNames = [...]string{"idle", "b recorded", "view taken", "bracket recorded"}

// dumpState is one state of the dump model: the shared capture, the phase
// and the buffer. Buf holds the arrived rows not yet discarded (their values
// are the unit's Refresh); Gone the keys whose window event was met before
// the rows arrived.
type dumpState struct {
	Cap     model.Capture
	Phase   dumpPhase
	Arrived bool // the dumped or restored rows are in the buffer
	Buf     model.KeySet
	Gone    model.KeySet
}

type dumpKind uint8

const (
	dumpCommit     dumpKind = iota // the source commits a transaction (§2.1)
	dumpSplice                     // trusted: record r, read every key at r into the buffer (Prop 6)
	dumpReadAt                     // RecordRAfterView: the dump reads every key at a latent view v
	dumpRecordR                    // RecordRAfterView: r is recorded afterwards, as the log end then
	dumpRecordB                    // uncertain: record the backup's start coordinate b (Thm 8)
	dumpRestore                    // uncertain: the backup's one consistent view, at a latent v
	dumpArrive                     // uncertain: the restored rows arrive in the buffer
	dumpRecordE                    // uncertain: record the post-recovery coordinate e
	dumpClose                      // the unit closes: the buffer is emitted, tagged hi
	dumpConsume                    // the consumer processes the next log position
	dumpStartLater                 // the consumer's start s0 moves one position on (S-OBS, retention)
	dumpKinds
)

var dumpKindNames = [dumpKinds]string{"commit", "dump", "read view", "record r", "record b", "restore", "rows arrive", "record e", "close", "consume", "start-later"}

// dumpAction is one step of the dump model.
type dumpAction struct {
	Kind dumpKind
	Txn  Txn // dumpCommit
}

// DumpParts are the decision points of the native dump and restore placement
// (§7.6–7.7, Proposition 6, Theorem 8) a variant may change. Each nil or zero
// field takes the placement as published.
type DumpParts struct {
	// RecordRAfterView, in mode trusted, takes the dump's view in one step
	// and records r as the log end in a later one. As published the engine
	// binds its view to the recorded r in one step (A-cert, A-scope: "the
	// engine view must coincide with the tool's published coordinate"), so
	// the splice reads exactly σ_r; apart, the source may commit in between
	// and the view is older than the r the splice trusts.
	RecordRAfterView bool
	// Claim is the coordinate the trajectory is claimed from once the unit
	// has closed, given its recorded bracket: its high edge as published —
	// r in mode trusted (Prop 6, Cor. 1: r is a shared state witness), e in
	// mode uncertain (Theorem 8(1), Lemma 4.2: the view inside (b, e] is
	// unknown, so nothing earlier is guaranteed).
	Claim func(u model.Unit) model.Coord
	// ConsumeDuringRead, in mode uncertain, lets the consumer take window
	// events before the dump's rows have arrived without holding them
	// against those rows: a key updated in (b, e] before arrival keeps its
	// stale dumped row (A-discard broken). As published the consumer marks
	// the key, and its row is dropped when the rows arrive (Thm 8).
	ConsumeDuringRead bool
	// ValueBlind declares that the parts set here do not depend on which
	// value is which: renaming the values they receive leaves their answer
	// unchanged (they compare values only with each other and with ⊥), as in
	// the published parts and the shipped faults. Claim receives values (the
	// unit's refresh). A variant that sets one without this declaration has
	// no value renaming: --symmetry is refused for it, naming the part.
	// --check-symmetry verifies the declaration at the bounds it runs.
	ValueBlind bool
}

// withFault maps the faults that are choices of a part onto it, on top of
// the variant's own part.
func (p DumpParts) withFault(f Fault) DumpParts {
	switch f {
	case FalseRecoveryPoint:
		p.RecordRAfterView = true
	case ConsumerRunsDuringRead:
		p.ConsumeDuringRead = true
	case ClaimInsideUncertainty: // no later than b+1: strictly inside (b, e) whenever b+1 < e
		claim := p.Claim
		if claim == nil {
			claim = func(u model.Unit) model.Coord { return u.Hi }
		}
		p.Claim = func(u model.Unit) model.Coord { return min(claim(u), u.Lo+1) }
	}
	return p
}

// dump is the model under one Config.
type dump struct {
	cfg       Config
	parts     DumpParts
	uncertain bool
	kinds     []dumpKind     // the kinds this configuration can take, for coverage
	kindIndex [dumpKinds]int // kind → index in kinds
	scope     model.KeySet   // every key
	*Layout[dumpState]
}

func newDump(cfg Config) *dump { return DumpParts{}.model(cfg) }

func (p DumpParts) model(cfg Config) *dump {
	m := &dump{cfg: cfg, parts: p.withFault(cfg.Fault), uncertain: cfg.Mode == DumpUncertain, scope: model.Range(0, model.Key(cfg.Keys))}
	switch {
	case m.uncertain:
		m.kinds = []dumpKind{dumpCommit, dumpRecordB, dumpRestore, dumpArrive, dumpRecordE, dumpClose, dumpConsume, dumpStartLater}
	case m.parts.RecordRAfterView:
		m.kinds = []dumpKind{dumpCommit, dumpReadAt, dumpRecordR, dumpClose, dumpConsume, dumpStartLater}
	default:
		m.kinds = []dumpKind{dumpCommit, dumpSplice, dumpClose, dumpConsume, dumpStartLater}
	}
	for i, k := range m.kinds {
		m.kindIndex[k] = i
	}
	m.Layout = NewLayout[dumpState](cfg.Keys, Phase("Phase", dumpPhaseNames[:]).As("phase"), Flag("Arrived"), Keys("Buf"), Keys("Gone")).
		Show("buffer", func(s *dumpState) (string, bool) { return m.bufferField(s), true }).
		Note("mode", m.modeName())
	return m
}

// Init: one state per base store b0, the empty log, nothing recorded and a
// consumer that has consumed nothing, its start still open.
func (m *dump) Init() []dumpState {
	var out []dumpState
	for _, c := range InitialCaptures(&m.cfg) {
		out = append(out, dumpState{Cap: c})
	}
	return out
}

// Actions: the source's commits, the capture's next step, the rows' arrival,
// the close, then the consumer's.
func (m *dump) Actions(s *dumpState, buf []dumpAction) []dumpAction {
	for t := range Commits(&m.cfg, &s.Cap.Log) {
		buf = append(buf, dumpAction{Kind: dumpCommit, Txn: t})
	}
	switch s.Phase {
	case dumpIdle:
		switch {
		case m.uncertain:
			buf = append(buf, dumpAction{Kind: dumpRecordB})
		case m.parts.RecordRAfterView:
			buf = append(buf, dumpAction{Kind: dumpReadAt})
		default:
			buf = append(buf, dumpAction{Kind: dumpSplice})
		}
	case dumpLow:
		buf = append(buf, dumpAction{Kind: dumpRestore})
	case dumpViewed:
		if m.uncertain {
			buf = append(buf, dumpAction{Kind: dumpRecordE})
		} else {
			buf = append(buf, dumpAction{Kind: dumpRecordR})
		}
	}
	if m.uncertain && s.Phase >= dumpViewed && !s.Arrived {
		buf = append(buf, dumpAction{Kind: dumpArrive})
	}
	c := &s.Cap
	if s.Phase == dumpRecorded && s.Arrived && !c.UnitClosed(0) && c.Pos == c.Plan.Units[0].Hi {
		buf = append(buf, dumpAction{Kind: dumpClose})
	}
	if m.consumerMay(s) {
		buf = append(buf, dumpAction{Kind: dumpConsume})
		if MayStartLater(c, m.startBound(s)) {
			buf = append(buf, dumpAction{Kind: dumpStartLater})
		}
	}
	return buf
}

// consumerMay: there is a next position, and the consumer does not pass the
// recorded high edge before the unit has closed (the close comes before every
// event beyond hi: §6.4 copy-before-suffix, Def. 6.2's close placement).
func (m *dump) consumerMay(s *dumpState) bool {
	c := &s.Cap
	if c.Pos >= c.Log.Len() {
		return false
	}
	return s.Phase != dumpRecorded || c.UnitClosed(0) || c.Pos < c.Plan.Units[0].Hi
}

// startBound is the latest start s0 allowed so far: the unit's low edge once
// recorded (r, or b), else none. Under RecordRAfterView the capture learns r
// only when it records it.
func (m *dump) startBound(s *dumpState) model.Coord {
	if !m.uncertain && s.Phase != dumpRecorded {
		return NoBound
	}
	return EarliestLow(&s.Cap.Plan)
}

// Next makes the successor in t, a copy of s on entry, which each step below
// changes in place.
func (m *dump) Next(s *dumpState, a dumpAction, t *dumpState) bool {
	switch a.Kind {
	case dumpCommit:
		ok := m.commit(t, a.Txn)
		return ok
	case dumpSplice:
		m.splice(t)
	case dumpReadAt:
		m.readView(t)
	case dumpRecordR:
		m.recordR(t)
	case dumpRecordB:
		m.recordB(t)
	case dumpRestore:
		m.restore(t)
	case dumpArrive:
		m.arrive(t)
	case dumpRecordE:
		m.recordE(t)
	case dumpClose:
		m.closeUnit(t)
	case dumpConsume:
		m.consume(t)
	case dumpStartLater:
		StartLater(&t.Cap)
	default:
		return false
	}
	return true
}

func (m *dump) commit(s *dumpState, t Txn) bool {
	return s.Cap.Log.Commit(t.Events()...)
}

// view reads every key at the log's current length (one consistent view)
// into unit 0: R(k) = σ_len(k), ReadAt[k] = len.
func (m *dump) view(s *dumpState) {
	c := &s.Cap
	v := c.Log.Len()
	u := &c.Plan.Units[0]
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		u.Refresh[k] = c.Log.Sigma(v, k)
		u.Read = u.Read.With(k)
		c.ReadAt[k] = v
	}
}

// addUnit records the one unit with its bracket at the log's length.
func (m *dump) addUnit(s *dumpState) {
	at := s.Cap.Log.Len()
	s.Cap.Plan.Add(model.Unit{Domain: m.scope, Lo: at, Hi: at})
}

// splice is the trusted dump: r is the log's length, every key is read there
// and the present rows are buffered; the bracket is the point r (Prop 6).
func (m *dump) splice(s *dumpState) {
	m.addUnit(s)
	m.view(s)
	s.Buf, s.Arrived = s.Cap.Plan.Units[0].Present(), true
	s.Phase = dumpRecorded
}

// readView is the read of a dump that records r after its view
// (RecordRAfterView): consistent at the latent view v, the rows buffered, r
// not recorded yet (the bracket is provisional).
func (m *dump) readView(s *dumpState) {
	m.addUnit(s)
	m.view(s)
	s.Buf, s.Arrived = s.Cap.Plan.Units[0].Present(), true
	s.Phase = dumpViewed
}

// recordR records r as the log end now — after the read, so possibly later
// than the view the dump is consistent at.
func (m *dump) recordR(s *dumpState) {
	r := s.Cap.Log.Len()
	u := &s.Cap.Plan.Units[0]
	u.Lo, u.Hi = r, r
	s.Phase = dumpRecorded
}

// recordB records the backup's start coordinate b: the window's low edge.
func (m *dump) recordB(s *dumpState) {
	m.addUnit(s)
	s.Phase = dumpLow
}

// restore takes the backup's one consistent view at v, the log's length now;
// the capture does not learn v, and the rows have not arrived yet.
func (m *dump) restore(s *dumpState) {
	m.view(s)
	s.Phase = dumpViewed
}

// arrive puts the restored rows in the buffer: the present ones, less those
// whose key already had a window event (Def. 6.2: a key with an event in the
// window is no survivor, whenever its row arrives).
func (m *dump) arrive(s *dumpState) {
	s.Buf = s.Cap.Plan.Units[0].Present() &^ s.Gone
	s.Gone, s.Arrived = 0, true
}

// recordE records the post-recovery coordinate e, widening the bracket to (b, e].
func (m *dump) recordE(s *dumpState) {
	s.Cap.Plan.Units[0].Hi = s.Cap.Log.Len()
	s.Phase = dumpRecorded
}

// closeUnit emits the buffer, tagged with the high edge: for the point
// bracket every present read, for (b, e] the survivors (Def. 6.2).
func (m *dump) closeUnit(s *dumpState) {
	c := &s.Cap
	u := &c.Plan.Units[0]
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if s.Buf.Has(k) && m.cfg.Fault != CopyDropped {
			c.EmitCopy(k, u.Refresh[k], u.Hi)
		}
	}
	s.Buf = 0
	c.Closed |= 1
}

// inWindow: position p lies in the open window (b, e] of the uncertain unit.
// Before e is recorded every new position will lie at or before it. The
// point bracket's window is empty.
func (m *dump) inWindow(s *dumpState, p model.Coord) bool {
	c := &s.Cap
	return m.uncertain && c.Plan.N == 1 && !c.UnitClosed(0) && p > c.Plan.Units[0].Lo
}

// consume processes the next position: an in-window event discards its key's
// buffered row, or, before the rows have arrived, marks the key so that its
// row is dropped when they do; every event is emitted at its place.
func (m *dump) consume(s *dumpState) {
	c := &s.Cap
	p := c.Pos + 1
	e := c.Log.At(p)
	c.Pos = p
	if !captured(&m.cfg, c, e.Key) {
		return // another table's row (a whole-server log, §7.7)
	}
	if m.inWindow(s, p) && m.cfg.Fault != NoDiscard {
		switch {
		case s.Arrived:
			s.Buf = s.Buf.Without(e.Key)
		case !m.parts.ConsumeDuringRead:
			s.Gone = s.Gone.With(e.Key)
		}
	}
	c.Emit(e.Key, e.Img, p)
}

// claim is the coordinate the trajectory is claimed from once u has closed:
// the Claim part, u's high edge when it is nil.
func (m *dump) claim(u *model.Unit) model.Coord {
	if m.parts.Claim == nil {
		return u.Hi
	}
	return m.parts.Claim(*u)
}

// Done: the unit has closed, the consumer is at the log's end and the source
// has committed all E events.
func (m *dump) Done(s *dumpState) bool {
	c := &s.Cap
	return c.AllClosed(1) && c.Pos == c.Log.Len() && DataEvents(&c.Log) == m.cfg.Events
}

// Properties: the shared invariants, the mode's trajectory claim, and the
// races that show they bite.
func (m *dump) Properties() []explore.Property[dumpState, dumpAction] {
	type P = explore.Property[dumpState, dumpAction]
	sometimes := func(name, cite string, check func(s *dumpState) string) P {
		return P{Name: name, Cite: cite, Kind: explore.Sometimes, Check: check}
	}
	props := []P{
		invariants.Prop[dumpState, dumpAction](invariants.FinalReplay, func(s *dumpState) string {
			return invariants.CheckFinalReplay(&s.Cap, 1)
		}),
		invariants.StepProp[dumpState, dumpAction](invariants.NoDuplicate, func(s *dumpState, _ dumpAction, t *dumpState) string {
			return invariants.CheckNoDuplicate(&s.Cap, &t.Cap)
		}),
		invariants.Prop[dumpState, dumpAction](invariants.FrontierReplay, func(s *dumpState) string {
			return invariants.CheckFrontierReplay(&s.Cap, 1)
		}),
		invariants.Prop[dumpState, dumpAction](invariants.ClosedUnitCut, func(s *dumpState) string {
			return invariants.CheckClosedUnitCut(&s.Cap)
		}),
		invariants.StepProp[dumpState, dumpAction](invariants.Monotonic, func(s *dumpState, _ dumpAction, t *dumpState) string {
			return invariants.CheckMonotone(&s.Cap, &t.Cap)
		}),
		invariants.StepProp[dumpState, dumpAction](invariants.ExactTags, func(s *dumpState, _ dumpAction, t *dumpState) string {
			return invariants.CheckExactTags(&s.Cap, &t.Cap)
		}),
		invariants.Prop[dumpState, dumpAction](invariants.CommittedOnly, func(s *dumpState) string {
			return invariants.CheckCommittedOnly(&s.Cap)
		}),
		invariants.Prop[dumpState, dumpAction](invariants.Contract, func(s *dumpState) string {
			return invariants.CheckContract(&s.Cap, 1)
		}),
	}
	trajectory := invariants.LatestHigh
	if !m.uncertain {
		trajectory = invariants.TrustedSplice
	}
	props = append(props,
		invariants.Prop[dumpState, dumpAction](trajectory, func(s *dumpState) string {
			if s.Phase != dumpRecorded {
				return ""
			}
			return invariants.CheckTrajectory(&s.Cap, 1, m.claim(&s.Cap.Plan.Units[0]))
		}),
		sometimes("copy-decides-frontier", "Thm 1, S-OBS", func(s *dumpState) string { return CopyDecides(&s.Cap, 1, false) }),
		sometimes("copy-shares-event-tag", "§9, §6.4", func(s *dumpState) string { return CopySharesEventTag(&s.Cap) }),
	)
	disc := invariants.WindowDiscard // over the widened bracket (b, e], Thm 8
	if !m.uncertain {
		disc = invariants.PointSplice // at the recorded r, Prop 6
	}
	props = append(props, EmissionProps[dumpState, dumpAction](&m.cfg, disc, func(*dumpState) int { return 1 },
		func(s *dumpState) *model.Capture { return &s.Cap })...)
	if m.cfg.WholeServer && m.uncertain { // a trusted splice's window (r, r] is empty
		props = append(props, sometimes("outside-event-in-window", "§7.7", func(s *dumpState) string { return OutsideInWindow(&s.Cap) }))
	}
	if !m.uncertain {
		return append(props,
			sometimes("spliced-row-emitted", "Prop 6, §6.4", m.splicedRowEmitted),
			sometimes("event-before-splice-consumed", "§6.4 (s0 ⊑ r)", m.eventBeforeSplice),
			sometimes("splice-before-later-events", "Prop 6, §6.4", m.spliceBeforeLaterEvents),
		)
	}
	return append(props,
		sometimes("view-strictly-inside", "Thm 8", m.viewStrictlyInside),
		sometimes("window-event-before-arrival", "Def. 6.2, Thm 8(2)", m.windowEventBeforeArrival),
		sometimes("restored-row-discarded", "Example 7.1, Def. 6.2", m.restoredRowDiscarded),
		sometimes("rows-arrive-after-e", "Thm 8(2)", m.rowsArriveAfterE),
		sometimes("survivor-emitted", "Def. 6.2, Lemma 6.1", m.survivorEmitted),
		sometimes("stale-restore-corrected", "Thm 8, Example 7.1", m.staleRestoreCorrected),
	)
}

// Dump returns the dump protocol built from parts. It is registered as
// "dump" with the zero DumpParts; a variant is the same call with other parts
// and another Name, registered with Register:
//
//	p := protocols.Dump(protocols.DumpParts{Claim: ...})
//	p.Name = "dump-early-claim"
//	err := protocols.Register(p) // an error for a name already taken
func Dump(parts DumpParts) *Protocol {
	return withParts(parts, Define(&Protocol{
		Name:        "dump",
		Doc:         "native dumps and restores: a trusted point splice at r, or an uncertain view in (b, e] reconciled by window-discard",
		Cite:        "§7.6–7.7, Prop 6, Thm 8",
		Defaults:    Config{Keys: 3, Values: 2, Events: 4, Chunks: 1, Txn: 2, Mode: DumpTrusted},
		Limits:      Limits{Keys: model.MaxKeys, Values: 7, Events: model.MaxLog, Chunks: 1, Txn: MaxTxn, WholeServer: true, Modes: []string{DumpTrusted, DumpUncertain}},
		Disciplines: map[string]string{DumpTrusted: PointSplice, DumpUncertain: WindowDiscard},
		Faults:      []Fault{FalseRecoveryPoint, ClaimInsideUncertainty, NoDiscard, CopyDropped, ConsumerRunsDuringRead, OutsideEventForwarded},
	}, func(cfg Config) explore.Model[dumpState, dumpAction] { return parts.model(cfg) }))
}

func init() { mustRegister(Dump(DumpParts{})) }
