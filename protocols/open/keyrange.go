package open

// Key-range gating (§6.5, open). The capture keeps no buffer. It holds a copy
// cursor over the ordered keys: the consumer applies a log event only if its
// key is at or below the cursor, and discards an event whose key is ahead of
// it, since the later copy pass will read that row anyway.
//
// Copy granularity: the scan takes the C key ranges [i·K/C, (i+1)·K/C) one
// per step, reads every key of the range at one coordinate, upserts the rows
// it finds (absence by omission, §6.1) and moves the cursor to the range's
// last key. A range is the cursor's natural step ("a copy cursor over a
// totally ordered key domain"); with C = K it is one key per step. The copy
// runs between consumer steps, as one loop, so the coordinate where the
// cursor moves is the consumer's position Pos.
//
// The plan records one unit per copy step: its range, the point bracket
// [Pos, Pos] where the cursor moved (the gate hands the range over to the
// log there: events at or before it were discarded, later ones are applied),
// the rows read and, latent, the read coordinate (Capture.ReadAt).
//
// The obligation has two parts, each a property here: the plan is a monotone
// cursor over the ordered domain (monotone-cursor), and each key's refresh
// witness lies at or after every event discarded for it while it was ahead
// of the cursor (fresh-refresh). Modes:
//
//   - advancing (default): each copy reads at the consumer's current
//     position, the simplest advancing view: nothing discarded is newer than
//     the read. (A read later than Pos would also be fresh, but the consumer
//     would then re-apply events the read already reflects: a transient
//     regression this model leaves out.)
//   - frozen: every copy reads the one snapshot taken when copying began (at
//     the consumer's position then); an ahead-of-cursor change discarded
//     after it is lost, with nothing left to repair it.
//   - nonmonotone: the ranges are visited in any order, the cursor set to
//     the last key of each; a later range that lies below an earlier one
//     moves the cursor back, and the earlier range is ahead again.
//
// The consumer starts at any s0 before the first copy (positions at or
// before s0 are never seen, so only a copy supplies them), over any base
// store with initial=any.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

// The key-range gating modes.
const (
	KeyrangeAdvancing   = "advancing"
	KeyrangeFrozen      = "frozen"
	KeyrangeNonmonotone = "nonmonotone"
)

func init() {
	if err := protocols.Register(Keyrange(KeyrangeParts{})); err != nil {
		panic(err)
	}
}

// KeyrangeParts are the decision points of key-range gating; a nil part is
// the run's mode's choice (advancing by default). Each mode is a choice of
// parts: frozen is ReadAt at the first copy's position, nonmonotone is
// MayCopy of every range not copied yet.
type KeyrangeParts struct {
	// ReadAt is the coordinate a copy step reads at, given the capture
	// before the step (called once per copy; exact). Default: the
	// consumer's position Pos.
	ReadAt func(c *model.Capture) model.Coord
	// MayCopy reports whether range i may be copied next, given the
	// capture and which ranges are copied (called for every range not
	// copied yet, at a transaction boundary). Default: the ranges in key
	// order, i = the number copied.
	MayCopy func(c *model.Capture, i int, copied func(j int) bool) bool

	replaced []string // the parts the variant set, named in its traces
}

// Keyrange returns key-range gating built from parts, registered as
// "keyrange" with the zero KeyrangeParts; a variant is the same call with
// other parts and another Name.
func Keyrange(parts KeyrangeParts) *protocols.Protocol {
	return protocols.Define(&protocols.Protocol{
		Name:     "keyrange",
		Doc:      "key-range gating: a copy cursor over the ordered keys, events for keys ahead of it discarded, no buffer",
		Cite:     "§6.5 (open)",
		Defaults: protocols.Config{Keys: 3, Values: 2, Events: 3, Chunks: 3, Txn: 1, Mode: KeyrangeAdvancing},
		Limits: protocols.Limits{Keys: model.MaxKeys, Values: 7, Events: model.MaxLog, Chunks: model.MaxUnits,
			Txn: protocols.MaxTxn, WholeServer: true, Modes: []string{KeyrangeAdvancing, KeyrangeFrozen, KeyrangeNonmonotone}},
	}, func(cfg protocols.Config) explore.Model[krState, krAction] {
		return &keyrange{cfg, parts.withMode(cfg.Mode)}
	})
}

// withMode fills the parts p leaves nil with the mode's choices.
func (p KeyrangeParts) withMode(mode string) KeyrangeParts {
	p.replaced = nil
	if p.ReadAt != nil {
		p.replaced = append(p.replaced, "ReadAt")
	}
	if p.MayCopy != nil {
		p.replaced = append(p.replaced, "MayCopy")
	}
	if p.ReadAt == nil {
		p.ReadAt = func(c *model.Capture) model.Coord { return c.Pos }
		if mode == KeyrangeFrozen {
			p.ReadAt = func(c *model.Capture) model.Coord {
				if c.Plan.N > 0 {
					return c.Plan.Units[0].Lo // the snapshot taken at the first copy
				}
				return c.Pos
			}
		}
	}
	if p.MayCopy == nil {
		p.MayCopy = func(c *model.Capture, i int, _ func(int) bool) bool { return i == int(c.Plan.N) }
		if mode == KeyrangeNonmonotone {
			p.MayCopy = func(*model.Capture, int, func(int) bool) bool { return true }
		}
	}
	return p
}

// The obligation of §6.5, part by part.
var (
	KeyrangeMonotoneCursor = invariants.Invariant{Name: "monotone-cursor", Cite: "§6.5 key-range gating (open)",
		Doc:  "the plan is a monotone cursor over the ordered domain: no copy step moves the cursor back",
		Kind: explore.Transition, Class: invariants.Claim}
	KeyrangeFreshRefresh = invariants.Invariant{Name: "fresh-refresh", Cite: "§6.5 key-range gating (open), O2",
		Doc:  "each copied key's read coordinate lies at or after every event discarded for it while it was ahead of the cursor",
		Kind: explore.Always, Class: invariants.Claim}
)

// krState is the capture, the cursor, and the last discarded event per key.
type krState struct {
	Cap  model.Capture
	Upto uint8                      // the gate applies keys below Upto: the cursor is key Upto-1 (0: nothing copied yet)
	Disc [model.MaxKeys]model.Coord // position of the last event discarded for each key (0: none)
}

type krKind uint8

const (
	krCommit     krKind = iota // the source commits a transaction (§2.1)
	krCopy                     // copy a key range and move the cursor to its last key
	krConsume                  // the consumer takes the next position through the gate
	krStartLater               // the consumer's start s0 moves one position on
)

var krKindNames = []string{"commit", "copy", "consume", "start-later"}

// krAction is one step: a commit carries its transaction, a copy its range.
type krAction struct {
	Kind  krKind
	Txn   protocols.Txn
	Chunk uint8
}

type keyrange struct {
	cfg   protocols.Config
	parts KeyrangeParts
}

// chunk is range i: keys [i·K/C, (i+1)·K/C).
func (m *keyrange) chunk(i int) model.KeySet { return protocols.ChunkKeys(i, m.cfg.Keys, m.cfg.Chunks) }

// copied reports whether range i has been copied (a unit with its domain).
func (m *keyrange) copied(c *model.Capture, i int) bool {
	for j := 0; j < int(c.Plan.N); j++ {
		if c.Plan.Units[j].Domain == m.chunk(i) {
			return true
		}
	}
	return false
}

func (m *keyrange) Init() []krState {
	var out []krState
	for _, c := range protocols.InitialCaptures(&m.cfg) {
		out = append(out, krState{Cap: c})
	}
	return out
}

// Actions: the source's commits, the copy steps the visit order allows, then
// the consumer's steps. The copy waits for the consumer to finish a
// transaction it is inside: a read sees whole transactions (§3.3).
func (m *keyrange) Actions(s *krState, buf []krAction) []krAction {
	for t := range protocols.Commits(&m.cfg, &s.Cap.Log) {
		buf = append(buf, krAction{Kind: krCommit, Txn: t})
	}
	if n := int(s.Cap.Plan.N); n < m.cfg.Chunks && protocols.MayCopy(&s.Cap) {
		copied := func(j int) bool { return m.copied(&s.Cap, j) }
		for i := 0; i < m.cfg.Chunks; i++ {
			if !copied(i) && m.parts.MayCopy(&s.Cap, i, copied) {
				buf = append(buf, krAction{Kind: krCopy, Chunk: uint8(i)})
			}
		}
	}
	if s.Cap.Pos < s.Cap.Log.Len() {
		buf = append(buf, krAction{Kind: krConsume})
		// s0 stays at or before the first copy: a range copied at s0 would
		// miss the changes the consumer then never sees.
		if protocols.MayStartLater(&s.Cap, protocols.EarliestLow(&s.Cap.Plan)) {
			buf = append(buf, krAction{Kind: krStartLater})
		}
	}
	return buf
}

func (m *keyrange) Next(s *krState, a krAction, t *krState) bool {
	switch a.Kind {
	case krCommit:
		t.Cap.Log.Commit(a.Txn.Events()...)
	case krCopy:
		m.copyRange(t, int(a.Chunk))
	case krConsume:
		t.Cap.Pos++
		p := t.Cap.Pos
		e := t.Cap.Log.At(p)
		if !t.Cap.Plan.Scope().Has(e.Key) {
			break // another table's row (a whole-server log, §7.7): skipped
		}
		if m.ahead(t, e.Key) {
			t.Disc[e.Key] = p // the later copy will read this row
		} else {
			t.Cap.Emit(e.Key, e.Img, p)
		}
	case krStartLater:
		protocols.StartLater(&t.Cap)
	default:
		return false
	}
	return true
}

// ahead: k lies beyond the cursor, so the gate discards its events.
func (m *keyrange) ahead(s *krState, k model.Key) bool { return uint8(k) >= s.Upto }

// readAt is where a copy reads: the consumer's position, or under frozen the
// snapshot taken at the first copy.
func (m *keyrange) readAt(c *model.Capture) model.Coord { return m.parts.ReadAt(c) }

// copyRange reads range i, upserts its present rows, records the unit and
// moves the cursor. The rows are the unit's close block, tagged with its
// high edge Pos, where the range is handed over to the log.
func (m *keyrange) copyRange(s *krState, i int) {
	d, at := m.chunk(i), m.readAt(&s.Cap)
	u := model.Unit{Domain: d, Lo: s.Cap.Pos, Hi: s.Cap.Pos, Read: d}
	last := model.Key(0)
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if !d.Has(k) {
			continue
		}
		last = k
		u.Refresh[k] = s.Cap.Log.Sigma(at, k)
		s.Cap.ReadAt[k] = at
		if u.Refresh[k] != model.Absent {
			s.Cap.EmitCopy(k, u.Refresh[k], u.Hi)
		}
	}
	s.Cap.Closed |= 1 << s.Cap.Plan.Add(u)
	s.Upto = uint8(last) + 1
}

// Done: every range copied, the consumer at the end of a finished log.
func (m *keyrange) Done(s *krState) bool {
	return s.Cap.AllClosed(m.cfg.Chunks) && s.Cap.Pos == s.Cap.Log.Len() && protocols.DataEvents(&s.Cap.Log) == m.cfg.Events
}

// Grade counts the steps behind s (explore.Graded): each commits a
// transaction, moves the consumer one position on (a start-later moves it
// too), or copies a range, which records its unit.
func (m *keyrange) Grade(s *krState) uint64 {
	return uint64(s.Cap.Log.Txns()) + uint64(s.Cap.Pos) + uint64(s.Cap.Plan.N)
}

func (m *keyrange) Encode(s *krState, buf []byte) []byte {
	buf = s.Cap.AppendTo(buf)
	buf = append(buf, s.Upto)
	for _, p := range s.Disc {
		buf = append(buf, byte(p))
	}
	return buf
}

func (m *keyrange) Decode(b []byte, s *krState) error {
	rest, ok := s.Cap.DecodeFrom(b)
	if !ok || len(rest) != 1+model.MaxKeys {
		return fmt.Errorf("keyrange: bad state encoding (%d bytes)", len(b))
	}
	s.Upto = rest[0]
	for k := range s.Disc {
		s.Disc[k] = model.Coord(rest[1+k])
	}
	return nil
}

func (m *keyrange) ActionNames() []string { return krKindNames }

func (m *keyrange) ActionKind(a krAction) int { return int(a.Kind) }

func (m *keyrange) Describe(s *krState, a krAction) string {
	c := &s.Cap
	switch a.Kind {
	case krCommit:
		return protocols.DescribeCommit(&c.Log, a.Txn)
	case krCopy:
		t := *s
		m.Next(s, a, &t)
		u := &t.Cap.Plan.Units[c.Plan.N]
		var rows []string
		for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
			if u.Domain.Has(k) {
				rows = append(rows, fmt.Sprintf("%v = %v", k, u.Refresh[k]))
			}
		}
		d := fmt.Sprintf("copy %s at coordinate %d", strings.Join(rows, ", "), c.Log.Offset(m.readAt(c)))
		switch at := m.readAt(c); {
		case slices.Contains(m.parts.replaced, "ReadAt"):
			d += fmt.Sprintf(" (the variant's ReadAt; the consumer is at %d)", c.Log.Offset(c.Pos))
		case at != c.Pos:
			d += fmt.Sprintf(" (the snapshot; the consumer is at %d)", c.Log.Offset(c.Pos))
		}
		d += fmt.Sprintf("; cursor → %v", model.Key(t.Upto-1))
		if t.Upto < s.Upto {
			d += fmt.Sprintf(" (back from %v)", model.Key(s.Upto-1))
		}
		return d
	case krConsume:
		e, p := c.Log.At(c.Pos+1), c.Log.Offset(c.Pos+1)
		if !c.Plan.Scope().Has(e.Key) {
			return fmt.Sprintf("skip %v := %v at position %d (outside the scope)", e.Key, e.Img, p)
		}
		if m.ahead(s, e.Key) {
			return fmt.Sprintf("discard %v := %v at position %d (ahead of the cursor%s)", e.Key, e.Img, p, m.cursorString(s))
		}
		return fmt.Sprintf("apply %v := %v at position %d (at or below the cursor%s)", e.Key, e.Img, p, m.cursorString(s))
	case krStartLater:
		return protocols.DescribeStartLater(c)
	}
	return "?"
}

func (m *keyrange) cursorString(s *krState) string {
	if s.Upto == 0 {
		return ", nothing copied yet"
	}
	return " " + model.Key(s.Upto-1).String()
}

func (m *keyrange) Fields(s *krState) []explore.Field {
	return append(protocols.CaptureFields(&s.Cap, m.cfg.Keys),
		explore.Field{Name: "cursor", Value: m.cursorField(s)},
		explore.Field{Name: "discarded", Value: m.discField(s)})
}

func (m *keyrange) cursorField(s *krState) string {
	if s.Upto == 0 {
		return "none (every key ahead)"
	}
	return model.Key(s.Upto - 1).String()
}

func (m *keyrange) discField(s *krState) string {
	var out []string
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if s.Disc[k] != 0 {
			out = append(out, fmt.Sprintf("%v@%d", k, s.Cap.Log.Offset(s.Disc[k])))
		}
	}
	return "{" + strings.Join(out, " ") + "}"
}

func (m *keyrange) View(s *krState) any {
	v := protocols.CaptureView(&s.Cap, m.cfg.Keys)
	v.Control = map[string]string{"cursor": m.cursorField(s), "last discarded": m.discField(s)}
	return v
}

// Properties: the shared invariants (the units are point splices at the
// cursor's moves, so frontier replay, the closed-unit cut, monotonicity,
// committed reads and the contract all apply), the two parts of the obligation, and the races
// that show them non-vacuous.
func (m *keyrange) Properties() []explore.Property[krState, krAction] {
	n := m.cfg.Chunks
	type P = explore.Property[krState, krAction]
	return append([]P{
		invariants.Prop[krState, krAction](invariants.FinalReplay, func(s *krState) string { return invariants.CheckFinalReplay(&s.Cap, n) }),
		invariants.StepProp[krState, krAction](invariants.NoDuplicate, func(s *krState, _ krAction, t *krState) string {
			return invariants.CheckNoDuplicate(&s.Cap, &t.Cap)
		}),
		invariants.Prop[krState, krAction](invariants.FrontierReplay, func(s *krState) string { return invariants.CheckFrontierReplay(&s.Cap, n) }),
		invariants.Prop[krState, krAction](invariants.ClosedUnitCut, func(s *krState) string { return invariants.CheckClosedUnitCut(&s.Cap) }),
		invariants.StepProp[krState, krAction](invariants.Monotonic, func(s *krState, _ krAction, t *krState) string {
			return invariants.CheckMonotone(&s.Cap, &t.Cap)
		}),
		invariants.StepProp[krState, krAction](invariants.ExactTags, func(s *krState, _ krAction, t *krState) string {
			return invariants.CheckExactTags(&s.Cap, &t.Cap)
		}),
		invariants.Prop[krState, krAction](invariants.CommittedOnly, func(s *krState) string { return invariants.CheckCommittedOnly(&s.Cap) }),
		invariants.Prop[krState, krAction](invariants.Contract, func(s *krState) string { return invariants.CheckContract(&s.Cap, n) }),
		invariants.StepProp[krState, krAction](KeyrangeMonotoneCursor, checkMonotoneCursor),
		invariants.Prop[krState, krAction](KeyrangeFreshRefresh, checkFreshRefresh),
		{Name: "discarded-change-copied", Cite: "§6.5 key-range gating", Kind: explore.Sometimes, Check: discardedChangeCopied},
		{Name: "applied-behind-cursor", Cite: "§6.5 key-range gating", Kind: explore.Sometimes, Check: appliedBehindCursor},
		{Name: "copy-decides-frontier", Cite: "Thm 1, S-OBS", Kind: explore.Sometimes, Check: func(s *krState) string {
			return protocols.CopyDecides(&s.Cap, n, true)
		}},
	}, protocols.EmissionProps[krState, krAction](&m.cfg, KeyrangeEmission, protocols.Chunks[krState](&m.cfg),
		func(s *krState) *model.Capture { return &s.Cap })...)
}

// KeyrangeEmission is key-range gating's emission (§6.5): range-merge over
// the point brackets where the cursor moved — an event of a key is applied
// only beyond its range's copy (before it the key is ahead of the cursor
// and discarded), and the copy emits the rows read present.
var KeyrangeEmission = invariants.Discipline{Name: "key-range gating",
	Pass: invariants.RangeMerge.Pass, Close: invariants.RangeMerge.Close, Point: true}

// appliedBehindCursor: an event of a key copied in an earlier range reached
// the sink after its copy, with a later range copied too — what a cursor
// that moved back would discard instead (the race monotone-cursor guards).
func appliedBehindCursor(s *krState) string {
	c := &s.Cap
	for k := model.Key(0); k < model.Key(c.Plan.Keys); k++ {
		if i := c.Plan.Owner(k); i >= 0 && i < int(c.Plan.N)-1 && c.Out.Tag[k] > c.Plan.Units[i].Hi {
			return fmt.Sprintf("%v applied at %d after its range's copy at %d; the cursor is past it", k, c.Log.Offset(c.Out.Tag[k]), c.Log.Offset(c.Plan.Units[i].Hi))
		}
	}
	return ""
}

// checkMonotoneCursor: a step never moves the cursor back (obligation, part 1).
func checkMonotoneCursor(s *krState, _ krAction, t *krState) string {
	if t.Upto < s.Upto {
		return fmt.Sprintf("the cursor moved back from %v to %v: keys up to %v are ahead again", model.Key(s.Upto-1), model.Key(t.Upto-1), model.Key(s.Upto-1))
	}
	return ""
}

// checkFreshRefresh: every copied key was read at or after the last event
// discarded for it (obligation, part 2).
func checkFreshRefresh(s *krState) string {
	c := &s.Cap
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		for k := model.Key(0); k < model.Key(c.Plan.Keys); k++ {
			if u.Read.Has(k) && c.ReadAt[k] < s.Disc[k] {
				return fmt.Sprintf("key %v was read at coordinate %d, before its event at %d was discarded", k, c.Log.Offset(c.ReadAt[k]), c.Log.Offset(s.Disc[k]))
			}
		}
	}
	return ""
}

// discardedChangeCopied: an event ahead of the cursor was discarded, and the
// key's later copy, read at or after it, supplied its value to the sink.
func discardedChangeCopied(s *krState) string {
	c := &s.Cap
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		for k := model.Key(0); k < model.Key(c.Plan.Keys); k++ {
			d := s.Disc[k]
			if !u.Read.Has(k) || d == 0 || c.ReadAt[k] < d {
				continue
			}
			if e := c.Log.At(d); e.Img != model.Absent && u.Refresh[k] == e.Img && c.Out.Tag[k] == c.ReadAt[k] && c.Out.Val[k] == e.Img {
				return fmt.Sprintf("%v := %v discarded at %d; the copy at %d supplied it", k, e.Img, c.Log.Offset(d), c.Log.Offset(c.ReadAt[k]))
			}
		}
	}
	return ""
}
