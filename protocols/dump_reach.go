package protocols

import (
	"fmt"

	"github.com/cutcheck/cutcheck/model"
)

// closeEmitted reports whether the close really emitted k's buffered row:
// the stream's last entry for k carries the refresh, tagged hi, and is not
// the consumed event at hi itself (the only other entry that can carry tag
// hi; later entries carry later tags).
func closeEmitted(c *model.Capture, k model.Key) bool {
	u := &c.Plan.Units[0]
	if !c.UnitClosed(0) || u.Refresh[k] == model.Absent || c.Out.Tag[k] != u.Hi || c.Out.Val[k] != u.Refresh[k] {
		return false
	}
	return c.Start >= u.Hi || c.Log.At(u.Hi).Key != k // Start ≥ hi also covers hi = 0, where no event lies
}

// splicedRowEmitted (Prop 6, §6.4): the trusted splice really emitted one of
// its rows (closeEmitted).
func (m *dump) splicedRowEmitted(s *dumpState) string {
	keys := model.Key(m.cfg.Keys)
	for k := model.Key(0); k < keys; k++ {
		if closeEmitted(&s.Cap, k) {
			return fmt.Sprintf("the splice emitted %v=%v@%d", k, s.Cap.Out.Val[k], s.Cap.Log.Offset(s.Cap.Out.Tag[k]))
		}
	}
	return ""
}

// eventBeforeSplice (§6.4 (s0 ⊑ r)): the consumer started below the splice
// coordinate r, so it processed (s0, r] before the splice.
func (m *dump) eventBeforeSplice(s *dumpState) string {
	if c := &s.Cap; c.AllClosed(1) && c.Start < c.Plan.Units[0].Hi {
		return fmt.Sprintf("the consumer started at %d and processed (%d, %d] before the splice", c.Log.Offset(c.Start), c.Log.Offset(c.Start), c.Log.Offset(c.Plan.Units[0].Hi))
	}
	return ""
}

// spliceBeforeLaterEvents (Prop 6, §6.4): the splice has closed and an event
// after its coordinate was consumed.
func (m *dump) spliceBeforeLaterEvents(s *dumpState) string {
	if c := &s.Cap; c.AllClosed(1) && c.Pos > c.Plan.Units[0].Hi {
		return "an event after the splice coordinate was consumed"
	}
	return ""
}

// viewStrictlyInside (Thm 8): the view lies strictly inside the recorded
// bracket, b < v < e.
func (m *dump) viewStrictlyInside(s *dumpState) string {
	c := &s.Cap
	if u := &c.Plan.Units[0]; s.Phase == dumpRecorded && u.Lo < c.ReadAt[0] && c.ReadAt[0] < u.Hi {
		return "b < v < e"
	}
	return ""
}

// windowEventBeforeArrival (Def. 6.2, Thm 8(2)): a window event was met before
// its key's restored row arrived.
func (m *dump) windowEventBeforeArrival(s *dumpState) string {
	u := &s.Cap.Plan.Units[0]
	if s.Phase >= dumpViewed && !s.Arrived && u.Present()&s.Gone != 0 {
		return "a window event was met before its key's restored row arrived"
	}
	return ""
}

// restoredRowDiscarded (Example 7.1, Def. 6.2): the restored rows have
// arrived, the unit is still open, and an in-window event has discarded one of
// them.
func (m *dump) restoredRowDiscarded(s *dumpState) string {
	c := &s.Cap
	if s.Arrived && !c.UnitClosed(0) && c.Plan.Units[0].Present()&^s.Buf != 0 {
		return "an in-window event discarded a restored row"
	}
	return ""
}

// rowsArriveAfterE (Thm 8(2)): every event through e has been processed while
// the restored rows are still in flight.
func (m *dump) rowsArriveAfterE(s *dumpState) string {
	if s.Phase == dumpRecorded && !s.Arrived && s.Cap.Pos == s.Cap.Plan.Units[0].Hi {
		return "every event through e processed, the restored rows still in flight"
	}
	return ""
}

// survivorEmitted (Def. 6.2, Lemma 6.1): the close really emitted one of the
// window's survivors (closeEmitted).
func (m *dump) survivorEmitted(s *dumpState) string {
	keys := model.Key(m.cfg.Keys)
	for k := model.Key(0); k < keys; k++ {
		if closeEmitted(&s.Cap, k) {
			return fmt.Sprintf("survivor %v=%v@%d emitted", k, s.Cap.Out.Val[k], s.Cap.Log.Offset(s.Cap.Out.Tag[k]))
		}
	}
	return ""
}

// staleRestoreCorrected (Thm 8, Example 7.1): once the unit has closed, a
// restored row is stale at e and the replay holds the source's value for its
// key.
func (m *dump) staleRestoreCorrected(s *dumpState) string {
	keys := model.Key(m.cfg.Keys)
	c := &s.Cap
	if !c.AllClosed(1) {
		return ""
	}
	u := &c.Plan.Units[0]
	for k := model.Key(0); k < keys; k++ {
		if u.Refresh[k] != c.Log.Sigma(u.Hi, k) && c.Out.Val[k] == c.Log.Sigma(c.Pos, k) {
			return fmt.Sprintf("restored %v=%v is stale at e, the replay has %v", k, u.Refresh[k], c.Out.Val[k])
		}
	}
	return ""
}
