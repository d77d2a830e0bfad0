package record

import "bytes"

// An update that leaves a column stored out of line in TOAST unchanged
// does not carry it: pgoutput sends the column as "unchanged" ('u'). The
// recorder fills it from the old tuple when the table's replica identity
// is FULL (the server logs the old row whole, detoasted), or else from the
// last image of the row it knows to be current: one a change event
// delivered, or a chunk read that survived its window (no event of the
// key between the watermarks, so the read is the row's value at the high
// watermark). A read that a window event raced is not such an image: the
// event may predate the read. Otherwise the run stops, naming the fix.
//
// Memory: only rows large enough to hold an out-of-line value are kept
// (toastRow bytes of text or more: the server moves values out of line
// only when a row exceeds about 2 kB on disk), up to toastBudget bytes in
// all; a row not kept stops the run in the same way, never a guess.

const (
	toastRow    = 512
	toastBudget = 32 << 20
)

type toastCache struct {
	rows  map[string][][]byte // by the key's JSON form
	size  int
	chunk map[int][][]byte // the chunk in hand's large rows, by buffer index
}

func rowSize(vals [][]byte) int {
	n := 0
	for _, v := range vals {
		n += len(v)
	}
	return n
}

func cloneVals(vals [][]byte) [][]byte {
	out := make([][]byte, len(vals))
	for i, v := range vals {
		if v != nil {
			out[i] = bytes.Clone(v)
		}
	}
	return out
}

// newChunk forgets the previous chunk's rows.
func (tc *toastCache) newChunk() { clear(tc.chunk) }

// read keeps a large row of the chunk in hand, until its window closes.
func (tc *toastCache) read(i int, vals [][]byte) {
	if rowSize(vals) < toastRow {
		return
	}
	if tc.chunk == nil {
		tc.chunk = map[int][][]byte{}
	}
	tc.chunk[i] = cloneVals(vals)
}

// survived makes buffered row i, which no window event touched, the
// known image of key k.
func (tc *toastCache) survived(i int, k keyVal) {
	if vals, ok := tc.chunk[i]; ok {
		tc.put(k.json, vals)
	}
}

// toastKey is a tuple's key, "" if the tuple lacks a key column.
func toastKey(t *table, v [][]byte) string {
	if v == nil {
		return ""
	}
	k, err := t.keyOf(v)
	if err != nil {
		return ""
	}
	return k.json
}

// saw records a change of the captured table: its new image (filled), or
// the row's deletion.
func (tc *toastCache) saw(t *table, op string, oldV, newV [][]byte) {
	oldK, newK := toastKey(t, oldV), toastKey(t, newV)
	if oldK != "" && oldK != newK {
		tc.put(oldK, nil) // deleted, or its key changed
	}
	if newK != "" {
		if rowSize(newV) >= toastRow {
			tc.put(newK, cloneVals(newV))
		} else {
			tc.put(newK, nil)
		}
	}
}

// put sets (nil: removes) a key's image within the budget; a new key over
// the budget is not kept.
func (tc *toastCache) put(k string, vals [][]byte) {
	old, had := tc.rows[k]
	if had {
		tc.size -= rowSize(old) + len(k)
		delete(tc.rows, k)
	}
	if vals == nil || tc.size+rowSize(vals)+len(k) > toastBudget {
		return
	}
	if tc.rows == nil {
		tc.rows = map[string][][]byte{}
	}
	tc.rows[k] = vals
	tc.size += rowSize(vals) + len(k)
}

// fill puts the unchanged TOASTed columns of an update's new tuple back.
func (tc *toastCache) fill(t *table, oldV [][]byte, oldToasted []int, newV [][]byte, toasted []int) error {
	if len(toasted) == 0 {
		return nil
	}
	k := toastKey(t, newV)
	for _, i := range toasted {
		switch {
		case oldV != nil && oldV[i] != nil && !contains(oldToasted, i):
			newV[i] = oldV[i] // REPLICA IDENTITY FULL: the old row, whole
		case tc.rows[k] != nil && tc.rows[k][i] != nil:
			newV[i] = tc.rows[k][i]
		default:
			return ioErr("table %s: an update left column %s unchanged in TOAST storage, and the change stream carries no earlier value of it for key %s: run ALTER TABLE %s REPLICA IDENTITY FULL, so the server logs the old row whole, and record again",
				t.qname, t.cols[i].name, k, t.qname)
		}
	}
	return nil
}

func contains(s []int, x int) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}
