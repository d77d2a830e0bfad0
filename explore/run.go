package explore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Run explores every state of m reachable from its initial states, breadth
// first, checking m's properties, and returns the verdict with a shortest
// counterexample when one fails. The result is the same for any number of
// workers and for either seen-set tier (see the package documentation).
//
// The error is non-nil only when the run could not be carried out: an
// unusable directory, a failure of the disk tier, a Decode failure, or a
// model whose methods are not deterministic. A failed property is a Result
// with Verdict Violated; a cancelled ctx or MaxDepth gives Incomplete.
func Run[S, A any](ctx context.Context, m Machine[S, A], opts Options) (*Result[S, A], error) {
	e, err := newEngine(m, opts)
	if err != nil {
		return nil, err
	}
	defer memoryLimit(opts.MemBudget)()
	defer gcPercent()()
	res, err := e.run(ctx)
	if cerr := e.close(); err == nil && cerr != nil {
		res, err = nil, cerr
	}
	return res, err
}

// memoryLimit sets the Go runtime's soft memory limit for a run with the
// given budget (none for 0) and returns what restores the old one. Without
// a limit the collector lets the heap reach twice what is live; with one it
// collects harder as the budget nears. The limit leaves room for what the
// runtime does not manage, and is never below minMemoryLimit, where the
// runtime's fixed costs would keep the collector running all the time, and
// what the level map's arena holds outside the runtime is taken off it as
// the arena grows (slotArena.account). A limit set by the program (or
// GOMEMLIMIT), or by a run already under way, is left alone.
func memoryLimit(budget int64) (restore func()) {
	limitMu.Lock()
	defer limitMu.Unlock()
	if budget > 0 && limitBase == 0 {
		if old := debug.SetMemoryLimit(-1); old == math.MaxInt64 {
			limitBase = budget - min(budget/8, nonHeap)
			debug.SetMemoryLimit(max(limitBase-offHeap.Load(), minMemoryLimit))
			return func() {
				limitMu.Lock()
				defer limitMu.Unlock()
				limitBase = 0
				debug.SetMemoryLimit(old)
			}
		}
	}
	return func() {}
}

// gcPercent has the collector run when the heap has grown by runGCPercent
// since the last collection, rather than the default 100, for the duration
// of a run, unless the program or GOGC has changed it. The engine's heap is
// mostly pointer-free slabs, so a collection costs little; but a level
// leaves garbage (grown candidate slabs), and with the default the heap
// doubles before that memory is reused, each new page costing a fault: on
// parallel-5 resident memory fell by a quarter and the run's CPU time by
// about 7 % (measured when the level map, replaced as levels widened, was
// in the heap too; see slotArena).
func gcPercent() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	if old := debug.SetGCPercent(runGCPercent); old != 100 {
		debug.SetGCPercent(old) // the program's own setting
		return func() {}
	}
	return func() { debug.SetGCPercent(100) }
}

const runGCPercent = 25

// MaxActions is the most actions one state may have (see maxActions): a
// model whose bounds allow more is refused before it runs.
const MaxActions = maxActions

// minMemoryLimit is the least soft memory limit a budgeted run sets.
const minMemoryLimit = 64 << 20

// nonHeap is what a process holds besides the memory the Go runtime
// manages (the program's code, mostly), taken off the budget when setting
// the runtime's limit so that resident memory, not only the heap, stays
// within the budget.
const nonHeap = 16 << 20

type engine[S, A any] struct {
	m           Machine[S, A]
	opts        Options
	nw          int
	props       []Property[S, A]
	always      []int // indexes into props, by kind
	transition  []int
	sometimes   []int
	checks      []check[S]        // the Always checks, in order (checkState)
	steps       []stepCheck[S, A] // the Transition checks, in order (expandState)
	doner       Doner[S]
	cons        constraints[S, A]
	sharder     Sharder[S]   // set when the run is one shard of a search
	shardLevels []ShardLevel // per level, when sharded
	split       ShardSplit   // the key depth, when sharded
	names       []string
	workers     []*worker[S, A]

	start time.Time
	dir   workDir
	seen  *seenSet  // memory tier; nil once the seen-set is on disk
	disk  *diskSeen // disk tier
	look  *seenSet  // what expansion consults: seen, or the disk tier's cache
	lm    levelMap
	// lmArena holds lm's table (arena.go).
	lmArena slotArena
	trace   traceStore
	pool    batchPool
	// slab holds the memory of the level's candidates: their fingerprints
	// and keys (candMeta, freed once the level is committed) and their
	// end offsets and encodings (candData, the next frontier's slab).
	slab               slabs
	candMeta, candData slabSet
	chunkBits          int // the size class of this level's chunks
	cand               candFile
	front              frontier
	depth              int // level of the frontier
	// spilled: the frontier lives in files (the budget was exceeded).
	spilled bool
	// A level in passes (passes.go) is expanded once per pass, and a pass
	// keeps the successors whose fingerprint's slice (its low 32 bits) is
	// in [sliceLo, sliceHi). pass numbers the passes of the level; the
	// first counts the level's states.
	inPasses         bool
	pass             int
	sliceLo, sliceHi uint64
	mostPasses       int     // the most passes a level took (for tests)
	widened          int     // levels abandoned in one pass and redone in passes (for tests)
	passRoom         int64   // the memory planned for each pass of this level
	passOver         float64 // the most a pass's tables held over its plan (for tests)

	// displaced lists, sorted, the keys of the level's candidates that won
	// their level map offer and were then displaced by a smaller key: with
	// the map intact, the others are their fingerprints' canonical
	// discoverers (settle).
	displaced []uint64

	lmRatio     float64 // level map entries per frontier state, last level
	lastClaimed float64 // level map entries the last level claimed (mapWant)
	candRatio   float64 // candidates kept per frontier state, last level
	encLen      int     // bytes per encoding, last level
	memBase     int64   // memory besides this level's candidates
	budgetShare int64   // share() when the level started
	levelBytes  atomic.Int64
	spillCands  atomic.Bool

	coverage   []uint64
	reached    []atomic.Bool // by property index
	reachDepth []int         // by property index; -1 = not reached

	// Counters read by the progress goroutine.
	generated atomic.Uint64
	initGen   atomic.Uint64 // initial states Init returned (TLC counts them as generated)
	initial   atomic.Uint64 // initial states kept
	distinct  atomic.Uint64
	depthNow  atomic.Int64
	queue     atomic.Uint64
	queuePeak atomic.Uint64
	onDisk    atomic.Bool
	memPeak   atomic.Uint64 // memstat.go

	ckpt *checkpoint // Options.Checkpoint's writer; nil without one

	firsts []*violation // Options.Continue: each property's first violation, deadlock first

	parts[S, A] // the model's optional parts, or their defaults
}

func newEngine[S, A any](m Machine[S, A], opts Options) (*engine[S, A], error) {
	ps, err := newParts(m)
	if err != nil {
		return nil, err
	}
	if err := continueOK(&opts); err != nil {
		return nil, err
	}
	e := &engine[S, A]{m: m, parts: ps, opts: opts, nw: opts.Workers, props: m.Properties(), names: ps.kinds.ActionNames()}
	if e.nw <= 0 {
		e.nw = runtime.NumCPU()
	}
	for _, name := range append(slices.Clip(opts.Only), opts.With...) {
		if !slices.ContainsFunc(e.props, func(p Property[S, A]) bool { return p.Name == name && p.Kind != Sometimes }) {
			return nil, fmt.Errorf("explore: no always or transition property named %q", name)
		}
	}
	for i, p := range e.props {
		if p.Kind == Sometimes && p.OptIn {
			return nil, fmt.Errorf("explore: sometimes-property %q cannot be opt-in (sometimes-properties are always reported)", p.Name)
		}
		if p.Kind != Sometimes && !selected(&opts, p.Name, p.OptIn) {
			continue // not selected: neither checked nor reported
		}
		switch {
		case p.Kind == Always && p.Check != nil:
			e.always = append(e.always, i)
		case p.Kind == Sometimes && p.Check != nil:
			e.sometimes = append(e.sometimes, i)
		case p.Kind == Transition && p.CheckStep != nil:
			e.transition = append(e.transition, i)
		default:
			return nil, fmt.Errorf("explore: property %q (%v) has no check function", p.Name, p.Kind)
		}
	}
	for _, p := range e.always {
		e.checks = append(e.checks, check[S]{p, e.props[p].Check})
	}
	for _, p := range e.transition {
		e.steps = append(e.steps, stepCheck[S, A]{p, e.props[p].CheckStep})
	}
	if err := e.useSymmetry(); err != nil {
		return nil, err
	}
	e.useGrade()
	e.doner, _ = part[Doner[S]](m)
	e.cons = newConstraints[S, A](m)
	if sh := opts.Shard; sh.Count != 0 {
		var ok bool
		if e.sharder, ok = part[Sharder[S]](m); !ok {
			return nil, fmt.Errorf("explore: the model declares no shard key (Sharder), so a sharded search of it would not be exact")
		}
		if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
			return nil, fmt.Errorf("explore: shard %v: want 0 ≤ index < count", sh)
		}
		switch {
		case sh.Depth == AutoDepth:
			e.split = e.chooseDepth()
			e.opts.Shard.Depth = e.split.Depth
		case sh.Depth < 0:
			return nil, fmt.Errorf("explore: shard depth %d: want ≥ 0, or AutoDepth", sh.Depth)
		default:
			e.split = ShardSplit{Depth: sh.Depth}
		}
	}
	ptrs := hasPointers(reflect.TypeFor[S]())
	for range e.nw {
		w := &worker[S, A]{e: e, cov: make([]uint64, len(e.names)), covShared: make([]uint64, len(e.names))}
		w.pend.ptrs = ptrs
		e.workers = append(e.workers, w)
	}
	if opts.Continue {
		e.firsts = make([]*violation, len(e.props)+1)
		for _, w := range e.workers {
			w.firsts = make([]*violation, len(e.props)+1)
		}
	}
	e.coverage = make([]uint64, len(e.names))
	e.reached = make([]atomic.Bool, len(e.props))
	e.reachDepth = make([]int, len(e.props))
	for i := range e.reachDepth {
		e.reachDepth[i] = -1
	}
	if opts.Dir != "" {
		if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("explore: disk tier directory: %w", err)
		}
		if fi, err := os.Stat(opts.Dir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("explore: disk tier directory %s is not a directory", opts.Dir)
		}
	}
	e.dir.parent = opts.Dir
	e.cand.dir = &e.dir
	e.seen = new(seenSet)
	e.look = e.seen
	e.lmRatio = 4
	e.sliceHi = sliceEnd
	e.candRatio, e.encLen = 1, 16
	return e, nil
}

// close releases the disk tier and removes every file the run created.
func (e *engine[S, A]) close() error {
	e.lm = levelMap{}
	e.lmArena.release()
	err := e.disk.close()
	e.disk = nil
	if e.front.file != nil {
		e.front.file.Close()
	}
	if e.trace.f != nil {
		e.trace.f.Close()
	}
	if e.cand.f != nil {
		e.cand.f.Close()
	}
	if rerr := e.dir.remove(); err == nil {
		err = rerr
	}
	return err
}

func (e *engine[S, A]) run(ctx context.Context) (*Result[S, A], error) {
	e.start = time.Now()
	defer e.startProgress()()
	if e.opts.Simulate != nil {
		return e.simulate(ctx)
	}
	res, err := e.explore(ctx)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return e.end(Incomplete)
	}
	return res, err
}

func (e *engine[S, A]) explore(ctx context.Context) (*Result[S, A], error) {
	if e.opts.ForceDisk {
		if err := e.toDisk(ctx, false); err != nil {
			return nil, err
		}
	}
	if e.opts.Checkpoint != "" {
		return e.exploreCheckpointed(ctx)
	}
	v, err := e.initLevel(ctx)
	if err != nil {
		return nil, err
	}
	if v != nil && !e.opts.Continue {
		return e.violated(v)
	}
	return e.levels(ctx)
}

// end ends a search that found no violation, or any with Continue.
func (e *engine[S, A]) end(v Verdict) (*Result[S, A], error) {
	if e.opts.Continue {
		return e.finish(v)
	}
	return e.result(v), nil
}

// levels explores level after level until the frontier is empty, a
// violation is found, or a limit is reached.
func (e *engine[S, A]) levels(ctx context.Context) (*Result[S, A], error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if e.front.n == 0 {
			return e.end(Pass)
		}
		if e.opts.MaxDepth > 0 && e.depth >= e.opts.MaxDepth {
			if e.symCheck != nil || e.gradeLater {
				if err := e.checkCut(ctx); err != nil {
					return nil, err
				}
			}
			return e.end(Incomplete)
		}
		if e.front.n > maxLevel {
			return nil, fmt.Errorf("explore: level %d has %d states; at most %d are supported", e.depth, e.front.n, uint64(maxLevel))
		}
		n, err := e.passes(ctx)
		if err != nil {
			return nil, err
		}
		for redone := 0; n == 1; redone++ {
			outs, v, err := e.expand(ctx)
			if errors.Is(err, errTooWide) {
				if n, err = e.redo(ctx, redone); err != nil {
					return nil, err
				}
				continue
			}
			if err != nil {
				return nil, err
			}
			if v != nil && !e.opts.Continue {
				e.release(outs)
				return e.violated(v)
			}
			e.sampleMemory()
			if err := e.commit(ctx, outs); err != nil {
				return nil, err
			}
			e.sampleMemory()
			break
		}
		if n > 1 {
			v, err := e.levelInPasses(ctx, n)
			if err != nil {
				return nil, err
			}
			if v != nil && !e.opts.Continue {
				return e.violated(v)
			}
			e.sampleMemory()
		}
		if err := e.checkBudget(ctx); err != nil {
			return nil, err
		}
		if err := e.saveCheckpoint(); err != nil {
			return nil, err
		}
	}
}

// initLevel builds level 0 from m.Init, first occurrence first, and checks it.
func (e *engine[S, A]) initLevel(ctx context.Context) (*violation, error) {
	w := e.workers[0]
	b := e.pool.get()
	dup := make(map[uint64]bool)
	var level0 ShardLevel
	var grade0 uint64
	inits := e.m.Init()
	e.initGen.Store(uint64(len(inits)))
	for idx := range inits {
		s := &inits[idx]
		shared, mine := e.owns(s)
		if !mine {
			continue
		}
		if !e.cons.inState(s) {
			w.checkInit(s, idx) // checked, not kept
			continue
		}
		w.enc = w.fpEncode(s, w.enc[:0])
		fp := fingerprint(w.enc)
		if err := w.initGrade(s, w.enc); err != nil {
			return nil, err
		}
		if !e.same {
			w.enc = e.qcodec.Encode(s, w.enc[:0])
		}
		if dup[fp] {
			continue
		}
		if e.grade != nil {
			g := e.grade.Grade(s)
			if b.len() > 0 && g != grade0 {
				return nil, fmt.Errorf("explore: the model is Graded, but its initial states have grades %d and %d (all must have the same; %s)", grade0, g, noGradeHint)
			}
			grade0 = g
			e.grade0 = g
		}
		dup[fp] = true
		level0.States++
		if shared {
			level0.Shared++
		}
		w.checkInit(s, idx)
		b.add(fp, uint64(idx), w.enc)
	}
	for _, p := range e.sometimes {
		if e.reached[p].Load() {
			e.reachDepth[p] = 0
		}
	}
	v := w.best
	w.best = nil
	if e.firsts != nil {
		e.keepFirsts(w)
	}
	if err := e.trace.add([][]uint64{b.keys}, 1); err != nil {
		return nil, err
	}
	if err := e.addSeen(ctx, [][]uint64{b.fps}); err != nil {
		return nil, err
	}
	if e.ckpt != nil {
		if err := e.ckpt.appendLevel([][]uint64{b.fps}, [][]uint64{b.keys}); err != nil {
			return nil, err
		}
	}
	if e.sharder != nil {
		e.shardLevels = append(e.shardLevels, level0)
	}
	e.front = frontier{n: uint64(b.len()), batches: []*batch{b}}
	e.initial.Store(e.front.n)
	e.distinct.Store(e.front.n)
	e.queue.Store(e.front.n)
	e.queuePeak.Store(e.front.n)
	return v, nil
}

// release returns batches to the pool.
func (e *engine[S, A]) release(bs []*batch) {
	for _, b := range bs {
		if b != nil {
			e.pool.put(b)
		}
	}
}

// violated turns the chosen violation into a result with its trace.
func (e *engine[S, A]) violated(v *violation) (*Result[S, A], error) {
	steps, path, err := e.traceOf(v)
	if err != nil {
		return nil, err
	}
	res := e.result(Violated)
	res.Stats.Depth = v.depth
	res.Stats.TLCDepth = tlcDepth(v.depth, res.Stats.Distinct)
	res.Violation = e.violationOf(v, steps, path)
	return res, nil
}

// traceOf rebuilds the shortest trace to v.
func (e *engine[S, A]) traceOf(v *violation) (steps []Step[S, A], path []int, err error) {
	if v.init {
		steps, path = []Step[S, A]{{State: e.m.Init()[v.index]}}, []int{int(v.index)}
	} else if v.step {
		steps, path, err = e.pathOf(v.depth-1, v.index>>16)
		if err == nil {
			var st Step[S, A]
			st, err = e.step(&steps[len(steps)-1].State, int(v.index&0xffff))
			steps, path = append(steps, st), append(path, int(v.index&0xffff))
		}
	} else {
		steps, path, err = e.pathOf(v.depth, v.index)
	}
	return steps, path, err
}

// violationOf names v's property and attaches its trace.
func (e *engine[S, A]) violationOf(v *violation, steps []Step[S, A], path []int) *Violation[S, A] {
	viol := &Violation[S, A]{Property: "deadlock", Kind: Always, Reason: v.reason, Trace: steps, Path: path}
	if v.prop >= 0 {
		p := e.props[v.prop]
		viol.Property, viol.Cite, viol.Kind, viol.Class = p.Name, p.Cite, p.Kind, p.Class
	}
	return viol
}

func (e *engine[S, A]) stats() Stats {
	s := Stats{
		Generated: e.generated.Load(),
		Distinct:  e.distinct.Load(),
		Depth:     int(e.depthNow.Load()),
		Queue:     e.queue.Load(),
		QueuePeak: e.queuePeak.Load(),
		OnDisk:    e.onDisk.Load(),
		Elapsed:   time.Since(e.start),
		MemPeak:   e.memPeak.Load(),
	}
	s.Symmetry = e.symmetry
	s.Graded = e.grade != nil
	s.Initial = e.initial.Load()
	s.TLCGenerated = e.initGen.Load() + s.Generated
	s.TLCDepth = tlcDepth(s.Depth, s.Distinct)
	return s
}

// tlcDepth is TLC's depth for a search of the given depth: TLC counts the
// initial state as 1.
func tlcDepth(depth int, distinct uint64) int {
	if distinct == 0 {
		return 0
	}
	return depth + 1
}

func (e *engine[S, A]) result(v Verdict) *Result[S, A] {
	e.sampleMemory()
	res := &Result[S, A]{Verdict: v, Stats: e.stats()}
	res.Stats.BytesPerState = bytesPerState(res.Stats.MemPeak, res.Stats.Distinct)
	for k, name := range e.names {
		res.Coverage = append(res.Coverage, ActionCount{Name: name, Count: e.coverage[k]})
	}
	for _, p := range e.sometimes {
		d := e.reachDepth[p]
		res.Sometimes = append(res.Sometimes, Reach{Name: e.props[p].Name, Cite: e.props[p].Cite, Reached: d >= 0, Depth: max(d, 0)})
	}
	res.Collision = collision(res.Stats.Distinct)
	res.Unchecked = e.unchecked()
	if e.sharder != nil {
		res.Levels = e.shardLevels
		split := e.split
		res.ShardSplit = &split
	}
	return res
}

// collision bounds the probability that two of n distinct states share a
// fingerprint (so one was never explored): by the birthday bound over
// 64-bit hashes it is at most n(n-1)/2 · 2⁻⁶⁴ < n²/2⁶⁵.
func collision(n uint64) float64 {
	f := float64(n)
	return f * f / math.Exp2(65)
}

// startProgress calls OnProgress every Progress from one goroutine; the
// returned function stops it and waits for it to finish.
func (e *engine[S, A]) startProgress() func() {
	if e.opts.Progress <= 0 || e.opts.OnProgress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(e.opts.Progress)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				e.sampleMemory()
				e.opts.OnProgress(e.stats())
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// selected reports whether an Always or Transition property is checked under
// opts: Only, when given, names exactly the properties checked; otherwise
// every property is, except opt-in ones that With does not name.
func selected(opts *Options, name string, optIn bool) bool {
	if len(opts.Only) > 0 {
		return slices.Contains(opts.Only, name) || slices.Contains(opts.With, name)
	}
	if opts.Continue {
		return true
	}
	return !optIn || slices.Contains(opts.With, name)
}
