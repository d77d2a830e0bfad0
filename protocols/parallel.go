package protocols

// Flink CDC parallel chunks under buffered range-merge (§7.5, Proposition 5;
// the discipline is §6.3: Def. 6.3 and 6.4, Lemmas 6.2 and 6.3, Theorems 4
// and 5, Proposition 3).
//
// The split assigner cuts the scope into C chunks (key ranges) up front, so the
// plan's domains are fixed from the initial state and only the brackets and
// reads are recorded as the run goes. Chunks progress concurrently and finish
// in any order. Per chunk:
//
//   - record the low offset: lo = the current log length;
//   - read the chunk's keys one by one, in key order (the select's cursor),
//     each at its own log position (A-read is per-key bracket validity, O2);
//   - record the high offset: hi = the current log length, once every key is read;
//   - backfill the window (lo, hi] from the log into the buffer and emit the
//     merged unit: one entry per key with M_i(k) ≠ ⊥, tagged hi (Def. 6.3,
//     6.4); keys merged to ⊥ are emitted zero times. The buffer is M_i, which
//     model.Unit.Merged derives from the log and the recorded unit, so the
//     state holds no copy of it.
//
// Once every chunk has closed, the live (binlog) reader consumes the log one
// position per step from its start s0. The start is the model's choice
// (action start-later): while the reader has consumed nothing, s0 may move one
// position on, up to the minimum high offset. Def. 6.4 fixes s0 ⊑ hi_i for
// every unit, and §6.3 notes that range-merge "needs the stream only from
// s0 ⊑ hi_i" (A-handoff, §7.5: the reader starts at or before every chunk
// high). Flink starts at exactly the minimum; every earlier start is lawful
// too, and only an earlier start lets a lone chunk's gate meet the events
// before its low edge (Prop 3). The
// reader is created when the last chunk finishes, as Flink assigns the binlog
// split, so every high edge is known when s0 is chosen; what lies at or
// before s0 it never sees. An event passes the gate only if its position is
// strictly beyond the high offset of the chunk that owns its key (clause (a));
// it is emitted tagged with its position. Everything at or before that high
// edge — window events and pre-low events alike — is withheld, so what a key
// held there, like a row of the base store b0 (any store, with initial=any),
// reaches the sink only through the merged unit.
//
// Latent: where each key was read (Capture.ReadAt). The running connector
// knows its offsets, not which committed state each returned row reflects.
// The source commits transactions at any time, their rows in any order,
// until E row events exist. Flink records offsets rather than writing
// markers, so the log holds row events only.
//
// Parts (ParallelParts): the live gate, the backfill window, the reader's
// latest start, and whether the reader runs concurrently with backfills.
// Faults that are a choice of one of them are that choice: gate faults
// window-only-withholding (the gate withholds only the owning chunk's window,
// so pre-low events stream: Prop 3), gate-drops-boundary (the gate passes only
// beyond hi+1) and gate-repeats-window (the gate compares with the minimum
// high instead of the owner's); window faults low- and high-edge-off-by-one
// (the backfill reads (lo+1, hi] or (lo, hi-1]) and skipped-backfill (no
// window: the raw read is emitted); gate-passes-high (the gate passes the
// event at hi too, which the merged block already holds: delivered twice)
// and reader-before-backfill (Concurrent: events beyond a chunk's high offset
// stream before its merged block, which then overwrites them). The others:
// scan-skips-row (the select omits the chunk's first present row,
// §9.1); overlapping-chunks (O1); high-before-read (the high offset is
// recorded before the last key is read); copy-dropped (the close emits no
// merged rows); redundant-copy (an inserted row streamed by the reader is
// also sent as a copy right after it).

import (
	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
)

func init() { mustRegister(Parallel(ParallelParts{})) }

// ParallelParts are the decision points of the parallel-chunk capture (§7.5)
// a variant may change; each nil or zero field takes the design as published.
// A variant is a few lines:
//
//	p := protocols.Parallel(protocols.ParallelParts{
//		Gate: func(plan model.Plan, owner int, pos model.Coord) bool { return pos > plan.Units[owner].Lo },
//	})
//	p.Name = "parallel-gate-low"
//	err := protocols.Register(p) // an error for a name already taken
type ParallelParts struct {
	// Gate decides whether the live reader streams the event at pos of a key
	// owned by chunk owner; plan holds every chunk's offsets. Published:
	// pos > hi_owner (Def. 6.4 clause (a), PublishedGate).
	Gate func(plan model.Plan, owner int, pos model.Coord) bool
	// Window is the part of the log a chunk backfills into its buffer before
	// emitting M(k). Published: (lo, hi] (Def. 6.3, model.Unit.Window).
	Window func(u model.Unit) model.Window
	// ReaderStart is the latest start s0 the live reader may take; every
	// start from 0 up to it is explored. Published: the minimum high offset
	// (Def. 6.4: s0 ⊑ hi_i for every chunk; A-handoff).
	ReaderStart func(plan model.Plan) model.Coord
	// ReaderStartAt, when set, is the exact start s0 of the live reader,
	// given the plan when it is created (called on every state where it
	// may consume; exact, not a bound): it skips to s0 and consumes from
	// there. It overrides ReaderStart.
	ReaderStartAt func(plan model.Plan) model.Coord
	// Concurrent runs the live reader while chunks are still open, Def.
	// 6.4's lawful concurrent pass: it exists from the start, its start s0
	// at or before every high offset (recorded or still to come), and it is
	// held before the first event beyond an open chunk's high offset until
	// that chunk has closed, so each merged block comes just before the
	// first consumed event beyond its high (the close placed as in Def.
	// 6.2); an event whose chunk has no high offset yet is withheld.
	// Published: false — the binlog split is assigned when the last
	// snapshot split has finished (§7.5). reader-before-backfill is the
	// same pass unheld.
	Concurrent bool
	// Unheld, with Concurrent, releases the hold: the reader streams past
	// open chunks' high offsets and is started once every high offset is
	// recorded, as reader-before-backfill does. Published: false.
	Unheld bool
	// Read reports whether a select of one of a chunk's keys, in a chunk
	// whose low offset is lo, may return the committed state at c (0 ⊑ c ⊑
	// now). Published: any transaction boundary in [lo, now], each key its
	// own (A-read, O2 per key, §4.3) — PublishedRead, as readonly's.
	Read func(l model.Log, lo, c model.Coord) bool
	// ValueBlind declares that the parts set here do not depend on which
	// value is which: renaming the values they receive leaves their answer
	// unchanged (they compare values only with each other and with ⊥), as in
	// the published parts and the shipped faults. Gate, Window and
	// ReaderStart receive values (the units' refreshes), Read the log. A
	// variant that sets one without this declaration has no value renaming:
	// --symmetry is refused for it, naming the part. --check-symmetry
	// verifies the declaration at the bounds it runs.
	ValueBlind bool
}

// PublishedGate is clause (a) of Def. 6.4: an event passes only beyond its
// owning chunk's high offset.
func PublishedGate(plan *model.Plan, owner int, pos model.Coord) bool {
	return pos > plan.Units[owner].Hi
}

// MinHigh is the smallest high offset of plan's units: the latest start
// Def. 6.4 allows, where Flink's binlog split starts.
func MinHigh(plan *model.Plan) model.Coord { return plan.Units[minHighUnit(plan)].Hi }

// minHighUnit is the index of the first unit with the smallest high offset.
func minHighUnit(plan *model.Plan) int {
	i := 0
	for j := 1; j < int(plan.N); j++ {
		if plan.Units[j].Hi < plan.Units[i].Hi {
			i = j
		}
	}
	return i
}

// withFault is parts with f applied where f is a choice of a part. The
// fault is the same mistake made on top of the part the variant already
// has (the published one when it has none), so a variant keeps its own
// gate and window under every mutation; on the published parts each fault
// is exactly the gate or window it names.
func (pp ParallelParts) withFault(f Fault) ParallelParts {
	g, w := pp.Gate, pp.Window
	if g == nil {
		g = func(plan model.Plan, o int, pos model.Coord) bool { return PublishedGate(&plan, o, pos) }
	}
	if w == nil {
		w = func(u model.Unit) model.Window { return u.Window() }
	}
	switch f {
	case WindowOnlyWithholding: // Prop 3's narrowed gate: pre-low events stream too
		pp.Gate = func(plan model.Plan, o int, pos model.Coord) bool { return g(plan, o, pos) || pos <= plan.Units[o].Lo }
	case GateDropsBoundary: // the event just past the high edge is withheld too
		pp.Gate = func(plan model.Plan, o int, pos model.Coord) bool {
			return g(plan, o, pos) && pos != plan.Units[o].Hi+1
		}
	case GateRepeatsWindow: // the gate of the chunk with the minimum high instead of the owner's
		pp.Gate = func(plan model.Plan, _ int, pos model.Coord) bool { return g(plan, minHighUnit(&plan), pos) }
	case GatePassesHigh: // the event at hi streams although the merged block holds it
		pp.Gate = func(plan model.Plan, o int, pos model.Coord) bool { return g(plan, o, pos) || pos == plan.Units[o].Hi }
	case ReaderBeforeBackfill: // the concurrent pass, not held at open chunks' high offsets
		pp.Concurrent, pp.Unheld = true, true
	case SkippedBackfill: // no backfill: the raw read is emitted
		pp.Window = func(u model.Unit) model.Window { x := w(u); x.Hi = x.Lo; return x }
	case LowEdgeOffByOne: // (lo+1, hi]: misses the event just after the low edge
		pp.Window = func(u model.Unit) model.Window { x := w(u); x.Lo++; return x }
	case HighEdgeOffByOne: // (lo, hi-1]: misses the event at the high edge
		pp.Window = func(u model.Unit) model.Window {
			x := w(u)
			if x.Hi > x.Lo {
				x.Hi--
			}
			return x
		}
	}
	return pp
}

// Parts take their arguments by value: a pointer into the state handed to
// an unknown function would move every state (or its copy) to the heap. A
// nil part is the published choice, called directly.

func (pp *ParallelParts) gate(plan *model.Plan, owner int, pos model.Coord) bool {
	if pp.Gate == nil {
		return PublishedGate(plan, owner, pos)
	}
	return pp.Gate(*plan, owner, pos)
}

func (pp *ParallelParts) window(u *model.Unit) model.Window {
	if pp.Window == nil {
		return u.Window()
	}
	return pp.Window(*u)
}

func (pp *ParallelParts) mayRead(l *model.Log, lo, c model.Coord) bool {
	if pp.Read == nil {
		return PublishedRead(l, lo, c)
	}
	return pp.Read(*l, lo, c)
}

func (pp *ParallelParts) readerStart(plan *model.Plan) model.Coord {
	if pp.ReaderStartAt != nil {
		return pp.ReaderStartAt(*plan)
	}
	if pp.ReaderStart == nil {
		return MinHigh(plan)
	}
	return pp.ReaderStart(*plan)
}

// Parallel returns the parallel-chunk protocol built from parts, named
// "parallel"; a variant takes other parts and another Name.
func Parallel(parts ParallelParts) *Protocol {
	return withParts(parts, Define(&Protocol{
		Name:        "parallel",
		Doc:         "Flink CDC parallel chunks: per-chunk offset brackets, backfill range-merge, live reader gated by each chunk's high offset",
		Cite:        "§7.5, Prop 5; §6.3",
		Defaults:    Config{Keys: 3, Values: 2, Events: 4, Chunks: 2, Txn: 1},
		Limits:      Limits{Keys: model.MaxKeys, Values: 8, Events: model.MaxLog, Chunks: model.MaxUnits, Txn: MaxTxn, WholeServer: true},
		Disciplines: map[string]string{"": RangeMerge},
		Faults: []Fault{WindowOnlyWithholding, GateDropsBoundary, GateRepeatsWindow, SkippedBackfill,
			ScanSkipsRow, OverlappingChunks, LowEdgeOffByOne, HighEdgeOffByOne, HighBeforeRead, CopyDropped,
			GatePassesHigh, ReaderBeforeBackfill, BackfillFromRead, OutsideEventForwarded, RedundantCopy},
	}, func(cfg Config) explore.Model[parallelState, parallelAction] { return newParallel(cfg, parts) }))
}

// chunkPhase is how far one chunk has progressed.
type chunkPhase uint8

const (
	chunkIdle    chunkPhase = iota // not started
	chunkReading                   // low offset recorded, the select is returning keys
	chunkHigh                      // high offset recorded, window not yet backfilled
	chunkClosed                    // backfilled and merged unit emitted
)

var chunkPhaseNames = [...]string{"idle", "reading", "high recorded", "closed"}

func (p chunkPhase) String() string { return chunkPhaseNames[p&3] }

// parallelState is the capture plus each chunk's phase. Chunk i is unit i of
// Cap.Plan; Cap.Pos and Cap.Start stay 0 until every chunk has closed.
type parallelState struct {
	Cap   model.Capture
	Phase [model.MaxUnits]chunkPhase
	// ReadEnd is the log length when each key's select returned; kept (and
	// encoded) only under backfill-from-read, the one place it is used.
	ReadEnd [model.MaxKeys]model.Coord
}

// parallelKind is the kind of a step.
type parallelKind uint8

const (
	parallelCommit     parallelKind = iota // the source commits a transaction (§2.1)
	parallelLow                            // record the chunk's low binlog offset (§7.5)
	parallelRead                           // the chunk select returns its next key (A-read)
	parallelHigh                           // record the chunk's high binlog offset (§7.5)
	parallelClose                          // backfill (lo, hi] into the buffer and emit the merged unit (Def. 6.3, 6.4)
	parallelConsume                        // the live reader consumes one position through the gate (clause (a), A-handoff)
	parallelStartLater                     // the live reader's start s0 moves one position on (Def. 6.4: s0 ⊑ hi_i)
)

var parallelKindNames = [...]string{"commit", "record-low", "read", "record-high", "backfill-emit", "consume", "start-later"}

// parallelAction is one step: a commit carries its transaction, a chunk step
// its chunk, a read the coordinate it reflects.
type parallelAction struct {
	Kind  parallelKind
	Txn   Txn
	Chunk uint8
	At    model.Coord
}

// parallel is the model: its bounds, and its parts with cfg.Fault applied.
type parallel struct {
	cfg   Config
	parts ParallelParts
	*Layout[parallelState]
}

func newParallel(cfg Config, parts ParallelParts) *parallel {
	fs := []LayoutField{Phase("Phase", chunkPhaseNames[:]).Packed().First(cfg.Chunks).As("chunks")}
	if cfg.Fault == BackfillFromRead {
		fs = append(fs, Coords("ReadEnd").First(cfg.Keys))
	}
	return &parallel{cfg, parts.withFault(cfg.Fault), NewLayout[parallelState](cfg.Keys, fs...)}
}

// domain is chunk i's key range [i*K/C, (i+1)*K/C).
func (m *parallel) domain(i int) model.KeySet {
	k, c := m.cfg.Keys, m.cfg.Chunks
	d := ChunkKeys(i, k, c)
	if m.cfg.Fault == OverlappingChunks && i+1 < c {
		d = d.With(model.Key((i + 1) * k / c)) // also the first key of chunk i+1
	}
	return d
}

// Init: one state per base store (every store with initial=any), the empty
// log, every chunk split off and idle.
func (m *parallel) Init() []parallelState {
	var out []parallelState
	for _, c := range InitialCaptures(&m.cfg) {
		s := parallelState{Cap: c}
		for i := 0; i < m.cfg.Chunks; i++ {
			s.Cap.Plan.Add(model.Unit{Domain: m.domain(i)})
		}
		out = append(out, s)
	}
	return out
}

// Actions lists each chunk's next step, then the source's commits, then the
// live reader's steps. (The order only breaks ties between shortest traces:
// with the capture's steps first, a counterexample commits as late as its
// shape allows, e.g. Prop 3's delete lands inside the window rather than
// before the low edge.)
func (m *parallel) Actions(s *parallelState, buf []parallelAction) []parallelAction {
	for i := 0; i < m.cfg.Chunks; i++ {
		u := &s.Cap.Plan.Units[i]
		c := uint8(i)
		switch s.Phase[i] {
		case chunkIdle:
			buf = append(buf, parallelAction{Kind: parallelLow, Chunk: c})
		case chunkReading:
			if u.Read != u.Domain {
				buf = m.reads(s, u, c, buf)
			}
			if m.highAllowed(u) {
				buf = append(buf, parallelAction{Kind: parallelHigh, Chunk: c})
			}
		case chunkHigh:
			if u.Read != u.Domain { // only under HighBeforeRead
				buf = m.reads(s, u, c, buf)
			} else {
				buf = append(buf, parallelAction{Kind: parallelClose, Chunk: c})
			}
		}
	}
	for t := range Commits(&m.cfg, &s.Cap.Log) {
		buf = append(buf, parallelAction{Kind: parallelCommit, Txn: t})
	}
	if m.readerExists(s) && s.Cap.Pos < s.Cap.Log.Len() {
		start := m.startBound(s)
		// An exact start (ReaderStartAt) consumes nothing before it skips there.
		if pinned := m.parts.ReaderStartAt != nil && s.Cap.Pos == s.Cap.Start && s.Cap.Pos < start; !pinned && !m.held(s) {
			buf = append(buf, parallelAction{Kind: parallelConsume})
		}
		if MayStartLater(&s.Cap, start) {
			buf = append(buf, parallelAction{Kind: parallelStartLater})
		}
	}
	return buf
}

// unheld: the concurrent pass not held (reader-before-backfill), which
// streams past open chunks' high offsets.
func (m *parallel) unheld() bool { return m.parts.Concurrent && m.parts.Unheld }

// held: under the lawful concurrent pass, the next position lies beyond the
// high offset of a chunk that has recorded it but not closed yet, so the
// reader waits for that chunk's merged block (Def. 6.4, placed as in Def.
// 6.2). A chunk without a high offset yet will record one at or past the
// log end, so the next position is within it.
func (m *parallel) held(s *parallelState) bool {
	if !m.parts.Concurrent || m.unheld() {
		return false
	}
	p := s.Cap.Pos + 1
	for i := 0; i < m.cfg.Chunks; i++ {
		if ph := s.Phase[i]; ph == chunkHigh && p > s.Cap.Plan.Units[i].Hi {
			return true
		}
	}
	return false
}

// startBound is the latest start s0 the reader may take now: the parts'
// bound once every chunk has its high offset, before that the least of the
// recorded ones and the log end (every high still to come lies at or past
// it), so s0 ⊑ hi_i holds for every chunk however the run goes on.
func (m *parallel) startBound(s *parallelState) model.Coord {
	b := s.Cap.Log.Len()
	for i := 0; i < m.cfg.Chunks; i++ {
		if s.Phase[i] < chunkHigh {
			return min(b, m.minRecordedHigh(s))
		}
	}
	return m.parts.readerStart(&s.Cap.Plan)
}

// minRecordedHigh is the least high offset recorded so far (NoBound if none).
func (m *parallel) minRecordedHigh(s *parallelState) model.Coord {
	b := NoBound
	for i := 0; i < m.cfg.Chunks; i++ {
		if s.Phase[i] >= chunkHigh {
			b = min(b, s.Cap.Plan.Units[i].Hi)
		}
	}
	return b
}

// reads lists the read of chunk c's next key, one action per committed
// state it may reflect (A-read: a boundary in [lo, now]).
func (m *parallel) reads(s *parallelState, u *model.Unit, c uint8, buf []parallelAction) []parallelAction {
	l := &s.Cap.Log
	for at := u.Lo; at <= l.Len(); at++ {
		if m.parts.mayRead(l, u.Lo, at) {
			buf = append(buf, parallelAction{Kind: parallelRead, Chunk: c, At: at})
		}
	}
	return buf
}

// readerExists: the live reader is created when the last chunk closes; under
// Concurrent it runs from the start; under reader-before-backfill, once every
// chunk has recorded its high offset.
func (m *parallel) readerExists(s *parallelState) bool {
	switch {
	case !m.parts.Concurrent:
		return s.Cap.AllClosed(m.cfg.Chunks)
	case !m.unheld():
		return true
	}
	for i := 0; i < m.cfg.Chunks; i++ {
		if s.Phase[i] < chunkHigh || s.Cap.Plan.Units[i].Read != s.Cap.Plan.Units[i].Domain {
			return false
		}
	}
	return true
}

// highAllowed: the high offset is recorded only after every key is read.
func (m *parallel) highAllowed(u *model.Unit) bool {
	need := u.Domain
	if m.cfg.Fault == HighBeforeRead {
		need = need.Without(m.lastKey(u.Domain)) // the last key may still be read after the high offset
	}
	return u.Read&need == need
}

// Next makes the successor in t, a copy of s on entry, which each step below
// changes in place.
func (m *parallel) Next(s *parallelState, a parallelAction, t *parallelState) bool {
	i := int(a.Chunk)
	switch a.Kind {
	case parallelCommit:
		m.commit(t, a.Txn)
	case parallelLow:
		m.recordLow(t, i)
	case parallelRead:
		m.readKey(t, i, a.At)
	case parallelHigh:
		m.recordHigh(t, i)
	case parallelClose:
		m.backfillAndEmit(t, i)
	case parallelConsume:
		m.consume(t)
	case parallelStartLater:
		StartLater(&t.Cap)
	default:
		return false
	}
	return true
}

// commit appends the source's transaction to the log (S-LOG: whole).
func (m *parallel) commit(s *parallelState, t Txn) {
	s.Cap.Log.Commit(t.Events()...)
}

// recordLow records chunk i's low offset: the current log length.
func (m *parallel) recordLow(s *parallelState, i int) {
	s.Cap.Plan.Units[i].Lo = s.Cap.Log.Len()
	s.Phase[i] = chunkReading
}

// readKey: the chunk select returns its next key as it stood at boundary at,
// lo ⊑ at ⊑ now: R(k) = σ_at(k). A select over a range returns each row from
// its own committed state (§4.3, A-read), not necessarily the log end.
func (m *parallel) readKey(s *parallelState, i int, at model.Coord) {
	u := &s.Cap.Plan.Units[i]
	k := nextKey(u)
	v := s.Cap.Log.Sigma(at, k)
	if m.cfg.Fault == BackfillFromRead {
		s.ReadEnd[k] = s.Cap.Log.Len()
	}
	if m.cfg.Fault == ScanSkipsRow && v != model.Absent && u.Present() == 0 {
		v = model.Absent // the scan silently drops the first row it would return (§9.1)
	}
	u.Refresh[k] = v
	u.Read = u.Read.With(k)
	s.Cap.ReadAt[k] = at
}

// recordHigh records chunk i's high offset: the current log length.
func (m *parallel) recordHigh(s *parallelState, i int) {
	s.Cap.Plan.Units[i].Hi = s.Cap.Log.Len()
	s.Phase[i] = chunkHigh
}

// backfillAndEmit reads the window (lo, hi] into the buffer, emits the merged
// unit (one entry per key with M(k) ≠ ⊥, tagged hi) and closes the chunk.
// Once the last chunk has closed the live reader exists, its start still open.
func (m *parallel) backfillAndEmit(s *parallelState, i int) {
	u := &s.Cap.Plan.Units[i]
	w := m.parts.window(u) // once per chunk: a part is called on a copy
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if !u.Domain.Has(k) || m.cfg.Fault == CopyDropped {
			continue
		}
		kw := m.keyWindow(s, w, k)
		if v := u.MergedIn(&s.Cap.Log, kw, k); v != model.Absent {
			if _, at, ok := s.Cap.Log.Last(k, kw); ok && at == u.Hi {
				s.Cap.Emit(k, v, u.Hi) // the block carries the log event at hi
			} else {
				s.Cap.EmitCopy(k, v, u.Hi)
			}
		}
	}
	s.Cap.Closed |= 1 << i
	s.Phase[i] = chunkClosed
}

// keyWindow is the part of the backfilled window w merged into k. It is w,
// except under backfill-from-read, where each key's backfill starts at the
// log position its select returned at, as if the row reflected the log end
// then: an event between the state a stale read reflects and that position
// is lost (A-read allows any boundary in the bracket).
func (m *parallel) keyWindow(s *parallelState, w model.Window, k model.Key) model.Window {
	if m.cfg.Fault == BackfillFromRead {
		w.Lo = max(w.Lo, s.ReadEnd[k])
	}
	return w
}

// merged is what the chunk emits for k: M(k) over the backfilled window
// (Def. 6.3).
func (m *parallel) merged(u *model.Unit, l *model.Log, k model.Key) model.Value {
	return u.MergedIn(l, m.parts.window(u), k)
}

// consume: the live reader takes the next position; the gate passes its event
// only beyond the owning chunk's high offset (clause (a)).
func (m *parallel) consume(s *parallelState) {
	s.Cap.Pos++
	p := s.Cap.Pos
	e := s.Cap.Log.At(p)
	if m.passesIn(s, e.Key, p) {
		s.Cap.Emit(e.Key, e.Img, p)
		redundantCopy(&m.cfg, &s.Cap, p)
	}
}

// passesIn is the live gate in state s: an event outside the scope (no chunk
// owns its key: a whole-server log, §7.7) is skipped; an event whose chunk
// has not recorded its high offset yet lies within it, and is withheld
// (concurrent pass).
func (m *parallel) passesIn(s *parallelState, k model.Key, p model.Coord) bool {
	o := s.Cap.Plan.Owner(k)
	if o < 0 {
		return captured(&m.cfg, &s.Cap, k) // outside the scope: skipped
	}
	if s.Phase[o] < chunkHigh {
		return false
	}
	return m.passes(&s.Cap, k, p)
}

// passes is the live gate for the event at p on key k.
func (m *parallel) passes(c *model.Capture, k model.Key, p model.Coord) bool {
	return m.parts.gate(&c.Plan, c.Plan.Owner(k), p)
}

func (m *parallel) lastKey(s model.KeySet) model.Key {
	for k := model.Key(model.MaxKeys); k > 0; k-- {
		if s.Has(k - 1) {
			return k - 1
		}
	}
	return model.NoKey
}

// Done: every chunk closed, the live reader at the end of the log, and the
// source has committed all E events.
func (m *parallel) Done(s *parallelState) bool {
	return s.Cap.AllClosed(m.cfg.Chunks) && s.Cap.Pos == s.Cap.Log.Len() && DataEvents(&s.Cap.Log) >= m.cfg.Events
}

// Properties: the shared invariants that apply to range-merge, then the
// races that show they are not vacuous.
func (m *parallel) Properties() []explore.Property[parallelState, parallelAction] {
	n := m.cfg.Chunks
	type P = explore.Property[parallelState, parallelAction]
	sometimes := func(name, cite string, f func(c *model.Capture) string) P {
		return P{Name: name, Cite: cite, Kind: explore.Sometimes, Check: func(s *parallelState) string { return f(&s.Cap) }}
	}
	ps := []P{
		invariants.Prop[parallelState, parallelAction](invariants.FinalReplay, func(s *parallelState) string {
			return invariants.CheckFinalReplay(&s.Cap, n)
		}),
		invariants.StepProp[parallelState, parallelAction](invariants.NoDuplicate, func(s *parallelState, _ parallelAction, t *parallelState) string {
			return invariants.CheckNoDuplicate(&s.Cap, &t.Cap)
		}),
		invariants.Prop[parallelState, parallelAction](invariants.FrontierReplay, func(s *parallelState) string {
			return invariants.CheckFrontierReplay(&s.Cap, n)
		}),
		invariants.Prop[parallelState, parallelAction](invariants.ClosedUnitCut, func(s *parallelState) string {
			return invariants.CheckClosedUnitCut(&s.Cap)
		}),
		invariants.StepProp[parallelState, parallelAction](invariants.Monotonic, func(s *parallelState, _ parallelAction, t *parallelState) string {
			return invariants.CheckMonotone(&s.Cap, &t.Cap)
		}),
		invariants.StepProp[parallelState, parallelAction](invariants.ExactTags, func(s *parallelState, _ parallelAction, t *parallelState) string {
			return invariants.CheckExactTags(&s.Cap, &t.Cap)
		}),
		invariants.Prop[parallelState, parallelAction](invariants.CommittedOnly, func(s *parallelState) string {
			return invariants.CheckCommittedOnly(&s.Cap)
		}),
		invariants.Prop[parallelState, parallelAction](invariants.LatestHigh, func(s *parallelState) string {
			return invariants.CheckTrajectory(&s.Cap, n, s.Cap.Plan.LatestHigh())
		}),
		invariants.Prop[parallelState, parallelAction](invariants.Contract, func(s *parallelState) string {
			return invariants.CheckContract(&s.Cap, n)
		}),
		sometimes("brackets-overlap", "§7.5 (independence from bracket ordering)", m.bracketsOverlap),
		sometimes("merge-changes-value", "Def. 6.3", m.mergeChangesValue),
		sometimes("absent-read-inserted-in-window", "Def. 6.3, Thm 4", m.absentReadInserted),
		sometimes("delete-races-read", "Def. 6.3, Lemma 6.2", m.deleteRacesRead),
		sometimes("stale-read-corrected", "Lemma 6.2, Example 4.1", m.staleReadCorrected),
		sometimes("stale-read", "§4.3, §7.5 A-read, O2", StaleRead),
		sometimes("copy-decides-frontier", "Thm 1, Thm 4, S-OBS", func(c *model.Capture) string { return CopyDecides(c, n, true) }),
		sometimes("live-event-withheld", "Def. 6.4 clause (a)", func(c *model.Capture) string { return m.liveWithheld(c, false) }),
		sometimes("pre-low-event-withheld", "Prop 3, §7.5 A-handoff", func(c *model.Capture) string { return m.liveWithheld(c, true) }),
	}
	ps = append(ps, EmissionProps[parallelState, parallelAction](&m.cfg, invariants.RangeMerge, Chunks[parallelState](&m.cfg),
		func(s *parallelState) *model.Capture { return &s.Cap })...)
	if m.parts.Concurrent {
		ps = append(ps, P{Name: "reader-runs-while-chunk-open", Cite: "Def. 6.4, §7.5", Kind: explore.Sometimes, Check: m.runsWhileOpen})
	}
	if m.cfg.WholeServer {
		ps = append(ps, sometimes("outside-event-in-window", "§7.7", OutsideInWindow))
	}
	return ps
}
