package protocols

import (
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
