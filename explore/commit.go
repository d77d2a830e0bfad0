package explore

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sync/atomic"
)

// commit turns a level's candidates into the next frontier: it keeps each
// fingerprint's canonical discoverer (and, on the disk tier, drops what the
// store already holds), records the level's keys for traces, and adds the
// new fingerprints to the seen-set. Concatenated in unit order, the kept
// candidates are sorted by key: the order single-threaded BFS would find
// them in.
func (e *engine[S, A]) commit(ctx context.Context, outs []*batch) error {
	toFile := e.spilled || e.spillCands.Load()
	n, err := e.settle(ctx, outs, toFile)
	if err != nil {
		return err
	}
	if n > 0 {
		keys := make([][]uint64, len(outs))
		lists := make([][]uint64, len(outs))
		for i, b := range outs {
			keys[i], lists[i] = b.keys, b.fps
		}
		if err := e.trace.add(keys, e.nw); err != nil {
			e.release(outs)
			return err
		}
		if err := e.levelSeen(ctx, lists); err != nil {
			e.release(outs)
			return err
		}
		if e.ckpt != nil {
			if err := e.ckpt.appendLevel(lists, keys); err != nil {
				e.release(outs)
				return err
			}
		}
	}

	// The old frontier is fully expanded: recycle it, then install the new one.
	e.dropFrontier()
	if toFile {
		err := e.writeFrontier(outs, uint64(n))
		e.slab.release(&e.candMeta)
		e.slab.release(&e.candData)
		if err != nil {
			return err
		}
	} else {
		var kept []*batch
		for _, b := range outs {
			if b.len() == 0 {
				e.pool.put(b)
			} else {
				b.fps, b.keys, b.keep = nil, nil, nil // their slab is freed below
				kept = append(kept, b)
			}
		}
		e.slab.release(&e.candMeta)
		e.front = frontier{n: uint64(n), batches: kept, slab: e.candData}
		e.candData = slabSet{}
	}
	e.advance(uint64(n))
	if e.spillCands.Load() {
		e.spillCands.Store(false)
		if err := e.cand.reset(); err != nil {
			return err
		}
		return e.toDisk(ctx, true)
	}
	return nil
}

// advance counts a new frontier of n states as the next level.
func (e *engine[S, A]) advance(n uint64) {
	if n > 0 {
		e.depth++
		e.depthNow.Store(int64(e.depth))
	}
	e.distinct.Add(n)
	e.queue.Store(n)
	if n > e.queuePeak.Load() {
		e.queuePeak.Store(n)
	}
}

// settle decides which of a level's candidates are kept: each
// fingerprint's canonical discoverer, unless the disk tier already holds
// it. It filters the batches in place (compacting their encodings unless
// they are to be written out) and returns how many were kept; on error the
// batches are released.
func (e *engine[S, A]) settle(ctx context.Context, outs []*batch, toFile bool) (int, error) {
	lm := &e.lm
	intact := !lm.overflow.Load() && e.disk == nil // see filterDisplaced
	if lm.overflow.Load() {
		total := 0
		for _, b := range outs {
			total += b.len()
		}
		lm.reset(total, e.nw, &e.lmArena, e.opts.MemBudget)
		forEachIndex(len(outs), e.nw, nil, func(_, i int) error {
			b := outs[i]
			for j, fp := range b.fps {
				lm.insert(fp, b.keys[j])
			}
			return nil
		})
		if e.front.n > 0 {
			e.lmRatio = 1.25 * float64(total) / e.part() / float64(e.front.n)
		}
	}
	if err := ctx.Err(); err != nil {
		e.release(outs)
		return 0, err
	}

	if e.disk != nil {
		found, err := e.disk.lookup(lm.collect(e.nw), e.nw)
		if err != nil {
			e.release(outs)
			return 0, err
		}
		for _, fp := range found {
			lm.markSeen(fp)
		}
	}

	var sink atomic.Uint64
	forEachIndex(len(outs), e.nw, nil, func(_, i int) error {
		if intact {
			outs[i].filterDisplaced(e.displaced)
		} else {
			sink.Add(outs[i].filter(lm))
		}
		return nil
	})
	if e.disk == nil && e.grade == nil {
		// The level's fingerprints, one per candidate kept, go into the
		// seen-set now (see flush); those already there were seen at an
		// earlier level, and their candidates are dropped.
		lists := make([][]uint64, len(outs))
		for i, b := range outs {
			lists[i] = b.fps
		}
		_, found := e.seen.insertAll(lists, e.nw)
		if len(found) > 0 {
			for _, fp := range found {
				lm.markSeen(fp)
			}
			forEachIndex(len(outs), e.nw, nil, func(_, i int) error {
				outs[i].refilter(lm)
				return nil
			})
		}
	}

	counts := make([]int, len(outs)+1)
	forEachIndex(len(outs), e.nw, nil, func(_, i int) error {
		b := outs[i]
		if !toFile && !b.spilled {
			b.compactData()
		}
		counts[i+1] = len(b.fps)
		return nil
	})
	n := 0
	for _, c := range counts {
		n += c
	}
	if err := ctx.Err(); err != nil {
		e.release(outs)
		return 0, err
	}
	return n, nil
}

// levelSeen adds a settled level's fingerprints to the seen-set: the disk
// tier's, since in memory settle has inserted them already.
func (e *engine[S, A]) levelSeen(ctx context.Context, lists [][]uint64) error {
	if e.disk == nil || e.grade != nil {
		return nil
	}
	return e.addSeen(ctx, lists)
}

// addSeen inserts a level's new fingerprints into the seen-set; a graded
// run keeps none (grade.go).
func (e *engine[S, A]) addSeen(ctx context.Context, lists [][]uint64) error {
	if e.grade != nil {
		return nil
	}
	if e.disk == nil {
		e.seen.insertAll(lists, e.nw)
		return nil
	}
	err := e.disk.remember(ctx, lists, e.nw)
	e.look = e.disk.cache
	return err
}

// dropFrontier recycles the expanded frontier.
func (e *engine[S, A]) dropFrontier() {
	e.release(e.front.batches)
	e.slab.release(&e.front.slab)
	if e.front.file != nil {
		e.dir.removeFile(e.front.file)
	}
	e.front = frontier{}
}

// writeFrontier writes the kept candidates, in unit order, to a new
// frontier file.
func (e *engine[S, A]) writeFrontier(outs []*batch, n uint64) error {
	f, err := e.dir.create("queue")
	if err != nil {
		e.release(outs)
		return err
	}
	e.front = frontier{n: n, file: f}
	qw := newQueueWriter(f)
	var buf []byte
	for i, b := range outs {
		data := b.data
		if b.spilled {
			buf = slices.Grow(buf[:0], int(b.size))[:b.size]
			if _, err := e.cand.f.ReadAt(buf, b.off); err != nil {
				e.release(outs[i:])
				return fmt.Errorf("explore: reading spilled candidates: %w", err)
			}
			data = buf
		}
		for _, j := range b.keep {
			if err := qw.write(b.state(data, int(j))); err != nil {
				e.release(outs[i:])
				return fmt.Errorf("explore: writing the queue: %w", err)
			}
		}
		e.pool.put(b)
	}
	if err := qw.flush(); err != nil {
		return fmt.Errorf("explore: writing the queue: %w", err)
	}
	return nil
}

// memEstimate is the memory held by the seen-set, queue, trace keys, level
// map and recycled batches.
func (e *engine[S, A]) memEstimate() int64 {
	n := e.front.bytes() + e.trace.bytes() + e.lm.bytes() + e.pool.bytes() + e.slab.bytes()
	if e.seen != nil {
		n += e.seen.bytes()
	}
	if e.disk != nil {
		n += e.disk.bytes()
	}
	return n
}

// share is the part of the budget for the engine's own tables and the
// level being built: half of it. The other half is the collector's room:
// garbage not yet collected, the states being expanded, buffers, stacks and
// the runtime's own memory. With less room the collector runs without pause
// and the heap still outgrows the budget.
func (e *engine[S, A]) share() int64 {
	return e.opts.MemBudget / 2
}

// checkBudget moves the run to disk once its memory exceeds its share.
func (e *engine[S, A]) checkBudget(ctx context.Context) error {
	if e.opts.MemBudget <= 0 {
		return nil
	}
	e.trim()
	if e.memEstimate() <= e.share() {
		return nil
	}
	e.pool.drop()
	e.slab.drop()
	if e.memEstimate() <= e.share() {
		return nil
	}
	return e.toDisk(ctx, true)
}

// trim returns the heap's free memory to the system when the runtime holds
// more than nine tenths of the budget. The runtime's own scavenger does this
// too, but lazily: a level frees tables of tens of MiB and the next
// allocates others, and until the scavenger catches up both count as
// resident. Once a level, a full collection costs little.
func (e *engine[S, A]) trim() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if int64(ms.Sys-ms.HeapReleased) > e.opts.MemBudget/10*9 {
		debug.FreeOSMemory()
	}
}

// toDisk moves the seen-set to the disk tier (a graded run has none) and the
// trace keys to a file, and with queue also the frontier. Each move happens
// once.
func (e *engine[S, A]) toDisk(ctx context.Context, queue bool) error {
	if e.disk == nil && e.grade == nil {
		dir, err := e.dir.sub("seen")
		if err != nil {
			return err
		}
		d, err := openDisk(dir, e.opts.MemBudget)
		if err != nil {
			return err
		}
		e.disk = d
		if e.seen != nil {
			d.cache = e.seen
			if err := d.flush(ctx); err != nil {
				return err
			}
		}
		e.seen = nil
		e.look = d.cache
	}
	e.onDisk.Store(true)
	if !e.trace.onDisk() {
		f, err := e.dir.create("trace")
		if err != nil {
			return err
		}
		if err := e.trace.spill(f); err != nil {
			return err
		}
	}
	if queue && !e.spilled {
		e.spilled = true
		e.pool.drop()
		e.slab.drop()
		if e.front.file == nil && e.front.n > 0 {
			bs := e.front.batches
			e.front.batches = nil
			if err := e.writeMemFrontier(bs); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeMemFrontier moves an in-memory frontier to a file.
func (e *engine[S, A]) writeMemFrontier(bs []*batch) error {
	f, err := e.dir.create("queue")
	if err != nil {
		return err
	}
	qw := newQueueWriter(f)
	for _, b := range bs {
		for i := range b.len() {
			if err := qw.write(b.state(b.data, i)); err != nil {
				return fmt.Errorf("explore: writing the queue: %w", err)
			}
		}
	}
	if err := qw.flush(); err != nil {
		return fmt.Errorf("explore: writing the queue: %w", err)
	}
	e.front = frontier{n: qw.n, file: f}
	return nil
}

// collect returns every fingerprint in the level map not known to be seen.
func (lm *levelMap) collect(workers int) []uint64 {
	parts := make([][]uint64, workers)
	var total atomic.Int64
	forEachRange(len(lm.slots), workers, func(w, lo, hi int) {
		var part []uint64
		for i := lo; i < hi; i++ {
			if fp := lm.slots[i].fp.Load(); fp != 0 && lm.slots[i].key.Load() != keySeen {
				part = append(part, fp)
			}
		}
		parts[w] = part
		total.Add(int64(len(part)))
	})
	all := make([]uint64, 0, total.Load())
	for _, p := range parts {
		all = append(all, p...)
	}
	return all
}
