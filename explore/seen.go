package explore

import (
	"math/bits"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// fingerprint is the unseeded xxhash of an encoding, so it is stable across
// runs and machines. 0 marks an empty slot in the tables, so a hash of 0 is
// mapped to 1: the value 1 is then twice as likely as any other, which adds
// about 2⁻⁶⁴ per pair of states to the collision odds (see Result.Collision).
func fingerprint(enc []byte) uint64 {
	fp := xxhash.Sum64(enc)
	if fp == 0 {
		fp = 1
	}
	return fp
}

const (
	seenShardBits = 8
	seenShards    = 1 << seenShardBits
	// A shard grows by 5/4 once 86% full; after growing it is still
	// 0.86/1.25 ≈ 69% full, so a table costs between 9.3 and 11.7 bytes
	// per fingerprint (plus the short overflow tail). An ordered table
	// stays cheap at that load: a lookup ends at the first element ≥ fp,
	// about four slots on, and an insert shifts the rest of its cluster.
	seenMaxLoadNum = 86
	seenMaxLoadDen = 100
	seenGrowNum    = 5
	seenGrowDen    = 4
	seenMinSlots   = 64
	// maxSeenBytes bounds what a fingerprint costs in a table just grown.
	maxSeenBytes = 12

	// Large tables are made of pages of pageSlots slots. A shard that grows
	// returns its old pages to the set's pool and the next shard to grow
	// takes them, so growth mostly reuses memory instead of touching fresh
	// memory, which is slow to fault in.
	pageBits  = 12
	pageSlots = 1 << pageBits
	pageMask  = pageSlots - 1
)

// seenSet is the in-memory set of fingerprints: 256 shards chosen by the top
// 8 bits, each an ordered linear-probing table of uint64s.
//
// A shard's home slot for fp is ⌊(fp<<8)·n / 2⁶⁴⌋ (a multiply-shift range
// reduction, so n need not be a power of two). That is monotone in fp, so
// the table is kept sorted: an element sits at or after its home slot, with
// no empty slot in between, and elements appear in increasing order. A
// lookup stops at the first element ≥ fp, so a miss costs about as much as a
// hit (Amble and Knuth's ordered hash tables), even at 80% load. Probes never
// wrap around: past the n home slots there is a short overflow tail.
//
// Each shard grows on its own, so there is no long stop-the-world rehash.
// has may be called from many goroutines while nobody inserts; insert may
// be called concurrently for different shards.
type seenSet struct {
	shards [seenShards]seenShard
	pool   pagePool
}

type seenShard struct {
	// pages hold the slots: one page of any length up to pageSlots for a
	// small table, else full pages from the pool and a last page of the
	// rest.
	pages [][]uint64
	n     uint64 // number of home slots
	count uint64
	_     [64 - 8*5]byte
}

func shardOf(fp uint64) int { return int(fp >> (64 - seenShardBits)) }

func (sh *seenShard) home(fp uint64) uint64 {
	hi, _ := bits.Mul64(fp<<seenShardBits, sh.n)
	return hi
}

// has reports whether fp is in the set.
func (s *seenSet) has(fp uint64) bool {
	sh := &s.shards[shardOf(fp)]
	if sh.n == 0 {
		return false
	}
	i := sh.home(fp)
	for p := i >> pageBits; p < uint64(len(sh.pages)); p++ {
		pg := sh.pages[p]
		for j := i & pageMask; j < uint64(len(pg)); j++ {
			v := pg[j]
			if v >= fp {
				return v == fp
			}
			if v == 0 {
				return false
			}
		}
		i = 0
	}
	return false
}

// peek loads fp's home slot, so that a following has or insert finds it in
// the cache.
func (s *seenSet) peek(fp uint64) uint64 {
	sh := &s.shards[shardOf(fp)]
	if sh.n == 0 {
		return 0
	}
	h := sh.home(fp)
	pg := sh.pages[h>>pageBits]
	j := h & pageMask
	// A probe usually ends within three slots of home; load that slot too,
	// in case it is on the next cache line.
	return pg[j] + pg[min(j+3, uint64(len(pg)-1))]
}

// peek loads the two cache lines from fp's home slot on: an insert scans
// from there to the next empty slot.
func (sh *seenShard) peek(fp uint64) uint64 {
	if sh.n == 0 {
		return 0
	}
	h := sh.home(fp)
	pg := sh.pages[h>>pageBits]
	j, last := h&pageMask, uint64(len(pg)-1)
	return pg[j] + pg[min(j+8, last)]
}

// insert adds fp to the set and reports whether it was new.
func (s *seenSet) insert(fp uint64) bool {
	return s.shards[shardOf(fp)].insert(fp, &s.pool)
}

// slot returns a pointer to slot i, or nil past the end.
func (sh *seenShard) slot(i uint64) *uint64 {
	if p := i >> pageBits; p < uint64(len(sh.pages)) && i&pageMask < uint64(len(sh.pages[p])) {
		return &sh.pages[p][i&pageMask]
	}
	return nil
}

func (sh *seenShard) insert(fp uint64, pool *pagePool) bool {
	if sh.count+1 > sh.n*seenMaxLoadNum/seenMaxLoadDen {
		sh.grow(pool)
	}
	// Fast path: the probe and the shift stay within fp's home page.
	h := sh.home(fp)
	pg := sh.pages[h>>pageBits]
	k := int(h & pageMask)
	for k < len(pg) && pg[k] != 0 && pg[k] < fp {
		k++
	}
	if k < len(pg) {
		if pg[k] == fp {
			return false
		}
		e := k
		for e < len(pg) && pg[e] != 0 {
			e++
		}
		if e < len(pg) {
			copy(pg[k+1:e+1], pg[k:e])
			pg[k] = fp
			sh.count++
			return true
		}
	}
	for {
		i := sh.home(fp)
		p := sh.slot(i)
		for p != nil && *p != 0 && *p < fp {
			i++
			p = sh.slot(i)
		}
		if p != nil && *p == fp {
			return false
		}
		// Find the first empty slot at or after i; shift [i, e) right by one.
		e := i
		q := p
		for q != nil && *q != 0 {
			e++
			q = sh.slot(e)
		}
		if q == nil { // the overflow tail is full
			sh.grow(pool)
			continue
		}
		for k := e; k > i; k-- {
			*sh.slot(k) = *sh.slot(k - 1)
		}
		*p = fp
		sh.count++
		return true
	}
}

// tailRoom is how many overflow slots a table of n home slots gets. Clusters
// at 80% load are rarely longer than a few dozen slots.
func tailRoom(n uint64) uint64 { return n/128 + 32 }

// grow rebuilds the shard with 5/4 the home slots. The old table is
// sorted, so each element goes to max(its new home, the slot after the
// previous one) (growTo): linear time, no probing.
func (sh *seenShard) grow(pool *pagePool) {
	sh.growTo(sh.n*seenGrowNum/seenGrowDen, pool)
}

// reserve grows the shard, once, so that add more fingerprints keep it
// within the load limit: to the size growing by 5/4 at a time would reach,
// but rebuilt once instead of once per step.
func (sh *seenShard) reserve(add uint64, pool *pagePool) {
	need := sh.count + add
	if need <= sh.n*seenMaxLoadNum/seenMaxLoadDen {
		return
	}
	n := max(sh.n, seenMinSlots)
	for need > n*seenMaxLoadNum/seenMaxLoadDen {
		n = n * seenGrowNum / seenGrowDen
	}
	sh.growTo(n, pool)
}

// growTo rebuilds the shard with n home slots.
func (sh *seenShard) growTo(n uint64, pool *pagePool) {
	if n < seenMinSlots {
		n = seenMinSlots
	}
	old := sh.pages
	nsh := seenShard{n: n}
	total := n + tailRoom(n)
	if total <= pageSlots {
		nsh.pages = [][]uint64{written(total)}
	} else {
		// Whole pages from the pool, then the rest in a page of its own
		// size, so the table is as large as the load asks and no larger.
		for range total / pageSlots {
			nsh.pages = append(nsh.pages, pool.get())
		}
		if rest := total % pageSlots; rest > 0 {
			nsh.pages = append(nsh.pages, written(rest))
		}
	}
	next := uint64(0)
	pages := nsh.pages
	for _, pg := range old {
		for _, v := range pg {
			if v == 0 {
				continue
			}
			i := max(nsh.home(v), next)
			p, j := i>>pageBits, i&pageMask
			if p >= uint64(len(pages)) || j >= uint64(len(pages[p])) {
				panic("explore: seen-set overflow tail exhausted while growing")
			}
			pages[p][j] = v
			next = i + 1
		}
	}
	nsh.count = sh.count
	*sh = nsh
	for _, pg := range old {
		if cap(pg) == pageSlots {
			pool.put(pg)
		}
	}
}

// len is the number of fingerprints in the set.
func (s *seenSet) len() uint64 {
	var n uint64
	for i := range s.shards {
		n += s.shards[i].count
	}
	return n
}

// bytes is the memory held by the tables and the page pool.
func (s *seenSet) bytes() int64 {
	var n int64
	for i := range s.shards {
		for _, pg := range s.shards[i].pages {
			n += int64(cap(pg)) * 8
		}
	}
	return n + s.pool.bytes()
}

// each calls f for every fingerprint of the shards [lo, hi), in increasing
// order.
func (s *seenSet) each(lo, hi int, f func(fp uint64)) {
	for i := lo; i < hi; i++ {
		for _, pg := range s.shards[i].pages {
			for _, v := range pg {
				if v != 0 {
					f(v)
				}
			}
		}
	}
}

// written returns n zeroed slots that have been written to. Memory fresh
// from the system reads as a shared page of zeros until first written; a
// table probed before it is written (peek, then insert) takes a second
// fault on its first write, and that one makes the kernel interrupt every
// other CPU the process runs on to flush the old mapping (a TLB shootdown),
// which with two workers cost about a tenth of the run. Writing the zeros
// first takes one plain fault per page instead.
func written(n uint64) []uint64 {
	s := make([]uint64, n)
	clear(s)
	return s
}

// pagePool recycles the pages of tables that have grown.
type pagePool struct {
	mu   sync.Mutex
	free [][]uint64
}

// get returns a zeroed page of pageSlots slots.
func (p *pagePool) get() []uint64 {
	p.mu.Lock()
	n := len(p.free)
	if n == 0 {
		p.mu.Unlock()
		return written(pageSlots)
	}
	pg := p.free[n-1]
	p.free = p.free[:n-1]
	p.mu.Unlock()
	clear(pg)
	return pg[:pageSlots]
}

func (p *pagePool) put(pg []uint64) {
	p.mu.Lock()
	p.free = append(p.free, pg)
	p.mu.Unlock()
}

func (p *pagePool) bytes() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return int64(len(p.free)) * pageSlots * 8
}
