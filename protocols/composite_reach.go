package protocols

import (
	"fmt"

	"github.com/cutcheck/cutcheck/model"
)

// witnessBelowHigh (Cor 1, Example 5.1): the final plan has a shared state
// witness strictly below its latest high edge, where T3 starts the
// trajectory earlier than Lemma 4.2.
func (m *composite) witnessBelowHigh(s *compositeState) string {
	c := &s.Cap
	if !c.AllClosed(m.cfg.Chunks) {
		return ""
	}
	h := c.Plan.LatestHigh()
	w := c.Plan.SharedWitnesses(&c.Log)
	for g := model.Coord(0); g < h; g++ {
		if w.Has(g) {
			return fmt.Sprintf("shared witness %d below the latest high %d", c.Log.Offset(g), c.Log.Offset(h))
		}
	}
	return ""
}

// distinctSplices (Prop 2, Example 5.1): a splice lies outside the bracket of
// another complete unit.
func (m *composite) distinctSplices(s *compositeState) string {
	c := &s.Cap
	for i := 0; i < int(c.Plan.N); i++ {
		if !m.isSplice(s, i) {
			continue
		}
		r := c.Plan.Units[i].Lo
		for j := 0; j < int(c.Plan.N); j++ {
			if u := &c.Plan.Units[j]; j != i && m.complete(s, j) && (r < u.Lo || r > u.Hi) {
				return fmt.Sprintf("splice at %d lies outside the bracket [%d, %d] of another unit", c.Log.Offset(r), c.Log.Offset(u.Lo), c.Log.Offset(u.Hi))
			}
		}
	}
	return ""
}

// bufferedRowDiscarded (Def. 6.2): the chunked unit has read a key present and
// its row is no longer buffered although the unit is still open — only an
// in-window event removes a row before the close.
func (m *composite) bufferedRowDiscarded(s *compositeState) string {
	c := &s.Cap
	i := m.scanUnit(s)
	if i < 0 || s.Scan < compScanRead || c.UnitClosed(i) {
		return ""
	}
	u := &c.Plan.Units[i]
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if u.Domain.Has(k) && u.Refresh[k] != model.Absent && !s.Buf.Has(k) {
			return fmt.Sprintf("buffered %v=%v was discarded by an in-window event", k, u.Refresh[k])
		}
	}
	return ""
}

// survivorEmitted (Def. 6.2, §6.4): a closed unit's buffered row is what the
// stream last carries for its key — its read value, present, tagged with the
// high edge — and no log event can be that entry (the event at the high edge,
// if the consumer saw one, is for another key). The chunked unit counts in
// mode mixed, every splice in tablesync.
func (m *composite) survivorEmitted(s *compositeState) string {
	c := &s.Cap
	for i := 0; i < int(c.Plan.N); i++ {
		if !c.UnitClosed(i) || (!m.tablesync && m.isSplice(s, i)) {
			continue
		}
		u := &c.Plan.Units[i]
		for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
			if !u.Domain.Has(k) || u.Refresh[k] == model.Absent || c.Out.Tag[k] != u.Hi || c.Out.Val[k] != u.Refresh[k] {
				continue
			}
			if u.Hi <= c.Start || c.Log.At(u.Hi).Key != k {
				return fmt.Sprintf("chunk %d emitted survivor %v=%v@%d", s.Chunk[i]+1, k, u.Refresh[k], c.Log.Offset(u.Hi))
			}
		}
	}
	return ""
}

// threeProvenances (Figure 3): the chunked scan with an ordinary bracket
// (lo < hi), the native dump and a point select have all closed, the two
// splices at distinct coordinates, so no coordinate lies inside all three
// brackets.
func (m *composite) threeProvenances(s *compositeState) string {
	c := &s.Cap
	scan, dump, sel := m.unitOf(s, 0), m.unitOf(s, 1), m.unitOf(s, 2)
	if scan < 0 || dump < 0 || sel < 0 || !c.UnitClosed(scan) || !c.UnitClosed(dump) || !c.UnitClosed(sel) {
		return ""
	}
	u, rd, rs := &c.Plan.Units[scan], c.Plan.Units[dump].Lo, c.Plan.Units[sel].Lo
	if u.Lo < u.Hi && rd != rs {
		return fmt.Sprintf("chunked scan (%d, %d], native dump at %d, point select at %d: no coordinate in all three brackets", c.Log.Offset(u.Lo), c.Log.Offset(u.Hi), c.Log.Offset(rd), c.Log.Offset(rs))
	}
	return ""
}
