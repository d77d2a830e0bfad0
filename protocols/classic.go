package protocols

// Classic watermarked DBLog (§7.2, Fig. 1), reconciled by window-discard
// (§6.2: Def. 6.2, Lemma 6.1, Theorems 2 and 3).
//
// The capture loop takes the chunks in key order, one at a time. For each it
// pauses log processing, writes a low watermark (a marker event committed as
// its own transaction), selects the whole chunk at one position (the chunk
// evidence of §7.2: one read coordinate between the watermarks), writes a high
// watermark and resumes. The next chunk's low watermark waits until the
// previous chunk has closed.
//
// One consumer walks the log in commit order, one position per step, from a
// start s0 the model chooses: any position up to the first low watermark's,
// lo itself included (S-OBS: s0 ⊑ lo_i). A consumer that starts at lo never
// meets that marker; the capture, which wrote it, handles it as the start
// passes it (W3 asks only that the signal be known). What
// lies at or before s0 it never sees, so rows written there, like rows of the
// base store b0 (any store, with initial=any), reach the sink only through a
// chunk's copy. When it consumes the chunk's low marker the window opens and the
// buffer takes the chunk's present rows (a key read as ⊥ is not buffered:
// absence is by omission, §6.1). An in-window event for a buffered key
// discards that entry. Every data event is emitted at its own place, tagged
// with its position. When the consumer reaches the high marker the survivors
// are emitted, tagged with the marker's position, and the chunk closes. The
// unit's bracket is (position of the low marker, position of the high marker).
//
// State: the shared capture (log, plan, consumer position, replay of the
// emitted stream), the loop's phase and the buffer. What is latent (§10): the
// read position ReadAt. The running capture knows only that its select ran
// between the two watermark writes; the model records where, so that O2 and
// the cut can be judged.
//
// Parts (ClassicParts): Window, the window the buffer is reconciled against
// ((lo, hi] as published; low-edge-off-by-one and high-edge-off-by-one are
// choices of it); ConsumeDuringRead, whether the consumer runs while the chunk
// is selected (paused as published); ReleaseAtHighWrite, where the survivors
// are released (when the consumer reaches the high marker as published;
// early-release is the other choice).
//
// Faults that are not parts: no-discard (an in-window event leaves the
// buffered row in place); scan-skips-row (the select omits the chunk's first
// present row, recording ⊥, §9.1); overlapping-chunks (chunk i also owns the
// first key of chunk i+1, O1); late-start (the consumer starts at lo+1 of the
// first chunk: of the positions it skips it handles only the watermarks, so
// the events there are never seen, S-OBS); copy-dropped (the close emits no
// survivors); lost-watermark (the watermark rows are filtered out of the
// consumed log, W3: the window never opens, the chunk never closes and the
// capture waits forever — a deadlock); begin-tagged-events (each event is
// tagged with its transaction's first position: a later row of the
// transaction claims a coordinate before its own write); event-delivered-twice
// (log processing resumes after the select at the last position it
// processed, inclusive, so the event there goes out again);
// marker-only-from-stream (a window opens only when the consumer meets its
// low watermark: a consumer that starts at lo never opens it, and the
// chunk's rows are lost — only a start at lo itself shows it);
// redundant-copy (an inserted row is also sent as a copy right after its
// insert event: same value, same tag, seen only by exact-emission).

import (
	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
)

// classicPhase is where the capture loop stands in the current chunk.
type classicPhase uint8

const (
	classicIdle        classicPhase = iota // no chunk in progress: the next step writes a low watermark
	classicLowWritten                      // low watermark written, log processing paused: the select is next
	classicChunkRead                       // chunk selected, still paused: the high watermark is next
	classicHighWritten                     // high watermark written, processing resumed: waiting for the close
)

var classicPhaseNames = [...]string{"idle", "low written (paused)", "chunk read (paused)", "high written"}

// classicState is one state of the classic loop.
type classicState struct {
	Cap   model.Capture
	Buf   model.KeySet // buffered rows of the open window; their values are the unit's Refresh
	Phase classicPhase // after Buf: the two are three bytes in a row (Layout)
}

// classicKind is the kind of a step.
type classicKind uint8

const (
	classicCommit     classicKind = iota // the source commits a transaction (§2.1)
	classicWriteLow                      // write the low watermark: a marker event, the bracket's lo (Fig. 1)
	classicReadChunk                     // select the chunk at one position (chunk evidence, §7.2)
	classicWriteHigh                     // write the high watermark: the bracket's hi
	classicConsume                       // the consumer processes the next log position (Def. 6.2)
	classicStartLater                    // the consumer's start s0 moves one position on (S-OBS, retention)
)

var classicActionNames = []string{"commit", "write-low", "read-chunk", "write-high", "consume", "start-later"}

// classicAction is one step; Txn is set for commits.
type classicAction struct {
	Kind classicKind
	Txn  Txn
}

// ClassicParts are the decision points of the DBLog watermark loop (§7.2,
// Fig. 1) a variant may change. Each nil or zero field takes the loop as
// published.
type ClassicParts struct {
	// Window is the window a chunk's buffered rows are reconciled against:
	// Unit.Window() = (lo, hi] as published (Def. 6.2, §2.3 half-open
	// windows). The consumer tests each data event's position against it
	// once the chunk's low marker is consumed and its select has returned.
	// Position hi holds the high marker itself, so the last in-window event
	// is at hi-1.
	Window func(u model.Unit) model.Window
	// ConsumeDuringRead lets the consumer run while the chunk is selected,
	// between the low and the high watermark writes; Fig. 1 pauses log
	// processing there. The select's snapshot is the read-chunk step and
	// its rows reach the buffer when it returns, just before the high
	// watermark is written: a window event the consumer meets in between
	// cannot discard them.
	ConsumeDuringRead bool
	// ReleaseAtHighWrite releases the survivors as soon as the high
	// watermark is written. As published they go out when the consumer
	// reaches the high marker: the unit closes immediately before the first
	// consumed event beyond its high edge (Def. 6.2, Lemma 6.1).
	ReleaseAtHighWrite bool
	// Discard is the per-key merge rule (MergeRule; nil = the log wins):
	// whether an in-window event discards its key's buffered row.
	Discard MergeRule
	// ValueBlind declares that the parts set here do not depend on which
	// value is which: renaming the values they receive leaves their answer
	// unchanged (they compare values only with each other and with ⊥), as in
	// the published parts and the shipped faults. Window receives values
	// (the unit's refresh). A variant that sets one without this declaration
	// has no value renaming: --symmetry is refused for it, naming the part.
	// --check-symmetry verifies the declaration at the bounds it runs.
	ValueBlind bool
}

// withFault maps the faults that are choices of a part onto it.
func (p ClassicParts) withFault(f Fault) ClassicParts {
	w := p.Window
	if w == nil {
		w = func(u model.Unit) model.Window { return u.Window() }
	}
	switch f {
	case LowEdgeOffByOne: // (lo+1, hi]: the first in-window event is missed
		p.Window = func(u model.Unit) model.Window { x := w(u); x.Lo++; return x }
	case HighEdgeOffByOne: // (lo, hi-1), i.e. (lo, hi-2]: the last in-window event, at hi-1, is missed
		p.Window = func(u model.Unit) model.Window { x := w(u); x.Hi -= 2; return x }
	case EarlyRelease:
		p.ReleaseAtHighWrite = true
	}
	return p
}

type classic struct {
	cfg   Config
	parts ClassicParts
	*Layout[classicState]
}

func (p ClassicParts) model(cfg Config) explore.Model[classicState, classicAction] {
	m := &classic{cfg: cfg, parts: p.withFault(cfg.Fault)}
	m.Layout = NewLayout[classicState](cfg.Keys, Phase("Phase", classicPhaseNames[:]).As("phase"), Keys("Buf")).
		Show("buffer", func(s *classicState) (string, bool) { return m.bufferField(s), true })
	return m
}

func newClassic(cfg Config) explore.Model[classicState, classicAction] {
	return ClassicParts{}.model(cfg)
}

// Classic returns the classic protocol built from parts. It is registered as
// "classic" with the zero ClassicParts; a variant is the same call with other
// parts and another Name, registered with Register:
//
//	p := protocols.Classic(protocols.ClassicParts{Window: ...})
//	p.Name = "classic-narrow"
//	err := protocols.Register(p) // an error for a name already taken
func Classic(parts ClassicParts) *Protocol {
	return withParts(parts, Define(&Protocol{
		Name:        "classic",
		Doc:         "DBLog watermark loop: chunks bracketed by low/high marker events, reconciled by window-discard",
		Cite:        "§7.2, Fig. 1; §6.2",
		Defaults:    Config{Keys: 3, Values: 3, Events: 4, Chunks: 2, Txn: 2},
		Limits:      Limits{Keys: model.MaxKeys, Values: 7, Events: 24, Chunks: model.MaxUnits, Txn: MaxTxn, WholeServer: true},
		Disciplines: map[string]string{"": WindowDiscard},
		Faults: []Fault{NoDiscard, EarlyRelease, LowEdgeOffByOne, HighEdgeOffByOne,
			ScanSkipsRow, OverlappingChunks, LateStart, CopyDropped, LostWatermark,
			BeginTaggedEvents, EventDeliveredTwice, MarkerOnlyFromStream, OutsideEventForwarded, RedundantCopy},
	}, parts.model))
}

func init() { mustRegister(Classic(ClassicParts{})) }

// Init: the base store (every store with initial=any), the empty log and a
// consumer that has not consumed anything, its start still open.
func (m *classic) Init() []classicState {
	var out []classicState
	for _, c := range InitialCaptures(&m.cfg) {
		out = append(out, classicState{Cap: c})
	}
	return out
}

// Actions: first the source's commits, then the capture loop's next step,
// then the consumer's.
func (m *classic) Actions(s *classicState, buf []classicAction) []classicAction {
	for t := range Commits(&m.cfg, &s.Cap.Log) {
		buf = append(buf, classicAction{Kind: classicCommit, Txn: t})
	}
	switch s.Phase {
	case classicIdle:
		if int(s.Cap.Plan.N) < m.cfg.Chunks {
			buf = append(buf, classicAction{Kind: classicWriteLow})
		}
	case classicLowWritten:
		buf = append(buf, classicAction{Kind: classicReadChunk})
	case classicChunkRead:
		buf = append(buf, classicAction{Kind: classicWriteHigh})
	}
	if m.consumerMay(s) {
		buf = append(buf, classicAction{Kind: classicConsume})
		if MayStartLater(&s.Cap, m.startBound(s)) {
			buf = append(buf, classicAction{Kind: classicStartLater})
		}
	}
	return buf
}

// consumerMay: log processing is paused between the two watermark writes
// (unless ConsumeDuringRead), and there must be a next position.
func (m *classic) consumerMay(s *classicState) bool {
	paused := s.Phase == classicLowWritten || s.Phase == classicChunkRead
	return (!paused || m.parts.ConsumeDuringRead) && s.Cap.Pos < s.Cap.Log.Len()
}

// startBound is the latest start s0 allowed so far: the first low edge
// itself (S-OBS: s0 ⊑ lo_i, §6.2). A start at lo never sees the low
// watermark at lo; the capture knows its own writes and handles it there
// (startLater), so the window still opens. The late consumer may start
// one position past it.
func (m *classic) startBound(s *classicState) model.Coord {
	if s.Cap.Plan.N == 0 {
		return NoBound
	}
	if m.cfg.Fault == LateStart {
		return s.Cap.Plan.Units[0].Lo + 1
	}
	return s.Cap.Plan.Units[0].Lo
}

// Next makes the successor in t, a copy of s on entry, which each step below
// changes in place.
func (m *classic) Next(s *classicState, a classicAction, t *classicState) bool {
	switch a.Kind {
	case classicCommit:
		m.commit(t, a.Txn)
	case classicWriteLow:
		m.writeLow(t)
	case classicReadChunk:
		m.readChunk(t)
	case classicWriteHigh:
		m.writeHigh(t)
	case classicConsume:
		m.consume(t)
	case classicStartLater:
		m.startLater(t)
	default:
		return false
	}
	return true
}

// commit appends one whole transaction (S-LOG).
func (m *classic) commit(s *classicState, t Txn) {
	s.Cap.Log.Commit(t.Events()...)
}

// domain is chunk i's key range [i*K/C, (i+1)*K/C).
func (m *classic) domain(i int) model.KeySet {
	k, c := m.cfg.Keys, m.cfg.Chunks
	d := ChunkKeys(i, k, c)
	if m.cfg.Fault == OverlappingChunks && i+1 < c {
		d = d.With(model.Key((i + 1) * k / c)) // also the first key of the next chunk
	}
	return d
}

// writeLow pauses log processing and commits the low watermark of the next
// chunk; its position is the bracket's lo.
func (m *classic) writeLow(s *classicState) {
	i := int(s.Cap.Plan.N)
	s.Cap.Log.Commit(Marker(i, false))
	s.Cap.Plan.Add(model.Unit{Domain: m.domain(i), Lo: s.Cap.Log.Len()}) // Hi = 0: not yet written
	s.Phase = classicLowWritten
}

// readChunk selects every key of the chunk at the current log end: one read
// position for the whole chunk. Absent keys read as ⊥.
func (m *classic) readChunk(s *classicState) {
	u := &s.Cap.Plan.Units[s.Cap.Plan.N-1]
	at := s.Cap.Log.Len()
	skipped := false
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if !u.Domain.Has(k) {
			continue
		}
		v := s.Cap.Log.Sigma(at, k)
		if m.cfg.Fault == ScanSkipsRow && v != model.Absent && !skipped {
			v, skipped = model.Absent, true // the scan silently omits its first present row (§9.1)
		}
		u.Refresh[k], u.Read = v, u.Read.With(k)
		s.Cap.ReadAt[k] = at
	}
	s.Phase = classicChunkRead
}

// writeHigh commits the high watermark (the bracket's hi) and resumes log
// processing. The select has returned: if the consumer already met the low
// marker (only when it ran during the read), its rows enter the buffer now.
func (m *classic) writeHigh(s *classicState) {
	i := int(s.Cap.Plan.N) - 1
	if m.openUnit(s) == i {
		s.Buf = s.Cap.Plan.Units[i].Present()
	}
	s.Cap.Log.Commit(Marker(i, true))
	u := &s.Cap.Plan.Units[i]
	u.Hi = s.Cap.Log.Len()
	s.Phase = classicHighWritten
	if p := s.Cap.Pos; m.cfg.Fault == EventDeliveredTwice && p > s.Cap.Start {
		if e := s.Cap.Log.At(p); e.Key != model.NoKey && captured(&m.cfg, &s.Cap, e.Key) {
			s.Cap.Emit(e.Key, e.Img, p) // resumed at its last position, inclusive: the event goes out again
		}
	}
	if m.parts.ReleaseAtHighWrite {
		// Released on writing the high watermark: the consumer has not yet
		// processed the window, so every present read "survives".
		s.Buf = u.Present()
		m.close(s, i, u.Hi)
	}
}

// consume processes the next log position.
func (m *classic) consume(s *classicState) {
	m.consumeAt(s, s.Cap.Pos+1)
	s.Cap.Pos++
}

// startLater moves s0 past the next position: the consumer will never see
// it. A start at the first low edge passes its watermark this way (the late
// consumer one more); the capture knows its own writes, so it still handles
// the marker (the window opens).
func (m *classic) startLater(s *classicState) {
	if s.Cap.Log.At(s.Cap.Pos+1).Key == model.NoKey && m.cfg.Fault != MarkerOnlyFromStream {
		m.consumeAt(s, s.Cap.Pos+1)
	}
	StartLater(&s.Cap)
}

// consumeAt processes position p (Def. 6.2): a low marker opens its chunk's
// window (the buffer takes the rows its select returned, if it has), a high
// marker closes it, a data event discards a buffered row of its key if it
// lies in the window and is emitted at its own place.
func (m *classic) consumeAt(s *classicState, p model.Coord) {
	e := s.Cap.Log.At(p)
	if e.Key == model.NoKey {
		i, high := markerChunk(e)
		if i >= int(s.Cap.Plan.N) || s.Cap.UnitClosed(i) || m.cfg.Fault == LostWatermark {
			return // a filtered watermark never reaches the consumer (W3)
		}
		if !high {
			if s.Phase == classicHighWritten {
				s.Buf = s.Cap.Plan.Units[i].Present() // the window opens
			}
			return
		}
		m.close(s, i, p)
		return
	}
	if !captured(&m.cfg, &s.Cap, e.Key) {
		return // another table's row (a whole-server log, §7.7)
	}
	if i := m.openUnit(s); i >= 0 && m.window(&s.Cap.Plan.Units[i]).Contains(p) && s.Buf.Has(e.Key) {
		if m.cfg.Fault != NoDiscard && m.parts.Discard.discards(&s.Cap, i, p) {
			s.Buf = s.Buf.Without(e.Key) // the log wins: the buffered row is stale
		}
	}
	tag := p
	if m.cfg.Fault == BeginTaggedEvents {
		for tag > 1 && s.Cap.Log.At(tag-1).Txn == e.Txn {
			tag-- // the transaction's first position (its begin record's LSN)
		}
	}
	s.Cap.Emit(e.Key, e.Img, tag)
	redundantCopy(&m.cfg, &s.Cap, p)
}

// close emits the survivors, tagged with the high edge, and closes unit i.
func (m *classic) close(s *classicState, i int, tag model.Coord) {
	u := &s.Cap.Plan.Units[i]
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if s.Buf.Has(k) && m.cfg.Fault != CopyDropped {
			s.Cap.EmitCopy(k, u.Refresh[k], tag)
		}
	}
	s.Buf = 0
	s.Cap.Closed |= 1 << i
	s.Phase = classicIdle
}

// openUnit is the chunk whose window the consumer is in (its low marker
// consumed, the chunk not closed), or -1.
func (m *classic) openUnit(s *classicState) int {
	i := int(s.Cap.Plan.N) - 1
	if i < 0 || s.Cap.UnitClosed(i) || s.Cap.Pos < s.Cap.Plan.Units[i].Lo {
		return -1
	}
	return i
}

// window is the window the consumer tests u's events against: the Window
// part, (lo, hi] when it is nil. Parts take their arguments by value, so
// neither the state nor a copy of it leaves the stack.
func (m *classic) window(u *model.Unit) model.Window {
	if m.parts.Window == nil {
		return u.Window()
	}
	return m.parts.Window(*u)
}

// Done: every chunk closed, the consumer at the end of the log, the source
// done committing.
func (m *classic) Done(s *classicState) bool {
	return s.Cap.AllClosed(m.cfg.Chunks) && s.Cap.Pos == s.Cap.Log.Len() && DataEvents(&s.Cap.Log) == m.cfg.Events
}

// Properties: the shared invariants that apply to a window-discard capture
// with one read point per chunk, then what must be reachable.
func (m *classic) Properties() []explore.Property[classicState, classicAction] {
	units := m.cfg.Chunks
	type P = explore.Property[classicState, classicAction]
	sometimes := func(name, cite string, check func(c *model.Capture) string) P {
		return P{Name: name, Cite: cite, Kind: explore.Sometimes, Check: func(s *classicState) string { return check(&s.Cap) }}
	}
	ps := []P{
		invariants.Prop[classicState, classicAction](invariants.FinalReplay, func(s *classicState) string {
			return invariants.CheckFinalReplay(&s.Cap, units)
		}),
		invariants.StepProp[classicState, classicAction](invariants.NoDuplicate, func(s *classicState, _ classicAction, t *classicState) string {
			return invariants.CheckNoDuplicate(&s.Cap, &t.Cap)
		}),
		invariants.Prop[classicState, classicAction](invariants.FrontierReplay, func(s *classicState) string {
			return invariants.CheckFrontierReplay(&s.Cap, units)
		}),
		invariants.Prop[classicState, classicAction](invariants.ClosedUnitCut, func(s *classicState) string {
			return invariants.CheckClosedUnitCut(&s.Cap)
		}),
		invariants.StepProp[classicState, classicAction](invariants.Monotonic, func(s *classicState, _ classicAction, t *classicState) string {
			return invariants.CheckMonotone(&s.Cap, &t.Cap)
		}),
		invariants.StepProp[classicState, classicAction](invariants.ExactTags, func(s *classicState, _ classicAction, t *classicState) string {
			return invariants.CheckExactTags(&s.Cap, &t.Cap)
		}),
		invariants.Prop[classicState, classicAction](invariants.CommittedOnly, func(s *classicState) string {
			return invariants.CheckCommittedOnly(&s.Cap)
		}),
		invariants.Prop[classicState, classicAction](invariants.LatestHigh, func(s *classicState) string {
			return invariants.CheckTrajectory(&s.Cap, units, s.Cap.Plan.LatestHigh())
		}),
		invariants.Prop[classicState, classicAction](invariants.Contract, func(s *classicState) string {
			return invariants.CheckContract(&s.Cap, units)
		}),
		sometimes("buffered-row-discarded", "Def. 6.2", bufferedRowDiscarded),
		sometimes("survivor-emitted", "Def. 6.2, Lemma 6.1", survivorEmitted),
		sometimes("copy-decides-frontier", "Thm 1, S-OBS", func(c *model.Capture) string { return CopyDecides(c, units, false) }),
		sometimes("absent-read-inserted-in-window", "§3.1, §6.1", absentReadInserted),
		sometimes("delete-races-read", "§1.2, Thm 2", deleteRacesRead),
		sometimes("stale-read-corrected", "Example 4.1, Thm 2", staleReadCorrected),
		sometimes("copy-tag-past-read", "Lemma 4.1, Thm 3", CopyTagPastRead),
	}
	ps = append(ps, EmissionProps[classicState, classicAction](&m.cfg, invariants.WindowDiscard, Chunks[classicState](&m.cfg),
		func(s *classicState) *model.Capture { return &s.Cap })...)
	if m.cfg.NoOps {
		ps = append(ps, sometimes("noop-write-in-window", "§2.1, Def. 6.2", NoOpInWindow))
	}
	if m.cfg.WholeServer {
		ps = append(ps, sometimes("outside-event-in-window", "§7.7", OutsideInWindow))
	}
	return ps
}
