package explore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// diskSeen is the disk tier of the seen-set: a badger store holding every
// fingerprint, with in front of it
//
//   - cache, an in-memory seen-set of the fingerprints not yet written:
//     expansion consults it like the memory tier, and when it outgrows its
//     share of the budget it is written to the store as a new run and
//     emptied;
//   - one Bloom filter per run (up to 2 bytes a fingerprint, fewer when the
//     budget's fifth for filters runs short), so that checking a new
//     fingerprint rarely reads the store.
//
// A run is a sorted set of fingerprints cut into buckets by their top bits,
// about runBucket to a bucket. Each bucket is one badger entry: an 8-byte
// big-endian key (the run's id, then the bucket) whose value is the bucket's
// fingerprints, sorted, 8 bytes each. Badger costs microseconds of CPU per
// entry written (skiplist insert, flush, compaction), so one entry per
// fingerprint would make the disk tier an order of magnitude slower than
// memory; packing them makes writes cheap, and a lookup reads one small
// value. Past a few runs, runs are merged like a binary counter (a run is
// merged into the one before it while that one is no larger), so there are
// O(log n) runs and filters, and a fingerprint is rewritten O(log n) times.
//
// After each level the level's new fingerprints are tested against the
// filters; the few that may be stored are sorted by entry key and each entry
// is read once, in key order (or a run is read through, when at least one
// in scanRatio of its entries would be).
type diskSeen struct {
	db          *badger.DB
	cache       *seenSet
	cacheLimit  int64
	filterLimit int64      // bytes for all filters; 0 = unbounded
	runs        []*diskRun // oldest first
	nextID      uint64
	stored      uint64
}

// diskRun is one sorted batch of stored fingerprints.
type diskRun struct {
	id     uint64 // the top runIDBits bits of its entries' keys
	bits   uint   // bucket bits: a bucket is the fingerprint's top bits
	n      uint64
	filter *bloom
}

const (
	runIDBits     = 24
	runBucketBits = 64 - runIDBits
	runBucket     = 256 // fingerprints a bucket aims for
)

func (r *diskRun) key(fp uint64) uint64 {
	if r.bits == 0 {
		return r.id << runBucketBits
	}
	return r.id<<runBucketBits | fp>>(64-r.bits)
}

// bucketBits picks the bucket bits for a run of n fingerprints.
func bucketBits(n uint64) uint {
	if n <= runBucket {
		return 0
	}
	return min(uint(bits.Len64((n-1)/runBucket)), runBucketBits)
}

// badgerOptions sizes the store for budget (0 = unbounded). Entries are
// written in large sorted batches and read rarely, so the store is tuned
// for cheap writes: no compression (fingerprints are random), values kept
// in the tree rather than a value log, small memtables (8 MiB measured
// fastest from 2 to 64 MiB). Badger builds each table it writes in memory,
// so tables keep one size at every level (by default they double at each
// level: 256 MiB buffers at the last), and level 0 holds few tables (it
// merges its tables into a single one when it cannot compact downwards).
func badgerOptions(dir string, budget int64) badger.Options {
	memtable, blockCache, indexCache := badgerSizes(budget)
	o := badger.DefaultOptions(dir).
		WithLogger(nil).
		WithSyncWrites(false).
		WithDetectConflicts(false).
		WithMetricsEnabled(false).
		WithNumVersionsToKeep(1).
		WithCompression(options.None).
		WithMemTableSize(memtable).
		WithNumMemtables(2).
		WithNumLevelZeroTables(4).
		WithNumLevelZeroTablesStall(16).
		WithBaseTableSize(memtable / 4).
		WithBaseLevelSize(memtable * 16).
		WithValueThreshold(memtable / 8).
		WithValueLogFileSize(16 << 20).
		WithBloomFalsePositive(0.01).
		WithBlockCacheSize(blockCache).
		WithIndexCacheSize(indexCache).
		WithNumCompactors(2)
	o.TableSizeMultiplier = 1
	return o
}

// badgerSizes are the store's memtable, block cache and index cache sizes
// for budget. An index cache of 0 keeps every table index in memory.
func badgerSizes(budget int64) (memtable, blockCache, indexCache int64) {
	if budget <= 0 {
		return 8 << 20, 8 << 20, 0
	}
	return clamp(budget/32, 1<<20, 8<<20), clamp(budget/64, 256<<10, 8<<20), clamp(budget/32, 1<<20, 64<<20)
}

// badgerMemory estimates the memory the store holds for budget: two
// memtables, a level-0 table being built (twice a memtable), the tables
// compactions build (two compactors, a few tables each, each buffered
// twice), its caches, and the write batches in flight (maxPending, each at
// most 15% of a memtable).
func badgerMemory(budget int64) int64 {
	memtable, blockCache, indexCache := badgerSizes(budget)
	return 4*memtable + 16*memtable/4 + blockCache + indexCache + maxPending*memtable*15/100
}

// maxPending bounds the transactions a write batch has in flight.
const maxPending = 2

func clamp(v, lo, hi int64) int64 { return max(lo, min(v, hi)) }

func openDisk(dir string, budget int64) (*diskSeen, error) {
	db, err := badger.Open(badgerOptions(dir, budget))
	if err != nil {
		return nil, fmt.Errorf("explore: opening the disk seen-set: %w", err)
	}
	d := &diskSeen{db: db, cache: new(seenSet), cacheLimit: 32 << 20}
	if budget > 0 {
		d.cacheLimit = clamp(budget/5, 64<<10, 1<<30)
		d.filterLimit = budget / 5
	}
	return d, nil
}

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
	if d == nil || d.db == nil {
		return nil
	}
	err := d.db.Close()
	d.db = nil
	return err
}

// bytes is the memory held by the cache and the filters.
func (d *diskSeen) bytes() int64 {
	n := d.cache.bytes()
	for _, r := range d.runs {
		n += r.filter.bytes()
	}
	return n
}

// probe is a fingerprint that a run's filter says may be stored there.
type probe struct {
	key, fp uint64
}

// lookup returns the fingerprints of fps that are in the store (the cache
// is not consulted). Each run's filter picks the fingerprints that may be
// in it; those are sorted by entry key. A run whose entries are mostly
// probed is read through in key order, merging; otherwise each probed
// entry is read once, in key order. The workers share the runs.
func (d *diskSeen) lookup(fps []uint64, workers int) ([]uint64, error) {
	if len(fps) == 0 || d.stored == 0 {
		return nil, nil
	}
	probes := make([][]probe, len(d.runs))
	forEachIndex(len(d.runs), workers, nil, func(_, i int) error {
		r := d.runs[i]
		var ps []probe
		for _, fp := range fps {
			if r.filter.has(fp) {
				ps = append(ps, probe{r.key(fp), fp})
			}
		}
		slices.SortFunc(ps, func(a, b probe) int {
			if a.key != b.key {
				return cmpUint64(a.key, b.key)
			}
			return cmpUint64(a.fp, b.fp)
		})
		probes[i] = ps
		return nil
	})
	var (
		mu    sync.Mutex
		found []uint64
	)
	err := forEachIndex(len(d.runs), workers, nil, func(_, i int) error {
		var got []uint64
		var err error
		if ps := probes[i]; uint64(len(ps)) >= d.runs[i].entries()/scanRatio {
			got, err = d.scan(d.runs[i], ps)
		} else {
			got, err = d.read(ps)
		}
		mu.Lock()
		found = append(found, got...)
		mu.Unlock()
		return err
	})
	return found, err
}

// scanRatio: a run is read through when at least 1/scanRatio of its
// entries are probed; a lookup of one entry costs about as much as reading
// that many entries in order.
const scanRatio = 8

// entries is about how many badger entries the run has.
func (r *diskRun) entries() uint64 { return max(1, min(r.n, 1<<r.bits)) }

// scan merges sorted probes with the run's entries, read in key order.
func (d *diskSeen) scan(r *diskRun, ps []probe) ([]uint64, error) {
	txn := d.db.NewTransaction(false)
	defer txn.Discard()
	rr := newRunReader(txn, r)
	defer rr.close()
	var found []uint64
	x, ok := rr.next()
	for _, p := range ps {
		for ok && x < p.fp {
			x, ok = rr.next()
		}
		if ok && x == p.fp {
			found = append(found, p.fp)
		}
	}
	if rr.err != nil {
		return found, fmt.Errorf("explore: reading the disk seen-set: %w", rr.err)
	}
	return found, nil
}

// read looks probes up, grouped by entry, in one read transaction.
func (d *diskSeen) read(ps []probe) ([]uint64, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	txn := d.db.NewTransaction(false)
	defer txn.Discard()
	var (
		found []uint64
		val   []byte
		key   [8]byte
	)
	for i := 0; i < len(ps); {
		j := i
		for j < len(ps) && ps[j].key == ps[i].key {
			j++
		}
		binary.BigEndian.PutUint64(key[:], ps[i].key)
		item, err := txn.Get(key[:])
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
		case err != nil:
			return found, fmt.Errorf("explore: reading the disk seen-set: %w", err)
		default:
			if val, err = item.ValueCopy(val[:0]); err != nil {
				return found, fmt.Errorf("explore: reading the disk seen-set: %w", err)
			}
			for _, p := range ps[i:j] {
				if bucketHas(val, p.fp) {
					found = append(found, p.fp)
				}
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

func cmpUint64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// remember adds a level's new fingerprints, writing the cache out when it
// has outgrown its limit.
func (d *diskSeen) remember(ctx context.Context, fps [][]uint64, workers int) error {
	d.cache.insertAll(fps, workers)
	if d.cache.bytes() <= d.cacheLimit {
		return nil
	}
	return d.flush(ctx)
}

// flush writes the cache to the store as a new run and empties the cache.
// Past maxRuns runs, it merges the newest run into the one before while
// that one is no larger.
func (d *diskSeen) flush(ctx context.Context) error {
	n := d.cache.len()
	if n == 0 {
		return nil
	}
	// Shards in order, each sorted: the whole cache in key order. Each
	// shard's memory is let go once written, so that moving a full
	// in-memory seen-set to disk does not need room for two copies.
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

// writeRun writes n sorted fingerprints, produced by each, as a new run.
func (d *diskSeen) writeRun(ctx context.Context, n uint64, each func(yield func(uint64) bool) error) (*diskRun, error) {
	if d.nextID >= 1<<runIDBits {
		return nil, errors.New("explore: the disk seen-set has written too many runs")
	}
	r := &diskRun{id: d.nextID, bits: bucketBits(n), n: n, filter: newBloom(int(n), d.bloomBits(n))}
	d.nextID++
	wb := d.db.NewWriteBatch()
	wb.SetMaxPendingTxns(maxPending)
	defer wb.Cancel()
	var (
		slab   []byte // keys and values handed to the batch, kept until Flush
		bucket []byte // the current bucket's fingerprints
		key    uint64
		werr   error
	)
	put := func() {
		if werr != nil || len(bucket) == 0 {
			return
		}
		if len(slab)+8+len(bucket) > cap(slab) {
			if werr = ctx.Err(); werr != nil {
				return
			}
			slab = make([]byte, 0, max(1<<20, 8+len(bucket)))
		}
		k := len(slab)
		slab = binary.BigEndian.AppendUint64(slab, key)
		slab = append(slab, bucket...)
		werr = wb.Set(slab[k:k+8], slab[k+8:])
		bucket = bucket[:0]
	}
	err := each(func(fp uint64) bool {
		r.filter.add(fp)
		if k := r.key(fp); k != key || len(bucket) == 0 {
			put()
			key = k
		}
		bucket = binary.BigEndian.AppendUint64(bucket, fp)
		return werr == nil
	})
	put()
	if err == nil {
		err = werr
	}
	if err == nil {
		err = wb.Flush()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("explore: writing the disk seen-set: %w", err)
	}
	return r, nil
}

// merge replaces the two newest runs by one holding both.
func (d *diskSeen) merge(ctx context.Context) error {
	k := len(d.runs)
	a, b := d.runs[k-2], d.runs[k-1]
	txn := d.db.NewTransaction(false)
	defer txn.Discard()
	ra, rb := newRunReader(txn, a), newRunReader(txn, b)
	defer ra.close()
	defer rb.close()
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
	wb := d.db.NewWriteBatch()
	defer wb.Cancel()
	for _, key := range slices.Concat(ra.keys, rb.keys) {
		if err := wb.Delete(key); err != nil {
			return fmt.Errorf("explore: writing the disk seen-set: %w", err)
		}
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("explore: writing the disk seen-set: %w", err)
	}
	d.runs = append(d.runs[:k-2], c)
	return nil
}

// runReader streams a run's fingerprints in order and remembers its keys.
type runReader struct {
	it   *badger.Iterator
	val  []byte
	pos  int
	keys [][]byte
	err  error
}

func newRunReader(txn *badger.Txn, r *diskRun) *runReader {
	prefix := binary.BigEndian.AppendUint64(nil, r.id<<runBucketBits)[:runIDBits/8]
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: false})
	it.Rewind()
	return &runReader{it: it}
}

func (rr *runReader) next() (uint64, bool) {
	for rr.pos == len(rr.val) {
		if rr.err != nil || !rr.it.Valid() {
			return 0, false
		}
		item := rr.it.Item()
		rr.keys = append(rr.keys, item.KeyCopy(nil))
		rr.val, rr.err = item.ValueCopy(rr.val[:0])
		rr.pos = 0
		if rr.err != nil {
			rr.val = rr.val[:0]
			return 0, false
		}
		rr.it.Next()
	}
	fp := binary.BigEndian.Uint64(rr.val[rr.pos:])
	rr.pos += 8
	return fp, true
}

func (rr *runReader) close() { rr.it.Close() }
