package protocols

import "math/bits"

// Grade counts the steps behind s (explore.Graded): each commits a
// transaction (a commit that does not fit the log is no step), moves the
// consumer one position on, records a unit (a splice, or the chunked
// unit's lo), takes the chunked unit one phase on (read, hi recorded),
// closes a unit, or claims the onset.
func (m *composite) Grade(s *compositeState) uint64 {
	c := &s.Cap
	g := uint64(c.Log.Txns()) + uint64(c.Pos) + uint64(c.Plan.N) + uint64(bits.OnesCount8(c.Closed))
	if s.Scan >= compScanLow {
		g += uint64(bits.OnesCount16(uint16(c.Plan.Units[m.scanUnit(s)].Read))) // one step per key read
	}
	if s.Scan == compScanHigh {
		g++
	}
	if s.Onset != 0 {
		g++
	}
	return g
}
