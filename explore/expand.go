package explore

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"
)

// maxActions bounds the actions of one state: a discovery key keeps the
// action's position in 16 bits.
const maxActions = 1 << 16

// maxLevel bounds the states of one level: a key keeps the parent's index in
// the remaining 48 bits, and keySeen must stay out of reach.
const maxLevel = 1<<47 - 1

// violation is a failed check found during a level, ordered so the earliest
// in single-threaded BFS order wins: shorter trace first, then smaller key.
type violation struct {
	depth int // depth of the violating state (the last of the trace)
	// step: the violating state was reached from state index>>16 of level
	// depth-1 by its action index&0xffff. Otherwise index is the state's
	// position in level depth.
	step bool
	// init: the violating state is initial and index is its position in
	// Init (it may lie outside the state constraint, so not in level 0).
	init   bool
	index  uint64
	prop   int // index in Properties; -1 for deadlock
	reason string
}

func (v *violation) less(o *violation) bool {
	if o == nil {
		return true
	}
	if v.depth != o.depth {
		return v.depth < o.depth
	}
	if v.index != o.index {
		return v.index < o.index
	}
	return v.prop < o.prop
}

// worker holds one goroutine's scratch space, reused across states and
// levels so the hot loop does not allocate.
type worker[S, A any] struct {
	e      *engine[S, A]
	acts   []A
	enc    []byte
	pend   pending[S]
	wins   []win
	sink   uint64 // keeps the compiler from dropping the prefetching loads
	cov    []uint64
	claims int64
	// Sharded runs only: this level's undetermined states and what they
	// generated, counted apart (shard.go).
	lvStates, lvShared, genShared uint64
	covShared                     []uint64
	full                          bool // the level map overflowed: store every candidate
	best                          *violation
	firsts                        []*violation // Options.Continue: the earliest violation of each property, deadlock first
	open                          []check[S]   // Sometimes properties not yet reached
	displaced                     []uint64     // keys of candidates a smaller key displaced from the level map (settle)
	cur                           S            // the state being expanded
	canon                         S            // its successor's canonical form, with a symmetry
	dec                           S            // a successor decoded from its encoding, to check its grade (grade.go)
	scratch                       batch        // a unit read from a spilled frontier
	out                           batch        // the unit's candidates, before place moves them to slabs
	unitRoom                      int          // room for a unit's encodings: more than the largest so far
	meta, data                    slabCursor   // the worker's places in the level's slabs

	symc *symCheck[S, A] // checkSymmetry's scratch
}

func (w *worker[S, A]) violate(depth int, step bool, index uint64, prop int, reason string) {
	w.keep(violation{depth: depth, step: step, index: index, prop: prop, reason: reason})
}

// keep records v if it is the worker's earliest violation, and, in a run
// with Options.Continue, if it is the earliest of its property.
func (w *worker[S, A]) keep(v violation) {
	if v.less(w.best) {
		w.best = &v
	}
	if w.firsts != nil && v.less(w.firsts[v.prop+1]) {
		w.firsts[v.prop+1] = &v
	}
}

// expand generates the successors of the frontier (level e.depth), returning
// one candidate batch per unit, in unit order, and the earliest violation.
func (e *engine[S, A]) expand(ctx context.Context) ([]*batch, *violation, error) {
	src, err := newSource(&e.front, e.nw)
	if err != nil {
		return nil, nil, err
	}
	nu := src.numUnits()
	outs := make([]*batch, nu)
	e.lm.reset(e.mapWant(), e.nw, &e.lmArena, e.opts.MemBudget)
	e.levelBytes.Store(0)
	e.slab.release(&e.candMeta) // what an abandoned level left
	e.slab.release(&e.candData)
	e.chunkBits = chunkBits(int64(e.candRatio*e.part()*float64(e.front.n)*float64(e.encLen+20)), e.nw)
	e.memBase = e.memEstimate()
	e.budgetShare = e.share()
	for _, w := range e.workers {
		w.best, w.claims, w.full, w.displaced = nil, 0, false, w.displaced[:0]
		w.meta, w.data = slabCursor{set: &e.candMeta}, slabCursor{set: &e.candData}
	}
	// A budgeted level expanded in one pass was planned from the last
	// level's ratios. If it outgrows its level map it is abandoned, and
	// redone in passes planned from what it showed (errTooWide).
	widen := e.opts.MemBudget > 0 && !e.inPasses
	generated := e.generated.Load()
	var expanded atomic.Int64
	stop := func() bool { return ctx.Err() != nil || widen && e.lm.overflow.Load() }
	err = forEachIndex(nu, e.nw, stop, func(wi, _ int) error {
		w := e.workers[wi]
		u, ok, err := src.take(wi, &w.scratch)
		if err != nil || !ok {
			return err
		}
		expanded.Add(int64(u.len()))
		w.out.reset()
		w.out.data = e.slab.room(&w.data, w.unitRoom, e.chunkBits)
		if err := w.expandUnit(u, &w.out); err != nil {
			return err
		}
		out := e.pool.get()
		outs[u.ord] = out
		return e.place(w, out)
	})
	if err == nil {
		err = ctx.Err()
	}
	if d, ok := err.(decodedAt); ok {
		err = e.decodedError(d)
	}
	if err != nil {
		e.release(outs)
		return nil, nil, err
	}
	if widen && e.lm.overflow.Load() {
		return nil, nil, e.abandon(outs, generated, expanded.Load())
	}
	var best *violation
	claimed := e.lm.claimed.Load()
	e.displaced = e.displaced[:0]
	var lv *ShardLevel
	if e.sharder != nil {
		if e.depth == len(e.shardLevels) {
			e.shardLevels = append(e.shardLevels, ShardLevel{})
		}
		lv = &e.shardLevels[e.depth]
		if e.pass == 0 { // the passes of a level add up
			lv.Coverage, lv.SharedCoverage = make([]uint64, len(e.names)), make([]uint64, len(e.names))
		}
	}
	for _, w := range e.workers {
		if lv != nil {
			if e.depth > 0 {
				lv.States += w.lvStates
				lv.Shared += w.lvShared
			}
			lv.SharedGenerated += w.genShared
			for k, c := range w.cov {
				lv.Coverage[k] += c
				lv.SharedCoverage[k] += w.covShared[k]
				lv.Generated += c
				w.covShared[k] = 0
			}
			w.lvStates, w.lvShared, w.genShared = 0, 0, 0
		}
		for k, c := range w.cov {
			e.coverage[k] += c
			w.cov[k] = 0
		}
		claimed += w.claims
		e.displaced = append(e.displaced, w.displaced...)
		if w.best != nil && w.best.less(best) {
			best = w.best
		}
		e.keepFirsts(w)
	}
	slices.Sort(e.displaced)
	for _, p := range e.sometimes {
		if e.reached[p].Load() && e.reachDepth[p] < 0 {
			e.reachDepth[p] = e.depth + 1
		}
	}
	if e.front.n > 0 {
		// Per frontier state over the whole level: a pass sees its part.
		e.lmRatio = 1.25 * float64(claimed) / e.part() / float64(e.front.n)
		e.lastClaimed = float64(claimed) / e.part()
		var cands, bytes int
		for _, b := range outs {
			cands += b.len()
			bytes += len(b.data)
		}
		e.candRatio = 1.1 * float64(cands) / e.part() / float64(e.front.n)
		if cands > 0 {
			e.encLen = bytes/cands + 1
		}
	}
	return outs, best, nil
}

// group is how many successors a worker gathers before looking them up.
// Their table slots are loaded first, in a loop of independent reads, so
// the memory accesses overlap instead of each waiting for the last; this is
// what keeps the random probes into large tables affordable.
const group = 128

// pending holds a worker's gathered successors.
type pending[S any] struct {
	ts   []S
	fps  []uint64
	keys []uint64
	ends []uint32
	enc  []byte
	ptrs bool // S holds pointers
}

// drop forgets the successor in p.ts[n] and its encoding from start on.
func (p *pending[S]) drop(n, start int) {
	if p.ptrs {
		clear(p.ts[n : n+1]) // drop references held by the S value
	}
	p.enc, p.ts = p.enc[:start], p.ts[:n]
}

func (p *pending[S]) reset() {
	if p.ptrs {
		clear(p.ts) // drop references held by S values
	}
	p.ts, p.fps, p.keys, p.ends, p.enc = p.ts[:0], p.fps[:0], p.keys[:0], p.ends[:0], p.enc[:0]
}

// hasPointers reports whether a value of t can refer to memory the
// collector manages.
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	}
	return true
}

// expandUnit generates the successors of one unit of the frontier into out.
func (w *worker[S, A]) expandUnit(u unit, out *batch) error {
	e := w.e
	w.full = e.lm.overflow.Load()
	w.openSometimes()
	var gen uint64
	idx := u.base
	for _, seg := range u.segs {
		for i := seg.lo; i < seg.hi; i++ {
			if err := w.expandState(seg.b.state(seg.b.data, i), idx, out, &gen); err != nil {
				return err
			}
			idx++
		}
	}
	w.flush(out)
	e.generated.Add(gen)
	return nil
}

// decodeQueued decodes the queued encoding enc into w.cur.
func (w *worker[S, A]) decodeQueued(enc []byte) error {
	var zero S
	w.cur = zero // Decode fills a zero state
	var err error
	if w.e.mem {
		err = memDecode(enc, &w.cur)
	} else {
		err = w.e.qcodec.Decode(enc, &w.cur)
	}
	if err != nil {
		return fmt.Errorf("explore: decoding a queued state: %w", err)
	}
	return nil
}

// expandState generates the successors of frontier state idx, given by its
// encoding. The state and its successors live in the worker (w.cur, p.ts),
// never in locals: the model's methods take them by pointer, and a pointer
// to a local passed to an unknown method would move it to the heap.
func (w *worker[S, A]) expandState(enc []byte, idx uint64, out *batch, gen *uint64) error {
	e := w.e
	m := e.m
	depth := e.depth
	p := &w.pend
	s := &w.cur
	if err := w.decodeQueued(enc); err != nil {
		return err
	}
	memEnc := e.mem && e.same // fpenc is the memory codec too
	if e.symCheck != nil && e.pass == 0 {
		if err := w.checkSymmetry(s, depth); err != nil {
			return err
		}
	}
	w.acts = m.Actions(s, w.acts[:0])
	if len(w.acts) > maxActions {
		return fmt.Errorf("explore: a state has %d actions; at most %d are supported", len(w.acts), maxActions)
	}
	shared := false
	if e.sharder != nil {
		shared, _ = e.owns(s)
		if e.pass == 0 { // a level in passes counts its states once
			w.lvStates++
			if shared {
				w.lvShared++
			}
		}
	}
	var gs uint64 // s's grade, when the model is Graded
	if e.grade != nil {
		gs = e.grade.Grade(s)
		if err := e.levelGrade(gs, depth, idx); err != nil {
			return err
		}
	}
	succ, counted := 0, 0
	for j := range w.acts {
		a := w.acts[j] // one copy: the calls below read it, not the slice
		// The successor is made in the next slot of p.ts and dropped by
		// shortening p.ts again.
		n := len(p.ts)
		p.ts = append(p.ts, *s)
		t := &p.ts[n]
		if !m.Next(s, a, t) {
			p.drop(n, len(p.enc))
			continue
		}
		succ++
		if e.grade != nil {
			if g := e.grade.Grade(t); g != gs+1 {
				return e.gradeError(s, a, gs, g)
			}
		}
		start := len(p.enc)
		var fp uint64
		if e.inPasses {
			// A level in passes (passes.go): a successor belongs to the
			// pass whose slice holds its fingerprint, which counts, checks
			// and keeps it. Its encoding stays for the pass that keeps it.
			p.enc = w.fpEncode(t, p.enc)
			fp = fingerprint(p.enc[start:])
			if sl := fp & (sliceEnd - 1); sl < e.sliceLo || sl >= e.sliceHi {
				p.drop(n, start)
				continue
			}
		}
		counted++
		key := idx<<16 | uint64(j)
		k := e.kinds.ActionKind(a)
		if k < 0 || k >= len(w.cov) {
			return fmt.Errorf("explore: ActionKind returned %d; ActionNames has %d names", k, len(w.cov))
		}
		w.cov[k]++
		if shared {
			w.covShared[k]++
		}
		for _, c := range e.steps {
			if r := c.fn(s, a, t); r != "" {
				w.violate(depth+1, true, key, c.p, r)
			}
		}
		if e.sharder != nil {
			if _, mine := e.owns(t); !mine {
				p.drop(n, start)
				continue // another shard's state: it explores it
			}
		}
		if e.cons.any && !e.cons.inStep(s, a, t) {
			w.checkState(t, depth+1, key) // checked every time, never kept
			p.drop(n, start)
			continue
		}
		if !e.inPasses {
			if memEnc {
				p.enc = memAppend(p.enc, t)
			} else {
				p.enc = w.fpEncode(t, p.enc)
			}
			fp = fingerprint(p.enc[start:])
		}
		if e.grade != nil && !e.gradeLater {
			if err := w.keptGrade(s, a, t, gs+1, p.enc[start:]); err != nil {
				return err
			}
		}
		p.fps = append(p.fps, fp)
		p.ends = append(p.ends, uint32(len(p.enc)))
		p.keys = append(p.keys, key)
		if len(p.fps) == group {
			w.flush(out)
		}
	}
	*gen += uint64(counted)
	if shared {
		w.genShared += uint64(counted)
	}
	if succ == 0 && e.pass == 0 && !e.opts.NoDeadlock && (e.doner == nil || !e.doner.Done(s)) {
		w.violate(depth, false, idx, -1, deadlockReason(len(w.acts)))
	}
	return nil
}

// flush looks up the gathered successors. Each is first offered to the
// level map, which is small and mostly in cache. On the disk tier, offers
// that win there are looked up in the seen-set's cache, a random read of a
// large table, and a fingerprint found there is marked seen in the level
// map so that later offers of it lose at once; offers that win and are new
// are checked and kept in out, in generation order.
//
// In memory, every offer that wins is checked and kept: the seen-set is
// consulted after the level, shard by shard (settle), which is far cheaper
// than a random read per successor. A state seen at an earlier level is
// then checked again, but passed its checks then (properties are
// deterministic, and a violation there would have ended the run), so the
// result is the same. The cost is a model's: one whose successors often
// return to earlier levels (a reversible step) checks those states twice and
// carries them until settle, where the disk tier would not. (With
// a symmetry, a class's new member is not checked: see late below.)
func (w *worker[S, A]) flush(out *batch) {
	e := w.e
	p := &w.pend
	look, lm := e.look, &e.lm
	var sink uint64
	if !w.full {
		for _, fp := range p.fps {
			sink += lm.peek(fp)
		}
	}
	w.wins = w.wins[:0]
	for k, fp := range p.fps {
		if w.full {
			w.wins = append(w.wins, win{k: k})
			continue
		}
		slot, won, claimed, full, displaced := lm.insert(fp, p.keys[k])
		if displaced != 0 {
			w.displaced = append(w.displaced, displaced-1)
		}
		if claimed {
			if w.claims++; w.claims == 32 {
				if lm.claimed.Add(w.claims) > lm.limit {
					lm.overflow.Store(true)
				}
				w.claims = 0
				w.full = lm.overflow.Load()
			}
		}
		switch {
		case full:
			lm.overflow.Store(true)
			w.full = true
			w.wins = append(w.wins, win{k: k})
		case won:
			w.wins = append(w.wins, win{k: k, slot: slot})
		}
	}
	// In memory the seen-set is consulted after the level. Not with a
	// symmetry: a property it breaks could tell a seen class's new member
	// from the one checked (see Symmetric), and the tiers must agree.
	late := e.disk == nil && !e.symmetry
	if !late {
		for _, x := range w.wins {
			sink += look.peek(p.fps[x.k])
		}
	}
	w.sink += sink
	for _, x := range w.wins {
		fp := p.fps[x.k]
		if !late && look.has(fp) {
			if x.slot != nil {
				x.slot.key.Store(keySeen)
			}
			continue
		}
		t := &p.ts[x.k]
		w.checkState(t, e.depth+1, p.keys[x.k])
		if e.same {
			out.add(fp, p.keys[x.k], p.enc[p.start(x.k):p.ends[x.k]])
		} else {
			w.enc = e.qcodec.Encode(t, w.enc[:0])
			out.add(fp, p.keys[x.k], w.enc)
		}
	}
	// Drop the slot pointers: kept past their level, they would keep the
	// level's whole map from being collected.
	clear(w.wins)
	p.reset()
}

// win is a gathered successor that won its level map offer.
type win struct {
	k    int
	slot *levelSlot // nil when the level map overflowed
}

func (p *pending[S]) start(k int) uint32 {
	if k == 0 {
		return 0
	}
	return p.ends[k-1]
}

// check is a property's index and its state check, kept apart from the
// Property so that the loop over every explored state reads a short slice.
type check[S any] struct {
	p  int
	fn func(*S) string
}

// stepCheck is check for a Transition property.
type stepCheck[S, A any] struct {
	p  int
	fn func(s *S, a A, t *S) string
}

// checkState checks the Always and Sometimes properties on a state first
// reached at depth with the given key (an index at depth 0). t is not
// copied until a check takes it.
func (w *worker[S, A]) checkState(t *S, depth int, key uint64) {
	e := w.e
	for _, c := range e.checks {
		if r := c.fn(t); r != "" {
			w.violate(depth, depth > 0, key, c.p, r)
		}
	}
	for _, c := range w.open {
		if !e.reached[c.p].Load() && c.fn(t) != "" {
			e.reached[c.p].Store(true)
		}
	}
}

// openSometimes lists the Sometimes properties not yet reached, so that a
// property is no longer evaluated once a state has shown it: a run's
// sometimes-properties are usually reached within its first levels.
func (w *worker[S, A]) openSometimes() {
	e := w.e
	w.open = w.open[:0]
	for _, p := range e.sometimes {
		if !e.reached[p].Load() {
			w.open = append(w.open, check[S]{p, e.props[p].Check})
		}
	}
}

// checkInit checks the Always and Sometimes properties on the initial
// state at position idx of Init.
func (w *worker[S, A]) checkInit(s *S, idx int) {
	e := w.e
	for _, c := range e.checks {
		if r := c.fn(s); r != "" {
			w.keep(violation{init: true, index: uint64(idx), prop: c.p, reason: r})
		}
	}
	for _, p := range e.sometimes {
		if !e.reached[p].Load() && e.props[p].Check(s) != "" {
			e.reached[p].Store(true)
		}
	}
}

func deadlockReason(enabled int) string {
	if enabled == 0 {
		return "no action is enabled and the state is not done"
	}
	return fmt.Sprintf("none of the %d enabled actions changes the state, and the state is not done", enabled)
}

// place moves a finished unit's candidates from the worker's scratch batch
// to out, in the level's slabs at their exact size, accounting for their
// memory; once the level's candidates would exceed the budget, their
// encodings go to the candidate file instead.
func (e *engine[S, A]) place(w *worker[S, A], out *batch) error {
	sc := &w.out
	w.unitRoom = max(w.unitRoom, len(sc.data)+len(sc.data)/4, 4<<10)
	if e.opts.MemBudget > 0 {
		n := e.levelBytes.Add(int64(20*sc.len() + len(sc.data)))
		if e.spillCands.Load() || e.memBase+n > e.budgetShare {
			e.levelBytes.Add(-int64(len(sc.data)))
			e.spillCands.Store(true)
			off, err := e.cand.append(sc.data)
			if err != nil {
				return fmt.Errorf("explore: spilling candidates: %w", err)
			}
			out.spilled, out.off, out.size = true, off, int64(len(sc.data))
			out.place(&e.slab, sc, &w.meta, &w.data, e.chunkBits, false)
			return nil
		}
	}
	out.place(&e.slab, sc, &w.meta, &w.data, e.chunkBits, true)
	return nil
}
