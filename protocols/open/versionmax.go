package open

// Version-max (§6.5, open). Every row carries a version column. The sink
// applies refresh entries and log events in any order and keeps, per key,
// the entry of maximal version, so reconciliation needs no bracket. Deletes
// leave a versioned tombstone at the sink, so a stale copied row is rejected.
// The obligation: the version order agrees with commit order on every pair
// of entries for the same key (property version-order).
//
// The source commits transactions; each gets a version, stored per log
// position beside the capture (Ver). The copy reads the C key ranges in
// order, each at the current end of the log (the database as it is), and
// puts one refresh entry per present row in flight, carrying the row's
// version (absence by omission, §6.1); each entry reaches the sink at any
// later time, one step per key, interleaved with the consumer, which applies
// the log in commit order from its start s0. s0 lies at or before every read
// (a read older than s0 would miss changes nobody delivers); base-store rows
// (initial=any) carry version 1, older than any commit.
//
// Encoding: the sink's value and the tag of the entry it holds are
// Capture.Out, which only accepted entries change, so the shared invariants
// read the sink itself; the version of the entry it holds is SinkVer beside
// it (0: nothing held). A refresh entry is tagged with its read coordinate,
// an event with its position: the prefix each reflects. Each range is a unit
// with the point bracket [r, r] at its read coordinate r, closed once its
// last entry has reached the sink.
//
// Modes: engine (default: the version is the commit's sequence number plus
// one, in commit order, shared by its rows); client (each transaction carries a client-chosen timestamp,
// any of the engine's values, so it may disagree with commit order);
// no-tombstone (engine versions, but a delete removes the row and its
// version from the sink, whatever it held, and the sink then accepts a
// stale copied row: a resurrection).

import (
	"fmt"
	"strings"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

// The version-max modes.
const (
	VersionmaxEngine      = "engine"
	VersionmaxClient      = "client"
	VersionmaxNoTombstone = "no-tombstone"
)

// baseVersion is the version of a base-store row, older than every commit.
const baseVersion = 1

func init() {
	if err := protocols.Register(Versionmax(VersionmaxParts{})); err != nil {
		panic(err)
	}
}

// VersionmaxParts are the decision points of version-max; a nil or zero
// part is the run's mode's choice (engine by default). The client mode is
// a choice of Versions, no-tombstone is DeleteForgets.
type VersionmaxParts struct {
	// Versions lists the versions the next commit may carry, given the log
	// before it and the run's event bound (called once per commit step;
	// every one listed is explored). Default: the engine's, the commit's
	// sequence number plus one; the client mode: any of 2..E+1.
	Versions func(l model.Log, events int) []uint8
	// DeleteForgets: a delete from the log removes the row and its version
	// from the sink, whatever it held, instead of leaving a versioned
	// tombstone (the no-tombstone mode).
	DeleteForgets bool
}

// Versionmax returns version-max built from parts, registered as
// "versionmax" with the zero VersionmaxParts.
func Versionmax(parts VersionmaxParts) *protocols.Protocol {
	return protocols.Define(&protocols.Protocol{
		Name:     "versionmax",
		Doc:      "version-max: refresh entries and events applied in any order, the sink keeps each key's entry of maximal version",
		Cite:     "§6.5 (open)",
		Defaults: protocols.Config{Keys: 2, Values: 2, Events: 3, Chunks: 1, Txn: 1, Mode: VersionmaxEngine},
		Limits: protocols.Limits{Keys: model.MaxKeys, Values: 7, Events: model.MaxLog, Chunks: model.MaxUnits,
			Txn: protocols.MaxTxn, WholeServer: true, Modes: []string{VersionmaxEngine, VersionmaxClient, VersionmaxNoTombstone}},
	}, func(cfg protocols.Config) explore.Model[vmState, vmAction] {
		return &versionmax{cfg, parts.withMode(cfg.Mode)}
	})
}

// withMode fills the parts p leaves unset with the mode's choices.
func (p VersionmaxParts) withMode(mode string) VersionmaxParts {
	if p.Versions == nil {
		p.Versions = func(l model.Log, _ int) []uint8 { return []uint8{l.Txns() + 2} }
		if mode == VersionmaxClient {
			p.Versions = func(_ model.Log, events int) []uint8 {
				var vs []uint8
				for v := 2; v <= events+1; v++ { // any of the engine's values
					vs = append(vs, uint8(v))
				}
				return vs
			}
		}
	}
	p.DeleteForgets = p.DeleteForgets || mode == VersionmaxNoTombstone
	return p
}

// VersionmaxOrder is version-max's obligation (§6.5).
var VersionmaxOrder = invariants.Invariant{Name: "version-order", Cite: "§6.5 version-max (open)",
	Doc:  "the version order agrees with commit order on every pair of entries for the same key",
	Kind: explore.Always, Class: invariants.Claim}

// vmState is the capture, each position's version, the sink's versions,
// the refresh entries in flight, and what the last step's entry met.
type vmState struct {
	Cap      model.Capture
	Ver      [model.MaxLog]uint8  // version of the event at each position
	SinkVer  [model.MaxKeys]uint8 // version of the entry the sink holds (0: none)
	Flight   model.KeySet         // copied rows read but not yet at the sink
	Rejected rejection            // what the sink rejected in the step that led here
}

// rejection is an entry the sink refused because it held a newer one for
// the key: the out-of-order arrivals the max rule resolves.
type rejection uint8

const (
	rejectedNothing rejection = iota
	rejectedCopy              // a copied row older than the sink's event
	rejectedByTomb            // a copied row older than the sink's tombstone: a resurrection averted
	rejectedEvent             // an event older than the sink's entry (under engine versions, the copy)
)

type vmKind uint8

const (
	vmCommit     vmKind = iota // the source commits a transaction with its version (§2.1)
	vmRead                     // read the next key range at the end of the log
	vmDeliver                  // one copied row reaches the sink
	vmConsume                  // the consumer applies the next log position
	vmStartLater               // the consumer's start s0 moves one position on
)

var vmKindNames = []string{"commit", "read", "deliver", "consume", "start-later"}

// vmAction is one step: a commit carries its transaction and version, a
// delivery its key.
type vmAction struct {
	Kind vmKind
	Txn  protocols.Txn
	Ver  uint8
	Key  model.Key
}

type versionmax struct {
	cfg   protocols.Config
	parts VersionmaxParts
}

// chunk is range i: keys [i·K/C, (i+1)·K/C).
func (m *versionmax) chunk(i int) model.KeySet {
	return protocols.ChunkKeys(i, m.cfg.Keys, m.cfg.Chunks)
}

func (m *versionmax) Init() []vmState {
	var out []vmState
	for _, c := range protocols.InitialCaptures(&m.cfg) {
		out = append(out, vmState{Cap: c})
	}
	return out
}

func (m *versionmax) Actions(s *vmState, buf []vmAction) []vmAction {
	for t := range protocols.Commits(&m.cfg, &s.Cap.Log) {
		for _, v := range m.parts.Versions(s.Cap.Log, m.cfg.Events) {
			buf = append(buf, vmAction{Kind: vmCommit, Txn: t, Ver: v})
		}
	}
	if int(s.Cap.Plan.N) < m.cfg.Chunks {
		buf = append(buf, vmAction{Kind: vmRead})
	}
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if s.Flight.Has(k) {
			buf = append(buf, vmAction{Kind: vmDeliver, Key: k})
		}
	}
	if s.Cap.Pos < s.Cap.Log.Len() {
		buf = append(buf, vmAction{Kind: vmConsume})
		if protocols.MayStartLater(&s.Cap, protocols.EarliestLow(&s.Cap.Plan)) {
			buf = append(buf, vmAction{Kind: vmStartLater})
		}
	}
	return buf
}

func (m *versionmax) Next(s *vmState, a vmAction, t *vmState) bool {
	c := &t.Cap
	t.Rejected = rejectedNothing
	switch a.Kind {
	case vmCommit:
		from := c.Log.N
		c.Log.Commit(a.Txn.Events()...)
		for p := from; p < c.Log.N; p++ {
			t.Ver[p] = a.Ver
		}
	case vmRead:
		m.read(t)
	case vmDeliver:
		k := a.Key
		t.Flight = t.Flight.Without(k)
		m.apply(t, k, c.Plan.Units[c.Plan.Owner(k)].Refresh[k], m.rowVersion(t, c.ReadAt[k], k), c.ReadAt[k], true)
		m.closeDelivered(t)
	case vmConsume:
		c.Pos++
		if e := c.Log.At(c.Pos); c.Plan.Scope().Has(e.Key) { // another table's row (§7.7) is skipped
			m.apply(t, e.Key, e.Img, t.Ver[c.Pos-1], c.Pos, false)
		}
	case vmStartLater:
		protocols.StartLater(c)
	default:
		return false
	}
	return true
}

// read takes the next range at the end of the log and puts its present rows
// in flight; a range with none closes at once.
func (m *versionmax) read(s *vmState) {
	c := &s.Cap
	d, at := m.chunk(int(c.Plan.N)), c.Log.Len()
	u := model.Unit{Domain: d, Lo: at, Hi: at, Read: d}
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if d.Has(k) {
			u.Refresh[k] = c.Log.Sigma(at, k)
			c.ReadAt[k] = at
			if u.Refresh[k] != model.Absent {
				s.Flight = s.Flight.With(k)
			}
		}
	}
	c.Plan.Add(u)
	m.closeDelivered(s)
}

// closeDelivered closes every recorded unit with no row in flight.
func (m *versionmax) closeDelivered(s *vmState) {
	for i := 0; i < int(s.Cap.Plan.N); i++ {
		if s.Cap.Plan.Units[i].Domain&s.Flight == 0 {
			s.Cap.Closed |= 1 << i
		}
	}
}

// rowVersion is the version of k's row in σ_at: its last event's, or the
// base row's.
func (m *versionmax) rowVersion(s *vmState, at model.Coord, k model.Key) uint8 {
	if _, p, ok := s.Cap.Log.Last(k, model.Window{Lo: 0, Hi: at}); ok {
		return s.Ver[p-1]
	}
	return baseVersion
}

// apply is the sink's rule: keep the entry of maximal version. A delete
// leaves a tombstone carrying its version; without tombstones it removes the
// row and every trace of its version.
func (m *versionmax) apply(s *vmState, k model.Key, v model.Value, ver uint8, tag model.Coord, copied bool) {
	if v == model.Absent && m.parts.DeleteForgets && !copied {
		s.Cap.Emit(k, v, tag)
		s.SinkVer[k] = 0
		return
	}
	if ver <= s.SinkVer[k] {
		switch {
		case !copied:
			s.Rejected = rejectedEvent
		case s.Cap.Out.Val[k] == model.Absent:
			s.Rejected = rejectedByTomb
		default:
			s.Rejected = rejectedCopy
		}
		return
	}
	if copied {
		s.Cap.EmitCopy(k, v, tag)
	} else {
		s.Cap.Emit(k, v, tag)
	}
	s.SinkVer[k] = ver
}

func (m *versionmax) Done(s *vmState) bool {
	return s.Cap.AllClosed(m.cfg.Chunks) && s.Cap.Pos == s.Cap.Log.Len() && protocols.DataEvents(&s.Cap.Log) == m.cfg.Events
}

// Grade counts the steps behind s (explore.Graded): each commits a
// transaction, moves the consumer one position on, reads a range (its unit
// is recorded then) or delivers one copied row. A range's present rows are
// in flight from its read until each is delivered, once: every key is read
// by one range.
func (m *versionmax) Grade(s *vmState) uint64 {
	c := &s.Cap
	g := uint64(c.Log.Txns()) + uint64(c.Pos) + uint64(c.Plan.N)
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
			if u.Domain.Has(k) && u.Refresh[k] != model.Absent && !s.Flight.Has(k) {
				g++ // delivered
			}
		}
	}
	return g
}

func (m *versionmax) Encode(s *vmState, buf []byte) []byte {
	buf = s.Cap.AppendTo(buf)
	buf = append(buf, s.Ver[:]...)
	buf = append(buf, s.SinkVer[:]...)
	return append(buf, byte(s.Flight), byte(s.Flight>>8), byte(s.Rejected))
}

func (m *versionmax) Decode(b []byte, s *vmState) error {
	rest, ok := s.Cap.DecodeFrom(b)
	if !ok || len(rest) != model.MaxLog+model.MaxKeys+3 {
		return fmt.Errorf("versionmax: bad state encoding (%d bytes)", len(b))
	}
	rest = rest[copy(s.Ver[:], rest):]
	rest = rest[copy(s.SinkVer[:], rest):]
	s.Flight, s.Rejected = model.KeySet(rest[0])|model.KeySet(rest[1])<<8, rejection(rest[2])
	return nil
}

func (m *versionmax) ActionNames() []string { return vmKindNames }

func (m *versionmax) ActionKind(a vmAction) int { return int(a.Kind) }

func (m *versionmax) Describe(s *vmState, a vmAction) string {
	c := &s.Cap
	t := *s
	m.Next(s, a, &t)
	switch a.Kind {
	case vmCommit:
		who := "version"
		if m.cfg.Mode == VersionmaxClient {
			who = "client timestamp"
		}
		return fmt.Sprintf("%s, %s %d", protocols.DescribeCommit(&c.Log, a.Txn), who, a.Ver)
	case vmRead:
		u := &t.Cap.Plan.Units[c.Plan.N]
		var rows []string
		for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
			if u.Domain.Has(k) {
				if u.Refresh[k] == model.Absent {
					rows = append(rows, fmt.Sprintf("%v = ⊥", k))
				} else {
					rows = append(rows, fmt.Sprintf("%v = %v (v%d)", k, u.Refresh[k], m.rowVersion(&t, u.Lo, k)))
				}
			}
		}
		d := fmt.Sprintf("read %s at coordinate %d", strings.Join(rows, ", "), c.Log.Offset(u.Lo))
		if t.Flight != s.Flight {
			d += "; the present rows are in flight to the sink"
		}
		return d
	case vmDeliver:
		k := a.Key
		v := c.Plan.Units[c.Plan.Owner(k)].Refresh[k]
		return fmt.Sprintf("copied %v = %v (v%d, read at %d) reaches the sink: %s", k, v, m.rowVersion(s, c.ReadAt[k], k), c.Log.Offset(c.ReadAt[k]), m.verdict(s, &t, k))
	case vmConsume:
		p := c.Pos + 1
		e := c.Log.At(p)
		if !c.Plan.Scope().Has(e.Key) {
			return fmt.Sprintf("consume %v := %v (v%d) at position %d: outside the scope, skipped", e.Key, e.Img, s.Ver[p-1], c.Log.Offset(p))
		}
		return fmt.Sprintf("consume %v := %v (v%d) at position %d: %s", e.Key, e.Img, s.Ver[p-1], c.Log.Offset(p), m.verdict(s, &t, e.Key))
	case vmStartLater:
		return protocols.DescribeStartLater(c)
	}
	return "?"
}

// verdict says what the sink did with an entry for k.
func (m *versionmax) verdict(s, t *vmState, k model.Key) string {
	held := m.held(s, k)
	switch {
	case t.Rejected != rejectedNothing:
		return "rejected, the sink keeps " + held
	case t.SinkVer[k] == 0 && t.Cap.Out.Val[k] == model.Absent:
		return "row removed, no tombstone (was " + held + ")"
	}
	return fmt.Sprintf("accepted over %s", held)
}

// held renders the sink's entry for k: "k0=1 (v3)", "tombstone (v4)" or "nothing".
func (m *versionmax) held(s *vmState, k model.Key) string {
	switch {
	case s.SinkVer[k] == 0:
		return "nothing"
	case s.Cap.Out.Val[k] == model.Absent:
		return fmt.Sprintf("the tombstone (v%d)", s.SinkVer[k])
	}
	return fmt.Sprintf("%v=%v (v%d)", k, s.Cap.Out.Val[k], s.SinkVer[k])
}

func (m *versionmax) Fields(s *vmState) []explore.Field {
	return append(protocols.CaptureFields(&s.Cap, m.cfg.Keys),
		explore.Field{Name: "versions", Value: m.versionsField(s)},
		explore.Field{Name: "sink versions", Value: m.sinkField(s)},
		explore.Field{Name: "in flight", Value: protocols.KeySetString(s.Flight, m.cfg.Keys)})
}

func (m *versionmax) versionsField(s *vmState) string {
	var out []string
	for p := model.Coord(1); p <= s.Cap.Log.Len(); p++ {
		out = append(out, fmt.Sprintf("%d:v%d", s.Cap.Log.Offset(p), s.Ver[p-1]))
	}
	return "[" + strings.Join(out, " ") + "]"
}

func (m *versionmax) sinkField(s *vmState) string {
	var out []string
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		out = append(out, m.held(s, k))
	}
	return "{" + strings.Join(out, ", ") + "}"
}

func (m *versionmax) View(s *vmState) any {
	v := protocols.CaptureView(&s.Cap, m.cfg.Keys)
	v.Control = map[string]string{"versions": m.versionsField(s), "sink": m.sinkField(s),
		"in flight": protocols.KeySetString(s.Flight, m.cfg.Keys)}
	return v
}

// Properties: final and frontier replay, monotonicity, committed reads, the
// obligation, and the races. Not attached: the closed-unit cut (a copy carries absence by
// omission, so a key deleted before its read shows its older row until the
// consumer reaches the delete: the sink is exact only from the read on, which
// frontier replay checks) and the contract (point brackets at the reads make
// O2 hold by construction; version-max has no bracket to check), and
// exact-emission (which entries the sink takes depends on when each copied
// row reaches it, which no plan records: its emission is not a function of
// the log, the plan and the reads).
func (m *versionmax) Properties() []explore.Property[vmState, vmAction] {
	n := m.cfg.Chunks
	type P = explore.Property[vmState, vmAction]
	return []P{
		invariants.Prop[vmState, vmAction](invariants.FinalReplay, func(s *vmState) string { return invariants.CheckFinalReplay(&s.Cap, n) }),
		invariants.StepProp[vmState, vmAction](invariants.NoDuplicate, func(s *vmState, _ vmAction, t *vmState) string {
			return invariants.CheckNoDuplicate(&s.Cap, &t.Cap)
		}),
		invariants.Prop[vmState, vmAction](invariants.FrontierReplay, func(s *vmState) string { return invariants.CheckFrontierReplay(&s.Cap, n) }),
		invariants.StepProp[vmState, vmAction](invariants.Monotonic, func(s *vmState, _ vmAction, t *vmState) string {
			return invariants.CheckMonotone(&s.Cap, &t.Cap)
		}),
		invariants.StepProp[vmState, vmAction](invariants.ExactTags, func(s *vmState, _ vmAction, t *vmState) string {
			return invariants.CheckExactTags(&s.Cap, &t.Cap)
		}),
		invariants.Prop[vmState, vmAction](invariants.CommittedOnly, func(s *vmState) string { return invariants.CheckCommittedOnly(&s.Cap) }),
		invariants.Prop[vmState, vmAction](VersionmaxOrder, checkVersionOrder),
		rejected("stale-copy-rejected", "a copied row reached the sink after a newer event for its key and was rejected", rejectedCopy),
		rejected("tombstone-rejects-stale-copy", "a copied row reached the sink after its key's delete and the tombstone rejected it", rejectedByTomb),
		rejected("stale-event-rejected", "an event reached the sink after a newer copied row for its key and was rejected", rejectedEvent),
		{Name: "copy-decides-frontier", Cite: "Thm 1, S-OBS", Kind: explore.Sometimes, Check: func(s *vmState) string {
			return protocols.CopyDecides(&s.Cap, n, false)
		}},
	}
}

// checkVersionOrder: along the log, each key's versions strictly increase,
// above the base row's.
func checkVersionOrder(s *vmState) string {
	var last [model.MaxKeys]uint8
	var at [model.MaxKeys]model.Coord
	for k := range last {
		last[k] = baseVersion
	}
	for p := model.Coord(1); p <= s.Cap.Log.Len(); p++ {
		k, v := s.Cap.Log.At(p).Key, s.Ver[p-1]
		if v <= last[k] {
			if at[k] == 0 {
				return fmt.Sprintf("key %v: the event at %d has version %d, not above the base row's %d", k, s.Cap.Log.Offset(p), v, last[k])
			}
			return fmt.Sprintf("key %v: the event at %d has version %d, the earlier one at %d version %d", k, s.Cap.Log.Offset(p), v, s.Cap.Log.Offset(at[k]), last[k])
		}
		last[k], at[k] = v, p
	}
	return ""
}

// rejected is the sometimes-property that the last step's entry met case r.
func rejected(name, what string, r rejection) explore.Property[vmState, vmAction] {
	return explore.Property[vmState, vmAction]{Name: name, Cite: "§6.5 version-max", Kind: explore.Sometimes,
		Check: func(s *vmState) string {
			if s.Rejected == r {
				return what
			}
			return ""
		}}
}
