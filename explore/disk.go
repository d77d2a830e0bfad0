package explore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// diskSeen is the disk tier of the seen-set. Every fingerprint ends up as a
// key of a badger store (8 bytes, big-endian so that key order is numeric
// order, with an empty value). In front of it:
//
//   - cache, an in-memory seen-set of the fingerprints not yet written:
//     expansion consults it like the memory tier, and when it outgrows its
//     share of the budget it is written to the store in one sorted batch
//     and emptied;
//   - one Bloom filter per such batch, about 1.25 bytes per stored
//     fingerprint, so that checking a new fingerprint rarely reads the
//     store: a badger lookup costs microseconds, a filter test one cache
//     line.
//
// After each level the level's fingerprints, sorted, are tested against the
// filters, and those that may be stored are looked up in the store in key
// order.
type diskSeen struct {
	db         *badger.DB
	cache      *seenSet
	cacheLimit int64
	filters    []*bloom
	stored     uint64
}

// badgerOptions sizes the store for budget (0 = unbounded). Keys are tiny
// and random: no compression, values kept inline, bloom filters on every
// table so that a lookup of an absent key rarely reads a block.
func badgerOptions(dir string, budget int64) badger.Options {
	// Keys arrive in large sorted batches; small memtables keep the skiplist
	// inserts cache-friendly (8 MiB measured fastest, from 2 to 64 MiB).
	memtable := int64(8 << 20)
	blockCache := int64(8 << 20)
	indexCache := int64(0) // 0 = keep every table index and bloom filter in memory
	if budget > 0 {
		memtable = clamp(budget/16, 4<<20, 8<<20)
		blockCache = clamp(budget/64, 1<<20, 8<<20)
		indexCache = clamp(budget/8, 4<<20, 256<<20)
	}
	return badger.DefaultOptions(dir).
		WithLogger(nil).
		WithSyncWrites(false).
		WithDetectConflicts(false).
		WithMetricsEnabled(false).
		WithNumVersionsToKeep(1).
		WithCompression(options.None).
		WithMemTableSize(memtable).
		WithNumMemtables(2).
		WithNumLevelZeroTables(4).
		WithNumLevelZeroTablesStall(8).
		WithBaseTableSize(memtable / 2).
		WithBaseLevelSize(memtable * 4).
		WithValueThreshold(64).
		WithValueLogFileSize(16 << 20).
		WithBloomFalsePositive(0.01).
		WithBlockCacheSize(blockCache).
		WithIndexCacheSize(indexCache).
		WithNumCompactors(2)
}

func clamp(v, lo, hi int64) int64 { return max(lo, min(v, hi)) }

func openDisk(dir string, budget int64) (*diskSeen, error) {
	db, err := badger.Open(badgerOptions(dir, budget))
	if err != nil {
		return nil, fmt.Errorf("explore: opening the disk seen-set: %w", err)
	}
	limit := int64(32 << 20)
	if budget > 0 {
		limit = clamp(budget/4, 64<<10, 1<<30)
	}
	return &diskSeen{db: db, cache: new(seenSet), cacheLimit: limit}, nil
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
	for _, f := range d.filters {
		n += f.bytes()
	}
	return n
}

// lookup returns the fingerprints of fps that are in the store (the cache
// is not consulted). The filters rule out almost all absent ones; the rest
// are sorted and looked up in key order by the workers, each taking a
// contiguous range in one read transaction.
func (d *diskSeen) lookup(fps []uint64, workers int) ([]uint64, error) {
	if len(fps) == 0 || d.stored == 0 {
		return nil, nil
	}
	parts := make([][]uint64, workers)
	forEachRange(len(fps), workers, func(w, lo, hi int) {
		var maybe []uint64
		for _, fp := range fps[lo:hi] {
			for _, f := range d.filters {
				if f.has(fp) {
					maybe = append(maybe, fp)
					break
				}
			}
		}
		parts[w] = maybe
	})
	maybe := slices.Concat(parts...)
	slices.Sort(maybe)
	var (
		mu    sync.Mutex
		first error
		found []uint64
	)
	forEachRange(len(maybe), workers, func(_, lo, hi int) {
		txn := d.db.NewTransaction(false)
		defer txn.Discard()
		var (
			key [8]byte
			got []uint64
			err error
		)
		for _, fp := range maybe[lo:hi] {
			binary.BigEndian.PutUint64(key[:], fp)
			if _, err = txn.Get(key[:]); err == nil {
				got = append(got, fp)
			} else if !errors.Is(err, badger.ErrKeyNotFound) {
				break
			}
		}
		mu.Lock()
		defer mu.Unlock()
		found = append(found, got...)
		if err != nil && !errors.Is(err, badger.ErrKeyNotFound) && first == nil {
			first = fmt.Errorf("explore: reading the disk seen-set: %w", err)
		}
	})
	return found, first
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

// flush writes the cache to the store, in key order, and empties it.
func (d *diskSeen) flush(ctx context.Context) error {
	n := d.cache.len()
	if n == 0 {
		return nil
	}
	f := newBloom(int(n))
	wb := d.db.NewWriteBatch()
	defer wb.Cancel()
	const chunk = 1 << 16
	keys := make([]byte, 0, 8*chunk)
	var err error
	// Shards in order, each sorted: the whole cache in key order.
	d.cache.each(0, seenShards, func(fp uint64) {
		if err != nil {
			return
		}
		f.add(fp)
		if len(keys) == cap(keys) {
			if err = ctx.Err(); err != nil {
				return
			}
			keys = make([]byte, 0, 8*chunk) // the batch holds on to the old keys
		}
		k := binary.BigEndian.AppendUint64(keys, fp)
		keys = k
		err = wb.Set(k[len(k)-8:], nil)
	})
	if err == nil {
		err = wb.Flush()
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("explore: writing the disk seen-set: %w", err)
	}
	d.filters = append(d.filters, f)
	d.stored += n
	d.cache = new(seenSet)
	return nil
}
