package protocols

import (
	"fmt"

	"github.com/cutcheck/cutcheck/model"
)

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

func (m *dump) Encode(s *dumpState, buf []byte) []byte {
	var arrived byte
	if s.Arrived {
		arrived = 1
	}
	buf = s.Cap.AppendTo(buf)
	return append(buf, byte(s.Phase), arrived, byte(s.Buf), byte(s.Buf>>8), byte(s.Gone), byte(s.Gone>>8))
}

func (m *dump) Decode(b []byte, s *dumpState) error {
	rest, ok := s.Cap.DecodeFrom(b)
	if !ok || len(rest) != 6 {
		return fmt.Errorf("dump: bad state encoding (%d bytes)", len(b))
	}
	s.Phase, s.Arrived = dumpPhase(rest[0]), rest[1] == 1
	s.Buf = model.KeySet(rest[2]) | model.KeySet(rest[3])<<8
	s.Gone = model.KeySet(rest[4]) | model.KeySet(rest[5])<<8
	return nil
}
