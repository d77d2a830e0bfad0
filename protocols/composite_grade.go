package protocols

import (
	"fmt"
	"math/bits"

	"github.com/cutcheck/cutcheck/model"
)

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

func (m *composite) Encode(s *compositeState, buf []byte) []byte {
	buf = s.Cap.AppendTo(buf)
	buf = append(buf, s.Chunk[:s.Cap.Plan.N]...)
	return append(buf, byte(s.Scan), byte(s.Buf), byte(s.Buf>>8), byte(s.Onset))
}

func (m *composite) Decode(b []byte, s *compositeState) error {
	rest, ok := s.Cap.DecodeFrom(b)
	n := s.Cap.Plan.N
	if !ok || len(rest) != int(n)+4 {
		return fmt.Errorf("composite: bad state encoding (%d bytes)", len(b))
	}
	copy(s.Chunk[:], rest[:n])
	rest = rest[n:]
	s.Scan = compScan(rest[0])
	s.Buf = model.KeySet(rest[1]) | model.KeySet(rest[2])<<8
	s.Onset = model.Coord(rest[3])
	return nil
}
