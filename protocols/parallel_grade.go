package protocols

import "math/bits"

// Grade counts the steps behind s (explore.Graded): each commits a
// transaction, moves the live reader one position on, reads one key, or
// takes a chunk one phase on (low recorded, high recorded, closed).
func (m *parallel) Grade(s *parallelState) uint64 {
	c := &s.Cap
	g := uint64(c.Log.Txns()) + uint64(c.Pos)
	for i := 0; i < int(c.Plan.N); i++ {
		g += uint64(s.Phase[i]) + uint64(bits.OnesCount16(uint16(c.Plan.Units[i].Read)))
	}
	return g
}
