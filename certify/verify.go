package certify

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"time"
	"unsafe"
)

// Options adjust a verification.
type Options struct {
	// Restrict narrows the claim to a sub-scope K' ⊆ scope(C) (§11.3 of 003):
	// only keys of K' are checked and the cut is the cut on K'.
	Restrict *ScopeSpec
	// Require, if set, is the scope an Accept must cover: an Accept on a
	// narrower scope names the keys it leaves out in Cut.Omitted (a
	// stopped snapshot, keys no evidence places).
	Require *ScopeSpec
	// Segment, if set, is a continuation segment (§11.1) read after an
	// Accept: the cut advances to the segment's end frontier (§11.4).
	Segment io.Reader
	// KeepState fills Cut.State with the cut's present keys.
	KeepState bool
	// Mem, if positive, bounds the memory the verification holds (bytes):
	// past it, per-key states and the emitted stream's backlog spill to a
	// directory made under Dir (the system temporary directory if empty)
	// and removed at the end.
	Mem int64
	Dir string
	// Parts, if positive, verifies a bundle that can be read again (a
	// file, an in-memory reader) as a local split of that many parts
	// (at most 256) whatever the budget; the answer is the same.
	Parts int
	// Progress, if positive, is the least interval between OnProgress
	// calls, made from the verifying goroutine as batches of lines are
	// done: what is being done ("verifying", "partitioning", "part 3/32")
	// and the counts so far.
	Progress   time.Duration
	OnProgress func(stage string, s Stats)
	// Stop, once closed, stops the verification at its next batch of
	// lines: Verify returns ErrStopped, its files removed.
	Stop <-chan struct{}
}

// ErrStopped is the error of a verification or conversion stopped by its
// options' Stop.
var ErrStopped = errors.New("certify: stopped")

// stopped reports whether stop is closed (never, for nil).
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// stopReader reads r until stop is closed, then fails with ErrStopped.
type stopReader struct {
	r    io.Reader
	stop <-chan struct{}
}

func (s stopReader) Read(p []byte) (int, error) {
	if stopped(s.stop) {
		return 0, ErrStopped
	}
	return s.r.Read(p)
}

// progress calls OnProgress when the interval has passed.
func (v *verifier) progress(stage string) {
	if v.opt.OnProgress == nil || v.opt.Progress <= 0 {
		return
	}
	if now := time.Now(); now.Sub(v.lastProgress) >= v.opt.Progress {
		if !v.lastProgress.IsZero() {
			v.opt.OnProgress(stage, v.stats)
		}
		v.lastProgress = now
	}
}

// Verify reads an evidence bundle and answers Accept, Reject or Unsupported
// under obligations S1–S4 of 003 §9.1, then checks the virtual-cut equality
// itself. It streams: memory grows with the keys in scope (and with how far
// the recorded emitted stream lags the log), not with the length of the log.
// The error is only for failing to read r.
//
// Under Options.Restrict the whole certificate is verified too (Result.Full),
// so the answer says whether the cut on K' is all that holds: the bundle is
// read twice, from a regular file or an in-memory reader in place, from
// anything else (a pipe) held in memory.
func Verify(r io.Reader, opt Options) (*Result, error) {
	defer memoryLimit(opt.Mem)()
	section := sections(r)
	if opt.Restrict == nil {
		whole := opt.Segment != nil || opt.KeepState
		if opt.Parts > 0 {
			if section == nil || whole || opt.Parts > buckets {
				return nil, fmt.Errorf("certify: %d parts: a local split needs at most %d parts, a bundle that can be read again, and no segment or kept state", opt.Parts, buckets)
			}
			return verifyInParts(section(), opt)
		}
		if section == nil || opt.Mem <= 0 || whole {
			return verify(r, opt)
		}
		// Past the budget, a bundle read again is verified in parts
		// (partition.go) rather than with its states spilled.
		v := &verifier{opt: opt, restart: true}
		res, err := v.run(section())
		if errors.Is(err, errOverBudget) {
			return verifyInParts(section(), opt)
		}
		if err != nil {
			return nil, err
		}
		v.result(res)
		return res, nil
	}
	if section == nil {
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		section = func() io.Reader { return bytes.NewReader(b) }
	}
	full, err := verify(section(), Options{})
	if err != nil {
		return nil, err
	}
	res, err := verify(section(), opt)
	if err != nil {
		return nil, err
	}
	full.Cut, full.Assumes = nil, nil
	res.Full = full
	return res, nil
}

// sections returns what reads r from its current offset, again and again:
// for a regular file and an in-memory reader; nil for anything else. Each
// pass reads its own section: a pass that stops early leaves its reader
// behind, which must not move another's offset.
func sections(r io.Reader) func() io.Reader {
	switch x := r.(type) {
	case interface { // a file
		io.ReaderAt
		io.Seeker
		Stat() (fs.FileInfo, error)
	}:
		if fi, err := x.Stat(); err == nil && fi.Mode().IsRegular() {
			if at, err := x.Seek(0, io.SeekCurrent); err == nil {
				return func() io.Reader { return io.NewSectionReader(x, at, fi.Size()-at) }
			}
		}
	case *bytes.Reader:
		at := x.Size() - int64(x.Len())
		return func() io.Reader { return io.NewSectionReader(x, at, x.Size()-at) }
	}
	return nil
}

// ErrRequire is Verify's error for an Options.Require that does not
// parse as a scope of the bundle's key kind.
var ErrRequire = errors.New("certify: the required scope")

func verify(r io.Reader, opt Options) (*Result, error) {
	v := &verifier{opt: opt}
	res, err := v.run(r)
	if err != nil {
		return nil, err
	}
	v.result(res)
	return res, nil
}

// result puts the verification's statistics in res.
func (v *verifier) result(res *Result) {
	res.Stats = v.stats
	res.Stats.Units = len(v.units)
	res.Stats.ScopeKeys = v.nkeys
}

// rank orders the obligations a Reject can name; the first one found in
// this order is reported (S1, S2 and Unsupported stop the pipeline at once).
const (
	rS3Frontier = iota
	rS3Scope
	rS3Prefix
	rBracket
	rFrontier
	rStart
	rPointBracket
	rO1
	rO3
	rO2
	rDiscipline
	rMonotone
	rVC
	nRanks
)

type entry struct {
	k    key
	v    string
	tag  int64
	line int64
}

type keyState struct {
	// Laid out so that what every log event touches — the key, its unit,
	// the flags and σ — shares the first cache line.
	k        key
	unit     int32 // owning unit, -1 for none
	known    bool  // sigma is known (base given, or an event was seen)
	read     bool  // the unit's read returned a result for k (row or absence)
	atFSet   bool
	atFKnown bool
	matched  bool   // O2: R(k) = σ_c(k) for some c in the bracket seen so far
	touched  bool   // an event for k lies in its unit's window
	outSeen  bool   // the emitted stream has an entry for k
	member   bool   // listed in its unit's members
	based    bool   // a base observation was recorded
	sigma    string // σ at the current log position
	outTag   int64
	out      string // replay of the emitted stream at k
	r        string // R(k); "" is ⊥
	win      string // image of the last event for k in its unit's window
	atF      string // σ_f, once the log has passed the frontier
	// Range-merge compares each key's entries on their own (compareByKey):
	// the entries of one side that the other has not matched yet.
	pend    []entry
	pendAct bool // pend holds recorded entries (else the discipline's)
}

type unitState struct {
	dom          keySet
	lo, hi       int64
	loSet, hiSet bool // resolved (always, for position coordinates)
	loDone       bool // the log has passed lo: keys' σ_lo has been compared
	closed       bool
	low, high    sample
	members      []*keyState
}

// sample is an executed-set sample: a set of transaction labels (§7.4).
type sample struct {
	ivs   [][2]int64
	size  int64
	allIn bool // every label executed so far is in the sample
}

func (s *sample) has(t int64) bool {
	for _, iv := range s.ivs {
		if iv[0] <= t && t <= iv[1] {
			return true
		}
	}
	return false
}

type verifier struct {
	opt   Options
	h     *Header
	kind  keyKind
	scope keySet // the effective scope: scope(C), or the restriction K'
	f, s0 int64
	units []unitState
	keys  *keyTable

	listOwner map[string]int // key-list domains
	rangeOwn  []interval     // range domains, sorted by lo
	ownLast   int            // owner's last range found

	phase   int // 0 base, 1 reads, 2 log
	pos     int64
	lastTxn int64
	// Transaction labels of the log (x), for transaction closure (main
	// paper §2.2): unlabeled is set when some event lacks one; split is the
	// label of a transaction the frontier falls inside (0: none).
	lastHas   bool
	unlabeled bool
	split     int64
	txns      map[int64]bool
	loOrder   []int // units by lo (position coordinates)
	loNext    int
	hiOrder   []int // units by hi (position coordinates)
	hiNext    int
	final     bool // closeUpTo(f+1) done

	exp, act  queue
	scoped    int64 // in-scope entries compared so far
	discDone  bool
	fails     [nRanks]*Failure
	stats     Stats
	fieldsBuf []field
	lastRaw   []byte      // the raw key of the last lookup
	lastKS    *keyState   // and its state
	warmHash  [128]uint64 // warm's hashes of the coming lines' keys, by line mod 128
	warmLast  uint64      // and the last one asked for
	// With a segment: the bundle's own log after the frontier, position
	// f+1 first, which the segment must agree with where they overlap.
	tail []tailEvent

	nkeys     int    // states made
	sp        *spill // the spill store, once the budget is passed
	spillErr  error
	maxKeys   int   // resident states past which they spill
	maxQueue  int   // entries of the backlog held in memory
	lineBytes int64 // bytes of the lines read, for the estimates
	keyBuf    []byte
	sorted    []*keyState // the resident states in key order (eachSorted)

	// A part of a split verification (shard.go): the keys it owns, where
	// each failure was found, and the discipline's and the recorded
	// entries written out for the merge's global comparison.
	part *partRun
	// lastProgress is when OnProgress was last called (or the run began)
	lastProgress time.Time
	at           stamp // where the verification is: line, step, key
	stamps       [nRanks]stamp
	// restart: past the budget, stop with errOverBudget (the bundle is
	// verified again in parts) instead of spilling.
	restart bool
}

// tailEvent is a log position after the frontier: the scope key it writes
// (in false for none) and the image.
type tailEvent struct {
	k   key
	in  bool
	img string
}

func (v *verifier) fail(rank int, f *Failure) {
	if v.fails[rank] == nil {
		v.fails[rank] = f
		v.stamps[rank] = v.at
	}
}

// failKey is fail for an obligation judged key by key, in key order: the
// key places the failure among a part's (shard.go).
func (v *verifier) failKey(rank int, k key, f *Failure) {
	if v.fails[rank] == nil {
		v.fail(rank, f)
		if v.part != nil {
			v.stamps[rank].Key = v.kind.storeKey(nil, k)
		}
	}
}

func (v *verifier) run(r io.Reader) (*Result, error) {
	batches, free := make(chan *batch, 4), make(chan *batch, 4)
	done := make(chan struct{})
	defer close(done)
	go scanLines(r, batches, free, done)
	return v.runBatches(batches, free)
}

// errOverBudget ends a verification that may start again in parts when
// its states outgrow the budget (verifier.restart).
var errOverBudget = errors.New("certify: the states outgrow the budget")

// runBatches verifies the lines of batches; free takes batches back for
// reuse (nil: none).
func (v *verifier) runBatches(batches <-chan *batch, free chan<- *batch) (*Result, error) {
	defer v.closeSpill()
	v.maxKeys, v.maxQueue = int(^uint(0)>>1), int(^uint(0)>>1)
	for b := range batches {
		if stopped(v.opt.Stop) {
			return nil, ErrStopped
		}
		if v.opt.Mem > 0 {
			v.budget(b)
		}
		if v.part != nil && v.part.local {
			v.progress(fmt.Sprintf("part %d/%d", v.part.split.Index+1, v.part.split.Count))
		} else {
			v.progress("verifying")
		}
		for i := range b.lines {
			if v.keys != nil {
				v.warm(b.lines, i)
			}
			v.stats.Lines++
			v.at = stamp{Line: v.stats.Lines}
			if f := v.line(&b.lines[i]); f != nil {
				if err := v.spillFailed(); err != nil {
					return nil, err // the answer may rest on lost states
				}
				return stop(f), nil
			}
			if v.keys != nil && (v.keys.n > v.maxKeys || v.exp.mem() > v.maxQueue || v.act.mem() > v.maxQueue) {
				if v.restart && v.keys.n > v.maxKeys {
					return nil, errOverBudget
				}
				v.spillNow()
			}
		}
		if b.err != nil {
			return nil, b.err
		}
		if err := v.spillFailed(); err != nil {
			return nil, err
		}
		select {
		case free <- b:
		default:
		}
	}
	if v.h == nil {
		return stop(s1(0, "empty bundle: no header")), nil
	}
	v.at = stamp{Line: v.stats.Lines + 1}
	f := v.finish()
	if err := v.spillFailed(); err != nil {
		return nil, err
	}
	if f != nil {
		return stop(f), nil
	}
	for _, f := range v.fails {
		if f != nil {
			return &Result{Verdict: Reject, Failure: f}, nil
		}
	}
	res := &Result{Verdict: Accept}
	if v.opt.Segment != nil {
		from := v.f
		seen := v.pos
		if f, err := v.advance(v.opt.Segment); err != nil || f != nil {
			if err != nil {
				return nil, err
			}
			return stop(f), nil
		}
		res.From = &from
		checked := "none of it is in the bundle's log, which ends at the certified frontier"
		if seen > from {
			checked = fmt.Sprintf("(%d, %d] agrees with the bundle's log", from, min(seen, v.f))
			if seen < v.f {
				checked += fmt.Sprintf(", (%d, %d] is beyond it", seen, v.f)
			}
		}
		res.Assumes = append(res.Assumes, fmt.Sprintf("the segment is the source's change data in (%d, %d] (ContSeg, 003 §11.1): %s", from, v.f, checked))
	}
	res.Cut = v.cut()
	if err := v.spillFailed(); err != nil {
		return nil, err
	}
	if v.opt.Require != nil {
		req, err := v.scope.kind.build(*v.opt.Require, "the required scope")
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrRequire, err)
		}
		res.Cut.Omitted = req.minus(&v.scope)
	}
	res.Assumes = append(v.assumptions(), res.Assumes...)
	return res, nil
}

// assumptions names what an Accept rests on that the bundle cannot show.
func (v *verifier) assumptions() []string {
	a := []string{"faithful source observation (003 §8.7): the recorded reads and log are the source's"}
	if v.h.Base == "from-reads" {
		a = append(a, "an unknown base: a key's base is what its chunk read")
	}
	if v.h.Reads == "survivors" {
		a = append(a, "survivor-only reads: discarded reads are not evidenced (003 §5.4)")
	}
	switch {
	case v.h.Coordinates == "executed-set":
		a = append(a, "a transaction-closed frontier (checked)")
	case v.split != 0:
		a = append(a, fmt.Sprintf("a row-event cut: the frontier splits transaction %d, so it is no transactional snapshot (main §2.2)", v.split))
	case v.unlabeled && v.pos > 0:
		a = append(a, "a row-event cut: without transaction labels the frontier's transaction closure is not evidenced (main §2.2)")
	}
	return a
}

func stop(f *Failure) *Result {
	if f.Obligation == "Unsupported" {
		return &Result{Verdict: Unsupported, Failure: f}
	}
	return &Result{Verdict: Reject, Failure: f}
}

// readLine returns the next line without its newline, whatever its length.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		long := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = br.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	return line, err
}

// warm brings in the table slots and key states the coming lines use
// before they are verified: a lookup is two cache misses one after the
// other (the slot, then the state it points to), most of the verifier's
// time on a large scope, while misses asked for ahead overlap. Once a
// line, the slot of the line warmFar lines ahead is prefetched and,
// through the slot prefetched warmFar-warmNear lines before (in the cache
// by now), the state of the line warmNear lines ahead. A key the line
// before has (an emitted entry after its event) is not asked for twice.
func (v *verifier) warm(lines []scanned, i int) {
	if i == 0 { // a new batch: prime the pipeline
		for j := range min(warmFar, len(lines)) {
			v.warmSlot(lines, j)
		}
		for j := range min(warmNear, len(lines)) {
			v.warmState(j)
		}
	}
	if j := i + warmFar; j < len(lines) {
		v.warmSlot(lines, j)
	}
	if j := i + warmNear; j < len(lines) {
		v.warmState(j)
	}
}

// warmSlot prefetches the home slot of line j's key and keeps its hash
// for warmState.
func (v *verifier) warmSlot(lines []scanned, j int) {
	var h uint64
	if raw := lines[j].key; raw != nil {
		h, _, _, _ = v.keys.quick(raw)
	}
	if h != 0 && h != v.warmLast {
		prefetch(unsafe.Pointer(v.keys.slotOf(h)))
	}
	if h == v.warmLast {
		v.warmHash[j%len(v.warmHash)] = 0
	} else {
		v.warmHash[j%len(v.warmHash)], v.warmLast = h, h
	}
}

// lineKey is the raw key of a log event, a read or an emitted entry; nil
// for other lines. The feeders find it, so that the checks need not.
func lineKey(fs []field) []byte {
	if len(fs) == 0 {
		return nil
	}
	switch fs[0].name {
	case "out":
		return fs[0].raw
	case "p", "read":
		var raw []byte
		for _, f := range fs[1:] {
			if f.name == "k" {
				raw = f.raw
			}
		}
		return raw
	}
	return nil
}

// warmState prefetches line j's state, every cache line of it.
func (v *verifier) warmState(j int) {
	if h := v.warmHash[j%len(v.warmHash)]; h != 0 {
		if ks := v.keys.probe(h); ks != nil {
			p := unsafe.Pointer(ks)
			for off := uintptr(0); off < unsafe.Sizeof(keyState{}); off += 64 {
				prefetch(unsafe.Add(p, off))
			}
			prefetch(unsafe.Add(p, unsafe.Sizeof(keyState{})-1))
		}
	}
}

const warmNear, warmFar = 24, 64

// batch is a run of lines read and split into fields by scanLines, so that
// reading and scanning proceed on another core than the checks.
type batch struct {
	buf   []byte
	lines []scanned
	ends  []int
	fbuf  []field
	err   error // a read error after the lines (not io.EOF)
}

type scanned struct {
	raw    []byte
	fields []field
	err    error
	key    []byte // lineKey's: the feeder finds it, for warmSlot
	// A line of a local split (partition.go) another part owns: its kind
	// and, for a log event, its position and transaction label.
	stub byte
	p, x int64
	hasX bool
	run  run
}

// nextBatch is a free batch emptied, or a new one.
func nextBatch(free <-chan *batch) *batch {
	select {
	case b := <-free:
		b.buf, b.lines, b.ends, b.fbuf = b.buf[:0], b.lines[:0], b.ends[:0], b.fbuf[:0]
		return b
	default: // grown as lines come: a small recording's batch stays small
		return &batch{lines: make([]scanned, 0, 64), ends: make([]int, 0, 64)}
	}
}

func scanLines(r io.Reader, out chan<- *batch, free <-chan *batch, done <-chan struct{}) {
	defer close(out)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		b := nextBatch(free)
		var err error
		for len(b.ends) < 4096 && len(b.buf) < 1<<20 {
			var line []byte
			line, err = readLine(br)
			if len(line) > 0 || err == nil {
				b.buf = append(b.buf, line...)
				b.ends = append(b.ends, len(b.buf))
			}
			if err != nil {
				break
			}
		}
		start := 0
		for _, end := range b.ends {
			rec := scanned{raw: b.buf[start:end]}
			first := len(b.fbuf)
			if fs, e := scanObject(rec.raw, b.fbuf); e != nil {
				rec.err = e
			} else {
				b.fbuf, rec.fields = fs, fs[first:]
				rec.key = lineKey(rec.fields)
			}
			b.lines = append(b.lines, rec)
			start = end
		}
		last := err != nil
		if last && !errors.Is(err, io.EOF) {
			b.err = err
		}
		select {
		case out <- b:
		case <-done:
			return
		}
		if last {
			return
		}
	}
}

func (v *verifier) line(rec *scanned) *Failure {
	if rec.stub != 0 {
		return v.stub(rec)
	}
	if len(bytes.TrimSpace(rec.raw)) == 0 {
		return nil
	}
	if v.h == nil {
		h, f := parseHeader(rec.raw)
		if f != nil {
			return f
		}
		return v.start(h)
	}
	if rec.err != nil {
		return s1(v.stats.Lines, "%v", rec.err)
	}
	fs := rec.fields
	if len(fs) == 0 {
		return s1(v.stats.Lines, "an empty record")
	}
	switch fs[0].name {
	case "p":
		return v.event(fs)
	case "out":
		return v.entry(fs)
	case "read":
		return v.read(fs)
	case "base":
		return v.base(fs)
	}
	return unsupported(fs[0].name, "line %d: unknown record kind %q", v.stats.Lines, fs[0].name)
}

// start materializes the header: scopes, units, and the checks that need no
// log (S2, S3 on scope and frontier, brackets as far as they are known).
func (v *verifier) start(h *Header) *Failure {
	v.h = h
	if h.Keys == "integer" {
		v.kind = kindInteger
	}
	v.keys = newKeyTable(v.kind)
	v.exp.kind, v.act.kind = v.kind, v.kind
	kk := v.kind
	cert, err := kk.build(h.Certificate.Scope, "certificate scope")
	if err != nil {
		return s1(1, "%v", err)
	}
	runScope, err := kk.build(h.Run.Scope, "run scope")
	if err != nil {
		return s1(1, "%v", err)
	}
	v.f, v.s0 = h.Certificate.Frontier, h.Run.Start
	if v.f < 0 || v.s0 < 0 || h.Run.Consumed < 0 {
		return s1(1, "coordinates are prefix lengths and cannot be negative")
	}
	// S3: accessor agreement between the certificate and the run (§8.4).
	if h.Certificate.Frontier != h.Run.Consumed {
		v.fail(rS3Frontier, &Failure{Obligation: "S3", Clause: "accessor agreement: frontier(C) = frontier(R)",
			Expected: fmt.Sprint(h.Run.Consumed), Observed: fmt.Sprint(h.Certificate.Frontier),
			Detail: "the certificate's frontier is not the coordinate the run consumed through"})
	}
	if eq, w := cert.equal(&runScope); !eq {
		v.fail(rS3Scope, &Failure{Obligation: "S3", Clause: "accessor agreement: scope(C) = scope(R)",
			Expected: runScope.String(), Observed: cert.String(), Key: w,
			Detail: "the certificate claims a scope other than the run's"})
	}
	v.scope = cert
	if v.opt.Restrict != nil {
		sub, err := kk.build(*v.opt.Restrict, "restricted scope")
		if err != nil {
			return s1(0, "%v", err)
		}
		ok, w, comparable := sub.subsetOf(&cert)
		if !comparable {
			return unsupported("scope", "a range restriction of a scope given as a key list")
		}
		if !ok {
			return &Failure{Obligation: "S3", Clause: "restriction to a sub-scope: K' ⊆ scope(C)", Key: w,
				Detail: "the restricted scope is not inside the certificate's scope (widening a cut is unsound, §11.3)"}
		}
		v.scope = sub
	}
	if len(h.Units) == 0 {
		return &Failure{Obligation: "S2", Clause: "materialization", Detail: "the chunk plan has no units"}
	}
	v.listOwner = make(map[string]int)
	for i, us := range h.Units {
		dom, err := kk.build(us.Domain, fmt.Sprintf("unit %d domain", i+1))
		if err != nil {
			return s1(1, "%v", err)
		}
		if h.Reads == "survivors" && !dom.ranges {
			return unsupported("reads", "survivor-only reads need range domains (unit %d's is a key list)", i+1)
		}
		u := unitState{dom: dom}
		switch h.Coordinates {
		case "position":
			if us.Lo == nil || us.Hi == nil || us.Low != nil || us.High != nil {
				return &Failure{Obligation: "S2", Clause: "materialization", Unit: i + 1,
					Detail: "a unit of a position-coordinate bundle needs lo and hi (and no executed-set samples)"}
			}
			u.lo, u.hi, u.loSet, u.hiSet = *us.Lo, *us.Hi, true, true
			if u.lo < 0 || u.hi < 0 {
				return s1(1, "unit %d: negative coordinate", i+1)
			}
		case "executed-set":
			if us.Lo != nil || us.Hi != nil || us.Low == nil || us.High == nil {
				return &Failure{Obligation: "S2", Clause: "materialization", Unit: i + 1,
					Detail: "a unit of an executed-set bundle needs low and high samples (and no positions)"}
			}
			var f *Failure
			if u.low, f = newSample(us.Low, i); f != nil {
				return f
			}
			if u.high, f = newSample(us.High, i); f != nil {
				return f
			}
		}
		v.units = append(v.units, u)
		if dom.ranges {
			for _, iv := range dom.ivs {
				iv.unit = i
				v.rangeOwn = append(v.rangeOwn, iv)
			}
		} else {
			for _, k := range dom.list {
				if _, ok := v.listOwner[k.s]; !ok {
					v.listOwner[k.s] = i
				}
			}
		}
	}
	slices.SortStableFunc(v.rangeOwn, kk.loCmp)
	if h.Coordinates == "executed-set" {
		v.txns = make(map[int64]bool)
		v.resolveBoundary(0)
	}
	for i := range v.units {
		v.loOrder = append(v.loOrder, i)
	}
	slices.SortStableFunc(v.loOrder, func(a, b int) int { return cmpInt(v.units[a].lo, v.units[b].lo) })
	v.hiOrder = slices.Clone(v.loOrder)
	slices.SortStableFunc(v.hiOrder, func(a, b int) int { return cmpInt(v.units[a].hi, v.units[b].hi) })
	if f := v.checkO1(); f != nil {
		return f
	}
	return nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func newSample(ivs [][2]int64, unit int) (sample, *Failure) {
	s := sample{ivs: ivs, allIn: true}
	for _, iv := range ivs {
		if iv[0] > iv[1] || iv[0] < 1 {
			return s, s1(1, "unit %d: executed-set interval [%d, %d] is not a range of labels ≥ 1", unit+1, iv[0], iv[1])
		}
		s.size += iv[1] - iv[0] + 1
	}
	return s, nil
}

// owner is the unit whose domain holds k (the first one, as in the model).
func (v *verifier) owner(k key) int {
	best := -1
	if i, ok := v.listOwner[k.s]; ok {
		best = i
	}
	ivs := v.rangeOwn
	// Keys come mostly in runs within one range (a chunk's reads): the
	// last range found is tried before a search.
	n, j := 0, v.ownLast
	if j < len(ivs) && v.kind.startsBy(ivs[j], k) && (j+1 == len(ivs) || !v.kind.startsBy(ivs[j+1], k)) {
		n = j + 1
	} else if n = v.kind.startUpTo(ivs, k); n > 0 {
		v.ownLast = n - 1
	}
	for j := n - 1; j >= 0; j-- {
		if v.kind.contains(ivs[j], k) && (best < 0 || ivs[j].unit < best) {
			best = ivs[j].unit
		}
		if len(ivs) < 64 {
			continue // few ranges: look at all, to find the first owner under overlap
		}
		break
	}
	return best
}

// state returns k's state, creating it; nil when k is outside the scope.
func (v *verifier) state(raw []byte) (*keyState, *Failure) {
	if v.lastKS != nil && bytes.Equal(raw, v.lastRaw) {
		return v.lastKS, nil // an emitted entry usually follows its own event
	}
	ks, k, err := v.keys.find(raw)
	if err != nil {
		return nil, s1(v.stats.Lines, "%v", err)
	}
	if ks == nil && v.sp != nil {
		ks = v.fault(k)
	}
	if ks != nil {
		v.lastKS, v.lastRaw = ks, append(v.lastRaw[:0], raw...)
		return ks, nil
	}
	if !v.scope.has(k) || !v.owns(k) {
		return nil, nil
	}
	ks = v.keys.alloc()
	*ks = keyState{k: k, unit: int32(v.owner(k)), known: v.h.Base == "complete"}
	v.keys.put(ks)
	v.nkeys++
	if ks.unit >= 0 {
		u := &v.units[ks.unit]
		if u.loDone {
			// σ_lo(k) = b0(k): ⊥ for a complete base (k had no base record),
			// unknown (so consistent) otherwise; R(k) is ⊥ for an unread key.
			ks.matched = true
		}
		u.members = append(u.members, ks)
		ks.member = true
	}
	return ks, nil
}

func (v *verifier) base(fs []field) *Failure {
	if v.phase > 0 {
		return s1(v.stats.Lines, "base observations must come before reads and the log")
	}
	var kraw, val []byte
	for _, f := range fs {
		switch f.name {
		case "base":
			kraw = f.raw
		case "v":
			val = f.raw
		default:
			return unsupported(f.name, "line %d: unknown field %q in a base observation", v.stats.Lines, f.name)
		}
	}
	if val == nil {
		return s1(v.stats.Lines, "a base observation needs v")
	}
	ks, f := v.state(kraw)
	if f != nil || ks == nil {
		return f
	}
	if ks.based {
		return s1(v.stats.Lines, "two base observations for key %v", ks.k)
	}
	ks.sigma, ks.known, ks.based = canonValue(val), true, true
	return nil
}

func (v *verifier) read(fs []field) *Failure {
	if v.phase > 1 {
		return s1(v.stats.Lines, "observed rows must come before the log")
	}
	v.phase = 1
	v.stats.Reads++
	var kraw, val []byte
	unit := int64(-1)
	for _, f := range fs {
		switch f.name {
		case "read":
			n, err := parseInt(f.raw)
			if err != nil {
				return s1(v.stats.Lines, "read: %v", err)
			}
			unit = n
		case "k":
			kraw = f.raw
		case "v":
			val = f.raw
		default:
			return unsupported(f.name, "line %d: unknown field %q in an observed row", v.stats.Lines, f.name)
		}
	}
	if kraw == nil || val == nil {
		return s1(v.stats.Lines, "an observed row needs k and v (v null for an observed absence)")
	}
	if unit < 1 || unit > int64(len(v.units)) {
		return &Failure{Obligation: "S2", Clause: "materialization", Line: v.stats.Lines,
			Detail: fmt.Sprintf("observed row names unit %d; the plan has %d", unit, len(v.units))}
	}
	ks, f := v.state(kraw)
	if f != nil || ks == nil {
		return f
	}
	i := int32(unit - 1)
	if !v.units[i].dom.has(ks.k) {
		return &Failure{Obligation: "S2", Clause: "materialization", Unit: int(unit), Key: ks.k.String(), Line: v.stats.Lines,
			Detail: "an observed row lies outside its chunk's domain"}
	}
	if ks.read && ks.unit != i {
		return nil // overlapping domains: O1 fails; the first reading unit keeps the key, as model.Plan.Owner would
	}
	if ks.read {
		return &Failure{Obligation: "S2", Clause: "materialization", Key: ks.k.String(), Line: v.stats.Lines,
			Detail: "two read results for one key (retried or overlapping reads must be normalized first, §5.3)"}
	}
	ks.read, ks.r = true, canonValue(val)
	if ks.unit != i {
		if ks.member {
			u := &v.units[ks.unit]
			u.members = slices.DeleteFunc(u.members, func(x *keyState) bool { return x == ks })
		}
		ks.unit = i
		v.units[i].members = append(v.units[i].members, ks)
		ks.member = true
	}
	return nil
}

// enterLog runs once, before the first log record: O3 and the checks at
// coordinate 0.
func (v *verifier) enterLog() {
	v.phase = 2
	for i := range v.units {
		u := &v.units[i]
		if u.dom.ranges {
			continue // a range read is total: keys it did not return were absent
		}
		v.at.Step = int64(i)
		for _, k := range u.dom.list {
			if !v.scope.has(k) || !v.owns(k) {
				continue
			}
			if ks := v.peek(k); ks == nil || !ks.read {
				v.failKey(rO3, k, &Failure{Obligation: "S4", Clause: "O3 refresh totality", Unit: i + 1, Key: k.String(),
					Detail: "a key of the chunk's domain has no read result (neither a row nor an absence)"})
			}
		}
	}
	v.at.Step = 0
	if v.h.Coordinates == "position" {
		v.passLo(0)
		return
	}
	for i := range v.units {
		if v.units[i].loSet { // the empty sample: lo = 0
			v.lowEdge(i)
		}
	}
}

// passLo compares σ_c with the refresh of every unit whose low edge is c.
func (v *verifier) passLo(c int64) {
	for v.loNext < len(v.loOrder) && v.units[v.loOrder[v.loNext]].lo <= c {
		v.lowEdge(v.loOrder[v.loNext])
		v.loNext++
	}
}

func (v *verifier) lowEdge(i int) {
	v.units[i].loDone = true
	v.eachMember(i, func(ks *keyState) bool {
		if !ks.matched && (!ks.known || ks.sigma == ks.r) {
			ks.matched = true
			return true
		}
		return false
	})
}

// resolveBoundary resolves executed-set samples at a transaction boundary c.
func (v *verifier) resolveBoundary(c int64) {
	n := int64(len(v.txns))
	for i := range v.units {
		u := &v.units[i]
		if !u.loSet && u.low.allIn && u.low.size == n {
			u.lo, u.loSet = c, true
			if v.phase == 2 {
				v.lowEdge(i)
			}
		}
		if !u.hiSet && u.high.allIn && u.high.size == n {
			u.hi, u.hiSet = c, true
		}
	}
}

func (v *verifier) inWindow(u *unitState, p int64) bool {
	return u.loSet && p > u.lo && (!u.hiSet || p <= u.hi)
}

func (v *verifier) event(fs []field) *Failure {
	if v.phase < 2 {
		v.enterLog()
	}
	v.stats.Events++
	var kraw, val []byte
	p, txn, hasTxn := int64(-1), int64(0), false
	for _, f := range fs {
		switch f.name {
		case "p":
			n, err := parseInt(f.raw)
			if err != nil {
				return s1(v.stats.Lines, "p: %v", err)
			}
			p = n
		case "k":
			kraw = f.raw
		case "v":
			val = f.raw
		case "x":
			n, err := parseInt(f.raw)
			if err != nil {
				return s1(v.stats.Lines, "x: %v", err)
			}
			txn, hasTxn = n, true
		default:
			return unsupported(f.name, "line %d: unknown field %q in a log event (a delta or partial event cannot be replayed)", v.stats.Lines, f.name)
		}
	}
	return v.logEvent(p, txn, hasTxn, kraw, val)
}

// logEvent is the log event at position p: its transaction label, if it
// has one, and the key and image it writes (kraw nil: none, or another
// part's key).
func (v *verifier) logEvent(p, txn int64, hasTxn bool, kraw, val []byte) *Failure {
	if p != v.pos+1 {
		return &Failure{Obligation: "S2", Clause: "materialization", Line: v.stats.Lines, Coord: coord(v.pos + 1),
			Detail: fmt.Sprintf("log position %d follows %d: the log must be recorded without gaps", p, v.pos)}
	}
	if kraw != nil && val == nil {
		return unsupported("v", "line %d: a row event without a full image (field v)", v.stats.Lines)
	}
	if !hasTxn {
		v.unlabeled = true
	}
	if hasTxn && v.lastHas && txn == v.lastTxn {
		// p-1 and p are one transaction: a coordinate p-1 is inside it.
		if p-1 == v.f && v.split == 0 {
			v.split = txn
			if v.h.Coordinates == "executed-set" {
				v.fail(rFrontier, &Failure{Obligation: "S4", Clause: "the frontier is transaction-closed (main §2.2, §7.4)", Coord: coord(v.f), Line: v.stats.Lines,
					Detail: fmt.Sprintf("the frontier %d falls inside transaction %d: executed-set coordinates are transaction boundaries, and a cut there is a half-applied transaction", v.f, txn)})
			}
		}
		if p-1 == v.s0 && v.h.Coordinates == "executed-set" {
			v.fail(rStart, &Failure{Obligation: "S4", Clause: "consumption starts at a transaction boundary (main §7.4)", Coord: coord(v.s0), Line: v.stats.Lines,
				Detail: fmt.Sprintf("consumption starts at %d, inside transaction %d", v.s0, txn)})
		}
	}
	v.lastHas = hasTxn
	if v.h.Coordinates != "executed-set" {
		v.lastTxn = txn
	} else {
		if !hasTxn {
			return s1(v.stats.Lines, "an event of an executed-set bundle needs its transaction label x")
		}
		if p > 1 && txn != v.lastTxn {
			if v.txns[txn] {
				return s1(v.stats.Lines, "transaction %d recurs: transactions are contiguous blocks of the log", txn)
			}
			v.resolveBoundary(p - 1)
		}
		if !v.txns[txn] {
			v.txns[txn] = true
			for i := range v.units {
				u := &v.units[i]
				if !u.low.has(txn) {
					u.low.allIn = false
				}
				if !u.high.has(txn) {
					u.high.allIn = false
				}
			}
		}
		v.lastTxn = txn
	}
	emitting := p > v.s0 && p <= v.f
	if p == v.f+1 {
		v.closeUpTo(v.f + 1)
	}
	if emitting {
		v.closeUpTo(p)
	}
	var tail tailEvent
	if kraw != nil {
		ks, f := v.state(kraw)
		if f != nil {
			return f
		}
		if ks != nil {
			img := canonValue(val)
			tail = tailEvent{ks.k, true, img}
			if emitting && !v.discDone {
				pass := true
				if ks.unit >= 0 && v.h.Discipline == RangeMerge {
					u := &v.units[ks.unit]
					pass = u.hiSet && p > u.hi
				}
				if pass {
					v.at.Step = stepEvent
					v.expect(entry{k: ks.k, v: img, tag: p})
					v.compare()
				}
			}
			if p > v.f && !ks.atFSet {
				ks.atF, ks.atFKnown, ks.atFSet = ks.sigma, ks.known, true
			}
			if ks.unit >= 0 {
				if u := &v.units[ks.unit]; v.inWindow(u, p) {
					ks.touched, ks.win = true, img
					if img == ks.r {
						ks.matched = true
					}
				}
			}
			ks.sigma, ks.known = img, true
		}
	}
	if v.opt.Segment != nil && p > v.f {
		v.tail = append(v.tail, tail) // what the segment must agree with
	}
	v.pos = p
	if v.h.Coordinates == "position" {
		v.passLo(p)
	}
	return nil
}

// closeUpTo closes, in unit order, every unit with hi < pos (model.emit's
// closeUpTo): window-discard emits the survivors, range-merge the merged
// rows, each tagged with the unit's high edge, keys in key order.
func (v *verifier) closeUpTo(pos int64) {
	if v.final {
		return
	}
	if pos == v.f+1 {
		v.final = true
	}
	if v.h.Coordinates == "position" {
		// units by high edge: nothing to close unless the next one is due
		for v.hiNext < len(v.hiOrder) && v.units[v.hiOrder[v.hiNext]].closed {
			v.hiNext++
		}
		if v.hiNext == len(v.hiOrder) || v.units[v.hiOrder[v.hiNext]].hi >= pos {
			return
		}
	}
	for i := range v.units {
		u := &v.units[i]
		if u.closed || !u.hiSet || u.hi >= pos {
			continue
		}
		u.closed = true
		if v.discDone {
			continue
		}
		v.at.Step = int64(i)
		v.eachMember(i, func(ks *keyState) bool {
			var val string
			switch v.h.Discipline {
			case RangeMerge:
				val = ks.r
				if ks.touched {
					val = ks.win
				}
			default:
				if ks.touched {
					return false
				}
				val = ks.r
			}
			if val != "" {
				v.expect(entry{k: ks.k, v: val, tag: u.hi})
			}
			return false
		})
		v.compare()
	}
}

func (v *verifier) sortMembers(u *unitState) {
	slices.SortFunc(u.members, func(a, b *keyState) int { return v.kind.cmp(a.k, b.k) })
}

func (v *verifier) entry(fs []field) *Failure {
	if v.phase < 2 {
		v.enterLog()
	}
	v.stats.Entries++
	var kraw, val []byte
	tag := int64(-1)
	for _, f := range fs {
		switch f.name {
		case "out":
			kraw = f.raw
		case "v":
			val = f.raw
		case "tag":
			n, err := parseInt(f.raw)
			if err != nil {
				return s1(v.stats.Lines, "tag: %v", err)
			}
			tag = n
		default:
			return unsupported(f.name, "line %d: unknown field %q in an emitted entry", v.stats.Lines, f.name)
		}
	}
	if val == nil || tag < 0 {
		return s1(v.stats.Lines, "an emitted entry needs v and a tag")
	}
	ks, f := v.state(kraw)
	if f != nil || ks == nil {
		return f
	}
	var img string
	switch {
	case string(val) == ks.sigma && ks.sigma != "": // the image of its own event: no copy
		img = ks.sigma
	case string(val) == ks.r && ks.r != "":
		img = ks.r
	default:
		img = canonValue(val)
	}
	if ks.outSeen && tag < ks.outTag {
		v.failKey(rMonotone, ks.k, &Failure{Obligation: "S4", Clause: "per-key monotonicity (Thm 3)", Key: ks.k.String(), Coord: coord(tag), Line: v.stats.Lines,
			Expected: fmt.Sprintf("a tag ≥ %d", ks.outTag), Observed: fmt.Sprint(tag),
			Detail: "an entry reflects an older log prefix than an earlier entry for its key"})
	}
	ks.out, ks.outTag, ks.outSeen = img, tag, true
	if !v.discDone {
		v.record(entry{k: ks.k, v: img, tag: tag, line: v.stats.Lines})
		v.compare()
	}
	return nil
}

// compare pairs recorded entries with the discipline's, in order.
func (v *verifier) compare() {
	if v.h.Discipline == RangeMerge {
		v.compareByKey()
		return
	}
	for {
		pe, pa := v.exp.front(), v.act.front()
		if pe == nil || pa == nil {
			return
		}
		e, a := *pe, *pa
		v.exp.pop()
		v.act.pop()
		v.scoped++
		if e.k.s != a.k.s || e.v != a.v || e.tag != a.tag {
			v.prefixFail(&e, &a)
			return
		}
	}
}

// compareByKey pairs recorded entries with the discipline's key by key.
// Range-merge's shape is per key (Lemma 6.3: the merged entry, then the
// key's events beyond the high edge): a unit's merged block may go out as
// soon as its backfill ends, before the place Def. 6.4 gives its close, and
// a run that does so replays the same. Only each key's own order counts.
func (v *verifier) compareByKey() {
	take := func(e entry, act bool) bool {
		ks := v.lookup(e.k)
		if len(ks.pend) == 0 || ks.pendAct == act {
			ks.pend, ks.pendAct = append(ks.pend, e), act
			return true
		}
		o := ks.pend[0]
		ks.pend = ks.pend[1:]
		v.scoped++
		if o.v != e.v || o.tag != e.tag {
			if act {
				v.prefixFail(&o, &e)
			} else {
				v.prefixFail(&e, &o)
			}
			return false
		}
		return true
	}
	for e := v.exp.front(); e != nil; e = v.exp.front() {
		x := *e // before pop, which may move the queue's entries
		v.exp.pop()
		if !take(x, false) {
			return
		}
	}
	for a := v.act.front(); a != nil; a = v.act.front() {
		x := *a
		v.act.pop()
		if !take(x, true) {
			return
		}
	}
}

// unmatched reports, for range-merge, the first key (in key order) with
// entries one side has and the other lacks.
func (v *verifier) unmatched() {
	done := false
	v.eachSorted(func(ks *keyState) {
		if done || len(ks.pend) == 0 {
			return
		}
		e := ks.pend[0]
		if ks.pendAct {
			v.prefixFail(nil, &e)
		} else {
			v.prefixFail(&e, nil)
		}
		done = true
	})
}

func showEntry(e *entry) string {
	if e == nil {
		return "nothing"
	}
	return fmt.Sprintf("(%s, %s, tag %d)", e.k, showValue(e.v), e.tag)
}

// planted switches obligations off, for tests that show the cross-check
// against the model catches a verifier without them. Never set otherwise.
var planted struct{ noEmission, noVC bool }

func (v *verifier) prefixFail(e, a *entry) {
	if planted.noEmission {
		v.discDone = true
		v.exp.reset()
		v.act.reset()
		return
	}
	k := a
	if k == nil {
		k = e
	}
	v.failKey(rDiscipline, k.k, prefixFailure(v.h.Discipline, v.scoped, e, a))
	v.discDone = true
	v.exp.reset()
	v.act.reset()
}

// prefixFailure is the first difference between the discipline's entries
// (e) and the recorded ones (a), after n paired entries. Range-merge is
// compared key by key, so its failures name the key, not a place in the
// whole stream.
func prefixFailure(discipline string, n int64, e, a *entry) *Failure {
	f := &Failure{Obligation: "S4", Clause: "the prefix is the " + discipline + " emission (§6)",
		Expected: showEntry(e), Observed: showEntry(a)}
	byKey := discipline == RangeMerge
	switch {
	case a == nil:
		f.Detail = fmt.Sprintf("the prefix ends where the discipline emits entry %d", n+1)
		if byKey {
			f.Detail = "the prefix lacks an entry the discipline emits for the key"
		}
		f.Key, f.Coord = e.k.String(), coord(e.tag)
	case e == nil:
		f.Detail = fmt.Sprintf("entry %d of the prefix (in scope) is one the discipline does not emit", n+1)
		if byKey {
			f.Detail = "an entry of the prefix is one the discipline does not emit for the key"
		}
		f.Key, f.Coord, f.Line = a.k.String(), coord(a.tag), a.line
	default:
		f.Detail = fmt.Sprintf("entry %d of the prefix (in scope) differs from the discipline's", n)
		if byKey {
			f.Detail = "an entry of the prefix differs from the discipline's for the key"
		}
		f.Key, f.Coord, f.Line = a.k.String(), coord(a.tag), a.line
	}
	return f
}

// finish runs at the end of the bundle: the checks that need the whole log,
// the discipline's last closes, O2 and the virtual-cut equality.
func (v *verifier) finish() *Failure {
	if v.phase < 2 {
		v.enterLog()
	}
	if v.h.Coordinates == "executed-set" {
		v.resolveBoundary(v.pos)
		for i := range v.units {
			if u := &v.units[i]; !u.loSet || !u.hiSet {
				return &Failure{Obligation: "S2", Clause: "materialization: executed-set samples denote log prefixes (Thm 7)", Unit: i + 1,
					Detail: "a sample of the executed transaction set equals G(c) at no transaction boundary c of the log"}
			}
		}
	}
	h := v.h
	n := v.pos
	if pe := h.Certificate.PrefixEntries; pe != nil && *pe != v.stats.Entries {
		v.fail(rS3Prefix, &Failure{Obligation: "S3", Clause: "accessor agreement: prefix(C) = prefix(R)",
			Expected: fmt.Sprint(*pe), Observed: fmt.Sprint(v.stats.Entries),
			Detail: "the certificate's prefix has a different number of entries than the recorded stream"})
	}
	for i := range v.units {
		u := &v.units[i]
		if v.opt.Restrict != nil && !u.dom.meets(&v.scope) {
			continue // a unit with no key of K' says nothing about the cut on K'
		}
		w := fmt.Sprintf("(%d, %d]", u.lo, u.hi)
		switch {
		case u.lo > u.hi:
			v.fail(rBracket, &Failure{Obligation: "S4", Clause: "brackets inside the log: lo ⊑ hi", Unit: i + 1, Coord: coord(u.lo),
				Detail: "the low edge " + fmt.Sprint(u.lo) + " is after the high edge " + fmt.Sprint(u.hi)})
		case u.hi > n:
			v.fail(rBracket, &Failure{Obligation: "S4", Clause: "brackets inside the log", Unit: i + 1, Coord: coord(u.hi),
				Detail: fmt.Sprintf("the window %s reaches past the recorded log, which ends at %d", w, n)})
		}
		if u.hi > v.f {
			v.fail(rFrontier, &Failure{Obligation: "S4", Clause: "frontier at or after every high edge (Thm 1)", Unit: i + 1, Coord: coord(v.f),
				Expected: fmt.Sprintf("frontier ≥ %d", u.hi), Observed: fmt.Sprint(v.f),
				Detail: fmt.Sprintf("the frontier %d is before the high edge of window %s", v.f, w)})
		}
		need, edge := u.lo, "low"
		if h.Discipline == RangeMerge {
			need, edge = u.hi, "high"
		}
		if v.s0 > need {
			v.fail(rStart, &Failure{Obligation: "S4", Clause: "consumption starts at or before every " + edge + " edge (S-OBS)", Unit: i + 1, Coord: coord(v.s0),
				Expected: fmt.Sprintf("start ≤ %d", need), Observed: fmt.Sprint(v.s0),
				Detail: fmt.Sprintf("consumption starts at %d, after the %s edge of window %s", v.s0, edge, w)})
		}
		if h.Discipline == PointSplice && u.lo != u.hi {
			v.fail(rPointBracket, &Failure{Obligation: "S4", Clause: "point-splice brackets are points (§6.4)", Unit: i + 1, Coord: coord(u.lo),
				Detail: fmt.Sprintf("window %s is not a point", w)})
		}
	}
	if v.f > n {
		v.fail(rFrontier, &Failure{Obligation: "S4", Clause: "the log is retained through the frontier", Coord: coord(v.f),
			Detail: fmt.Sprintf("the frontier %d is past the recorded log, which ends at %d", v.f, n)})
	}
	v.closeUpTo(v.f + 1)
	v.at = stamp{Line: v.at.Line + 1}
	if !v.discDone {
		switch {
		case v.h.Discipline == RangeMerge:
			v.unmatched()
		case v.exp.front() != nil:
			e := *v.exp.front()
			v.prefixFail(&e, nil)
		case v.act.front() != nil:
			a := *v.act.front()
			v.prefixFail(nil, &a)
		}
	}
	// O2, unit by unit in key order (§3.3): per key, some c in [lo, hi].
	v.at = stamp{Line: v.at.Line + 1}
	for i := range v.units {
		u := &v.units[i]
		if !u.loDone || u.hi > n || v.fails[rO2] != nil {
			continue // O2 is not judged, or the first failure is found
		}
		v.at.Step = int64(i)
		v.eachMember(i, func(ks *keyState) bool {
			if ks.touched && h.Reads == "survivors" {
				return false // a discarded read: suppressed from the clean prefix, not evidenced
			}
			if !ks.matched {
				v.failKey(rO2, ks.k, &Failure{Obligation: "S4", Clause: "O2 bracket-local validity (§3.3)", Unit: i + 1, Key: ks.k.String(), Coord: coord(u.lo),
					Expected: fmt.Sprintf("σ_c(%s) for some c in [%d, %d]", ks.k, u.lo, u.hi), Observed: showValue(ks.r),
					Detail: "the refresh matches the source at no coordinate of the bracket (a stale or future read)"})
			}
			return false
		})
	}
	// The virtual-cut equality (§6): apply(prefix)↾K = src(b0, H, f)↾K.
	v.at = stamp{Line: v.at.Line + 1}
	if v.fails == [nRanks]*Failure{} && !planted.noVC {
		v.eachSorted(func(ks *keyState) {
			if v.fails[rVC] != nil {
				return
			}
			want, known := ks.sigma, ks.known
			if ks.atFSet {
				want, known = ks.atF, ks.atFKnown
			}
			if !known { // b0 unknown: the read, if any, pinned it (O2)
				want = ks.r
			}
			if ks.out != want {
				v.failKey(rVC, ks.k, &Failure{Obligation: "VC", Clause: "virtual cut: apply(prefix)↾K = src(b0,H,f)↾K (§6)", Key: ks.k.String(), Coord: coord(v.f),
					Expected: showValue(want), Observed: showValue(ks.out),
					Detail: "the replay of the prefix differs from the source state at the frontier"})
			}
		})
	}
	return nil
}

func (v *verifier) cut() *Cut {
	c := &Cut{Scope: v.scope.String(), Frontier: v.f}
	if v.opt.KeepState {
		c.State = make(map[string]string)
	}
	hash := sha256.New()
	var buf []byte
	v.eachSorted(func(ks *keyState) {
		if ks.out == "" {
			return
		}
		c.Present++
		if c.State != nil {
			c.State[ks.k.s] = ks.out
		}
		if v.part != nil {
			v.part.writeCut(v.kind, ks) // the merge hashes the parts' keys in order
			return
		}
		buf = cutLine(buf[:0], ks.k.s, ks.out)
		hash.Write(buf)
	})
	if v.part == nil {
		c.Digest = hex.EncodeToString(hash.Sum(nil))
	}
	return c
}
