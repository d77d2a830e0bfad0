package protocols

import (
	"github.com/cespare/xxhash/v2"

	"github.com/cutcheck/cutcheck/model"
)

// ShardKey is every protocol's shard key (explore.Sharder): the base store
// and the row events of the first d row transactions of the log. The source
// only appends whole transactions (§2.1, S-LOG), so once d of them exist —
// and the d-th is no longer exposed in part — the key never changes along
// any path, which is what makes a sharded search exact (explore/shard.go).
// Watermark rows are left out: they are the capture's writes, and keying on
// them would put most states of a run in the shard of its first marker.
//
// A discipline of its own whose source only commits through Log.Commit
// (Commits) gets an exact sharded search by returning ShardKey(&s.Cap, d).
func ShardKey(c *model.Capture, d int) (uint64, bool) {
	var buf [model.MaxKeys + 3*model.MaxLog]byte
	b := buf[:0]
	for k := range model.MaxKeys {
		b = append(b, byte(c.Log.Init[k]))
	}
	txns, last := 0, uint8(0)
	for i := 0; i < int(c.Log.N); i++ {
		e := c.Log.Ev[i]
		if e.Key == model.NoKey {
			continue
		}
		if e.Txn != last {
			if txns == d {
				return xxhash.Sum64(b), true // a later transaction exists: the first d are whole
			}
			txns, last = txns+1, e.Txn
		}
		b = append(b, byte(e.Key), byte(e.Img))
	}
	if txns < d || c.Partial {
		return 0, false
	}
	return xxhash.Sum64(b), true
}

// ShardKey makes each protocol model an explore.Sharder.

func (m *classic) ShardKey(s *classicState, d int) (uint64, bool)     { return ShardKey(&s.Cap, d) }
func (m *readonly) ShardKey(s *readonlyState, d int) (uint64, bool)   { return ShardKey(&s.Cap, d) }
func (m *parallel) ShardKey(s *parallelState, d int) (uint64, bool)   { return ShardKey(&s.Cap, d) }
func (m *dump) ShardKey(s *dumpState, d int) (uint64, bool)           { return ShardKey(&s.Cap, d) }
func (m *composite) ShardKey(s *compositeState, d int) (uint64, bool) { return ShardKey(&s.Cap, d) }
