package explore

import (
	"sync"
	"unsafe"

	"github.com/cutcheck/cutcheck/internal/huge"
)

// slabs holds the memory of a level's candidates and of the frontier they
// become: chunks carved into exact-size runs, one per unit, and reused from
// level to level. Memory fresh from the system costs a page fault per
// 4 KiB on first touch, far more than anything the engine then does with
// it; chunks that stay with the run are faulted in once, and large ones
// are given huge pages (huge.Advise).
//
// A chunk belongs to one slabSet, whose chunks are freed together: a
// level's fingerprints and keys once it is committed, its encodings once
// it has been expanded.
type slabs struct {
	mu   sync.Mutex
	free [slabClasses][][]byte // free chunks by size class
	held int64                 // bytes of the free chunks
}

// slabSet is the chunks of runs that are freed together.
type slabSet struct{ chunks [][]byte }

// slabCursor is a worker's place in its current chunk of one set.
type slabCursor struct {
	rest []byte
	set  *slabSet
}

const (
	slabMinBits = 16 // 64 KiB
	slabClasses = 7  // up to 4 MiB
	slabMax     = 1 << (slabMinBits + slabClasses - 1)
	slabBlock   = 8 // chunks of the largest class are made this many at a time
)

// chunkBits is the size class of chunks for a level expected to take
// about bytes in all, spread over workers: small levels take small chunks,
// so that a run holds little more than its states.
func chunkBits(bytes int64, workers int) int {
	b := slabMinBits
	for b < slabMinBits+slabClasses-1 && int64(1)<<b < bytes/int64(8*max(workers, 1)) {
		b++
	}
	return b
}

// get returns a chunk of at least n bytes, of class bits unless n is
// larger.
func (s *slabs) get(n int, bits int) []byte {
	if n > slabMax {
		return huge.Make[byte](n, n)
	}
	for bits-slabMinBits < slabClasses-1 && 1<<bits < n {
		bits++
	}
	c := bits - slabMinBits
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := len(s.free[c]); k > 0 {
		ch := s.free[c][k-1]
		s.free[c] = s.free[c][:k-1]
		s.held -= int64(len(ch))
		return ch
	}
	size := 1 << bits
	if size < slabMax {
		return make([]byte, size)
	}
	// The largest chunks are cut from a block, whose huge pages they share.
	block := huge.Make[byte](slabBlock*size, slabBlock*size)
	for i := 1; i < slabBlock; i++ {
		s.free[c] = append(s.free[c], block[i*size:(i+1)*size:(i+1)*size])
		s.held += int64(size)
	}
	return block[:size:size]
}

// release frees the chunks of set for reuse.
func (s *slabs) release(set *slabSet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range set.chunks {
		if len(ch) > slabMax || len(ch)&(len(ch)-1) != 0 {
			continue // made to measure: left to the collector
		}
		c := 0
		for 1<<(slabMinBits+c) < len(ch) {
			c++
		}
		s.free[c] = append(s.free[c], ch)
		s.held += int64(len(ch))
	}
	clear(set.chunks)
	set.chunks = set.chunks[:0]
}

// drop forgets the free chunks, returning their memory to the runtime.
func (s *slabs) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free = [slabClasses][][]byte{}
	s.held = 0
}

func (s *slabs) bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// alloc returns n bytes, 8-aligned, from c's chunk of its set, taking a
// new chunk of class bits when the current one is short.
func (s *slabs) alloc(c *slabCursor, n, bits int) []byte {
	n = (n + 7) &^ 7
	s.ensure(c, n, bits)
	b := c.rest[:n:n]
	c.rest = c.rest[n:]
	return b
}

// room returns an empty slice over the rest of c's chunk, with room for at
// least n bytes, for a unit to write its encodings into; place then keeps
// them there.
func (s *slabs) room(c *slabCursor, n, bits int) []byte {
	s.ensure(c, n, bits)
	return c.rest[:0]
}

// ensure gives c a chunk with at least n bytes left, taking a new one of
// class bits (kept in c's set) when the current one is short.
func (s *slabs) ensure(c *slabCursor, n, bits int) {
	if len(c.rest) < n {
		ch := s.get(n, bits)
		s.mu.Lock()
		c.set.chunks = append(c.set.chunks, ch)
		s.mu.Unlock()
		c.rest = ch
	}
}

// holds reports whether b starts the rest of c's chunk (b was written into
// room, and not moved by append).
func (c *slabCursor) holds(b []byte) bool {
	return len(b) > 0 && len(c.rest) >= (len(b)+7)&^7 && unsafe.SliceData(b) == unsafe.SliceData(c.rest)
}

// words views the first n words of b, which is 8-aligned and long enough.
func words(b []byte, n int) []uint64 {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// halfWords views the first n uint32s of b, which is aligned and long
// enough.
func halfWords(b []byte, n int) []uint32 {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(b))), n)
}
