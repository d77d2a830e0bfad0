package protocols

// Debezium read-only incremental snapshots for MySQL and MariaDB (§7.4:
// Theorem 7, Proposition 4 and its assumptions A-read and A-discard),
// reconciled by window-discard (§6.2).
//
// No marker is written. The capture brackets each chunk with two samples of
// the server's executed transaction set, each taken at the current log end (a
// transaction boundary, since transactions are appended whole): before the
// read the low sample G(lo), after it the high sample G(hi). Between the
// samples every key of the chunk is read by its own select (A-read: "every
// returned value or absence must match the source at some transaction-boundary
// prefix inside the bracket"): the read of a key chooses any boundary c in
// [lo, now] and returns σ_c(k), so different keys of one chunk may reflect
// different coordinates, and a read may be stale (O2 is per key; Prop 1).
// Chunks are taken one after another, in key order.
//
// One consumer walks the log one event per step and decides window membership
// by transaction labels only (Theorem 7): once the low sample exists, an event
// is in the window iff its label is not in the low set and, when the high set
// exists, is in it. An in-window event for a buffered key discards the
// buffered row; every data event is emitted at its own place. The lifecycle is
// A-discard's serialized one: "the low sample is installed before the read and
// the high sample is taken after the buffer is complete, or an equivalent
// serialization establishes that order. Every relevant row event whose
// transaction lies in the high-minus-low window can remove its buffered key."
// While the chunk is being read the consumer processes only pre-window events
// (labels in the low set): those never touch the buffer, so this is the
// equivalent serialization of a consumer paused for the read, and every window
// event is met once the buffer is complete. The buffer is released (survivors
// emitted, tagged with hi) "only after all row events of the last window
// transaction have been processed": when the high sample exists and no
// unprocessed event carries a label of the high set. The release comes before
// the consumer takes any later event.
//
// The consumer starts at s0, the model's choice (S-OBS, §6.2: window-discard
// needs s0 ⊑ lo_i for every unit; no marker has to be met, so s0 may equal
// lo): while it has consumed nothing its start may move on, up to the
// earliest low edge recorded so far (start-later). What lies at or before s0,
// like the rows of the base store b0 (every store, with initial=any), reaches
// the sink only through a chunk's copy.
//
// State: the shared capture, the loop's phase, the coordinates each chunk's
// samples map to (the sets are derived from them with Executed), the buffer,
// and — only under the split-transaction fault — the rest of a transaction
// exposed in part. Latent (§10): each key's read coordinate ReadAt, and the
// positions the samples were taken at (the unit's Lo/Hi, the true log lengths).
//
// Parts (ReadonlyParts): Read, the committed states a key's read may reflect
// (any transaction boundary in [lo, now] as published, A-read); Sample, the
// prefix an executed-set sample maps to (the log end as published;
// interior-executed-set is a choice of it); Member, the window membership
// test on labels (high minus low as published, Thm 7); ConsumeDuringRead,
// whether the consumer takes window events while the chunk is being read
// (not as published, A-discard; consumer-runs-during-read is this choice).
//
// Faults that are not parts: shared-read-instant (a claim: one read point
// explains every read of a chunk — Proposition 1 refutes it);
// split-transaction (the source exposes a multi-row transaction in two
// pieces, out of contract); no-discard (an in-window event leaves the
// buffered row in place); release-before-last-row (the buffer is released
// once the first row of the window's last transaction has been processed,
// not every row); copy-dropped (the release emits no survivors);
// offset-on-captured-rows (the processed offset moves only on captured rows,
// so a window whose last transaction lies outside the scope is released
// late, after events beyond it: §7.7).

import (
	"fmt"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
)

// readonlyPhase is where the capture stands in the current chunk.
type readonlyPhase uint8

const (
	readonlyIdle        readonlyPhase = iota // no chunk in progress: the next step samples a low set
	readonlyReading                          // low sampled: the chunk's keys are being read, one select each; only pre-window events are consumed
	readonlyHighSampled                      // high sampled: waiting for the window's last transaction, then release
)

var readonlyPhaseNames = [...]string{"idle", "reading", "high sampled"}

// readonlyState is one state of the read-only capture.
type readonlyState struct {
	Cap   model.Capture
	Phase readonlyPhase
	// LowAt and HighAt are the coordinates chunk i's samples map to: the
	// sets are G(LowAt[i]) and G(HighAt[i]). They equal the unit's Lo and Hi
	// unless a sample is mapped inside a transaction (interior-executed-set).
	LowAt, HighAt [model.MaxUnits]model.Coord
	Buf           model.KeySet // buffered rows of the open window; values are the unit's Refresh
	Pending       Txn          // split-transaction: the rows of the last transaction not yet appended
}

// readonlyKind is the kind of a step.
type readonlyKind uint8

const (
	readonlyCommit     readonlyKind = iota // the source commits a transaction (§2.1); under split-transaction, one piece of it
	readonlySampleLow                      // sample the executed set before the read: the low edge G(lo) (§7.4)
	readonlyReadKey                        // read the chunk's next key at a boundary c in [lo, now] (A-read: O2 per key)
	readonlySampleHigh                     // sample the executed set after the buffer is complete: the high edge G(hi)
	readonlyConsume                        // the consumer processes the next event; membership by label (Thm 7)
	readonlyRelease                        // release the buffer after the window's last transaction (A-discard)
	readonlyStartLater                     // the consumer's start s0 moves one position on (S-OBS, retention)
)

var readonlyActionNames = []string{"commit", "sample-low", "read-key", "sample-high", "consume", "release", "start-later"}

// readonlyAction is one step; Txn is set for commits, At (the coordinate the
// select reflects) for reads.
type readonlyAction struct {
	Kind readonlyKind
	At   model.Coord
	Txn  Txn
}

// ReadonlyParts are the decision points of Debezium's read-only capture
// (§7.4, Theorem 7, Proposition 4) a variant may change. Each nil or zero
// field takes the capture as published.
type ReadonlyParts struct {
	// Read reports whether a read of one of the chunk's keys, in a chunk
	// whose low sample was taken at lo, may reflect the committed state at
	// c (0 ⊑ c ⊑ now): A-read, "every returned value or absence must match
	// the source at some transaction-boundary prefix inside the bracket".
	// As published, any boundary in [lo, now]; each key chooses its own.
	Read func(l model.Log, lo, c model.Coord) bool
	// Sample is the coordinate an executed-set sample taken now maps to
	// (A-linear: one complete prefix of the consumed history). As published,
	// the log end, a transaction boundary.
	Sample func(l model.Log) model.Coord
	// Member is the consumer's window test for an event of transaction t,
	// given the low and the high sample (every label while the high sample
	// is not taken yet). As published, "the event's transaction identifier
	// lies in the high set and not in the low set" (Theorem 7).
	Member func(t uint8, low, high model.TxnSet) bool
	// ConsumeDuringRead lets the consumer take window events while the
	// chunk's keys are still being read. As published it takes only events
	// before the window then (A-discard's serialized lifecycle), so every
	// window event meets the complete buffer; running on, a window event met
	// before its key's read cannot discard it, and a stale read of a deleted
	// row is released over the delete.
	ConsumeDuringRead bool
	// Discard is the per-key merge rule (MergeRule; nil = the log wins):
	// whether an in-window event discards its key's buffered row.
	Discard MergeRule
	// ValueBlind declares that the parts set here do not depend on which
	// value is which: renaming the values they receive leaves their answer
	// unchanged (they compare values only with each other and with ⊥), as in
	// the published parts and the shipped faults. Read and Sample receive
	// values (the log's row images). A variant that sets one without this
	// declaration has no value renaming: --symmetry is refused for it,
	// naming the part. --check-symmetry verifies the declaration at the
	// bounds it runs.
	ValueBlind bool
}

// withFault maps the faults that are choices of a part onto it.
func (p ReadonlyParts) withFault(f Fault) ReadonlyParts {
	sample := p.Sample
	if sample == nil {
		sample = func(l model.Log) model.Coord { return l.Len() }
	}
	switch f {
	case InteriorExecutedSet:
		// The sample is taken as G(c-1) when the last transaction has two
		// rows or more: c-1 lies inside that committed transaction. As a set
		// of labels G(c-1) is G(c) — the transaction already has a row at
		// c-1 — so the capture behaves exactly as before; what breaks is the
		// mapping of the set to a prefix (Theorem 7).
		p.Sample = func(l model.Log) model.Coord {
			c := sample(l)
			if c >= 2 && l.Ev[c-1].Txn == l.Ev[c-2].Txn {
				return c - 1
			}
			return c
		}
	case ConsumerRunsDuringRead:
		p.ConsumeDuringRead = true
	}
	return p
}

type readonly struct {
	cfg   Config
	parts ReadonlyParts
	*Layout[readonlyState]
}

// The parts as the model calls them: a nil part is the published choice, and
// parts take their arguments by value, so neither the state nor a copy of it
// leaves the stack.

func (m *readonly) mayRead(l *model.Log, lo, c model.Coord) bool {
	if m.parts.Read == nil {
		return PublishedRead(l, lo, c)
	}
	return m.parts.Read(*l, lo, c)
}

func (m *readonly) sample(l *model.Log) model.Coord {
	if m.parts.Sample == nil {
		return l.Len()
	}
	return m.parts.Sample(*l)
}

func (m *readonly) member(t uint8, low, high model.TxnSet) bool {
	if m.parts.Member == nil {
		return !low.Has(t) && high.Has(t)
	}
	return m.parts.Member(t, low, high)
}

func (p ReadonlyParts) model(cfg Config) explore.Model[readonlyState, readonlyAction] {
	m := &readonly{cfg: cfg, parts: p.withFault(cfg.Fault)}
	m.Layout = NewLayout[readonlyState](cfg.Keys, Phase("Phase", readonlyPhaseNames[:]).As("phase"), Keys("Buf"),
		Coords("LowAt"), Coords("HighAt"), Bytes("Pending.N"), Rows("Pending.Ev")).
		Show("low sample", func(s *readonlyState) (string, bool) { return m.sampleText(s, s.LowAt[:], readonlyReading) }).
		Show("high sample", func(s *readonlyState) (string, bool) { return m.sampleText(s, s.HighAt[:], readonlyHighSampled) }).
		Show("buffer", m.buffer).
		Show("pending", m.pending)
	return m
}

func newReadonly(cfg Config) explore.Model[readonlyState, readonlyAction] {
	return ReadonlyParts{}.model(cfg)
}

// Readonly returns the read-only protocol built from parts. It is registered
// as "readonly" with the zero ReadonlyParts; a variant is the same call with
// other parts and another Name, registered with Register:
//
//	p := protocols.Readonly(protocols.ReadonlyParts{Read: ...})
//	p.Name = "readonly-stale"
//	err := protocols.Register(p) // an error for a name already taken
func Readonly(parts ReadonlyParts) *Protocol {
	return withParts(parts, Define(&Protocol{
		Name:        "readonly",
		Doc:         "Debezium read-only capture: brackets are executed-GTID-set samples, membership by label, window-discard",
		Cite:        "§7.4, Thm 7, Prop 4",
		Defaults:    Config{Keys: 3, Values: 2, Events: 4, Chunks: 2, Txn: 2},
		Limits:      Limits{Keys: model.MaxKeys, Values: 7, Events: 24, Chunks: model.MaxUnits, Txn: MaxTxn, WholeServer: true},
		Disciplines: map[string]string{"": WindowDiscard},
		Faults: []Fault{SharedReadInstant, InteriorExecutedSet, SplitTransaction, NoDiscard,
			ReleaseBeforeLastRow, CopyDropped, ConsumerRunsDuringRead, OutsideEventForwarded, OffsetOnCapturedRows},
	}, parts.model))
}

func init() { mustRegister(Readonly(ReadonlyParts{})) }

// Init: the base store (every store with initial=any), the empty log and a
// consumer that has consumed nothing, its start still open.
func (m *readonly) Init() []readonlyState {
	var out []readonlyState
	for _, c := range InitialCaptures(&m.cfg) {
		out = append(out, readonlyState{Cap: c})
	}
	return out
}

// Actions: first the capture's next step, then the source, then the
// consumer's. A read is one action per boundary it may reflect. The consumer
// releases a finished window before it takes another event. (The order only
// breaks ties between shortest traces: with the capture's steps first, a
// counterexample reads as early and commits as late as its shape allows, so
// Proposition 1's shortest instance reads a before e1 commits, as the paper
// tells it.)
func (m *readonly) Actions(s *readonlyState, buf []readonlyAction) []readonlyAction {
	switch s.Phase {
	case readonlyIdle:
		if int(s.Cap.Plan.N) < m.cfg.Chunks {
			buf = append(buf, readonlyAction{Kind: readonlySampleLow})
		}
	case readonlyReading:
		if u := &s.Cap.Plan.Units[s.Cap.Plan.N-1]; u.Read != u.Domain {
			l := &s.Cap.Log
			for c := model.Coord(0); c <= l.Len(); c++ {
				if m.mayRead(l, u.Lo, c) {
					buf = append(buf, readonlyAction{Kind: readonlyReadKey, At: c})
				}
			}
		} else {
			buf = append(buf, readonlyAction{Kind: readonlySampleHigh})
		}
	}
	if s.Cap.Partial {
		// Only the rest of the exposed transaction may commit now.
		buf = append(buf, readonlyAction{Kind: readonlyCommit, Txn: s.Pending})
	} else {
		for t := range Commits(&m.cfg, &s.Cap.Log) {
			buf = append(buf, readonlyAction{Kind: readonlyCommit, Txn: t})
		}
	}
	switch {
	case m.windowDone(s):
		buf = append(buf, readonlyAction{Kind: readonlyRelease})
	case m.consumerMay(s):
		buf = append(buf, readonlyAction{Kind: readonlyConsume})
		if MayStartLater(&s.Cap, EarliestLow(&s.Cap.Plan)) {
			buf = append(buf, readonlyAction{Kind: readonlyStartLater})
		}
	}
	return buf
}

// consumerMay: there is a next event and, while the chunk is being read, it
// is not in the window, so no window event is met before the buffer is
// complete (A-discard). Under ConsumeDuringRead the consumer does not wait.
func (m *readonly) consumerMay(s *readonlyState) bool {
	p := s.Cap.Pos + 1
	if p > s.Cap.Log.Len() {
		return false
	}
	return s.Phase != readonlyReading || m.parts.ConsumeDuringRead || !m.inWindow(s, p)
}

// Next makes the successor in t, a copy of s on entry, which each step below
// changes in place.
func (m *readonly) Next(s *readonlyState, a readonlyAction, t *readonlyState) bool {
	switch a.Kind {
	case readonlyCommit:
		m.commit(t, a.Txn)
	case readonlySampleLow:
		m.sampleLow(t)
	case readonlyReadKey:
		m.readKey(t, a.At)
	case readonlySampleHigh:
		m.sampleHigh(t)
	case readonlyConsume:
		m.consume(t)
	case readonlyRelease:
		m.release(t)
	case readonlyStartLater:
		StartLater(&t.Cap)
	default:
		return false
	}
	return true
}

// commit appends one whole transaction (S-LOG). Under split-transaction a
// multi-row transaction is exposed in two pieces: its first row, then the
// rest under the same label.
func (m *readonly) commit(s *readonlyState, t Txn) {
	l := &s.Cap.Log
	switch {
	case s.Cap.Partial:
		label := l.Txns()
		for _, e := range t.Events() {
			e.Txn = label
			l.Ev[l.N] = e
			l.N++
		}
		s.Cap.Partial, s.Pending = false, Txn{}
	case m.cfg.Fault == SplitTransaction && t.N >= 2:
		l.Commit(t.Ev[0])
		s.Pending.N = t.N - 1
		copy(s.Pending.Ev[:], t.Ev[1:t.N])
		s.Cap.Partial = true
	default:
		l.Commit(t.Events()...)
	}
}

// domain is chunk i's key range [i*K/C, (i+1)*K/C).
func (m *readonly) domain(i int) model.KeySet { return ChunkKeys(i, m.cfg.Keys, m.cfg.Chunks) }

// sampleLow installs the low sample before the chunk's read (A-discard) and
// records the unit; its lo is the log length when sampled.
func (m *readonly) sampleLow(s *readonlyState) {
	i := int(s.Cap.Plan.N)
	s.Cap.Plan.Add(model.Unit{Domain: m.domain(i), Lo: s.Cap.Log.Len()})
	s.LowAt[i] = m.sample(&s.Cap.Log)
	s.Phase = readonlyReading
}

// readKey reads the chunk's next key as it stood at boundary at, lo ⊑ at ⊑
// now (A-read); a present row goes into the buffer.
func (m *readonly) readKey(s *readonlyState, at model.Coord) {
	u := &s.Cap.Plan.Units[s.Cap.Plan.N-1]
	k := nextKey(u)
	v := s.Cap.Log.Sigma(at, k)
	u.Refresh[k], u.Read = v, u.Read.With(k)
	s.Cap.ReadAt[k] = at
	if v != model.Absent {
		s.Buf = s.Buf.With(k)
	}
}

// sampleHigh takes the high sample once the buffer is complete (A-discard);
// the unit's hi is the log length when sampled.
func (m *readonly) sampleHigh(s *readonlyState) {
	i := int(s.Cap.Plan.N) - 1
	s.Cap.Plan.Units[i].Hi = s.Cap.Log.Len()
	s.HighAt[i] = m.sample(&s.Cap.Log)
	s.Phase = readonlyHighSampled
}

// inWindow is the consumer's test for the event at p, Member on the samples:
// as published, its label is not in the low set and, once the high set
// exists, is in it (Theorem 7).
func (m *readonly) inWindow(s *readonlyState, p model.Coord) bool {
	if s.Phase == readonlyIdle {
		return false
	}
	i := int(s.Cap.Plan.N) - 1
	l := &s.Cap.Log
	high := ^model.TxnSet(0) // not sampled yet: every label may still join the window
	if s.Phase == readonlyHighSampled {
		high = l.Executed(s.HighAt[i])
	}
	return m.member(l.At(p).Txn, l.Executed(s.LowAt[i]), high)
}

// consume processes the next event: in the window it discards a buffered row
// of its key; it is emitted at its own place either way.
func (m *readonly) consume(s *readonlyState) {
	p := s.Cap.Pos + 1
	e := s.Cap.Log.At(p)
	s.Cap.Pos = p
	if !captured(&m.cfg, &s.Cap, e.Key) {
		return // another table's row (a whole-server log, §7.7)
	}
	if m.inWindow(s, p) && s.Buf.Has(e.Key) && m.cfg.Fault != NoDiscard && m.parts.Discard.discards(&s.Cap, int(s.Cap.Plan.N)-1, p) {
		s.Buf = s.Buf.Without(e.Key) // the log wins: the buffered row is stale
	}
	s.Cap.Emit(e.Key, e.Img, p)
}

// processed is the position the capture knows it has processed: the
// consumer's. Under offset-on-captured-rows it is the last captured row's
// (or s0): an event outside the scope, skipped, does not move it (§7.7),
// until a heartbeat does once the consumer is idle at the log end.
func (m *readonly) processed(c *model.Capture) model.Coord {
	if m.cfg.Fault != OffsetOnCapturedRows || c.Pos == c.Log.Len() {
		return c.Pos
	}
	p := c.Pos
	for p > c.Start && !c.Plan.Scope().Has(c.Log.At(p).Key) {
		p--
	}
	return p
}

// windowDone is the release condition of A-discard: the high sample exists
// and every event whose label is in the high set has been processed, so
// every row event of the window's last transaction has (and, when the window
// is empty, so has everything before it: the close follows every consumed
// event at or before hi, Def. 6.2). The test uses labels only.
func (m *readonly) windowDone(s *readonlyState) bool {
	if s.Phase != readonlyHighSampled {
		return false
	}
	i := int(s.Cap.Plan.N) - 1
	l := &s.Cap.Log
	low, high := l.Executed(s.LowAt[i]), l.Executed(s.HighAt[i])
	done := true
	for p := m.processed(&s.Cap) + 1; p <= l.Len(); p++ {
		if high.Has(l.At(p).Txn) {
			done = false
			break
		}
	}
	if m.cfg.Fault == ReleaseBeforeLastRow && !done {
		// Released as soon as the window's last transaction has begun to be
		// processed: one of its rows, not all of them.
		var last uint8
		for p := model.Coord(1); p <= l.Len(); p++ {
			if l.InSampledWindow(p, low, high) {
				last = l.At(p).Txn
			}
		}
		return last != 0 && l.Executed(s.Cap.Pos).Has(last)
	}
	return done
}

// release emits the survivors, tagged with the unit's high edge, and closes
// the chunk. Under copy-dropped nothing is emitted.
func (m *readonly) release(s *readonlyState) {
	i := int(s.Cap.Plan.N) - 1
	u := &s.Cap.Plan.Units[i]
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if s.Buf.Has(k) && m.cfg.Fault != CopyDropped {
			s.Cap.EmitCopy(k, u.Refresh[k], u.Hi)
		}
	}
	s.Buf = 0
	s.Cap.Closed |= 1 << i
	s.Phase = readonlyIdle
}

// Done: every chunk released, the consumer at the end of the log, the source
// done committing.
func (m *readonly) Done(s *readonlyState) bool {
	return s.Cap.AllClosed(m.cfg.Chunks) && s.Cap.Pos == s.Cap.Log.Len() &&
		DataEvents(&s.Cap.Log) == m.cfg.Events && !s.Cap.Partial
}

// membership checks Theorem 7 for every chunk whose high has been sampled:
// the sampled sets decide exactly the window between the coordinates the
// samples map to. Those are the unit's Lo and Hi (the log lengths when
// sampled) unless a sample was mapped inside a transaction.
func (m *readonly) membership(s *readonlyState) string {
	for i := 0; i < int(s.Cap.Plan.N); i++ {
		if i == int(s.Cap.Plan.N)-1 && s.Phase != readonlyHighSampled && !s.Cap.UnitClosed(i) {
			continue
		}
		l := &s.Cap.Log
		if r := invariants.CheckMembership(&s.Cap, l.Executed(s.LowAt[i]), l.Executed(s.HighAt[i]), s.LowAt[i], s.HighAt[i]); r != "" {
			return fmt.Sprintf("chunk %d: %s", i+1, r)
		}
	}
	return ""
}

// Properties: the shared invariants of a window-discard capture with
// executed-set brackets and per-key reads, then what must be reachable.
// Under shared-read-instant the claim of one read point per chunk is added.
func (m *readonly) Properties() []explore.Property[readonlyState, readonlyAction] {
	units := m.cfg.Chunks
	type P = explore.Property[readonlyState, readonlyAction]
	sometimes := func(name, cite string, check func(s *readonlyState) string) P {
		return P{Name: name, Cite: cite, Kind: explore.Sometimes, Check: check}
	}
	ps := []P{
		invariants.Prop[readonlyState, readonlyAction](invariants.FinalReplay, func(s *readonlyState) string {
			return invariants.CheckFinalReplay(&s.Cap, units)
		}),
		invariants.StepProp[readonlyState, readonlyAction](invariants.NoDuplicate, func(s *readonlyState, _ readonlyAction, t *readonlyState) string {
			return invariants.CheckNoDuplicate(&s.Cap, &t.Cap)
		}),
		invariants.Prop[readonlyState, readonlyAction](invariants.FrontierReplay, func(s *readonlyState) string {
			return invariants.CheckFrontierReplay(&s.Cap, units)
		}),
		invariants.Prop[readonlyState, readonlyAction](invariants.ClosedUnitCut, func(s *readonlyState) string {
			return invariants.CheckClosedUnitCut(&s.Cap)
		}),
		invariants.StepProp[readonlyState, readonlyAction](invariants.Monotonic, func(s *readonlyState, _ readonlyAction, t *readonlyState) string {
			return invariants.CheckMonotone(&s.Cap, &t.Cap)
		}),
		invariants.StepProp[readonlyState, readonlyAction](invariants.ExactTags, func(s *readonlyState, _ readonlyAction, t *readonlyState) string {
			return invariants.CheckExactTags(&s.Cap, &t.Cap)
		}),
		invariants.Prop[readonlyState, readonlyAction](invariants.Membership, func(s *readonlyState) string {
			return m.membership(s)
		}),
		invariants.Prop[readonlyState, readonlyAction](invariants.CommittedOnly, func(s *readonlyState) string {
			return invariants.CheckCommittedOnly(&s.Cap)
		}),
		invariants.Prop[readonlyState, readonlyAction](invariants.LatestHigh, func(s *readonlyState) string {
			return invariants.CheckTrajectory(&s.Cap, units, s.Cap.Plan.LatestHigh())
		}),
		invariants.Prop[readonlyState, readonlyAction](invariants.Contract, func(s *readonlyState) string {
			return invariants.CheckContract(&s.Cap, units)
		}),
	}
	if m.cfg.Fault == SharedReadInstant {
		ps = append(ps, invariants.Prop[readonlyState, readonlyAction](invariants.SingleReadPoint, func(s *readonlyState) string {
			return invariants.CheckSingleReadPoint(&s.Cap)
		}))
	}
	ps = append(ps, EmissionProps[readonlyState, readonlyAction](&m.cfg, invariants.WindowDiscard, Chunks[readonlyState](&m.cfg),
		func(s *readonlyState) *model.Capture { return &s.Cap })...)
	if m.cfg.WholeServer {
		ps = append(ps, sometimes("outside-event-in-window", "§7.7", func(s *readonlyState) string { return OutsideInWindow(&s.Cap) }))
	}
	return append(ps,
		sometimes("buffered-row-discarded", "Def. 6.2, A-discard", readonlyDiscarded),
		sometimes("survivor-emitted", "Def. 6.2, Lemma 6.1", func(s *readonlyState) string { return survivorEmitted(&s.Cap) }),
		sometimes("copy-decides-frontier", "Thm 1, S-OBS", func(s *readonlyState) string { return CopyDecides(&s.Cap, units, false) }),
		sometimes("reads-at-different-positions", "Prop 1, O2", func(s *readonlyState) string { return readsApart(&s.Cap) }),
		sometimes("stale-read", "§4.3, §7.4 A-read, O2", func(s *readonlyState) string { return StaleRead(&s.Cap) }),
		sometimes("multi-row-transaction-in-window", "Thm 7, A-discard", func(s *readonlyState) string { return multiRowInWindow(&s.Cap) }),
		sometimes("delete-races-read", "§1.2, Thm 2", func(s *readonlyState) string { return deleteRacesRead(&s.Cap) }),
		sometimes("copy-shares-event-tag", "§9, Def. 6.2", func(s *readonlyState) string { return CopySharesEventTag(&s.Cap) }),
	)
}
