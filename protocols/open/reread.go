package open

// Re-read normalization (§6.5, open; S-IMG, §3.2): "Under a delta log,
// events carry changed columns rather than full images, S-IMG fails, and the
// core fold is not even well typed. The industrial repair is to re-select
// colliding keys under a fresh bracket and emit the read images. [...] That
// obligation has a termination half, since re-reads race new deltas and the
// re-read procedure must be shown to terminate."
//
// Encoding. A row has two columns a and b, each 0 or 1; the present value v
// in 1..V (V ≤ 4) is the row (a, b) = ((v-1)&1, (v-1)>>1), ⊥ is no row. The
// log holds full images, so the model knows σ; the capture sees only what a
// delta log carries (rrSeen): an insert or a delete whole (the new row, or
// the key alone), an update only as the columns it changes with their new
// values. Below V = 4 every column a delta omits is 0 (no row has both
// set), so the delta plus zeros is the row; V = 4 gives a row that keeps a 1
// in the column its update leaves out.
//
// The capture turns a delta into an image only by folding it onto the image
// it last emitted for the key (its own output, which it keeps), and only if
// that image is the key's current one: the key is known. A key becomes known
// from a full event, or when a clean bracket settles it. An unknown key's
// delta cannot be emitted — the ordinary fold has no base — and is withheld.
//
// The copy is window-discard (§6.2) over recorded brackets. Bracket 1 covers
// the whole scope: record lo, read every key at one position (rows come back
// whole from the table), record hi; the consumer, which starts at s0 ⊑ lo and
// stops at lo until the read is in, meets the window's events with the read
// buffered: an in-window event discards its key's buffered row, and an
// in-window delta of an unknown key makes the key collide. At hi the
// survivors are emitted and every key but the colliding ones is settled. The
// colliding keys are re-selected under a fresh bracket (lo' = the log's end
// then), a new unit to which they move (the plan is re-split, §3.1), and the
// loop repeats until a bracket has no collision.
//
// Termination. Every extra bracket needs a delta in the window before it, so
// under a source that stops the loop ends within E+1 brackets; a source that
// keeps updating a colliding key inside each fresh window keeps it going
// forever. The bound on brackets is the run's chunks C, the units it may use
// (cutcheck asks chunks ≤ keys): a collision when all C are used is a
// violation of reread-terminates, reported with the racing trace. (The
// capture is then stuck, so the run would also end in a deadlock; but a
// deadlock shows only once the source has stopped and the consumer has
// caught up, and does not say why — the property names the obligation and
// the delta that raced the last bracket.) It holds whenever
// C > E, and fails as soon as C ≤ E and the racing deltas fit in the
// bounds: a row present before s0 (the base store, or a row the consumer
// never saw inserted) and an update of it inside each bracket.
//
// Modes: fresh (the repair); stale-bracket (the colliding keys are re-read
// but the old bracket is kept: the re-read, taken now, is treated as read
// inside the old window, whose deltas are folded onto it — the wrong base,
// since it already reflects later events); apply-deltas (no re-read: an
// unknown key's delta is taken for a full image, its omitted column at 0).

import (
	"fmt"
	"strings"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

// The re-read modes.
const (
	RereadFresh        = "fresh"
	RereadStaleBracket = "stale-bracket"
	RereadApplyDeltas  = "apply-deltas"
)

// rrSeen is what the delta log carries for one event.
type rrSeen struct {
	Full       bool        // an insert or a delete: the whole post-image
	Img        model.Value // the post-image, when Full
	Mask, Cols uint8       // an update: the columns it changes (bit 0 = a, bit 1 = b) and their new values
}

// rrSee is the capture's view of the event at p: the model derives the delta
// from the full images it knows.
func rrSee(l *model.Log, p model.Coord) rrSeen {
	e := l.At(p)
	pre := l.Sigma(p-1, e.Key)
	if pre == model.Absent || e.Img == model.Absent {
		return rrSeen{Full: true, Img: e.Img}
	}
	x := uint8(pre-1) ^ uint8(e.Img-1)
	return rrSeen{Mask: x, Cols: uint8(e.Img-1) & x}
}

// onto folds the event onto a base image (well typed only for a present base
// when the event is a delta).
func (d rrSeen) onto(base model.Value) model.Value {
	if d.Full {
		return d.Img
	}
	return model.Value((uint8(base-1)&^d.Mask | d.Cols) + 1)
}

func (d rrSeen) String() string {
	if d.Full && d.Img == model.Absent {
		return "delete"
	}
	if d.Full {
		return "insert " + rrRow(d.Img)
	}
	var cs []string
	for i, name := range []string{"a", "b"} {
		if d.Mask&(1<<i) != 0 {
			cs = append(cs, fmt.Sprintf("%s:=%d", name, d.Cols>>i&1))
		}
	}
	return "delta {" + strings.Join(cs, " ") + "}"
}

// rrRow renders an image with its columns: "3(a0 b1)" or "⊥".
func rrRow(v model.Value) string {
	if v == model.Absent {
		return "⊥"
	}
	return fmt.Sprintf("%d(a%d b%d)", v, (v-1)&1, (v-1)>>1&1)
}

// rereadPhase is where the current bracket stands.
type rereadPhase uint8

const (
	rereadIdle  rereadPhase = iota // no bracket yet
	rereadLow                      // lo recorded: the read is next; the consumer may run up to lo
	rereadRead                     // read buffered: the window is open, hi not yet recorded
	rereadHigh                     // hi recorded: the close waits for the consumer at hi
	rereadStale                    // stale-bracket: closed but for the colliding keys, whose re-read is next
	rereadDone                     // every key settled
	rereadStuck                    // a collision with no bracket left: the re-reads did not finish
)

var rereadPhaseNames = [...]string{"idle", "low recorded", "window open", "high recorded", "re-read pending (old bracket)", "done", "stuck"}

// rereadState is the shared capture and the loop's control state.
type rereadState struct {
	Cap     model.Capture
	Phase   rereadPhase
	Buf     model.KeySet // buffered rows of the open bracket (values in the unit's Refresh)
	Known   model.KeySet // keys whose current image is the one the capture last emitted
	Collide model.KeySet // keys of the open bracket hit by a delta while unknown
}

// rereadKind is the kind of a step.
type rereadKind uint8

const (
	rereadCommit     rereadKind = iota // the source commits a transaction (§2.1)
	rereadOpen                         // record bracket 1's low edge over the whole scope
	rereadReadKeys                     // read the bracket's keys at the log's end, full rows
	rereadRecordHigh                   // record the bracket's high edge
	rereadConsume                      // the consumer processes the next position
	rereadClose                        // at hi: emit survivors, settle, re-select colliding keys
	rereadStaleRead                    // stale-bracket: re-read the colliding keys under the old bracket
	rereadStartLater                   // the consumer's start s0 moves one position on (S-OBS)
)

var rereadActionNames = []string{"commit", "open", "read", "record-high", "consume", "close", "stale-reread", "start-later"}

// rereadAction is one step; Txn is set for commits.
type rereadAction struct {
	Kind rereadKind
	Txn  protocols.Txn
}

type reread struct {
	cfg   protocols.Config
	parts RereadParts
}

func newReread(cfg protocols.Config) explore.Model[rereadState, rereadAction] {
	return &reread{cfg, RereadParts{}.withMode(cfg.Mode)}
}

// RereadParts are the decision points of re-read normalization; a zero
// part is the run's mode's choice (fresh by default).
type RereadParts struct {
	// KeepBracket: the colliding keys are re-read under the old bracket,
	// not a fresh one (the stale-bracket mode).
	KeepBracket bool
	// ApplyUnknownDeltas: an unknown key's delta is taken for a full
	// image, its omitted column at 0, with no re-read (the apply-deltas
	// mode).
	ApplyUnknownDeltas bool
}

// withMode sets the parts the run's mode chooses.
func (p RereadParts) withMode(mode string) RereadParts {
	p.KeepBracket = p.KeepBracket || mode == RereadStaleBracket
	p.ApplyUnknownDeltas = p.ApplyUnknownDeltas || mode == RereadApplyDeltas
	return p
}

func init() {
	if err := protocols.Register(Reread(RereadParts{})); err != nil {
		panic(err)
	}
}

// Reread returns re-read normalization built from parts, registered as
// "reread" with the zero RereadParts.
func Reread(parts RereadParts) *protocols.Protocol {
	return protocols.Define(&protocols.Protocol{
		Name:     "reread",
		Doc:      "re-read normalization: a delta log; keys hit by a delta in the window are re-read under fresh brackets (open)",
		Cite:     "§6.5 (open); S-IMG §3.2",
		Defaults: protocols.Config{Keys: 3, Values: 4, Events: 3, Chunks: 3, Txn: 1, Mode: RereadFresh},
		Limits: protocols.Limits{Keys: model.MaxKeys, Values: 4, Events: 24, Chunks: model.MaxUnits, Txn: protocols.MaxTxn, WholeServer: true,
			Modes: []string{RereadFresh, RereadStaleBracket, RereadApplyDeltas}},
		Faults: []protocols.Fault{protocols.CopyDropped},
	}, func(cfg protocols.Config) explore.Model[rereadState, rereadAction] {
		return &reread{cfg, parts.withMode(cfg.Mode)}
	})
}

func (m *reread) Init() []rereadState {
	var out []rereadState
	for _, c := range protocols.InitialCaptures(&m.cfg) {
		out = append(out, rereadState{Cap: c})
	}
	return out
}

// Actions: the source, then the loop's next step, then the consumer.
func (m *reread) Actions(s *rereadState, buf []rereadAction) []rereadAction {
	for t := range protocols.Commits(&m.cfg, &s.Cap.Log) {
		buf = append(buf, rereadAction{Kind: rereadCommit, Txn: t})
	}
	c := &s.Cap
	switch s.Phase {
	case rereadIdle:
		buf = append(buf, rereadAction{Kind: rereadOpen})
	case rereadLow:
		buf = append(buf, rereadAction{Kind: rereadReadKeys})
	case rereadRead:
		buf = append(buf, rereadAction{Kind: rereadRecordHigh})
	case rereadHigh:
		if c.Pos == m.open(s).Hi {
			buf = append(buf, rereadAction{Kind: rereadClose})
		}
	case rereadStale:
		buf = append(buf, rereadAction{Kind: rereadStaleRead})
	}
	if m.consumerMay(s) {
		buf = append(buf, rereadAction{Kind: rereadConsume})
		if protocols.MayStartLater(c, protocols.EarliestLow(&c.Plan)) {
			buf = append(buf, rereadAction{Kind: rereadStartLater})
		}
	}
	return buf
}

// open is the latest bracket's unit.
func (m *reread) open(s *rereadState) *model.Unit { return &s.Cap.Plan.Units[s.Cap.Plan.N-1] }

// consumerMay: a next position exists, not beyond lo while the read is
// pending, nor beyond hi before the close.
func (m *reread) consumerMay(s *rereadState) bool {
	p := s.Cap.Pos + 1
	switch {
	case p > s.Cap.Log.Len():
		return false
	case s.Phase == rereadLow:
		return p <= m.open(s).Lo
	case s.Phase == rereadHigh:
		return p <= m.open(s).Hi
	}
	return true
}

func (m *reread) Next(s *rereadState, a rereadAction, t *rereadState) bool {
	c := &t.Cap
	switch a.Kind {
	case rereadCommit:
		c.Log.Commit(a.Txn.Events()...)
	case rereadOpen:
		c.Plan.Add(model.Unit{Domain: c.Plan.Scope(), Lo: c.Log.Len()})
		t.Phase = rereadLow
	case rereadReadKeys:
		u, at := m.open(t), c.Log.Len()
		for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
			if u.Domain.Has(k) {
				u.Refresh[k], u.Read, c.ReadAt[k] = c.Log.Sigma(at, k), u.Read.With(k), at
				if u.Refresh[k] != model.Absent {
					t.Buf = t.Buf.With(k)
				}
			}
		}
		t.Phase = rereadRead
	case rereadRecordHigh:
		m.open(t).Hi = c.Log.Len()
		t.Phase = rereadHigh
	case rereadConsume:
		m.consume(t)
	case rereadClose:
		m.close(t)
	case rereadStaleRead:
		m.staleReread(t)
	case rereadStartLater:
		protocols.StartLater(c)
	default:
		return false
	}
	return true
}

// consume processes the next position. A full event is emitted as it is; a
// delta of a known key is folded onto the key's emitted image and emitted;
// a delta of an unknown key is withheld and, inside the open window, makes
// the key collide (apply-deltas: emitted as if it were the whole row). An
// in-window event discards its key's buffered row (the log wins, §6.2).
func (m *reread) consume(s *rereadState) {
	c := &s.Cap
	p := c.Pos + 1
	c.Pos = p
	e := c.Log.At(p)
	if !c.Plan.Scope().Has(e.Key) {
		return // a marker, or another table's row (a whole-server log, §7.7)
	}
	k, d := e.Key, rrSee(&c.Log, p)
	inWindow := (s.Phase == rereadRead || s.Phase == rereadHigh) && p > m.open(s).Lo && m.open(s).Domain.Has(k)
	if inWindow {
		s.Buf = s.Buf.Without(k)
	}
	switch {
	case d.Full:
		c.Emit(k, d.Img, p)
	case s.Known.Has(k):
		c.Emit(k, d.onto(c.Out.Val[k]), p)
	case m.parts.ApplyUnknownDeltas:
		c.Emit(k, d.onto(1), p) // the omitted column read as 0: row 1 is (a0 b0)
	default:
		if inWindow {
			s.Collide = s.Collide.With(k)
		}
		return
	}
	s.Known = s.Known.With(k)
}

// close ends the open bracket at hi: its survivors are emitted, tagged hi,
// and every key but the colliding unknown ones is settled. Those move to a
// fresh bracket, if one is left (fresh), or wait for a re-read under this
// one (stale-bracket).
func (m *reread) close(s *rereadState) {
	c := &s.Cap
	i := int(c.Plan.N) - 1
	u := &c.Plan.Units[i]
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if s.Buf.Has(k) && m.cfg.Fault != protocols.CopyDropped {
			c.EmitCopy(k, u.Refresh[k], u.Hi)
		}
	}
	need := s.Collide &^ s.Known
	s.Known |= u.Domain &^ need
	s.Buf, s.Collide = 0, 0
	switch {
	case need == 0:
		c.Closed |= 1 << i
		s.Phase = rereadDone
	case m.parts.KeepBracket:
		s.Collide = need // the keys the re-read under this bracket will supply
		s.Phase = rereadStale
	case int(c.Plan.N) < m.cfg.Chunks:
		u.Domain &^= need
		u.Read &^= need
		c.Closed |= 1 << i
		c.Plan.Add(model.Unit{Domain: need, Lo: c.Log.Len()})
		s.Phase = rereadLow
	default:
		s.Collide = need
		s.Phase = rereadStuck
	}
}

// staleReread (stale-bracket): read the colliding keys now, at the log's end,
// record the read as this unit's refresh, fold the old window's events onto
// it as if it had been read inside the window, and emit the result tagged hi.
func (m *reread) staleReread(s *rereadState) {
	c := &s.Cap
	i := int(c.Plan.N) - 1
	u := &c.Plan.Units[i]
	at := c.Log.Len()
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if s.Collide.Has(k) {
			u.Refresh[k], c.ReadAt[k] = c.Log.Sigma(at, k), at
			c.EmitCopy(k, m.staleImage(&c.Log, u, k), u.Hi)
		}
	}
	s.Known |= s.Collide
	s.Collide = 0
	c.Closed |= 1 << i
	s.Phase = rereadDone
}

// staleImage is the re-read of k with the events of (lo, hi] folded onto it.
func (m *reread) staleImage(l *model.Log, u *model.Unit, k model.Key) model.Value {
	v := u.Refresh[k]
	for p := u.Lo + 1; p <= u.Hi; p++ {
		if l.At(p).Key == k {
			if d := rrSee(l, p); d.Full || v != model.Absent {
				v = d.onto(v)
			}
		}
	}
	return v
}

func (m *reread) Done(s *rereadState) bool {
	c := &s.Cap
	return s.Phase == rereadDone && c.Pos == c.Log.Len() && protocols.DataEvents(&c.Log) == m.cfg.Events
}

// units is the number of units the invariants judge the run by: all of them
// once every key has settled, and otherwise more than there can be, so that
// "every unit closed" is false while brackets may still be added.
func (m *reread) units(s *rereadState) int {
	if s.Phase == rereadDone {
		return int(s.Cap.Plan.N)
	}
	return model.MaxUnits + 1
}

// Grade counts the steps behind s (explore.Graded): each commits a
// transaction, moves the consumer one position on, or takes the bracket loop
// one step on — bracket 1's open, then each bracket's read, high edge and
// close (the close that re-selects colliding keys opens the next bracket),
// and under stale-bracket the re-read after a close that left collisions.
func (m *reread) Grade(s *rereadState) uint64 {
	c := &s.Cap
	g, n := uint64(c.Log.Txns())+uint64(c.Pos), 3*uint64(c.Plan.N)
	switch s.Phase {
	case rereadLow:
		g += n - 2
	case rereadRead:
		g += n - 1
	case rereadHigh:
		g += n
	case rereadStale, rereadStuck:
		g += n + 1
	case rereadDone:
		g += n + 1
		if m.parts.KeepBracket && m.collided(s) {
			g++ // the re-read
		}
	}
	return g
}

// collided reports whether the close of bracket 1 (stale-bracket keeps no
// other) left a colliding key. It is a function of the log, s0 and the
// bracket: a key collides when the window (lo, hi] holds a delta of it and
// no full event of it lies in (s0, hi], since the consumer meets every
// position of (s0, hi] before the close and a full event alone makes a key
// known.
func (m *reread) collided(s *rereadState) bool {
	c := &s.Cap
	u := &c.Plan.Units[0]
	var full, delta model.KeySet
	for p := c.Start + 1; p <= u.Hi; p++ {
		k := c.Log.At(p).Key
		if k == model.NoKey {
			continue
		}
		if rrSee(&c.Log, p).Full {
			full = full.With(k)
		} else if p > u.Lo {
			delta = delta.With(k)
		}
	}
	return delta&^full&u.Domain != 0
}

func (m *reread) Encode(s *rereadState, buf []byte) []byte {
	buf = s.Cap.AppendTo(buf)
	return append(buf, byte(s.Phase), byte(s.Buf), byte(s.Buf>>8), byte(s.Known), byte(s.Known>>8), byte(s.Collide), byte(s.Collide>>8))
}

func (m *reread) Decode(b []byte, s *rereadState) error {
	r, ok := s.Cap.DecodeFrom(b)
	if !ok || len(r) != 7 {
		return fmt.Errorf("reread: bad state encoding (%d bytes)", len(b))
	}
	set := func(i int) model.KeySet { return model.KeySet(r[i]) | model.KeySet(r[i+1])<<8 }
	s.Phase, s.Buf, s.Known, s.Collide = rereadPhase(r[0]), set(1), set(3), set(5)
	return nil
}

func (m *reread) ActionNames() []string { return rereadActionNames }

func (m *reread) ActionKind(a rereadAction) int { return int(a.Kind) }

func (m *reread) Describe(s *rereadState, a rereadAction) string {
	c := &s.Cap
	keys := func(set model.KeySet) string { return protocols.KeySetString(set, m.cfg.Keys) }
	pos := c.Log.Offset // positions as the log names them
	switch a.Kind {
	case rereadCommit:
		return protocols.DescribeCommit(&c.Log, a.Txn)
	case rereadOpen:
		return fmt.Sprintf("bracket 1 over %s: record lo = %d; the consumer may run up to it", keys(c.Plan.Scope()), pos(c.Log.Len()))
	case rereadReadKeys:
		u, at := m.open(s), c.Log.Len()
		var rs []string
		for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
			if u.Domain.Has(k) {
				rs = append(rs, fmt.Sprintf("%v=%s", k, rrRow(c.Log.Sigma(at, k))))
			}
		}
		return fmt.Sprintf("bracket %d reads %s at position %d: %s", c.Plan.N, keys(u.Domain), pos(at), strings.Join(rs, " "))
	case rereadRecordHigh:
		return fmt.Sprintf("bracket %d records hi = %d", c.Plan.N, pos(c.Log.Len()))
	case rereadConsume:
		return m.describeConsume(s)
	case rereadClose:
		t := *s
		m.Next(s, a, &t)
		u := m.open(s)
		d := fmt.Sprintf("close bracket %d (%d, %d]: emit survivors %s", c.Plan.N, pos(u.Lo), pos(u.Hi), protocols.DescribeEmitted(c, &t.Cap, m.cfg.Keys))
		switch need := s.Collide &^ s.Known; t.Phase {
		case rereadDone:
			return d + "; no collision: every key settled"
		case rereadLow:
			return d + fmt.Sprintf("; %s collided: re-select under fresh bracket %d, lo = %d", keys(need), t.Cap.Plan.N, pos(c.Log.Len()))
		case rereadStale:
			return d + fmt.Sprintf("; %s collided: re-read under the same bracket", keys(need))
		default:
			return d + fmt.Sprintf("; %s collided again and all %d brackets are used: the re-reads have not finished", keys(need), m.cfg.Chunks)
		}
	case rereadStaleRead:
		t := *s
		m.Next(s, a, &t)
		return fmt.Sprintf("re-read %s at position %d as if inside (%d, %d], folding that window's events onto it: emit %s",
			keys(s.Collide), pos(c.Log.Len()), pos(m.open(s).Lo), pos(m.open(s).Hi), protocols.DescribeEmitted(c, &t.Cap, m.cfg.Keys))
	case rereadStartLater:
		return protocols.DescribeStartLater(c)
	}
	return "?"
}

// describeConsume: "consume position 2: k0 delta {a:=1}, k0 unknown: withheld;
// in the window: collides, buffered row discarded".
func (m *reread) describeConsume(s *rereadState) string {
	c := &s.Cap
	p := c.Pos + 1
	e := c.Log.At(p)
	if e.Key == model.NoKey {
		return fmt.Sprintf("consume position %d", c.Log.Offset(p))
	}
	if !c.Plan.Scope().Has(e.Key) {
		return fmt.Sprintf("consume position %d: %v, outside the scope, skipped", c.Log.Offset(p), e.Key)
	}
	t := *s
	m.Next(s, rereadAction{Kind: rereadConsume}, &t)
	d := fmt.Sprintf("consume position %d: %v %v", c.Log.Offset(p), e.Key, rrSee(&c.Log, p))
	if t.Cap.Out != c.Out || t.Cap.Dup != c.Dup {
		d += ", emits " + protocols.DescribeEmitted(c, &t.Cap, m.cfg.Keys)
	} else {
		d += fmt.Sprintf(", %v unknown: withheld", e.Key)
	}
	if t.Collide.Has(e.Key) && !s.Collide.Has(e.Key) {
		d += "; in the window: it collides"
	}
	if s.Buf.Has(e.Key) && !t.Buf.Has(e.Key) {
		d += "; buffered row discarded"
	}
	return d
}

func (m *reread) Fields(s *rereadState) []explore.Field {
	keys := func(set model.KeySet) string { return protocols.KeySetString(set, m.cfg.Keys) }
	return append(protocols.CaptureFields(&s.Cap, m.cfg.Keys),
		explore.Field{Name: "phase", Value: rereadPhaseNames[s.Phase]},
		explore.Field{Name: "buffer", Value: keys(s.Buf)},
		explore.Field{Name: "known", Value: keys(s.Known)},
		explore.Field{Name: "colliding", Value: keys(s.Collide)})
}

func (m *reread) View(s *rereadState) any {
	v := protocols.CaptureView(&s.Cap, m.cfg.Keys)
	keys := func(set model.KeySet) string { return protocols.KeySetString(set, m.cfg.Keys) }
	v.Control = map[string]string{"phase": rereadPhaseNames[s.Phase], "buffer": keys(s.Buf), "known": keys(s.Known), "colliding": keys(s.Collide)}
	return v
}

// The re-read obligation (§6.5): the normalization and its termination half.
var (
	RereadImages = invariants.Invariant{
		Name: "normalized-images", Cite: "§6.5 (open), S-IMG",
		Doc:  "every entry the capture has emitted carries the key's full image at its tag: a delta reaches the sink only as the image it lacked",
		Kind: explore.Always, Class: invariants.Claim,
	}
	RereadTerminates = invariants.Invariant{
		Name: "reread-terminates", Cite: "§6.5 (open)",
		Doc:  "the re-read loop settles every key within the run's brackets (chunks); a collision with none left means the re-reads keep racing new deltas",
		Kind: explore.Always, Class: invariants.Claim,
	}
)

// Properties. Not checked: executed-set-membership (no sampled sets),
// trusted-splice-trajectory and single-read-point (no claim of one shared
// witness: re-read brackets follow each other). no-duplicate-delivery is
// attached (opt-in) and fails when a bracket is a point (lo = hi, nothing
// committed between the edges) and its survivor's row was also consumed at
// lo itself: the window-discard close of a point bracket is a point splice
// (§6.4), equal after replay, not entry for entry.
func (m *reread) Properties() []explore.Property[rereadState, rereadAction] {
	type P = explore.Property[rereadState, rereadAction]
	// Each check reads the state through the pointer it is given, with no
	// copy.
	prop := func(inv invariants.Invariant, check func(s *rereadState) string) P {
		return invariants.Prop[rereadState, rereadAction](inv, check)
	}
	sometimes := func(name, cite string, check func(s *rereadState) string) P {
		return P{Name: name, Cite: cite, Kind: explore.Sometimes, Check: check}
	}
	return append([]P{
		prop(invariants.FinalReplay, func(s *rereadState) string { return invariants.CheckFinalReplay(&s.Cap, m.units(s)) }),
		invariants.StepProp[rereadState, rereadAction](invariants.NoDuplicate, func(s *rereadState, _ rereadAction, t *rereadState) string {
			return invariants.CheckNoDuplicate(&s.Cap, &t.Cap)
		}),
		prop(invariants.FrontierReplay, func(s *rereadState) string { return invariants.CheckFrontierReplay(&s.Cap, m.units(s)) }),
		prop(invariants.ClosedUnitCut, func(s *rereadState) string { return invariants.CheckClosedUnitCut(&s.Cap) }),
		invariants.StepProp[rereadState, rereadAction](invariants.Monotonic, func(s *rereadState, _ rereadAction, t *rereadState) string {
			return invariants.CheckMonotone(&s.Cap, &t.Cap)
		}),
		invariants.StepProp[rereadState, rereadAction](invariants.ExactTags, func(s *rereadState, _ rereadAction, t *rereadState) string {
			return invariants.CheckExactTags(&s.Cap, &t.Cap)
		}),
		prop(invariants.CommittedOnly, func(s *rereadState) string { return invariants.CheckCommittedOnly(&s.Cap) }),
		prop(invariants.LatestHigh, func(s *rereadState) string {
			return invariants.CheckTrajectory(&s.Cap, m.units(s), s.Cap.Plan.LatestHigh())
		}),
		prop(invariants.Contract, func(s *rereadState) string { return invariants.CheckContract(&s.Cap, m.units(s)) }),
		prop(RereadImages, func(s *rereadState) string { return m.checkImages(s) }),
		prop(RereadTerminates, func(s *rereadState) string { return m.checkTerminates(s) }),
		sometimes("reread-clean", "§6.5 (open)", func(s *rereadState) string { return m.rereadClean(s) }),
		sometimes("delta-folded-onto-known-row", "§6.5 (open), S-IMG", func(s *rereadState) string { return m.deltaFolded(s) }),
		sometimes("copy-decides-frontier", "Thm 1, S-OBS", func(s *rereadState) string { return protocols.CopyDecides(&s.Cap, m.units(s), false) }),
	}, protocols.EmissionProps[rereadState, rereadAction](&m.cfg, RereadEmission, m.units, func(s *rereadState) *model.Capture { return &s.Cap })...)
}

// RereadEmission is re-read normalization's emission (§6.5): window-discard
// over the final plan, each key in the unit whose close settled it, except
// that a delta of a key not yet known is withheld. A key is known once a
// full image of it (an insert, a delete) was consumed, or past its unit's
// close.
var RereadEmission = invariants.Discipline{Name: "re-read normalization", Close: invariants.WindowDiscard.Close,
	Pass: func(p *model.Plan, l *model.Log, s0 model.Coord) model.Pass {
		return func(i int, pos model.Coord) bool {
			if pos > p.Units[i].Hi || rrSee(l, pos).Full {
				return true
			}
			k := l.At(pos).Key
			for q := s0 + 1; q < pos; q++ {
				if l.At(q).Key == k && rrSee(l, q).Full {
					return true
				}
			}
			return false
		}
	}}

// checkImages: each key's last entry is σ at its tag.
func (m *reread) checkImages(s *rereadState) string {
	c := &s.Cap
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		v, tag := c.Out.Val[k], c.Out.Tag[k]
		if (tag > 0 || v != model.Absent) && v != c.Log.Sigma(tag, k) {
			return fmt.Sprintf("key %v: emitted %s tagged %d, but its image there is %s", k, rrRow(v), c.Log.Offset(tag), rrRow(c.Log.Sigma(tag, k)))
		}
	}
	return ""
}

// checkTerminates fails in the stuck state, naming the delta that raced the
// last bracket.
func (m *reread) checkTerminates(s *rereadState) string {
	if s.Phase != rereadStuck {
		return ""
	}
	c := &s.Cap
	u := m.open(s)
	for p := u.Hi; p > u.Lo; p-- {
		if e := c.Log.At(p); s.Collide.Has(e.Key) {
			return fmt.Sprintf("bracket %d (%d, %d] was raced by %s %v: %v needs bracket %d, beyond chunks = %d",
				c.Plan.N, c.Log.Offset(u.Lo), c.Log.Offset(u.Hi), protocols.EventString(&c.Log, p), rrSee(&c.Log, p), e.Key, c.Plan.N+1, m.cfg.Chunks)
		}
	}
	return fmt.Sprintf("bracket %d collided with no bracket left", c.Plan.N)
}

// deltaFolded: the sink's row for a key came from a delta folded onto a
// known row that had a 1 in a column the delta left out — what apply-deltas
// loses.
func (m *reread) deltaFolded(s *rereadState) string {
	c := &s.Cap
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		p := c.Out.Tag[k]
		if p == 0 || p > c.Log.Len() || c.Log.At(p).Key != k || c.Out.Val[k] != c.Log.At(p).Img {
			continue
		}
		if d := rrSee(&c.Log, p); !d.Full && uint8(c.Out.Val[k]-1)&^d.Mask != 0 {
			return fmt.Sprintf("%v: %s at %d folded onto its known row: %s", k, d, c.Log.Offset(p), rrRow(c.Out.Val[k]))
		}
	}
	return ""
}

// rereadClean (the race the repair exists for): a key collided, was
// re-selected, and a later bracket settled it with no collision; its re-read
// row is what the sink holds.
func (m *reread) rereadClean(s *rereadState) string {
	c := &s.Cap
	if s.Phase != rereadDone || c.Plan.N < 2 {
		return ""
	}
	u := m.open(s)
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if u.Domain.Has(k) && u.Refresh[k] != model.Absent && c.Out.Val[k] == u.Refresh[k] && c.Out.Tag[k] == u.Hi {
			return fmt.Sprintf("%v collided in bracket %d, re-read at %d under bracket %d (%d, %d], which was clean: emitted %s@%d",
				k, c.Plan.N-1, c.Log.Offset(c.ReadAt[k]), c.Plan.N, c.Log.Offset(u.Lo), c.Log.Offset(u.Hi), rrRow(u.Refresh[k]), c.Log.Offset(u.Hi))
		}
	}
	return ""
}
