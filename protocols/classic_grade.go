package protocols

// Grade counts the steps behind s (explore.Graded): each commits a
// transaction (a watermark is one), moves the consumer one position on, or
// selects a chunk, whose unit is recorded at its low watermark.
func (m *classic) Grade(s *classicState) uint64 {
	g := uint64(s.Cap.Log.Txns()) + uint64(s.Cap.Pos) + uint64(s.Cap.Plan.N)
	if s.Phase == classicLowWritten {
		g-- // its select is still to come
	}
	return g
}
