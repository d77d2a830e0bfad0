package protocols

import (
	"fmt"

	"github.com/cutcheck/cutcheck/model"
)

// CopyDecides is the non-vacuity property of every capture: at the frontier
// (every unit closed, the consumer at or past the latest high edge) some key
// replays to a present value although the consumer emitted no log event for
// it — none in (from, Pos], where from is the start s0, or, when gated
// (range-merge), the later of s0 and the key's unit's high edge. Replaying
// the stream without its copied rows would then leave the key absent: the
// run checked the copy, not just the log (Thm 1 needs both).
func CopyDecides(c *model.Capture, units int, gated bool) string {
	if !c.AllClosed(units) || c.Pos < c.Plan.LatestHigh() {
		return ""
	}
	for k := model.Key(0); k < model.Key(c.Plan.Keys); k++ {
		if c.Out.Val[k] == model.Absent {
			continue
		}
		from := c.Start
		if i := c.Plan.Owner(k); gated && i >= 0 {
			from = max(from, c.Plan.Units[i].Hi)
		}
		if !c.Log.Touches(k, model.Window{Lo: from, Hi: c.Pos}) {
			return fmt.Sprintf("%v=%v at %d comes only from a copied row (no event for it emitted from %d on)", k, c.Out.Val[k], c.Log.Offset(c.Pos), c.Log.Offset(from))
		}
	}
	return ""
}

// DescribeStartLater: "consumer's start moves past position 3: s0 = 3".
func DescribeStartLater(c *model.Capture) string {
	p := c.Log.Offset(c.Pos + 1)
	return fmt.Sprintf("consumer's start moves past position %d (%s): s0 = %d, the log up to it is not retained", p, EventString(&c.Log, c.Pos+1), p)
}

// StaleRead is reached when a select returned a key as it stood before the
// log end at the time of the read (A-read, §4.3: each key any boundary of its
// bracket). Within a chunk the keys are read one after another in key order,
// so a key reflecting an earlier coordinate than a key read before it was
// read when the log already reached the later one. This inversion is exactly
// what fresh reads cannot produce: any other stale read is the state of a
// fresh read followed by the commits after it.
func StaleRead(c *model.Capture) string {
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		for a := model.Key(0); a < model.Key(c.Plan.Keys); a++ {
			for b := a + 1; b < model.Key(c.Plan.Keys); b++ {
				if u.Read.Has(a) && u.Read.Has(b) && c.ReadAt[b] < c.ReadAt[a] {
					return fmt.Sprintf("unit %d: %v read after %v (at %d) reflects coordinate %d", i+1, b, a, c.Log.Offset(c.ReadAt[a]), c.Log.Offset(c.ReadAt[b]))
				}
			}
		}
	}
	return ""
}

// ---- shared by the window-discard protocols (classic, readonly) ----

// survivorEmitted (Def. 6.2): a closed unit's survivor is what the stream
// last carries for its key — an entry with the read value tagged with the
// high edge, which no log event for a survivor can be (it has none in the
// window). So the survivor was really emitted, not only computed.
func survivorEmitted(c *model.Capture) string {
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		if !c.UnitClosed(i) {
			continue
		}
		sv := u.Survivors(&c.Log)
		for k := model.Key(0); k < model.Key(c.Plan.Keys); k++ {
			if sv.Has(k) && c.Out.Tag[k] == u.Hi && c.Out.Val[k] == u.Refresh[k] {
				return fmt.Sprintf("chunk %d emitted survivor %v=%v@%d", i+1, k, u.Refresh[k], c.Log.Offset(u.Hi))
			}
		}
	}
	return ""
}

// windowEvent finds, in the window of a closed unit, an event after the read
// of one of its keys that satisfies pred(read value, event image).
func windowEvent(c *model.Capture, pred func(read, img model.Value) bool) (unit int, k model.Key, at model.Coord, ok bool) {
	for i := 0; i < int(c.Plan.N); i++ {
		if !c.UnitClosed(i) {
			continue
		}
		u := &c.Plan.Units[i]
		for p := u.Lo + 1; p <= u.Hi; p++ {
			e := c.Log.At(p)
			if e.Key != model.NoKey && u.Read.Has(e.Key) && p > c.ReadAt[e.Key] && pred(u.Refresh[e.Key], e.Img) {
				return i, e.Key, p, true
			}
		}
	}
	return 0, 0, 0, false
}

// absentReadInserted (§3.1: "a concurrent insert ... the observed insert
// event later overrides it"): a key read as ⊥ is inserted inside its window.
func absentReadInserted(c *model.Capture) string {
	if i, k, p, ok := windowEvent(c, func(r, img model.Value) bool { return r == model.Absent && img != model.Absent }); ok {
		return fmt.Sprintf("chunk %d: %v read ⊥, inserted at %d inside the window", i+1, k, c.Log.Offset(p))
	}
	return ""
}

// deleteRacesRead (§1.2): a key read present is deleted inside its window,
// after the read.
func deleteRacesRead(c *model.Capture) string {
	if i, k, p, ok := windowEvent(c, func(r, img model.Value) bool { return r != model.Absent && img == model.Absent }); ok {
		return fmt.Sprintf("chunk %d: %v read present, deleted at %d inside the window", i+1, k, c.Log.Offset(p))
	}
	return ""
}

// staleReadCorrected (Example 4.1, key a): a key read present is updated to
// another present value inside its window, after the read.
func staleReadCorrected(c *model.Capture) string {
	if i, k, p, ok := windowEvent(c, func(r, img model.Value) bool { return r != model.Absent && img != model.Absent && img != r }); ok {
		return fmt.Sprintf("chunk %d: %v read present, updated at %d inside the window", i+1, k, c.Log.Offset(p))
	}
	return ""
}
