package protocols

import (
	"fmt"

	"github.com/cutcheck/cutcheck/model"
)

// runsWhileOpen (concurrent pass): the live reader has consumed a position
// while a chunk has not closed yet.
func (m *parallel) runsWhileOpen(s *parallelState) string {
	c := &s.Cap
	for i := 0; i < m.cfg.Chunks; i++ {
		if c.Pos > c.Start && s.Phase[i] != chunkClosed {
			return fmt.Sprintf("reader at %d (from %d), chunk %d %v", c.Log.Offset(c.Pos), c.Log.Offset(c.Start), i+1, s.Phase[i])
		}
	}
	return ""
}

// bracketsOverlap: two closed chunks' windows share a log position.
func (m *parallel) bracketsOverlap(c *model.Capture) string {
	for i := 0; i < int(c.Plan.N); i++ {
		for j := i + 1; j < int(c.Plan.N); j++ {
			a, b := &c.Plan.Units[i], &c.Plan.Units[j]
			if c.UnitClosed(i) && c.UnitClosed(j) && max(a.Lo, b.Lo) < min(a.Hi, b.Hi) {
				return fmt.Sprintf("chunk %d %s and chunk %d %s overlap", i+1, WindowString(&c.Log, a.Window()), j+1, WindowString(&c.Log, b.Window()))
			}
		}
	}
	return ""
}

// closedKeys calls f for every key of every closed unit until f reports.
func (m *parallel) closedKeys(c *model.Capture, f func(i int, u *model.Unit, k model.Key) string) string {
	for i := 0; i < int(c.Plan.N); i++ {
		if !c.UnitClosed(i) {
			continue
		}
		u := &c.Plan.Units[i]
		for k := model.Key(0); k < model.Key(c.Plan.Keys); k++ {
			if u.Domain.Has(k) {
				if r := f(i, u, k); r != "" {
					return r
				}
			}
		}
	}
	return ""
}

// mergedShown reports whether k's replay is, in this state, the merged entry
// unit u emitted at its close (Def. 6.4): tagged hi, carrying M(k) ≠ ⊥, and
// not a live event at hi that a faulty gate passed. It returns M(k) as well.
func (m *parallel) mergedShown(c *model.Capture, u *model.Unit, k model.Key) (model.Value, bool) {
	mv := m.merged(u, &c.Log, k)
	if mv == model.Absent || c.Out.Tag[k] != u.Hi || c.Out.Val[k] != mv {
		return mv, false
	}
	live := c.Start < u.Hi && u.Hi <= c.Pos && c.Log.At(u.Hi).Key == k && m.passes(c, k, u.Hi)
	return mv, !live
}

// mergeChangesValue: a closed chunk emitted a merged entry that differs from
// its read, and the sink shows it.
func (m *parallel) mergeChangesValue(c *model.Capture) string {
	return m.closedKeys(c, func(i int, u *model.Unit, k model.Key) string {
		if mv, ok := m.mergedShown(c, u, k); ok && mv != u.Refresh[k] {
			return fmt.Sprintf("chunk %d: %v read %v, merged %v emitted at %d", i+1, k, u.Refresh[k], mv, c.Log.Offset(u.Hi))
		}
		return ""
	})
}

// absentReadInserted: a key read absent is inserted (⊥ → value) inside its
// window, and the merged entry carrying the insert reached the sink.
func (m *parallel) absentReadInserted(c *model.Capture) string {
	return m.closedKeys(c, func(i int, u *model.Unit, k model.Key) string {
		if u.Refresh[k] != model.Absent {
			return ""
		}
		if _, ok := m.mergedShown(c, u, k); !ok {
			return ""
		}
		for p := u.Lo + 1; p <= u.Hi; p++ {
			if e := c.Log.At(p); e.Key == k && e.Img != model.Absent && c.Log.Sigma(p-1, k) == model.Absent {
				return fmt.Sprintf("chunk %d: %v read ⊥, inserted at %d in %s, merged entry emitted", i+1, k, c.Log.Offset(p), WindowString(&c.Log, u.Window()))
			}
		}
		return ""
	})
}

// deleteRacesRead: a key read present is deleted after its read, inside its
// window, the merged block omits it (M(k) = ⊥) and the sink shows ⊥ with
// nothing for the key emitted beyond the high edge: the stale read never
// reached the sink.
func (m *parallel) deleteRacesRead(c *model.Capture) string {
	return m.closedKeys(c, func(i int, u *model.Unit, k model.Key) string {
		if u.Refresh[k] == model.Absent || m.merged(u, &c.Log, k) != model.Absent || c.Out.Val[k] != model.Absent || c.Out.Tag[k] > u.Hi {
			return ""
		}
		for p := max(u.Lo, c.ReadAt[k]) + 1; p <= u.Hi; p++ {
			if e := c.Log.At(p); e.Key == k && e.Img == model.Absent {
				return fmt.Sprintf("chunk %d: %v read %v at %d, deleted at %d in %s, nothing emitted", i+1, k, u.Refresh[k], c.Log.Offset(c.ReadAt[k]), c.Log.Offset(p), WindowString(&c.Log, u.Window()))
			}
		}
		return ""
	})
}

// staleReadCorrected: a key read present is updated to another present value
// after its read, inside its window, and the sink shows the merged entry
// carrying the update.
func (m *parallel) staleReadCorrected(c *model.Capture) string {
	return m.closedKeys(c, func(i int, u *model.Unit, k model.Key) string {
		r := u.Refresh[k]
		mv, ok := m.mergedShown(c, u, k)
		if r == model.Absent || !ok || mv == r {
			return ""
		}
		if _, at, ok := c.Log.Last(k, model.Window{Lo: max(u.Lo, c.ReadAt[k]), Hi: u.Hi}); ok {
			return fmt.Sprintf("chunk %d: %v read %v at %d, updated at %d, merged %v emitted", i+1, k, r, c.Log.Offset(c.ReadAt[k]), c.Log.Offset(at), mv)
		}
		return ""
	})
}

// liveWithheld: the live reader has consumed an event at or before its owning
// chunk's high edge (preLow: at or before its low edge) — clause (a) withholds it.
func (m *parallel) liveWithheld(c *model.Capture, preLow bool) string {
	for p := c.Start + 1; p <= c.Pos; p++ {
		e := c.Log.At(p)
		o := c.Plan.Owner(e.Key)
		if o < 0 {
			continue
		}
		u := &c.Plan.Units[o]
		edge := u.Hi
		if preLow {
			edge = u.Lo
		}
		if p <= edge {
			return fmt.Sprintf("position %d (%v) withheld: chunk %d bracket %s", c.Log.Offset(p), e.Key, o+1, WindowString(&c.Log, u.Window()))
		}
	}
	return ""
}
