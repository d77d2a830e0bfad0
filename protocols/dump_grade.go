package protocols

// Grade counts the steps behind s (explore.Graded): each commits a
// transaction (a commit that does not fit the log is no step), moves the
// consumer one position on, records the unit (the trusted splice, the read
// of a view recorded later, or b), closes it, and in mode uncertain takes
// the view, brings the rows or records e; under RecordRAfterView, records r.
func (m *dump) Grade(s *dumpState) uint64 {
	c := &s.Cap
	g := uint64(c.Log.Txns()) + uint64(c.Pos) + uint64(c.Plan.N) + uint64(c.Closed&1)
	switch {
	case m.uncertain:
		if s.Phase >= dumpViewed {
			g++
		}
		if s.Phase == dumpRecorded {
			g++
		}
		if s.Arrived {
			g++
		}
	case m.parts.RecordRAfterView:
		if s.Phase == dumpRecorded {
			g++
		}
	}
	return g
}
