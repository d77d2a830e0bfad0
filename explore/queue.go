package explore

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"
)

// unitSize is how many frontier states a worker takes at a time. Work is
// handed out in contiguous units so that concatenating the units' outputs in
// unit order yields the next level already sorted by discovery key.
const unitSize = 512

// batch is a run of encoded states in level order: either a unit's
// candidates for the next level (with fingerprints and keys) or a piece of
// the frontier (encodings only).
type batch struct {
	fps  []uint64
	keys []uint64
	ends []uint32 // ends[i] is the end of state i in data
	data []byte

	// A spilled batch keeps its encodings in the candidate file at
	// [off, off+size) instead of data.
	spilled   bool
	off, size int64
	// keep lists the candidates kept by the level filter, by original
	// position, when the data is written out rather than compacted in place.
	keep []uint32
}

func (b *batch) len() int { return len(b.ends) }

func (b *batch) start(i int) uint32 {
	if i == 0 {
		return 0
	}
	return b.ends[i-1]
}

// state is the encoding of state i, from data (or buf for a spilled batch).
func (b *batch) state(data []byte, i int) []byte {
	return data[b.start(i):b.ends[i]]
}

func (b *batch) add(fp, key uint64, enc []byte) {
	b.fps = append(b.fps, fp)
	b.keys = append(b.keys, key)
	b.data = append(b.data, enc...)
	b.ends = append(b.ends, uint32(len(b.data)))
}

func (b *batch) bytes() int64 {
	return int64(cap(b.fps)+cap(b.keys))*8 + int64(cap(b.ends))*4 + int64(cap(b.data)) + int64(cap(b.keep))*4
}

func (b *batch) reset() {
	b.fps, b.keys, b.ends, b.data, b.keep = b.fps[:0], b.keys[:0], b.ends[:0], b.data[:0], b.keep[:0]
	b.spilled, b.off, b.size = false, 0, 0
}

// detach forgets the batch's states, whose memory may belong to slabs
// about to be reused.
func (b *batch) detach() {
	b.fps, b.keys, b.ends, b.data, b.keep = nil, nil, nil, nil, nil
	b.spilled, b.off, b.size = false, 0, 0
}

// place moves the states of sc, a worker's scratch batch, into b at their
// exact size: fingerprints and keys, and room for the list of kept
// positions, from the cursor meta; end offsets and (unless withData is
// false) encodings from data. Encodings that sc wrote straight into data's
// chunk (see room) stay where they are.
func (b *batch) place(s *slabs, sc *batch, meta, data *slabCursor, bits int, withData bool) {
	n := sc.len()
	if n == 0 {
		return
	}
	m := s.alloc(meta, 20*n, bits)
	b.fps, b.keys, b.keep = words(m, n), words(m[8*n:], n), halfWords(m[16*n:], n)[:0]
	copy(b.fps, sc.fps)
	copy(b.keys, sc.keys)
	if withData {
		size := len(sc.data)
		if data.holds(sc.data) {
			b.data = s.alloc(data, size, bits)[:size:size]
		} else {
			b.data = s.alloc(data, size, bits)[:size:size]
			copy(b.data, sc.data)
		}
	}
	b.ends = halfWords(s.alloc(data, 4*n, bits), n)
	copy(b.ends, sc.ends)
}

// filter keeps the candidates that are their fingerprint's canonical
// discoverer in lm: it compacts fps and keys in place and lists the kept
// positions in keep; the encodings stay where they are until compactData
// (or are written out by position). The map's slots are loaded a group
// ahead, as in flush; sink keeps those loads.
func (b *batch) filter(lm *levelMap) (sink uint64) {
	b.keep = b.keep[:0]
	w := 0
	for lo := 0; lo < len(b.fps); lo += group {
		hi := min(lo+group, len(b.fps))
		for _, fp := range b.fps[lo:hi] {
			sink += lm.peek(fp) // see group
		}
		for i := lo; i < hi; i++ {
			if lm.winner(b.fps[i]) == b.keys[i]+1 {
				b.fps[w], b.keys[w] = b.fps[i], b.keys[i]
				b.keep = append(b.keep, uint32(i))
				w++
			}
		}
	}
	b.fps, b.keys = b.fps[:w], b.keys[:w]
	return sink
}

// filterDisplaced is filter when the level map holds every candidate's
// offer and no fingerprint was marked seen after the level: a candidate won
// its offer when it was gathered, and is its fingerprint's canonical
// discoverer unless a smaller key displaced it since, which insert
// reported. It walks the batch's keys, which are sorted, beside the sorted
// displaced keys, instead of probing the map at random once per candidate.
func (b *batch) filterDisplaced(displaced []uint64) {
	b.keep = b.keep[:0]
	if len(b.keys) > 0 {
		i, _ := slices.BinarySearch(displaced, b.keys[0])
		displaced = displaced[i:]
	}
	w := 0
	for i, k := range b.keys {
		for len(displaced) > 0 && displaced[0] < k {
			displaced = displaced[1:]
		}
		if len(displaced) > 0 && displaced[0] == k {
			continue
		}
		b.fps[w], b.keys[w] = b.fps[i], k
		b.keep = append(b.keep, uint32(i))
		w++
	}
	b.fps, b.keys = b.fps[:w], b.keys[:w]
}

// refilter keeps, of the candidates filter kept, those that still win in
// lm (fingerprints found in the seen-set since are marked there).
func (b *batch) refilter(lm *levelMap) {
	w := 0
	for i := range b.fps {
		if lm.winner(b.fps[i]) == b.keys[i]+1 {
			b.fps[w], b.keys[w], b.keep[w] = b.fps[i], b.keys[i], b.keep[i]
			w++
		}
	}
	b.fps, b.keys, b.keep = b.fps[:w], b.keys[:w], b.keep[:w]
}

// compactData drops the encodings of the candidates filter removed.
func (b *batch) compactData() {
	// The states before the first one dropped stay where they are.
	w0 := 0
	for w0 < len(b.keep) && b.keep[w0] == uint32(w0) {
		w0++
	}
	dst := b.start(w0)
	for w, i := range b.keep[w0:] {
		w += w0
		s, e := b.start(int(i)), b.ends[i]
		copy(b.data[dst:], b.data[s:e])
		dst += e - s
		b.ends[w] = dst
	}
	b.ends, b.data, b.keep = b.ends[:len(b.keep)], b.data[:dst], b.keep[:0]
}

// batchPool recycles batches between levels (their states live in slabs).
type batchPool struct {
	mu   sync.Mutex
	free []*batch
}

func (p *batchPool) get() *batch {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		return b
	}
	return new(batch)
}

func (p *batchPool) put(b *batch) {
	b.detach()
	p.mu.Lock()
	p.free = append(p.free, b)
	p.mu.Unlock()
}

// drop forgets the pooled batches, returning their memory to the runtime.
func (p *batchPool) drop() {
	p.mu.Lock()
	p.free = nil
	p.mu.Unlock()
}

func (p *batchPool) bytes() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var n int64
	for _, b := range p.free {
		n += b.bytes()
	}
	return n
}

// frontier is the level being expanded: batches in memory, or a file of
// length-prefixed encodings.
type frontier struct {
	n       uint64
	batches []*batch
	slab    slabSet // the batches' memory
	file    *os.File
}

func (f *frontier) bytes() int64 {
	var n int64
	for _, b := range f.batches {
		n += b.bytes()
	}
	return n
}

// source hands out the frontier in contiguous units. A file frontier is
// read in order. A frontier in memory is cut into one region per worker,
// and each worker takes its own region's units in order before taking from
// the others': neighbouring states tend to share successors, so workers far
// apart in the level rarely offer the same fingerprint at the same moment.
// The order in which units are expanded does not matter for the result.
type source struct {
	f       *frontier
	units   []unit // memory: all units, in order
	regions []region

	mu   sync.Mutex
	r    *bufio.Reader
	read uint64 // file: states read so far
	err  error
}

// region is a run of units [next, end) owned by one worker.
type region struct {
	next atomic.Int64
	end  int64
	_    [48]byte
}

// unit is a run of consecutive states of the level, the first of which is
// state base: states [lo, hi) of each of its segments in turn.
type unit struct {
	ord  int
	base uint64
	segs []segment
}

type segment struct {
	b      *batch
	lo, hi int
}

func (u *unit) len() int {
	n := 0
	for _, s := range u.segs {
		n += s.hi - s.lo
	}
	return n
}

func newSource(f *frontier, workers int) (*source, error) {
	src := &source{f: f}
	if f.file != nil {
		if _, err := f.file.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		src.r = bufio.NewReaderSize(f.file, 1<<20)
		return src, nil
	}
	// Cut the level into units of unitSize states, across batch
	// boundaries: batches shrink as levels do, and units should not.
	var (
		base uint64
		cur  unit
		n    int
	)
	for _, b := range f.batches {
		for lo := 0; lo < b.len(); {
			hi := min(b.len(), lo+unitSize-n)
			cur.segs = append(cur.segs, segment{b, lo, hi})
			n += hi - lo
			lo = hi
			if n == unitSize {
				src.units = append(src.units, cur)
				base += uint64(n)
				cur, n = unit{ord: len(src.units), base: base}, 0
			}
		}
	}
	if n > 0 {
		src.units = append(src.units, cur)
	}
	src.regions = make([]region, workers)
	for w := range src.regions {
		src.regions[w].next.Store(int64(len(src.units) * w / workers))
		src.regions[w].end = int64(len(src.units) * (w + 1) / workers)
	}
	return src, nil
}

// numUnits is how many units the source will hand out.
func (s *source) numUnits() int {
	if s.f.file != nil {
		return int((s.f.n + unitSize - 1) / unitSize)
	}
	return len(s.units)
}

// take returns the next unit for worker w; a file unit is read into
// scratch. ok is false when the frontier is exhausted.
func (s *source) take(w int, scratch *batch) (u unit, ok bool, err error) {
	if s.f.file == nil {
		for k := range s.regions {
			r := &s.regions[(w+k)%len(s.regions)]
			if i := r.next.Add(1) - 1; i < r.end {
				return s.units[i], true, nil
			}
		}
		return unit{}, false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil || s.read == s.f.n {
		return unit{}, false, s.err
	}
	scratch.reset()
	u = unit{ord: int(s.read / unitSize), base: s.read}
	for scratch.len() < unitSize && s.read < s.f.n {
		if err := readState(s.r, scratch); err != nil {
			s.err = fmt.Errorf("explore: reading the spilled queue: %w", err)
			return unit{}, false, s.err
		}
		s.read++
	}
	u.segs = []segment{{scratch, 0, scratch.len()}}
	return u, true, nil
}

func readState(r *bufio.Reader, b *batch) error {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return err
	}
	l := len(b.data)
	b.data = slices.Grow(b.data, int(n))[:l+int(n)]
	if _, err := io.ReadFull(r, b.data[l:]); err != nil {
		return err
	}
	b.ends = append(b.ends, uint32(len(b.data)))
	return nil
}

// queueWriter writes a level to a frontier file.
type queueWriter struct {
	f   *os.File
	w   *bufio.Writer
	n   uint64
	tmp [binary.MaxVarintLen64]byte
}

func newQueueWriter(f *os.File) *queueWriter {
	return &queueWriter{f: f, w: bufio.NewWriterSize(f, 1<<20)}
}

func (q *queueWriter) write(enc []byte) error {
	k := binary.PutUvarint(q.tmp[:], uint64(len(enc)))
	if _, err := q.w.Write(q.tmp[:k]); err != nil {
		return err
	}
	_, err := q.w.Write(enc)
	q.n++
	return err
}

func (q *queueWriter) flush() error { return q.w.Flush() }

// candFile holds the encodings of candidates spilled while a level is being
// generated, appended by unit as units finish.
type candFile struct {
	mu  sync.Mutex
	dir *workDir
	f   *os.File
	end int64
}

func (c *candFile) append(data []byte) (off int64, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		if c.f, err = c.dir.create("candidates"); err != nil {
			return 0, err
		}
	}
	off = c.end
	if _, err := c.f.WriteAt(data, off); err != nil {
		return 0, err
	}
	c.end += int64(len(data))
	return off, nil
}

func (c *candFile) reset() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.end = 0
	if c.f == nil {
		return nil
	}
	return c.f.Truncate(0)
}
