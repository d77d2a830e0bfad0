package explore

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
)

// diskSeen is the disk tier of the seen-set: sorted runs of fingerprints in
// plain files, with in front of them
//
//   - cache, an in-memory seen-set of the fingerprints not yet written:
//     expansion consults it like the memory tier, and when it outgrows its
//     share of the budget it is written out as a new run and emptied;
//   - one Bloom filter per run (up to 2 bytes a fingerprint, fewer when the
//     budget's share for filters runs short), so that checking a new
//     fingerprint rarely reads a file.
//
// A run file is its fingerprints in increasing order, 8 bytes each, big
// endian, read in blocks of runBlock fingerprints (4 KiB); the run keeps the
// first fingerprint of each block in memory (one byte for every 64 stored)
// to find the block that may hold a fingerprint. Past a few runs, runs are
// merged like a binary counter (a run is merged into the one before it
// while that one is no larger), so there are O(log n) runs and filters,
// and a fingerprint is rewritten O(log n) times.
//
// Files are read and written with pread and buffered writes, never mapped:
// what the operating system caches of them is its page cache, not the
// run's resident memory, so the budget covers everything the tier holds.
//
// After each level the level's new fingerprints are tested against the
// filters; the few that may be stored are sorted and each block they fall
// in is read once, in order (or a run is read through, when at least one
// in scanRatio of its blocks would be).
type diskSeen struct {
	dir         string
	cache       *seenSet
	cacheLimit  int64
	filterLimit int64      // bytes for all filters; 0 = unbounded
	runs        []*diskRun // oldest first
	nextID      uint64
	stored      uint64
}

// diskRun is one sorted batch of stored fingerprints.
type diskRun struct {
	f      *os.File
	n      uint64
	first  []uint64 // the first fingerprint of each block
	filter *bloom
}

// runBlock is how many fingerprints a block of a run file holds.
const runBlock = 512

// ioBuffer is the buffer of each run file being written or read through.
const ioBuffer = 256 << 10

func openDisk(dir string, budget int64) (*diskSeen, error) {
	d := &diskSeen{dir: dir, cache: new(seenSet), cacheLimit: 32 << 20}
	if budget > 0 {
		d.cacheLimit = clamp(budget/10, 64<<10, 1<<30)
		d.filterLimit = budget / 10
	}
	return d, nil
}

func clamp(v, lo, hi int64) int64 { return max(lo, min(v, hi)) }

// bloomBits is the bits per key for a new run's filter of n keys: the
// most that keeps all filters within filterLimit once it is added (runs
// rebuilt by merges get fewer bits as the store grows).
func (d *diskSeen) bloomBits(n uint64) int {
	if d.filterLimit <= 0 {
		return maxBloomBits
	}
	var other int64
	for _, r := range d.runs {
		other += r.filter.bytes()
	}
	return int(min(maxBloomBits, max(0, d.filterLimit-other)*8/int64(n)))
}

func (d *diskSeen) close() error {
	if d == nil {
		return nil
	}
	var err error
	for _, r := range d.runs {
		err = errors.Join(err, r.f.Close())
	}
	d.runs = nil
	return err
}

// bytes is the memory held by the cache, the filters and the block
// indexes.
func (d *diskSeen) bytes() int64 {
	n := d.cache.bytes()
	for _, r := range d.runs {
		n += r.filter.bytes() + int64(cap(r.first))*8
	}
	return n
}

// lookup returns the fingerprints of fps that are stored (the cache is not
// consulted). Each run's filter picks the fingerprints that may be in it;
// those are sorted. A run whose blocks are mostly probed is read through,
// merging; otherwise each probed block is read once, in order. The workers
// share the runs.
func (d *diskSeen) lookup(fps []uint64, workers int) ([]uint64, error) {
	if len(fps) == 0 || d.stored == 0 {
		return nil, nil
	}
	var (
		mu    sync.Mutex
		found []uint64
	)
	err := forEachIndex(len(d.runs), workers, nil, func(_, i int) error {
		r := d.runs[i]
		var ps []uint64
		for _, fp := range fps {
			if r.filter.has(fp) {
				ps = append(ps, fp)
			}
		}
		slices.Sort(ps)
		var got []uint64
		var err error
		if uint64(len(ps)) >= uint64(len(r.first))/scanRatio {
			got, err = r.scan(ps)
		} else {
			got, err = r.read(ps)
		}
		mu.Lock()
		found = append(found, got...)
		mu.Unlock()
		return err
	})
	return found, err
}

// scanRatio: a run is read through when at least 1/scanRatio of its
// blocks are probed; reading one block costs about as much as reading
// that many in order.
const scanRatio = 8

// scan merges sorted probes with the run, read in order.
func (r *diskRun) scan(ps []uint64) ([]uint64, error) {
	rr := r.reader()
	var found []uint64
	x, ok := rr.next()
	for _, p := range ps {
		for ok && x < p {
			x, ok = rr.next()
		}
		if ok && x == p {
			found = append(found, p)
		}
	}
	if rr.err != nil {
		return found, fmt.Errorf("explore: reading the disk seen-set: %w", rr.err)
	}
	return found, nil
}

// read looks sorted probes up, reading each block they fall in once.
func (r *diskRun) read(ps []uint64) ([]uint64, error) {
	var (
		found []uint64
		buf   = make([]byte, 8*runBlock)
	)
	for i := 0; i < len(ps); {
		// The block: the last whose first fingerprint is ≤ the probe.
		b := sort.Search(len(r.first), func(j int) bool { return r.first[j] > ps[i] }) - 1
		if b < 0 {
			i++
			continue
		}
		j := i
		for j < len(ps) && (b+1 == len(r.first) || ps[j] < r.first[b+1]) {
			j++
		}
		lo := uint64(b) * runBlock
		size := 8 * (min(lo+runBlock, r.n) - lo)
		if _, err := r.f.ReadAt(buf[:size], int64(8*lo)); err != nil {
			return found, fmt.Errorf("explore: reading the disk seen-set: %w", err)
		}
		for _, p := range ps[i:j] {
			if bucketHas(buf[:size], p) {
				found = append(found, p)
			}
		}
		i = j
	}
	return found, nil
}

// bucketHas reports whether the sorted 8-byte big-endian values in b
// include fp.
func bucketHas(b []byte, fp uint64) bool {
	lo, hi := 0, len(b)/8
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if binary.BigEndian.Uint64(b[8*m:]) < fp {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(b)/8 && binary.BigEndian.Uint64(b[8*lo:]) == fp
}

// remember adds a level's new fingerprints, writing the cache out each
// time it reaches its limit: a wide level goes in a part at a time, so the
// cache never holds much more than its limit.
func (d *diskSeen) remember(ctx context.Context, fps [][]uint64, workers int) error {
	for len(fps) > 0 {
		room := max(0, d.cacheLimit-d.cache.bytes()) / maxSeenBytes
		n, take := 1, int64(len(fps[0]))
		for n < len(fps) && take+int64(len(fps[n])) <= room {
			take += int64(len(fps[n]))
			n++
		}
		d.cache.insertAll(fps[:n], workers)
		fps = fps[n:]
		if d.cache.bytes() >= d.cacheLimit {
			if err := d.flush(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush writes the cache out as a new run and empties the cache. Past
// maxRuns runs, it merges the newest run into the one before while that
// one is no larger.
func (d *diskSeen) flush(ctx context.Context) error {
	n := d.cache.len()
	if n == 0 {
		return nil
	}
	// Shards in order, each sorted: the whole cache in order. Each shard's
	// memory is let go once written, so that moving a full in-memory
	// seen-set to disk does not need room for two copies.
	r, err := d.writeRun(ctx, n, func(yield func(uint64) bool) error {
		for i := range d.cache.shards {
			sh := &d.cache.shards[i]
			for _, pg := range sh.pages {
				for _, v := range pg {
					if v != 0 && !yield(v) {
						return nil
					}
				}
			}
			*sh = seenShard{}
		}
		d.cache.pool = pagePool{}
		return nil
	})
	if err != nil {
		return err
	}
	d.runs = append(d.runs, r)
	d.stored += n
	d.cache = new(seenSet)
	if len(d.runs) <= maxRuns {
		return nil
	}
	for k := len(d.runs); k >= 2 && d.runs[k-2].n <= d.runs[k-1].n; k = len(d.runs) {
		if err := d.merge(ctx); err != nil {
			return err
		}
	}
	return nil
}

// maxRuns is how many runs the store keeps before merging: a few filters
// cost little to test, and until then every fingerprint is written once.
const maxRuns = 8

// writeRun writes at most n sorted fingerprints, produced by each, as a new
// run file.
func (d *diskSeen) writeRun(ctx context.Context, n uint64, each func(yield func(uint64) bool) error) (*diskRun, error) {
	f, err := os.OpenFile(filepath.Join(d.dir, fmt.Sprintf("run-%d", d.nextID)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("explore: writing the disk seen-set: %w", err)
	}
	d.nextID++
	r := &diskRun{f: f, filter: newBloom(int(n), d.bloomBits(n)), first: make([]uint64, 0, (n+runBlock-1)/runBlock)}
	w := bufio.NewWriterSize(f, ioBuffer)
	var (
		werr error
		tmp  [8]byte
	)
	err = each(func(fp uint64) bool {
		if r.n%runBlock == 0 {
			r.first = append(r.first, fp)
			if r.n%(1<<20) == 0 {
				if werr = ctx.Err(); werr != nil {
					return false
				}
			}
		}
		r.filter.add(fp)
		binary.BigEndian.PutUint64(tmp[:], fp)
		_, werr = w.Write(tmp[:])
		r.n++
		return werr == nil
	})
	if err == nil {
		err = werr
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		r.remove()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("explore: writing the disk seen-set: %w", err)
	}
	return r, nil
}

// remove closes and deletes the run's file.
func (r *diskRun) remove() {
	r.f.Close()
	os.Remove(r.f.Name())
}

// merge replaces the two newest runs by one holding both.
func (d *diskSeen) merge(ctx context.Context) error {
	k := len(d.runs)
	a, b := d.runs[k-2], d.runs[k-1]
	ra, rb := a.reader(), b.reader()
	c, err := d.writeRun(ctx, a.n+b.n, func(yield func(uint64) bool) error {
		x, okx := ra.next()
		y, oky := rb.next()
		for okx || oky {
			var fp uint64
			switch {
			case !oky || (okx && x < y):
				fp = x
				x, okx = ra.next()
			case !okx || y < x:
				fp = y
				y, oky = rb.next()
			default: // in both: keep one
				fp = x
				x, okx = ra.next()
				y, oky = rb.next()
			}
			if !yield(fp) {
				return nil
			}
		}
		return errors.Join(ra.err, rb.err)
	})
	if err != nil {
		return err
	}
	a.remove()
	b.remove()
	d.runs = append(d.runs[:k-2], c)
	return nil
}

// runReader streams a run's fingerprints in order.
type runReader struct {
	r   *bufio.Reader
	err error
	tmp [8]byte
}

func (r *diskRun) reader() *runReader {
	return &runReader{r: bufio.NewReaderSize(io.NewSectionReader(r.f, 0, int64(8*r.n)), ioBuffer)}
}

func (rr *runReader) next() (uint64, bool) {
	if rr.err != nil {
		return 0, false
	}
	if _, err := io.ReadFull(rr.r, rr.tmp[:]); err != nil {
		if err != io.EOF {
			rr.err = err
		}
		return 0, false
	}
	return binary.BigEndian.Uint64(rr.tmp[:]), true
}
