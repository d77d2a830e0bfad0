package protocols

import (
	"errors"
	"math/bits"

	"github.com/cutcheck/cutcheck/model"
)

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

// Encode is the capture followed by the chunk phases, two bits each, and,
// under backfill-from-read, where each key's select returned.
func (m *parallel) Encode(s *parallelState, buf []byte) []byte {
	buf = s.Cap.AppendTo(buf)
	var ph byte
	for i := 0; i < model.MaxUnits; i++ {
		ph |= byte(s.Phase[i]&3) << (2 * i)
	}
	buf = append(buf, ph)
	if m.cfg.Fault == BackfillFromRead {
		for k := 0; k < m.cfg.Keys; k++ {
			buf = append(buf, byte(s.ReadEnd[k]))
		}
	}
	return buf
}

var errParallelShort = errors.New("parallel: encoded state too short")

// Decode is the inverse of Encode.
func (m *parallel) Decode(b []byte, s *parallelState) error {
	rest, ok := s.Cap.DecodeFrom(b)
	if !ok || len(rest) < 1 {
		return errParallelShort
	}
	for i := 0; i < model.MaxUnits; i++ {
		s.Phase[i] = chunkPhase(rest[0]>>(2*i)) & 3
	}
	s.ReadEnd = [model.MaxKeys]model.Coord{}
	if m.cfg.Fault == BackfillFromRead {
		if len(rest) < 1+m.cfg.Keys {
			return errParallelShort
		}
		for k := 0; k < m.cfg.Keys; k++ {
			s.ReadEnd[k] = model.Coord(rest[1+k])
		}
	}
	return nil
}
