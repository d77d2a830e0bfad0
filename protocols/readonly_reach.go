package protocols

import (
	"fmt"

	"github.com/cutcheck/cutcheck/model"
)

// readonlyDiscarded (Def. 6.2, A-discard): the open chunk's buffer has lost a
// row it took: a key read present is no longer buffered. Only a window event
// removes a buffered row, so the discard really happened.
func readonlyDiscarded(s *readonlyState) string {
	if s.Phase == readonlyIdle {
		return ""
	}
	i := int(s.Cap.Plan.N) - 1
	u := &s.Cap.Plan.Units[i]
	for k := model.Key(0); k < model.Key(s.Cap.Plan.Keys); k++ {
		if !u.Present().Has(k) || s.Buf.Has(k) {
			continue
		}
		return fmt.Sprintf("chunk %d: buffered %v=%v (read at %d) discarded by a window event", i+1, k, u.Refresh[k], s.Cap.Log.Offset(s.Cap.ReadAt[k]))
	}
	return ""
}

// readsApart (Prop 1): two keys of one chunk were read at different positions.
func readsApart(c *model.Capture) string {
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		for a := model.Key(0); a < model.Key(c.Plan.Keys); a++ {
			for b := a + 1; b < model.Key(c.Plan.Keys); b++ {
				if u.Read.Has(a) && u.Read.Has(b) && c.ReadAt[a] != c.ReadAt[b] {
					return fmt.Sprintf("chunk %d: %v read at %d, %v at %d", i+1, a, c.Log.Offset(c.ReadAt[a]), b, c.Log.Offset(c.ReadAt[b]))
				}
			}
		}
	}
	return ""
}

// multiRowInWindow (Thm 7): a closed chunk's window holds a transaction of two
// rows or more.
func multiRowInWindow(c *model.Capture) string {
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		if !c.UnitClosed(i) {
			continue
		}
		for p := u.Lo + 2; p <= u.Hi; p++ {
			if c.Log.At(p).Txn == c.Log.At(p-1).Txn {
				return fmt.Sprintf("chunk %d: transaction t%d spans positions %d–%d of window %s", i+1, c.Log.At(p).Txn, c.Log.Offset(p-1), c.Log.Offset(p), WindowString(&c.Log, u.Window()))
			}
		}
	}
	return ""
}
