package protocols

import (
	"fmt"

	"github.com/cutcheck/cutcheck/model"
)

// bufferedRowDiscarded (Def. 6.2): a key read present has an event in the
// part of its window the consumer has processed, (lo, min(Pos, hi)]: the
// consumer met it with the row in the buffer (classic reads while paused,
// before the window's first event is consumed).
func bufferedRowDiscarded(c *model.Capture) string {
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		for k := model.Key(0); k < model.Key(c.Plan.Keys); k++ {
			if !u.Read.Has(k) || u.Refresh[k] == model.Absent {
				continue
			}
			if _, at, ok := c.Log.Last(k, model.Window{Lo: u.Lo, Hi: min(c.Pos, u.Hi)}); ok {
				return fmt.Sprintf("chunk %d: buffered %v=%v discarded by the event at %d", i+1, k, u.Refresh[k], c.Log.Offset(at))
			}
		}
	}
	return ""
}
