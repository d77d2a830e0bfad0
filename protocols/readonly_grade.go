package protocols

import (
	"fmt"
	"math/bits"

	"github.com/cutcheck/cutcheck/model"
)

// Grade counts the steps behind s (explore.Graded): each commits a
// transaction, moves the consumer one position on, samples a low set (the
// unit is recorded then), reads one key, samples a high set or releases the
// chunk. A closed chunk counts both of its last two steps; one in its
// high-sampled phase, the first. Under split-transaction appending the rest
// of a transaction is a step too: it gives the transaction a second row.
func (m *readonly) Grade(s *readonlyState) uint64 {
	c := &s.Cap
	g := uint64(c.Log.Txns()) + uint64(c.Pos) + uint64(c.Plan.N) + 2*uint64(bits.OnesCount8(c.Closed))
	for i := 0; i < int(c.Plan.N); i++ {
		g += uint64(bits.OnesCount16(uint16(c.Plan.Units[i].Read)))
	}
	if s.Phase == readonlyHighSampled {
		g++
	}
	if m.cfg.Fault == SplitTransaction {
		g += uint64(splitRests(&c.Log))
	}
	return g
}

// splitRests counts the transactions of the log with a second row: under
// split-transaction, those whose rest has been appended.
func splitRests(l *model.Log) int {
	n := 0
	for i := 1; i < int(l.N); i++ {
		if l.Ev[i].Txn == l.Ev[i-1].Txn && (i == 1 || l.Ev[i-2].Txn != l.Ev[i].Txn) {
			n++
		}
	}
	return n
}

func (m *readonly) Encode(s *readonlyState, buf []byte) []byte {
	buf = s.Cap.AppendTo(buf)
	buf = append(buf, byte(s.Phase), byte(s.Buf), byte(s.Buf>>8))
	for i := 0; i < model.MaxUnits; i++ {
		buf = append(buf, byte(s.LowAt[i]), byte(s.HighAt[i]))
	}
	buf = append(buf, s.Pending.N)
	for _, e := range s.Pending.Ev {
		buf = append(buf, byte(e.Key), byte(e.Img))
	}
	return buf
}

func (m *readonly) Decode(b []byte, s *readonlyState) error {
	rest, ok := s.Cap.DecodeFrom(b)
	if n := 3 + 2*model.MaxUnits + 1 + 2*MaxTxn; !ok || len(rest) < n {
		return fmt.Errorf("readonly: short state encoding (%d bytes)", len(b))
	}
	s.Phase, s.Buf = readonlyPhase(rest[0]), model.KeySet(rest[1])|model.KeySet(rest[2])<<8
	rest = rest[3:]
	for i := 0; i < model.MaxUnits; i++ {
		s.LowAt[i], s.HighAt[i] = model.Coord(rest[2*i]), model.Coord(rest[2*i+1])
	}
	rest = rest[2*model.MaxUnits:]
	s.Pending.N = rest[0]
	for j := range s.Pending.Ev {
		s.Pending.Ev[j] = model.Event{Key: model.Key(rest[1+2*j]), Img: model.Value(rest[2+2*j])}
	}
	return nil
}
