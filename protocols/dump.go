package protocols

// Native dumps and restores (§7.6–7.7, Proposition 6, Theorem 8, Example 7.1).
//
// One unit owns every key: the whole scope is one dump, or one restored backup.
// The model has two modes.
//
// trusted (Proposition 6, §6.4 point splice): the dump is one engine-consistent
// read of every key at the recorded coordinate r, one action: r is the log's
// length and every key is read there, so the bracket is the point lo = hi = r.
// The consumer starts at r; the unit closes at once, emitting its present
// refresh entries tagged r; every later event is then emitted at its place.
// The trajectory is claimed from r (Cor. 1: r is a shared state witness).
//
// uncertain (Theorem 8, §6.2 window-discard): a restore whose one consistent
// view v lies somewhere between the recorded b and e. Record b (the backup's
// start), restore (every key read at the log's length v — latent: the capture
// never learns v), record e (after the restore). The bracket is widened to
// (b, e]. The consumer starts at b, buffers the present restored rows, lets an
// in-window event for a buffered key discard it, emits every event at its
// place, and closes the unit (survivors tagged e) only once every event
// through e has been processed. The trajectory is claimed from e (Lemma 4.2).
//
// Faults: false-recovery-point (trusted: the read and the recording of r are
// two actions, so the source may commit between them and the splice is
// stale); claim-inside-uncertainty (uncertain: the trajectory is claimed from
// b+1, inside the bracket); no-discard (uncertain: an in-window event does not
// discard the buffered row, Example 7.1's restored 4 survives).

import (
	"fmt"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
)

// Dump modes.
const (
	DumpTrusted   = "trusted"
	DumpUncertain = "uncertain"
)

// dumpPhase is how far the unit's bracket and read have got.
type dumpPhase uint8

const (
	dumpIdle     dumpPhase = iota // nothing recorded or read yet
	dumpLow                       // uncertain: b recorded, the restore not yet taken
	dumpViewed                    // the view has been read; the high edge (r or e) is not recorded yet
	dumpRecorded                  // the bracket is complete: the point r, or (b, e]
)

var dumpPhaseNames = [...]string{"idle", "b recorded", "view read", "bracket recorded"}

// dumpState is one state of the dump model: the shared capture and the phase.
type dumpState struct {
	Cap   model.Capture
	Phase dumpPhase
}

type dumpKind uint8

const (
	dumpCommit  dumpKind = iota // the source commits a transaction (§2.1)
	dumpSplice                  // trusted: record r and read every key at r, one action (Prop 6)
	dumpReadAt                  // false-recovery-point: the dump reads every key at a latent view v
	dumpRecordR                 // false-recovery-point: r is recorded afterwards, as the log end then
	dumpRecordB                 // uncertain: record the backup's start coordinate b (Thm 8)
	dumpRestore                 // uncertain: the restore, one consistent view at a latent v
	dumpRecordE                 // uncertain: record the post-recovery coordinate e
	dumpClose                   // the unit closes: present refresh (point) or survivors (window), tagged hi
	dumpConsume                 // the consumer processes the next log position
	dumpKinds
)

var dumpKindNames = [dumpKinds]string{"commit", "dump", "read view", "record r", "record b", "restore", "record e", "close", "consume"}

// dumpAction is one step of the dump model.
type dumpAction struct {
	Kind dumpKind
	Txn  Txn // dumpCommit
}

// dump is the model under one Config.
type dump struct {
	cfg       Config
	uncertain bool
	kinds     []dumpKind     // the kinds this configuration can take, for coverage
	kindIndex [dumpKinds]int // kind → index in kinds
	scope     model.KeySet   // every key
}

func newDump(cfg Config) *dump {
	m := &dump{cfg: cfg, uncertain: cfg.Mode == DumpUncertain, scope: model.Range(0, model.Key(cfg.Keys))}
	switch {
	case m.uncertain:
		m.kinds = []dumpKind{dumpCommit, dumpRecordB, dumpRestore, dumpRecordE, dumpClose, dumpConsume}
	case cfg.Fault == FalseRecoveryPoint:
		m.kinds = []dumpKind{dumpCommit, dumpReadAt, dumpRecordR, dumpClose, dumpConsume}
	default:
		m.kinds = []dumpKind{dumpCommit, dumpSplice, dumpClose, dumpConsume}
	}
	for i, k := range m.kinds {
		m.kindIndex[k] = i
	}
	return m
}

func (m *dump) Init() []dumpState {
	var s dumpState
	s.Cap.Plan.Keys = uint8(m.cfg.Keys)
	s.Cap.Log.Init = m.cfg.Initial
	return []dumpState{s}
}

func (m *dump) Actions(s dumpState, buf []dumpAction) []dumpAction {
	var txns [64]Txn
	for _, t := range Commits(&m.cfg, &s.Cap.Log, txns[:0]) {
		buf = append(buf, dumpAction{Kind: dumpCommit, Txn: t})
	}
	c := &s.Cap
	switch s.Phase {
	case dumpIdle:
		switch {
		case m.uncertain:
			buf = append(buf, dumpAction{Kind: dumpRecordB})
		case m.cfg.Fault == FalseRecoveryPoint:
			buf = append(buf, dumpAction{Kind: dumpReadAt})
		default:
			buf = append(buf, dumpAction{Kind: dumpSplice})
		}
	case dumpLow:
		buf = append(buf, dumpAction{Kind: dumpRestore})
	case dumpViewed:
		if m.uncertain {
			buf = append(buf, dumpAction{Kind: dumpRecordE})
			if c.Pos < c.Log.Len() {
				buf = append(buf, dumpAction{Kind: dumpConsume})
			}
		} else {
			buf = append(buf, dumpAction{Kind: dumpRecordR})
		}
	case dumpRecorded:
		hi := c.Plan.Units[0].Hi
		switch {
		case !c.UnitClosed(0) && c.Pos == hi:
			buf = append(buf, dumpAction{Kind: dumpClose})
		case c.Pos < c.Log.Len():
			buf = append(buf, dumpAction{Kind: dumpConsume})
		}
	}
	return buf
}

func (m *dump) Next(s dumpState, a dumpAction) (dumpState, bool) {
	switch a.Kind {
	case dumpCommit:
		return m.commit(s, a.Txn)
	case dumpSplice:
		return m.splice(s), true
	case dumpReadAt:
		return m.readView(s), true
	case dumpRecordR:
		return m.recordR(s), true
	case dumpRecordB:
		return m.recordB(s), true
	case dumpRestore:
		return m.restore(s), true
	case dumpRecordE:
		return m.recordE(s), true
	case dumpClose:
		return m.closeUnit(s), true
	case dumpConsume:
		return m.consume(s), true
	}
	return s, false
}

func (m *dump) commit(s dumpState, t Txn) (dumpState, bool) {
	ok := s.Cap.Log.Commit(t.Events()...)
	return s, ok
}

// readAll reads every key at the log's current length (one consistent view)
// into unit 0: R(k) = σ_len(k), ReadAt[k] = len.
func (m *dump) readAll(s dumpState) dumpState {
	c := &s.Cap
	v := c.Log.Len()
	u := &c.Plan.Units[0]
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		u.Refresh[k] = c.Log.Sigma(v, k)
		u.Read = u.Read.With(k)
		c.ReadAt[k] = v
	}
	return s
}

// addUnit records the one unit with its bracket at the log's length.
func (m *dump) addUnit(s dumpState) dumpState {
	at := s.Cap.Log.Len()
	s.Cap.Plan.Add(model.Unit{Domain: m.scope, Lo: at, Hi: at})
	return s
}

// splice is the trusted dump: r is the log's length, every key is read there,
// the bracket is the point r and the consumer starts at r (Prop 6, §6.4).
func (m *dump) splice(s dumpState) dumpState {
	s = m.readAll(m.addUnit(s))
	r := s.Cap.Log.Len()
	s.Cap.Start, s.Cap.Pos = r, r
	s.Phase = dumpRecorded
	return s
}

// readView is the false-recovery-point dump's read: consistent at the latent
// view v, with r not recorded yet (the bracket is provisional).
func (m *dump) readView(s dumpState) dumpState {
	s = m.readAll(m.addUnit(s))
	s.Phase = dumpViewed
	return s
}

// recordR records r as the log end now — after the read, so possibly later
// than the view the dump is consistent at.
func (m *dump) recordR(s dumpState) dumpState {
	r := s.Cap.Log.Len()
	u := &s.Cap.Plan.Units[0]
	u.Lo, u.Hi = r, r
	s.Cap.Start, s.Cap.Pos = r, r
	s.Phase = dumpRecorded
	return s
}

// recordB records the backup's start coordinate b; the consumer will start
// there (s0 ⊑ b).
func (m *dump) recordB(s dumpState) dumpState {
	s = m.addUnit(s)
	b := s.Cap.Log.Len()
	s.Cap.Start, s.Cap.Pos = b, b
	s.Phase = dumpLow
	return s
}

// restore reads every key at one consistent view v, the log's length now;
// the capture does not learn v.
func (m *dump) restore(s dumpState) dumpState {
	s = m.readAll(s)
	s.Phase = dumpViewed
	return s
}

// recordE records the post-recovery coordinate e, widening the bracket to (b, e].
func (m *dump) recordE(s dumpState) dumpState {
	s.Cap.Plan.Units[0].Hi = s.Cap.Log.Len()
	s.Phase = dumpRecorded
	return s
}

// closeUnit emits the buffered rows that survived, tagged with the high edge:
// for a point bracket every present read, for (b, e] the keys read present
// with no event in the window (Def. 6.2).
func (m *dump) closeUnit(s dumpState) dumpState {
	c := &s.Cap
	u := &c.Plan.Units[0]
	emit := m.emitted(c)
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if emit.Has(k) {
			c.Emit(k, u.Refresh[k], u.Hi)
		}
	}
	c.Closed |= 1
	return s
}

// emitted is what the close emits: the survivors (Def. 6.2; for a point
// bracket, every key read present).
func (m *dump) emitted(c *model.Capture) model.KeySet {
	u := &c.Plan.Units[0]
	if m.cfg.Fault == NoDiscard {
		return m.present(u) // in-window events discarded nothing
	}
	return u.Survivors(&c.Log)
}

// present is the set of keys read present: the rows the restore buffered.
func (m *dump) present(u *model.Unit) model.KeySet {
	var p model.KeySet
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if u.Read.Has(k) && u.Refresh[k] != model.Absent {
			p = p.With(k)
		}
	}
	return p
}

// consume processes the next position, emitting its event at its place
// (an in-window event for a buffered key discards the buffered row: the close
// emits only survivors).
func (m *dump) consume(s dumpState) dumpState {
	c := &s.Cap
	c.Pos++
	if e := c.Log.At(c.Pos); e.Key != model.NoKey {
		c.Emit(e.Key, e.Img, c.Pos)
	}
	return s
}

// claim is the coordinate the trajectory is claimed from once the unit has
// closed: r (trusted), e (uncertain), or b+1 under claim-inside-uncertainty.
func (m *dump) claim(c *model.Capture) model.Coord {
	u := &c.Plan.Units[0]
	if m.cfg.Fault == ClaimInsideUncertainty {
		return min(u.Lo+1, u.Hi) // strictly inside (b, e) whenever b+1 < e
	}
	return u.Hi
}

// Done: the unit has closed, the consumer is at the log's end and the source
// has committed all E events.
func (m *dump) Done(s dumpState) bool {
	c := &s.Cap
	return c.AllClosed(1) && c.Pos == c.Log.Len() && DataEvents(&c.Log) == m.cfg.Events
}

func (m *dump) Encode(s dumpState, buf []byte) []byte {
	return append(s.Cap.AppendTo(buf), byte(s.Phase))
}

func (m *dump) Decode(b []byte) (dumpState, error) {
	c, rest, ok := model.DecodeCapture(b)
	if !ok || len(rest) != 1 {
		return dumpState{}, fmt.Errorf("dump: bad state encoding (%d bytes)", len(b))
	}
	return dumpState{Cap: c, Phase: dumpPhase(rest[0])}, nil
}

func (m *dump) Describe(s dumpState, a dumpAction) string {
	c := &s.Cap
	n := c.Log.Len()
	switch a.Kind {
	case dumpCommit:
		return dumpCommitText(&a.Txn, n)
	case dumpSplice:
		return fmt.Sprintf("dump every key at recorded r = %d (point bracket): %s", n, dumpReadsText(&c.Log, n, m.cfg.Keys))
	case dumpReadAt:
		return fmt.Sprintf("dump reads every key at view %d (r not recorded yet): %s", n, dumpReadsText(&c.Log, n, m.cfg.Keys))
	case dumpRecordR:
		return fmt.Sprintf("record recovery point r = %d (the dump's view was %d)", n, c.ReadAt[0])
	case dumpRecordB:
		return fmt.Sprintf("record backup start b = %d; the consumer starts there", n)
	case dumpRestore:
		return fmt.Sprintf("restore at latent view v = %d: %s", n, dumpReadsText(&c.Log, n, m.cfg.Keys))
	case dumpRecordE:
		return fmt.Sprintf("record recovery end e = %d: bracket (%d, %d]", n, c.Plan.Units[0].Lo, n)
	case dumpClose:
		u := &c.Plan.Units[0]
		return fmt.Sprintf("close the unit at %d: emit %s", u.Hi, dumpEmitText(u, m.emitted(c), m.cfg.Keys))
	case dumpConsume:
		p := c.Pos + 1
		e := c.Log.At(p)
		text := fmt.Sprintf("consume position %d: %v := %v", p, e.Key, e.Img)
		if u := &c.Plan.Units[0]; m.uncertain && !c.UnitClosed(0) && e.Key != model.NoKey {
			text += fmt.Sprintf(", in window (%d, e]", u.Lo)
			if u.Refresh[e.Key] != model.Absent && !c.Log.Touches(e.Key, model.Window{Lo: u.Lo, Hi: p - 1}) {
				if m.cfg.Fault == NoDiscard {
					text += fmt.Sprintf(", does not discard buffered %v=%v", e.Key, u.Refresh[e.Key])
				} else {
					text += fmt.Sprintf(", discards buffered %v=%v", e.Key, u.Refresh[e.Key])
				}
			}
		}
		return text
	}
	return "?"
}

func (m *dump) ActionNames() []string {
	names := make([]string, len(m.kinds))
	for i, k := range m.kinds {
		names[i] = dumpKindNames[k]
	}
	return names
}

func (m *dump) ActionKind(a dumpAction) int { return m.kindIndex[a.Kind] }

func (m *dump) Fields(s dumpState) []explore.Field {
	return append(CaptureFields(&s.Cap, m.cfg.Keys), explore.Field{Name: "phase", Value: dumpPhaseNames[s.Phase]})
}

func (m *dump) View(s dumpState) any {
	v := CaptureView(&s.Cap, m.cfg.Keys)
	v.Control = map[string]string{"mode": m.modeName(), "phase": dumpPhaseNames[s.Phase]}
	return v
}

func (m *dump) modeName() string {
	if m.uncertain {
		return DumpUncertain
	}
	return DumpTrusted
}

// Properties: the shared invariants, the mode's trajectory claim, and the
// races that show they bite.
func (m *dump) Properties() []explore.Property[dumpState, dumpAction] {
	type P = explore.Property[dumpState, dumpAction]
	props := []P{
		invariants.Prop[dumpState, dumpAction](invariants.FrontierReplay, func(s dumpState) string {
			return invariants.CheckFrontierReplay(&s.Cap, 1)
		}),
		invariants.Prop[dumpState, dumpAction](invariants.ClosedUnitCut, func(s dumpState) string {
			return invariants.CheckClosedUnitCut(&s.Cap)
		}),
		invariants.StepProp[dumpState, dumpAction](invariants.Monotonic, func(s dumpState, _ dumpAction, t dumpState) string {
			return invariants.CheckMonotone(&s.Cap, &t.Cap)
		}),
		invariants.Prop[dumpState, dumpAction](invariants.CommittedOnly, func(s dumpState) string {
			return invariants.CheckCommittedOnly(&s.Cap)
		}),
		invariants.Prop[dumpState, dumpAction](invariants.Contract, func(s dumpState) string {
			return invariants.CheckContract(&s.Cap, 1)
		}),
	}
	if !m.uncertain {
		props = append(props,
			invariants.Prop[dumpState, dumpAction](invariants.TrustedSplice, func(s dumpState) string {
				if s.Phase != dumpRecorded {
					return ""
				}
				return invariants.CheckTrajectory(&s.Cap, 1, m.claim(&s.Cap))
			}),
			P{Name: "splice-before-later-events", Cite: "Prop 6, §6.4", Kind: explore.Sometimes, Check: func(s dumpState) string {
				if c := &s.Cap; c.AllClosed(1) && c.Pos > c.Plan.Units[0].Hi {
					return "an event after the splice coordinate was consumed"
				}
				return ""
			}},
			P{Name: "key-read-present", Cite: "Prop 6", Kind: explore.Sometimes, Check: func(s dumpState) string {
				if s.Cap.Plan.N == 1 && m.present(&s.Cap.Plan.Units[0]) != 0 {
					return "the dump read a present row"
				}
				return ""
			}},
		)
		return props
	}
	return append(props,
		invariants.Prop[dumpState, dumpAction](invariants.LatestHigh, func(s dumpState) string {
			if s.Phase != dumpRecorded {
				return ""
			}
			return invariants.CheckTrajectory(&s.Cap, 1, m.claim(&s.Cap))
		}),
		P{Name: "view-strictly-inside", Cite: "Thm 8", Kind: explore.Sometimes, Check: func(s dumpState) string {
			c := &s.Cap
			if u := &c.Plan.Units[0]; s.Phase == dumpRecorded && u.Lo < c.ReadAt[0] && c.ReadAt[0] < u.Hi {
				return "b < v < e"
			}
			return ""
		}},
		P{Name: "restored-row-discarded", Cite: "Example 7.1, Def. 6.2", Kind: explore.Sometimes, Check: func(s dumpState) string {
			c := &s.Cap
			if u := &c.Plan.Units[0]; c.AllClosed(1) && m.present(u)&^u.Survivors(&c.Log) != 0 {
				return "an in-window event discarded a restored row"
			}
			return ""
		}},
		P{Name: "survivor-emitted", Cite: "Def. 6.2", Kind: explore.Sometimes, Check: func(s dumpState) string {
			c := &s.Cap
			if u := &c.Plan.Units[0]; c.AllClosed(1) && u.Survivors(&c.Log) != 0 {
				return "a restored row survived to the close"
			}
			return ""
		}},
		P{Name: "stale-restore-corrected", Cite: "Thm 8, Example 7.1", Kind: explore.Sometimes, Check: func(s dumpState) string {
			c := &s.Cap
			if !c.AllClosed(1) {
				return ""
			}
			u := &c.Plan.Units[0]
			for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
				if u.Refresh[k] != c.Log.Sigma(u.Hi, k) && c.Out.Val[k] == c.Log.Sigma(c.Pos, k) {
					return fmt.Sprintf("restored %v=%v is stale at e, the replay has %v", k, u.Refresh[k], c.Out.Val[k])
				}
			}
			return ""
		}},
	)
}

// commitText describes a commit: "source commits k2 := ⊥ at position 5".
func dumpCommitText(t *Txn, n model.Coord) string {
	s := "source commits"
	for i, e := range t.Events() {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" %v := %v", e.Key, e.Img)
	}
	if t.N == 1 {
		return s + fmt.Sprintf(" at position %d", n+1)
	}
	return s + fmt.Sprintf(" at positions %d–%d", n+1, n+model.Coord(t.N))
}

// readsText lists σ_at over the first keys: "k0=1 k1=⊥".
func dumpReadsText(l *model.Log, at model.Coord, keys int) string {
	s := ""
	for k := model.Key(0); k < model.Key(keys); k++ {
		if k > 0 {
			s += " "
		}
		s += fmt.Sprintf("%v=%v", k, l.Sigma(at, k))
	}
	return s
}

// dumpEmitText lists the entries a close emits for the keys of set:
// "k0=2@3 k1=1@3", or "nothing".
func dumpEmitText(u *model.Unit, set model.KeySet, keys int) string {
	s := ""
	for k := model.Key(0); k < model.Key(keys); k++ {
		if set.Has(k) {
			if s != "" {
				s += " "
			}
			s += fmt.Sprintf("%v=%v@%d", k, u.Refresh[k], u.Hi)
		}
	}
	if s == "" {
		return "nothing"
	}
	return s
}

func init() {
	register(entry(&Protocol{
		Name:     "dump",
		Doc:      "native dumps and restores: a trusted point splice at r, or an uncertain view in (b, e] reconciled by window-discard",
		Cite:     "§7.6–7.7, Prop 6, Thm 8",
		Defaults: Config{Keys: 3, Values: 2, Events: 5, Chunks: 1, Txn: 1, Mode: DumpTrusted},
		Limits:   Limits{Keys: model.MaxKeys, Values: 7, Events: model.MaxLog, Chunks: 1, Txn: MaxTxn, Modes: []string{DumpTrusted, DumpUncertain}},
		Faults:   []Fault{FalseRecoveryPoint, ClaimInsideUncertainty, NoDiscard},
	}, func(cfg Config) explore.Model[dumpState, dumpAction] { return newDump(cfg) }))
}
