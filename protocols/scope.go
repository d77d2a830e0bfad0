package protocols

import (
	"fmt"

	"github.com/cutcheck/cutcheck/model"
)

// The whole-server log (§7.7): with Config.WholeServer the source also
// writes key K, which no unit owns, and the log every capture consumes holds
// its events among the scope's. A consume path must skip them: the sink's
// state is σ restricted to the scope.

// captured reports whether a consume path passes the row event on k to the
// sink: k lies in the scope (under outside-event-forwarded, any k: a
// capture whose filter on the captured tables is missing).
func captured(cfg *Config, c *model.Capture, k model.Key) bool {
	return c.Plan.Scope().Has(k) || cfg.Fault == OutsideEventForwarded
}

// OutsideInWindow (sometimes, with cfg.WholeServer): the consumer has met an
// event outside the scope inside a unit's window (lo, hi], or past the low
// edge of a unit whose high edge is not recorded yet — where a consume path
// that looks the event's key up among the units finds no owner.
func OutsideInWindow(c *model.Capture) string {
	scope := c.Plan.Scope()
	for p := c.Start + 1; p <= c.Pos; p++ {
		e := c.Log.At(p)
		if e.Key == model.NoKey || scope.Has(e.Key) {
			continue
		}
		for i := 0; i < int(c.Plan.N); i++ {
			if u := &c.Plan.Units[i]; p > u.Lo && (u.Hi < u.Lo || p <= u.Hi) {
				return fmt.Sprintf("position %d: %v := %v, outside the scope, consumed inside unit %d's window (%d, %s]", c.Log.Offset(p), e.Key, e.Img, i+1, c.Log.Offset(u.Lo), hiString(&c.Log, u))
			}
		}
	}
	return ""
}

// hiString is u's high edge as l names it, "?" while it is not recorded.
func hiString(l *model.Log, u *model.Unit) string {
	if u.Hi < u.Lo {
		return "?"
	}
	return fmt.Sprint(l.Offset(u.Hi))
}

// outsideWords ends a consume step's description when the event lies outside
// the scope: skipped, or, under outside-event-forwarded, emitted.
func outsideWords(cfg *Config, c *model.Capture, e model.Event) (string, bool) {
	if e.Key == model.NoKey || c.Plan.Scope().Has(e.Key) {
		return "", false
	}
	if captured(cfg, c, e.Key) {
		return ", outside the scope, emitted", true
	}
	return ", outside the scope, skipped", true
}
