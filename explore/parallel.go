package explore

import (
	"slices"
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

// insertAll adds every fingerprint of lists to s. The fingerprints are
// first sorted into buckets by shard (a counting sort, each worker counting
// and placing a range of the lists), then the workers fill disjoint ranges
// of shards, one shard at a time, so no locks are needed: a shard's table
// is a small part of the set, so its slots stay in the cache while its
// bucket goes in, where inserting in list order would visit the whole
// range at random.
//
// It returns how many were added, and the fingerprints that were in the
// set already.
func (s *seenSet) insertAll(lists [][]uint64, workers int) (uint64, []uint64) {
	workers = max(1, min(workers, len(lists)))
	counts := make([][seenShards]int, workers)
	forEachRange(len(lists), workers, func(w, lo, hi int) {
		c := &counts[w]
		for _, l := range lists[lo:hi] {
			for _, fp := range l {
				c[shardOf(fp)]++
			}
		}
	})
	// Bucket sh holds worker 0's fingerprints of shard sh, then worker 1's,
	// and so on: counts[w][sh] becomes where worker w writes them.
	var start [seenShards + 1]int
	for sh := range seenShards {
		start[sh+1] = start[sh]
		for w := range counts {
			n := counts[w][sh]
			counts[w][sh] = start[sh+1]
			start[sh+1] += n
		}
	}
	buf := make([]uint64, start[seenShards])
	forEachRange(len(lists), workers, func(w, lo, hi int) {
		next := &counts[w]
		for _, l := range lists[lo:hi] {
			for _, fp := range l {
				sh := shardOf(fp)
				buf[next[sh]] = fp
				next[sh]++
			}
		}
	})
	var added atomic.Uint64
	present := make([][]uint64, workers)
	forEachRange(seenShards, workers, func(w, lo, hi int) {
		var n, sink uint64
		for sh := lo; sh < hi; sh++ {
			shard := &s.shards[sh]
			bucket := buf[start[sh]:start[sh+1]]
			shard.reserve(uint64(len(bucket)), &s.pool)
			for len(bucket) > 0 {
				// A few inserts into a large shard still go to memory:
				// load a group's home slots first (see group).
				g := bucket[:min(group, len(bucket))]
				bucket = bucket[len(g):]
				for _, fp := range g {
					sink += shard.peek(fp)
				}
				for _, fp := range g {
					if shard.insert(fp, &s.pool) {
						n++
					} else {
						present[w] = append(present[w], fp)
					}
				}
			}
		}
		added.Add(n)
		prefetchSink.Add(sink)
	})
	return added.Load(), slices.Concat(present...)
}
