package protocols

import "github.com/cutcheck/cutcheck/model"

// Op is what a data event does to its key's row.
type Op uint8

const (
	OpInsert Op = iota // the key was absent before the event
	OpUpdate           // present before and after
	OpDelete           // present before, absent after
)

func (o Op) String() string { return [...]string{"insert", "update", "delete"}[o] }

// MergeEvent is what a per-key merge rule sees: an in-window data event for
// a key whose copied row is still buffered. It says how the event relates
// to the row, never the values themselves, so a rule cannot break the value
// symmetry (symmetry.go): values are only compared for equality and ⊥.
type MergeEvent struct {
	Unit       int         // the unit (chunk) whose window holds the event, 0-based
	Lo, Hi     model.Coord // its bracket; Hi < Lo while the high edge is not recorded
	Key        model.Key
	ReadAt     model.Coord // the coordinate the copied row reflects (latent, §10)
	Pos        model.Coord // the event's position
	Op         Op
	SameAsRead bool // the event leaves the key as the copy read it
}

// MergeRule is the per-key merge rule of a window-discard capture: whether
// the in-window event e discards its key's buffered copied row. It is
// called once for each in-window data event of a key with a buffered row,
// as the consumer meets it; its answer is exact. nil is the paper's rule
// (Def. 6.2, §6.2): always, the log wins. Flink CDC #592 (the snapshot row
// overrides an in-window update) is
//
//	func(e protocols.MergeEvent) bool { return e.Op != protocols.OpUpdate }
type MergeRule func(e MergeEvent) bool

// discards applies r to the event at p for unit i's window.
func (r MergeRule) discards(c *model.Capture, i int, p model.Coord) bool {
	if r == nil {
		return true
	}
	u := &c.Plan.Units[i]
	e := c.Log.At(p)
	before := c.Log.Sigma(p-1, e.Key)
	op := OpUpdate
	switch {
	case before == model.Absent:
		op = OpInsert
	case e.Img == model.Absent:
		op = OpDelete
	}
	return r(MergeEvent{Unit: i, Lo: u.Lo, Hi: u.Hi, Key: e.Key, ReadAt: c.ReadAt[e.Key], Pos: p, Op: op, SameAsRead: e.Img == u.Refresh[e.Key]})
}

// words marks a trace step decided by a variant's rule as the variant's.
func (r MergeRule) words() string {
	if r == nil {
		return ""
	}
	return " (the variant's merge rule, not the paper's Def. 6.2)"
}
