package protocols

import (
	"fmt"

	"github.com/cutcheck/cutcheck/model"
)

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

func (m *classic) Encode(s *classicState, buf []byte) []byte {
	buf = s.Cap.AppendTo(buf)
	return append(buf, byte(s.Phase), byte(s.Buf), byte(s.Buf>>8))
}

func (m *classic) Decode(b []byte, s *classicState) error {
	rest, ok := s.Cap.DecodeFrom(b)
	if !ok || len(rest) < 3 {
		return fmt.Errorf("classic: short state encoding (%d bytes)", len(b))
	}
	s.Phase, s.Buf = classicPhase(rest[0]), model.KeySet(rest[1])|model.KeySet(rest[2])<<8
	return nil
}
