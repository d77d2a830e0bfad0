package protocols

// Heterogeneous composition (§4.6, Corollary 3, Figure 3, Example 5.1,
// Proposition 2, Lemma 4.2).
//
// C units over disjoint key ranges (chunk i owns keys [i*K/C, (i+1)*K/C)),
// recorded in any order, interleaved with the source's commits:
//
//   - mode mixed (Figure 3): unit 1 is a chunked scan with an ordinary,
//     write-free bracket — record lo (the log's length), read its keys at one
//     point, record hi — and units 2..C are point splices, each one action:
//     record r_j (the log's length) and read its keys there;
//   - mode tablesync (Example 5.1's per-table dumps, Proposition 2's shape):
//     every unit is a point splice at its own recorded coordinate.
//
// One consumer starts at s0 = 0, at or before every lo and splice (§6.4), and
// walks the log one position per step under window-discard over all units
// (a point splice is its degenerate case): a unit closes just before the
// consumer passes beyond its high edge, emitting its survivors tagged hi; an
// in-window event for a buffered key of the chunked unit discards it; every
// data event is emitted at its place. The consumer never passes the high edge
// of a unit that has not been read. The composite has no shared state witness
// in general, so its trajectory is claimed from the latest high edge only
// (Lemma 4.2).
//
// The read positions are latent. The plan lists its units in chunk order.
//
// Faults: early-common-onset (the trajectory is claimed from the earliest
// recorded lo or splice, Proposition 2); late-start (the consumer starts one
// position after the earliest recorded lo or splice, S-OBS).

import (
	"fmt"

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
	compScanLow                  // lo recorded
	compScanRead                 // its keys read
	compScanHigh                 // hi recorded: the bracket is complete
)

var compScanNames = [...]string{"idle", "lo recorded", "read", "hi recorded"}

// compositeState is one state of the composite model.
type compositeState struct {
	Cap     model.Capture
	Chunk   [model.MaxUnits]uint8 // the chunk of plan unit i (chunks are recorded in any order)
	Scan    compScan              // the chunked unit's progress (mixed)
	Started bool                  // the consumer is running (from the start, unless late-start)
}

type compositeKind uint8

const (
	compCommit    compositeKind = iota // the source commits a transaction (§2.1)
	compRecordLo                       // chunked unit: record its low edge, the log's length (write-free bracket)
	compRead                           // chunked unit: read its keys at one point
	compRecordHi                       // chunked unit: record its high edge
	compSplice                         // point splice: record r_j and read its keys there, one action (§6.4)
	compClose                          // a unit closes: survivors emitted, tagged with its high edge (Def. 6.2)
	compConsume                        // the consumer processes the next log position
	compStartLate                      // late-start: the consumer starts one past the earliest lo/splice
	compKinds
)

var compositeKindNames = [compKinds]string{"commit", "record lo", "read chunk", "record hi", "splice", "close", "consume", "start late"}

// compositeAction is one step of the composite model.
type compositeAction struct {
	Kind compositeKind
	Txn  Txn   // compCommit
	Unit uint8 // compSplice: the chunk; compClose: the plan unit
}

// composite is the model under one Config.
type composite struct {
	cfg       Config
	tablesync bool
	domain    [model.MaxUnits]model.KeySet // chunk → its keys
	kinds     []compositeKind
	kindIndex [compKinds]int
}

func newComposite(cfg Config) *composite {
	m := &composite{cfg: cfg, tablesync: cfg.Mode == CompositeTablesync}
	for c := 0; c < cfg.Chunks; c++ {
		m.domain[c] = model.Range(model.Key(c*cfg.Keys/cfg.Chunks), model.Key((c+1)*cfg.Keys/cfg.Chunks))
	}
	m.kinds = []compositeKind{compCommit}
	if !m.tablesync {
		m.kinds = append(m.kinds, compRecordLo, compRead, compRecordHi)
	}
	if m.tablesync || cfg.Chunks > 1 {
		m.kinds = append(m.kinds, compSplice)
	}
	m.kinds = append(m.kinds, compClose, compConsume)
	if cfg.Fault == LateStart {
		m.kinds = append(m.kinds, compStartLate)
	}
	for i, k := range m.kinds {
		m.kindIndex[k] = i
	}
	return m
}

func (m *composite) Init() []compositeState {
	var s compositeState
	s.Cap.Plan.Keys = uint8(m.cfg.Keys)
	s.Cap.Log.Init = m.cfg.Initial
	s.Started = m.cfg.Fault != LateStart // s0 = 0
	return []compositeState{s}
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

func (m *composite) Actions(s compositeState, buf []compositeAction) []compositeAction {
	var txns [64]Txn
	for _, t := range Commits(&m.cfg, &s.Cap.Log, txns[:0]) {
		buf = append(buf, compositeAction{Kind: compCommit, Txn: t})
	}
	c := &s.Cap
	done := m.recorded(&s)
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
		buf = append(buf, compositeAction{Kind: compRead})
	case compScanRead:
		buf = append(buf, compositeAction{Kind: compRecordHi})
	}
	if !s.Started {
		if c.Plan.N > 0 && (c.Log.Len() > m.earliest(c) || DataEvents(&c.Log) == m.cfg.Events) {
			buf = append(buf, compositeAction{Kind: compStartLate})
		}
		return buf
	}
	for i := 0; i < int(c.Plan.N); i++ {
		if !c.UnitClosed(i) && m.complete(&s, i) && c.Pos >= c.Plan.Units[i].Hi {
			buf = append(buf, compositeAction{Kind: compClose, Unit: uint8(i)})
		}
	}
	if c.Pos < c.Log.Len() && !m.blocked(&s) {
		buf = append(buf, compositeAction{Kind: compConsume})
	}
	return buf
}

func (m *composite) Next(s compositeState, a compositeAction) (compositeState, bool) {
	switch a.Kind {
	case compCommit:
		ok := s.Cap.Log.Commit(a.Txn.Events()...)
		return s, ok
	case compRecordLo:
		return m.recordLo(s), true
	case compRead:
		return m.readChunk(s), true
	case compRecordHi:
		return m.recordHi(s), true
	case compSplice:
		return m.splice(s, int(a.Unit)), true
	case compClose:
		return m.closeUnit(s, int(a.Unit)), true
	case compConsume:
		return m.consume(s), true
	case compStartLate:
		return m.startLate(s), true
	}
	return s, false
}

// addUnit records a unit for chunk ch with its bracket at the log's length.
// The plan keeps its units in chunk order, whatever order they were recorded
// in, so one situation has one encoding; closed flags move with their units.
func (m *composite) addUnit(s compositeState, ch int) (compositeState, int) {
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
	return s, i
}

// earliest is the earliest recorded lo or splice coordinate (0 for an empty plan).
func (m *composite) earliest(c *model.Capture) model.Coord {
	if c.Plan.N == 0 {
		return 0
	}
	first := c.Plan.Units[0].Lo
	for i := 1; i < int(c.Plan.N); i++ {
		first = min(first, c.Plan.Units[i].Lo)
	}
	return first
}

// readKeys reads every key of unit i at the log's length: R(k) = σ_len(k).
func (m *composite) readKeys(s compositeState, i int) compositeState {
	c := &s.Cap
	u := &c.Plan.Units[i]
	at := c.Log.Len()
	for k := model.Key(0); k < model.Key(model.MaxKeys); k++ {
		if u.Domain.Has(k) {
			u.Refresh[k] = c.Log.Sigma(at, k)
			u.Read = u.Read.With(k)
			c.ReadAt[k] = at
		}
	}
	return s
}

// recordLo opens the chunked unit's bracket at the log's length.
func (m *composite) recordLo(s compositeState) compositeState {
	s, _ = m.addUnit(s, 0)
	s.Scan = compScanLow
	return s
}

// readChunk reads the chunked unit's keys, all at one point.
func (m *composite) readChunk(s compositeState) compositeState {
	s = m.readKeys(s, m.scanUnit(&s))
	s.Scan = compScanRead
	return s
}

// recordHi closes the chunked unit's bracket at the log's length.
func (m *composite) recordHi(s compositeState) compositeState {
	s.Cap.Plan.Units[m.scanUnit(&s)].Hi = s.Cap.Log.Len()
	s.Scan = compScanHigh
	return s
}

// splice records r_j, the log's length, and reads chunk ch's keys there.
func (m *composite) splice(s compositeState, ch int) compositeState {
	s, i := m.addUnit(s, ch)
	return m.readKeys(s, i)
}

// closeUnit emits unit i's survivors tagged with its high edge (Def. 6.2):
// for a point splice every key read present.
func (m *composite) closeUnit(s compositeState, i int) compositeState {
	c := &s.Cap
	u := &c.Plan.Units[i]
	surv := u.Survivors(&c.Log)
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if surv.Has(k) {
			c.Emit(k, u.Refresh[k], u.Hi)
		}
	}
	c.Closed |= 1 << i
	return s
}

// consume processes the next position, emitting its event at its
// place (for a buffered key of the open chunked unit the event discards the
// buffered row: the close emits only survivors).
func (m *composite) consume(s compositeState) compositeState {
	c := &s.Cap
	c.Pos++
	if e := c.Log.At(c.Pos); e.Key != model.NoKey {
		c.Emit(e.Key, e.Img, c.Pos)
	}
	return s
}

// startLate is the late-start consumer: s0 is one past the earliest recorded
// lo or splice (or the log's end, if the source has stopped short of it), so
// the event at s0 is never consumed.
func (m *composite) startLate(s compositeState) compositeState {
	c := &s.Cap
	s0 := min(m.earliest(c)+1, c.Log.Len())
	c.Start, c.Pos = s0, s0
	s.Started = true
	return s
}

// claim is the coordinate the trajectory is claimed from: the latest high
// edge (Lemma 4.2), or the earliest lo/splice under early-common-onset.
func (m *composite) claim(c *model.Capture) model.Coord {
	if m.cfg.Fault == EarlyCommonOnset {
		return m.earliest(c)
	}
	return c.Plan.LatestHigh()
}

// Done: every unit has closed, the consumer is at the log's end and the
// source has committed all E events.
func (m *composite) Done(s compositeState) bool {
	c := &s.Cap
	return c.AllClosed(m.cfg.Chunks) && c.Pos == c.Log.Len() && DataEvents(&c.Log) == m.cfg.Events
}

func (m *composite) Encode(s compositeState, buf []byte) []byte {
	buf = s.Cap.AppendTo(buf)
	buf = append(buf, s.Chunk[:s.Cap.Plan.N]...)
	started := byte(0)
	if s.Started {
		started = 1
	}
	return append(buf, byte(s.Scan), started)
}

func (m *composite) Decode(b []byte) (compositeState, error) {
	var s compositeState
	c, rest, ok := model.DecodeCapture(b)
	if !ok || len(rest) != int(c.Plan.N)+2 {
		return s, fmt.Errorf("composite: bad state encoding (%d bytes)", len(b))
	}
	s.Cap = c
	copy(s.Chunk[:], rest[:c.Plan.N])
	rest = rest[c.Plan.N:]
	s.Scan, s.Started = compScan(rest[0]), rest[1] == 1
	return s, nil
}

func (m *composite) Describe(s compositeState, a compositeAction) string {
	c := &s.Cap
	n := c.Log.Len()
	switch a.Kind {
	case compCommit:
		return dumpCommitText(&a.Txn, n)
	case compRecordLo:
		return fmt.Sprintf("record lo for chunk 1 %s at %d", keySet(m.domain[0], m.cfg.Keys), n)
	case compRead:
		return fmt.Sprintf("read chunk 1 at position %d: %s", n, m.readsText(&c.Log, m.domain[0], n))
	case compRecordHi:
		return fmt.Sprintf("record hi for chunk 1 at %d: bracket (%d, %d]", n, c.Plan.Units[m.scanUnit(&s)].Lo, n)
	case compSplice:
		d := m.domain[a.Unit]
		return fmt.Sprintf("splice chunk %d %s at recorded r = %d: %s", a.Unit+1, keySet(d, m.cfg.Keys), n, m.readsText(&c.Log, d, n))
	case compClose:
		u := &c.Plan.Units[a.Unit]
		return fmt.Sprintf("close chunk %d at %d: emit survivors %s", s.Chunk[a.Unit]+1, u.Hi, dumpEmitText(u, u.Survivors(&c.Log), m.cfg.Keys))
	case compConsume:
		p := c.Pos + 1
		e := c.Log.At(p)
		text := fmt.Sprintf("consume position %d: %v := %v", p, e.Key, e.Img)
		if i := m.scanUnit(&s); i >= 0 && !c.UnitClosed(i) && e.Key != model.NoKey {
			u := &c.Plan.Units[i]
			if u.Domain.Has(e.Key) && p > u.Lo && (s.Scan < compScanHigh || p <= u.Hi) {
				text += ", in chunk 1's window"
				if !u.Read.Has(e.Key) {
					text += " (not read yet)"
				} else if u.Refresh[e.Key] != model.Absent && !c.Log.Touches(e.Key, model.Window{Lo: u.Lo, Hi: p - 1}) {
					text += fmt.Sprintf(", discards buffered %v=%v", e.Key, u.Refresh[e.Key])
				}
			}
		}
		return text
	case compStartLate:
		first := m.earliest(c)
		s0 := min(first+1, n)
		return fmt.Sprintf("the consumer starts late at s0 = %d, after the earliest lo/splice %d", s0, first)
	}
	return "?"
}

// readsText lists σ_at over the keys of d: "k1=2 k2=⊥".
func (m *composite) readsText(l *model.Log, d model.KeySet, at model.Coord) string {
	s := ""
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if d.Has(k) {
			if s != "" {
				s += " "
			}
			s += fmt.Sprintf("%v=%v", k, l.Sigma(at, k))
		}
	}
	return s
}

func (m *composite) ActionNames() []string {
	names := make([]string, len(m.kinds))
	for i, k := range m.kinds {
		names[i] = compositeKindNames[k]
	}
	return names
}

func (m *composite) ActionKind(a compositeAction) int { return m.kindIndex[a.Kind] }

func (m *composite) Fields(s compositeState) []explore.Field {
	f := CaptureFields(&s.Cap, m.cfg.Keys)
	if !m.tablesync {
		f = append(f, explore.Field{Name: "chunk 1", Value: compScanNames[s.Scan]})
	}
	if !s.Started {
		f = append(f, explore.Field{Name: "consumer", Value: "not started"})
	}
	return f
}

func (m *composite) View(s compositeState) any {
	v := CaptureView(&s.Cap, m.cfg.Keys)
	v.Control = map[string]string{"mode": m.modeName()}
	if !m.tablesync {
		v.Control["chunk 1"] = compScanNames[s.Scan]
	}
	if !s.Started {
		v.Control["consumer"] = "not started"
	}
	return v
}

func (m *composite) modeName() string {
	if m.tablesync {
		return CompositeTablesync
	}
	return CompositeMixed
}

// Properties: the shared invariants, the latest-high trajectory, and the
// shapes that show composition is not vacuous here.
func (m *composite) Properties() []explore.Property[compositeState, compositeAction] {
	type P = explore.Property[compositeState, compositeAction]
	units := m.cfg.Chunks
	props := []P{
		invariants.Prop[compositeState, compositeAction](invariants.FrontierReplay, func(s compositeState) string {
			return invariants.CheckFrontierReplay(&s.Cap, units)
		}),
		invariants.Prop[compositeState, compositeAction](invariants.ClosedUnitCut, func(s compositeState) string {
			return invariants.CheckClosedUnitCut(&s.Cap)
		}),
		invariants.StepProp[compositeState, compositeAction](invariants.Monotonic, func(s compositeState, _ compositeAction, t compositeState) string {
			return invariants.CheckMonotone(&s.Cap, &t.Cap)
		}),
		invariants.Prop[compositeState, compositeAction](invariants.CommittedOnly, func(s compositeState) string {
			return invariants.CheckCommittedOnly(&s.Cap)
		}),
		invariants.Prop[compositeState, compositeAction](invariants.LatestHigh, func(s compositeState) string {
			if !s.Cap.AllClosed(units) {
				return ""
			}
			return invariants.CheckTrajectory(&s.Cap, units, m.claim(&s.Cap))
		}),
		invariants.Prop[compositeState, compositeAction](invariants.Contract, func(s compositeState) string {
			return invariants.CheckContract(&s.Cap, units)
		}),
		{Name: "distinct-splice-coordinates", Cite: "Prop 2, Example 5.1", Kind: explore.Sometimes, Check: func(s compositeState) string {
			c := &s.Cap
			for i := 0; i < int(c.Plan.N); i++ {
				if !m.isSplice(&s, i) {
					continue
				}
				r := c.Plan.Units[i].Lo
				for j := 0; j < int(c.Plan.N); j++ {
					if u := &c.Plan.Units[j]; j != i && m.complete(&s, j) && (r < u.Lo || r > u.Hi) {
						return fmt.Sprintf("splice at %d lies outside the bracket [%d, %d] of another unit", r, u.Lo, u.Hi)
					}
				}
			}
			return ""
		}},
		{Name: "no-shared-witness", Cite: "Prop 2, Cor 3", Kind: explore.Sometimes, Check: func(s compositeState) string {
			if c := &s.Cap; c.AllClosed(units) {
				if p := c.FinalPlan(); p.SharedWitnesses(&c.Log) == 0 {
					return "the final plan has no shared state witness"
				}
			}
			return ""
		}},
	}
	if !m.tablesync {
		props = append(props, P{Name: "buffered-row-discarded", Cite: "Def. 6.2, Thm 2", Kind: explore.Sometimes, Check: func(s compositeState) string {
			c := &s.Cap
			i := m.scanUnit(&s)
			if i < 0 || !c.UnitClosed(i) {
				return ""
			}
			u := &c.Plan.Units[i]
			for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
				if u.Domain.Has(k) && u.Refresh[k] != model.Absent && c.Log.Touches(k, model.Window{Lo: c.ReadAt[k], Hi: u.Hi}) {
					return fmt.Sprintf("buffered %v=%v was discarded by an event after its read", k, u.Refresh[k])
				}
			}
			return ""
		}})
	}
	return append(props, P{Name: "survivor-emitted", Cite: "Def. 6.2, §6.4", Kind: explore.Sometimes, Check: func(s compositeState) string {
		c := &s.Cap
		for i := 0; i < int(c.Plan.N); i++ {
			if c.UnitClosed(i) && (m.tablesync || !m.isSplice(&s, i)) && c.Plan.Units[i].Survivors(&c.Log) != 0 {
				return fmt.Sprintf("chunk %d emitted a survivor", s.Chunk[i]+1)
			}
		}
		return ""
	}})
}

func init() {
	register(entry(&Protocol{
		Name:     "composite",
		Doc:      "heterogeneous composition: a chunked scan plus point splices at their own coordinates, one window-discard consumer",
		Cite:     "§4.6, Cor 3, Example 5.1, Prop 2",
		Defaults: Config{Keys: 3, Values: 3, Events: 4, Chunks: 2, Txn: 1, Mode: CompositeMixed},
		Limits:   Limits{Keys: model.MaxKeys, Values: 7, Events: model.MaxLog, Chunks: model.MaxUnits, Txn: MaxTxn, Modes: []string{CompositeMixed, CompositeTablesync}},
		Faults:   []Fault{EarlyCommonOnset, LateStart},
	}, func(cfg Config) explore.Model[compositeState, compositeAction] { return newComposite(cfg) }))
}
