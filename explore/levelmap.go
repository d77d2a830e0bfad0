package explore

import (
	"math/bits"
	"sync/atomic"
)

// levelMap maps each fingerprint first found in the level being generated to
// the smallest discovery key that produced it (its canonical discoverer).
// It is a lock-free open-addressing table: a slot's fingerprint is claimed
// with a compare-and-swap from 0, and its key only ever decreases, by a
// min-compare-and-swap. Keys are stored plus one, so a zeroed table is empty.
//
// The table does not grow while it is shared. Once more than maxLoad of it is
// claimed it reports overflow; the caller then stops inserting and rebuilds
// a larger table from every stored candidate after the level.
type levelMap struct {
	slots []levelSlot
	n     uint64
	limit int64 // claimed slots at which the map reports overflow

	_        [64]byte
	claimed  atomic.Int64
	_        [56]byte
	overflow atomic.Bool
	_        [63]byte
}

type levelSlot struct {
	fp  atomic.Uint64
	key atomic.Uint64 // key+1; 0 = none; keySeen = already in the seen-set
}

// keySeen marks a fingerprint found to be in the seen-set already; no
// candidate key matches it and it refuses every later offer.
const keySeen = ^uint64(0)

const (
	levelMaxLoad  = 0.75
	levelMinSlots = 4096
)

// reset prepares the map for about want distinct fingerprints, its table
// taken from the arena a, which reserves at least reserve bytes when it
// must. The table is cut to the size wanted, so that a narrower level clears
// (and probes) only what it needs.
func (lm *levelMap) reset(want int, workers int, a *slotArena, reserve int64) {
	n := uint64(float64(want)/0.6) + levelMinSlots
	lm.slots, lm.n = a.slots(int(n), reserve), n
	clearParallel(lm.slots, workers)
	lm.limit = int64(float64(lm.n) * levelMaxLoad)
	lm.claimed.Store(0)
	lm.overflow.Store(false)
}

// clearParallel zeroes s, split among the workers, a megabyte at a time: a
// single clear of a large table cannot be preempted, and the collector
// would spin waiting for it to end.
func clearParallel(s []levelSlot, workers int) {
	const chunk = 1 << 16
	clearRange := func(_, lo, hi int) {
		for ; lo < hi; lo += chunk {
			clear(s[lo:min(lo+chunk, hi)])
		}
	}
	if len(s) < chunk || workers < 2 {
		clearRange(0, 0, len(s))
		return
	}
	forEachRange(len(s), workers, clearRange)
}

func (lm *levelMap) home(fp uint64) uint64 {
	hi, _ := bits.Mul64(fp, lm.n)
	return hi
}

// insert offers key as a discoverer of fp. It returns won=true when key is,
// for now, the smallest key for fp (the candidate must be kept), the slot
// (to mark it seen), and claimed whether a new slot was taken. full is true
// when no free slot was found. A slot marked keySeen refuses every offer.
// An offer that wins over an earlier winner returns that winner's key plus
// one in displaced (0 otherwise): its candidate is no longer kept.
func (lm *levelMap) insert(fp, key uint64) (slot *levelSlot, won, claimed, full bool, displaced uint64) {
	k := key + 1
	i := lm.home(fp)
	for probes := uint64(0); probes < lm.n; probes++ {
		s := &lm.slots[i]
		f := s.fp.Load()
		if f == 0 {
			if s.fp.CompareAndSwap(0, fp) {
				f, claimed = fp, true
			} else {
				f = s.fp.Load()
			}
		}
		if f == fp {
			for {
				old := s.key.Load()
				if old == keySeen || (old != 0 && old <= k) {
					return s, false, claimed, false, 0
				}
				if s.key.CompareAndSwap(old, k) {
					return s, true, claimed, false, old
				}
			}
		}
		if i++; i == lm.n {
			i = 0
		}
	}
	return nil, false, false, true, 0
}

// peek loads fp's home slot, so that a following insert or winner finds it
// in the cache.
func (lm *levelMap) peek(fp uint64) uint64 {
	return lm.slots[lm.home(fp)].fp.Load()
}

// winner returns the stored value (key+1, or keySeen) for fp, or 0.
func (lm *levelMap) winner(fp uint64) uint64 {
	i := lm.home(fp)
	for probes := uint64(0); probes < lm.n; probes++ {
		s := &lm.slots[i]
		f := s.fp.Load()
		if f == fp {
			return s.key.Load()
		}
		if f == 0 {
			return 0
		}
		if i++; i == lm.n {
			i = 0
		}
	}
	return 0
}

// markSeen records that fp is already in the seen-set.
func (lm *levelMap) markSeen(fp uint64) {
	i := lm.home(fp)
	for probes := uint64(0); probes < lm.n; probes++ {
		s := &lm.slots[i]
		f := s.fp.Load()
		if f == fp {
			s.key.Store(keySeen)
			return
		}
		if f == 0 {
			return
		}
		if i++; i == lm.n {
			i = 0
		}
	}
}

func (lm *levelMap) bytes() int64 { return int64(cap(lm.slots)) * 16 }
