package explore

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
)

// A level's own tables grow with the level: the level map (16 bytes a
// slot, at most 60% full), the fingerprints it hands the disk tier to
// check, and each kept candidate's fingerprint, key and offsets. The
// encodings can go to a file (afterUnit), these cannot. When they would not
// fit the budget beside what the run already holds, the level is expanded
// in passes: every pass expands the whole frontier but keeps only the
// successors whose fingerprint lies in its own slice of the fingerprints
// (a range of their low 32 bits), and writes the states it keeps, with
// their keys, to a file of its own; the files are then merged by key into
// the next frontier. Each pass needs a share of the memory, and the result
// is the one a single pass gives: every successor is counted, checked and
// kept in exactly one pass, the canonical discoverer of a fingerprint is
// found among the candidates of its pass (which are all of them), and the
// merge restores level order. The cost is time: the frontier is expanded
// once per pass.
//
// How many passes a level needs is known only once it is expanded: the
// estimate rests on the last level's ratios, and a level may branch three
// times as much as the one before. So the first pass takes a small slice
// and measures the level on it (fingerprints are uniform, so a slice is a
// fair sample); the rest is cut into as many passes as that measure asks.

const (
	// bytesPerClaim is what each fingerprint the level map holds costs
	// during a level: its slot at 60% load, and its place in the list of
	// fingerprints the disk tier looks up.
	bytesPerClaim = 16/0.6 + 8
	// bytesPerCand is what each kept candidate costs besides its encoding:
	// fingerprint, key, end offset and position (24 bytes), and the room
	// slices keep to grow.
	bytesPerCand = 40
	// maxPasses bounds the passes of a level: a budget that would need
	// more is too small for the model, and is exceeded rather than spend
	// hours re-expanding one level.
	maxPasses = 64
	// maxRedo bounds the times a level is redone in one pass before it is
	// cut into passes.
	maxRedo = 8
)

// passes is how many passes the next level needs; 1 without a budget or
// when the level fits. A level that needs more first moves the run to disk
// (the frontier to a file, which each pass reads).
func (e *engine[S, A]) passes(ctx context.Context) (int, error) {
	if e.opts.MemBudget <= 0 || e.front.n == 0 {
		return 1, nil
	}
	// In memory, a level estimated too wide is tried in one pass all the
	// same: the estimate applies the last level's branching to this one,
	// and only a level that outgrows the largest level map the budget
	// allows (errTooWide, redo) has shown that the run must go to disk.
	if !e.spilled || e.levelNeed() <= float64(e.avail()) {
		return 1, nil
	}
	if err := e.toPasses(ctx); err != nil {
		return 0, err
	}
	return e.passCount(e.levelNeed()), nil
}

// toPasses readies the run for a level in passes: the frontier in a file,
// which each pass reads, and the level map to be rebuilt at a pass's size.
func (e *engine[S, A]) toPasses(ctx context.Context) error {
	if !e.spilled {
		if err := e.toDisk(ctx, true); err != nil {
			return err
		}
	}
	e.pool.drop()
	e.slab.drop()
	e.lm = levelMap{}
	e.lmArena.trim()
	return nil
}

// redo plans again a level that outgrew its level map (errTooWide), from
// the ratios it showed: in one pass with a larger map while the level still
// fits what the budget leaves, since a run must go to disk only when its
// budget demands it; else in passes, at least two. The level map at least
// doubles with each redo (abandon), so a level whose first units
// understated it is redone a few times at most before it fits or is cut.
func (e *engine[S, A]) redo(ctx context.Context, redone int) (int, error) {
	if redone < maxRedo && e.levelNeed() <= float64(e.avail()) {
		return 1, nil
	}
	if err := e.toPasses(ctx); err != nil {
		return 0, err
	}
	return max(2, e.passCount(e.levelNeed())), nil
}

// passCount is how many passes share need bytes within what the budget
// leaves for a level, at least 1 and at most maxPasses; it records the room
// each of them is planned to hold in passRoom.
func (e *engine[S, A]) passCount(need float64) int {
	a := max(e.avail(), e.share()/4)
	e.passRoom = a
	return min(maxPasses, max(1, int(math.Ceil(need/float64(a)))))
}

// avail is what the budget's share leaves for a level's own tables.
func (e *engine[S, A]) avail() int64 {
	return e.share() - (e.memEstimate() - e.lm.bytes() - e.pool.bytes() - e.slab.bytes())
}

// levelNeed is what the level being expanded is estimated to need in one
// pass, from the ratios of the last expansion, with half as much again:
// the ratios are an estimate, and settling the level (disk lookups, trace
// keys) needs room of its own.
func (e *engine[S, A]) levelNeed() float64 {
	return 1.5 * float64(e.front.n) * (e.lmRatio*bytesPerClaim + e.candRatio*bytesPerCand)
}

// sliceEnd is the number of slices of the fingerprint space: a fingerprint's
// slice is its low 32 bits, independent of the high bits that choose its
// seen-set shard and table slot.
const sliceEnd = 1 << 32

// part is the share of the fingerprints the current pass keeps.
func (e *engine[S, A]) part() float64 { return float64(e.sliceHi-e.sliceLo) / sliceEnd }

// cut splits the slices [lo, sliceEnd) into n passes of equal width.
func cut(lo uint64, n int) [][2]uint64 {
	out := make([][2]uint64, n)
	for i := range out {
		out[i] = [2]uint64{lo + (sliceEnd-lo)*uint64(i)/uint64(n), lo + (sliceEnd-lo)*uint64(i+1)/uint64(n)}
	}
	return out
}

// levelInPasses expands the frontier in passes, n of them by the estimate,
// and installs the next level, or returns the level's first violation (in
// single-pass order). The first pass takes a sixteenth of an estimated
// pass's slice, so that an estimate up to sixteen times too low still
// fits; the rest of the slices are then cut by the ratios it measured.
func (e *engine[S, A]) levelInPasses(ctx context.Context, n int) (*violation, error) {
	var parts []*os.File
	var counts []uint64
	defer func() {
		e.inPasses, e.pass, e.sliceLo, e.sliceHi = false, 0, 0, sliceEnd
		for _, f := range parts {
			if f != nil {
				e.dir.removeFile(f)
			}
		}
	}()
	e.inPasses = true
	cuts := [][2]uint64{{0, sliceEnd / uint64(16*n)}}
	var best *violation
	for p := 0; p < len(cuts); p++ {
		e.pass, e.sliceLo, e.sliceHi = p, cuts[p][0], cuts[p][1]
		outs, v, err := e.expand(ctx)
		if err != nil {
			return nil, err
		}
		var held int64
		for _, b := range outs {
			held += b.bytes()
		}
		e.passOver = max(e.passOver, float64(held+e.lm.bytes())/float64(e.passRoom))
		if p == 0 {
			// expand has measured the level's ratios on this slice.
			rest := min(maxPasses-1, e.passCount(e.levelNeed()*(1-e.part())))
			cuts = append(cuts, cut(e.sliceHi, rest)...)
			e.mostPasses = max(e.mostPasses, len(cuts))
		}
		parts, counts = append(parts, nil), append(counts, 0)
		if v != nil && v.less(best) && !e.opts.Continue {
			best = v
		}
		if best != nil {
			// Only the earliest violation matters now: later passes
			// are expanded to find it, not kept.
			e.release(outs)
			continue
		}
		f, err := e.dir.create("pass")
		if err != nil {
			e.release(outs)
			return nil, err
		}
		parts[p] = f
		if counts[p], err = e.commitPass(ctx, outs, f); err != nil {
			return nil, err
		}
		e.trim()
	}
	if best != nil {
		return best, nil
	}
	return nil, e.mergePasses(parts, counts)
}

// commitPass settles a pass's candidates, adds their fingerprints to the
// seen-set and writes the kept states, in key order, to f as records of
// key (8 bytes), length (uvarint) and encoding.
func (e *engine[S, A]) commitPass(ctx context.Context, outs []*batch, f *os.File) (uint64, error) {
	n, err := e.settle(ctx, outs, true)
	if err != nil {
		return 0, err
	}
	lists := make([][]uint64, len(outs))
	for i, b := range outs {
		lists[i] = b.fps
	}
	if err := e.levelSeen(ctx, lists); err != nil {
		e.release(outs)
		return 0, err
	}
	if err := e.ckpt.appendFps(lists); err != nil {
		e.release(outs)
		return 0, err
	}
	w := bufio.NewWriterSize(f, ioBuffer)
	var (
		buf []byte
		hdr []byte
	)
	for i, b := range outs {
		data := b.data
		if b.spilled {
			buf = slices.Grow(buf[:0], int(b.size))[:b.size]
			if _, err := e.cand.f.ReadAt(buf, b.off); err != nil {
				e.release(outs[i:])
				return 0, fmt.Errorf("explore: reading spilled candidates: %w", err)
			}
			data = buf
		}
		for k, j := range b.keep {
			enc := b.state(data, int(j))
			hdr = binary.BigEndian.AppendUint64(hdr[:0], b.keys[k])
			hdr = binary.AppendUvarint(hdr, uint64(len(enc)))
			w.Write(hdr)
			if _, err := w.Write(enc); err != nil {
				e.release(outs[i:])
				return 0, fmt.Errorf("explore: writing a pass of the level: %w", err)
			}
		}
		e.pool.put(b)
	}
	e.slab.release(&e.candMeta)
	e.slab.release(&e.candData)
	if err := w.Flush(); err != nil {
		return 0, fmt.Errorf("explore: writing a pass of the level: %w", err)
	}
	e.spillCands.Store(false)
	return uint64(n), e.cand.reset()
}

// passReader reads a pass's records back in order.
type passReader struct {
	r    *bufio.Reader
	key  uint64
	enc  []byte
	left uint64
}

func (p *passReader) next() (bool, error) {
	if p.left == 0 {
		return false, nil
	}
	p.left--
	var k [8]byte
	if _, err := io.ReadFull(p.r, k[:]); err != nil {
		return false, err
	}
	p.key = binary.BigEndian.Uint64(k[:])
	l, err := binary.ReadUvarint(p.r)
	if err != nil {
		return false, err
	}
	p.enc = slices.Grow(p.enc[:0], int(l))[:l]
	_, err = io.ReadFull(p.r, p.enc)
	return err == nil, err
}

// mergePasses merges the passes' files by key into the next frontier and
// the level's trace keys.
func (e *engine[S, A]) mergePasses(parts []*os.File, counts []uint64) error {
	var total uint64
	var rs []*passReader
	for p, f := range parts {
		total += counts[p]
		if counts[p] == 0 {
			continue
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("explore: reading a pass of the level: %w", err)
		}
		r := &passReader{r: bufio.NewReaderSize(f, 64<<10), left: counts[p]}
		if _, err := r.next(); err != nil {
			return fmt.Errorf("explore: reading a pass of the level: %w", err)
		}
		rs = append(rs, r)
	}
	e.dropFrontier()
	if total == 0 {
		e.advance(0)
		return nil
	}
	f, err := e.dir.create("queue")
	if err != nil {
		return err
	}
	e.front = frontier{n: total, file: f}
	qw := newQueueWriter(f)
	e.trace.begin()
	keys := make([]uint64, 0, 1<<16)
	for len(rs) > 0 {
		m := 0
		for i, r := range rs {
			if r.key < rs[m].key {
				m = i
			}
		}
		r := rs[m]
		if err := qw.write(r.enc); err != nil {
			return fmt.Errorf("explore: writing the queue: %w", err)
		}
		if keys = append(keys, r.key); len(keys) == cap(keys) {
			if err := e.trace.extend([][]uint64{keys}, 1); err != nil {
				return err
			}
			if err := e.ckpt.appendKeys(keys); err != nil {
				return err
			}
			keys = keys[:0]
		}
		ok, err := r.next()
		if err != nil {
			return fmt.Errorf("explore: reading a pass of the level: %w", err)
		}
		if !ok {
			rs = slices.Delete(rs, m, m+1)
		}
	}
	if err := e.trace.extend([][]uint64{keys}, 1); err != nil {
		return err
	}
	if err := e.ckpt.appendKeys(keys); err != nil {
		return err
	}
	if e.ckpt != nil {
		if err := e.ckpt.endLevel(); err != nil {
			return err
		}
	}
	if err := qw.flush(); err != nil {
		return fmt.Errorf("explore: writing the queue: %w", err)
	}
	e.advance(total)
	return nil
}

// mapWant is how many fingerprints the level map is planned for: the last
// level's ratio over the frontier (the pass's part of it). A ratio measured
// on a level that branched widely, applied to the wide frontier it made,
// can ask for a table larger than the machine; past mapCapFloor the plan is
// held to mapCapGrowth times what the last level claimed, and under a
// budget to half the room the level or pass has. A level planned
// too small overflows and is rebuilt (or, under a budget, redone in
// passes): it costs time, not memory.
func (e *engine[S, A]) mapWant() int {
	want := float64(e.front.n) * e.lmRatio * e.part()
	if want > mapCapFloor {
		want = max(mapCapFloor, min(want, mapCapGrowth*e.lastClaimed*e.part()))
	}
	if e.opts.MemBudget > 0 { // never planned past the room the level has
		want = min(want, float64(e.room())/2/bytesPerClaim)
	}
	return int(want)
}

const (
	mapCapFloor  = 1 << 24
	mapCapGrowth = 16
)

// room is the memory the level being expanded may hold: what the budget
// leaves, or the pass's planned share of it.
func (e *engine[S, A]) room() int64 {
	if e.inPasses {
		return e.passRoom
	}
	return e.avail()
}

// errTooWide is expand's report that a level outgrew the level map planned
// for it under a budget, and must be expanded in passes.
var errTooWide = errors.New("explore: the level is wider than planned")

// abandon drops a partly expanded level: its candidates, its counts, and
// what it spilled. It sets the ratios from the states expanded so far, a
// fair enough guess for planning the passes, whose first pass measures
// the level again.
func (e *engine[S, A]) abandon(outs []*batch, generated uint64, expanded int64) error {
	var cands int
	for _, b := range outs {
		if b != nil {
			cands += b.len()
		}
	}
	e.release(outs)
	claimed := e.lm.claimed.Load()
	for _, w := range e.workers {
		claimed += w.claims
		clear(w.cov)
		clear(w.covShared)
		w.lvStates, w.lvShared, w.genShared = 0, 0, 0
	}
	e.generated.Store(generated)
	// The units expanded so far may be all of a narrow frontier, stopped
	// at the map's limit, so their ratio can understate the level; the
	// level claims more than the map's limit, so plan at least twice that.
	e.lmRatio = max(1.25*float64(claimed)/float64(max(expanded, 1)), 2*float64(e.lm.limit)/float64(max(e.front.n, 1)))
	e.candRatio = 1.1 * float64(cands) / float64(max(expanded, 1))
	e.widened++
	if e.spillCands.Load() {
		e.spillCands.Store(false)
		if err := e.cand.reset(); err != nil {
			return err
		}
	}
	return errTooWide
}
