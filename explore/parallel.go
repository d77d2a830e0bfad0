package explore

import (
	"sync"
	"sync/atomic"
)

// forEachRange splits [0, n) into at most workers contiguous ranges and runs
// f on range w in its own goroutine, returning when all are done.
func forEachRange(n, workers int, f func(w, lo, hi int)) {
	if workers < 1 {
		workers = 1
	}
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		if n > 0 {
			f(0, 0, n)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Go(func() { f(w, lo, hi) })
	}
	wg.Wait()
}

// forEachIndex runs f(w, i) for every i in [0, n) on workers goroutines,
// handing out indexes in order through an atomic counter. It stops handing
// out work once stop returns true or f returns an error, and returns the
// first error.
func forEachIndex(n, workers int, stop func() bool, f func(w, i int) error) error {
	if workers > n {
		workers = max(n, 1)
	}
	var (
		next  atomic.Int64
		once  sync.Once
		first error
		bad   atomic.Bool
		wg    sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			for !bad.Load() && (stop == nil || !stop()) {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(w, i); err != nil {
					once.Do(func() { first = err })
					bad.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// prefetchSink receives the sums of prefetching loads, so the compiler
// cannot drop them.
var prefetchSink atomic.Uint64

// insertAll adds every fingerprint of lists to s. Workers own disjoint
// ranges of shards and each scans all lists, so no locks are needed.
func (s *seenSet) insertAll(lists [][]uint64, workers int) uint64 {
	var added atomic.Uint64
	forEachRange(seenShards, workers, func(_, lo, hi int) {
		var (
			n    uint64
			buf  [group]uint64
			k    int
			sink uint64
		)
		// Gather a group, load its home slots, then insert (see group).
		insert := func() {
			for _, fp := range buf[:k] {
				sink += s.peekRun(fp)
			}
			for _, fp := range buf[:k] {
				if s.shards[shardOf(fp)].insert(fp, &s.pool) {
					n++
				}
			}
			k = 0
		}
		for _, l := range lists {
			for _, fp := range l {
				if sh := shardOf(fp); sh >= lo && sh < hi {
					buf[k] = fp
					if k++; k == group {
						insert()
					}
				}
			}
		}
		insert()
		added.Add(n)
		prefetchSink.Add(sink)
	})
	return added.Load()
}
