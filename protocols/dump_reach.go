package protocols

import (
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
