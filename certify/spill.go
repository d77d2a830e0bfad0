package certify

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// Spilling: under Options.Mem, per-key states stay in the key table until
// the table's estimated size passes its share of the budget; then, at a
// point where no state is held by pointer (between records), every resident
// state is written to an embedded key-value store and the table is emptied.
// A state is read back (faulted in) on its next use; the store keeps a
// stale copy, so a key is in the store and resident at once, and the
// resident copy rules. The store's keys order as the keys do, so a unit's
// members and the whole scope are read in key order by merging the resident
// states with a range scan. The emitted stream's backlog (the entries the
// discipline has not yet paired, when the stream lags the log) spills to a
// plain file in the same directory: it is a queue, read once in order.

// spillDirPrefix starts the spill directory's name; with its owner file
// (the explorer's convention, explore/owner.go) `cutcheck clean` removes a
// directory a killed run left behind.
const spillDirPrefix = "cutcheck-certify-"

type spill struct {
	dir   string
	owner *os.File
	db    *badger.DB
	rtxn  *badger.Txn // reads until the next write (a snapshot)
	err   error       // the first store error; the verification answers it
}

// reader is a read transaction that sees every write so far.
func (s *spill) reader() *badger.Txn {
	if s.rtxn == nil {
		s.rtxn = s.db.NewTransaction(false)
	}
	return s.rtxn
}

// wrote ends the read transaction: it would not see the write.
func (s *spill) wrote() {
	if s.rtxn != nil {
		s.rtxn.Discard()
		s.rtxn = nil
	}
}

func openSpill(parent string, budget int64) (*spill, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, spillDirPrefix)
	if err != nil {
		return nil, fmt.Errorf("certify: spill directory: %w", err)
	}
	s := &spill{dir: dir}
	if s.owner, err = claimDir(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// Small memtables and caches: the store holds what does not fit in
	// memory, so its own buffers come out of the same budget. Values sit in
	// the tree (up to a tenth of a memtable: no value log reads), tables are uncompressed (no block
	// decompression into the cache). Badger maps its tables; the mapped
	// pages are file-backed and clean, but they count as resident memory.
	// A sixty-fourth of the budget, not a thirty-second: a table builder
	// holds twice its table, level 0's tables are a memtable each, and the
	// smaller size lowered the peak at 128 MiB by about 8 MiB, no slower.
	mt := min(max(budget/64, 1<<20), 16<<20) // memtable: 1–16 MiB
	opt := badger.DefaultOptions(dir + "/kv").
		WithLogger(nil).
		WithSyncWrites(false).
		WithDetectConflicts(false).
		WithNumVersionsToKeep(1).
		WithMemTableSize(mt).
		WithNumMemtables(2).
		WithNumLevelZeroTables(2).
		WithNumLevelZeroTablesStall(4).
		WithBaseTableSize(mt / 4).
		WithValueThreshold(mt / 10).
		WithValueLogFileSize(4 * mt).
		WithBlockCacheSize(mt / 2).
		WithIndexCacheSize(mt / 2).
		WithCompression(options.None).
		WithNumCompactors(2).
		WithCompactL0OnClose(false).
		WithMetricsEnabled(false)
	if s.db, err = badger.Open(opt); err != nil {
		s.close()
		return nil, fmt.Errorf("certify: opening the spill store: %w", err)
	}
	return s, nil
}

// close removes the directory; the owner file's lock goes last.
func (s *spill) close() {
	s.wrote()
	if s.db != nil {
		s.db.Close()
	}
	os.RemoveAll(s.dir)
	if s.owner != nil {
		s.owner.Close()
	}
}

func (s *spill) fail(err error) {
	if s.err == nil && err != nil {
		s.err = fmt.Errorf("certify: spill store: %w", err)
	}
}

// storeKey encodes k so that byte order is key order: an integer's bits
// with the sign flipped, big-endian; a string's bytes.
func (kk keyKind) storeKey(buf []byte, k key) []byte {
	if kk == kindInteger {
		return binary.BigEndian.AppendUint64(buf, uint64(k.n)^1<<63)
	}
	return append(buf, k.s...)
}

// appendStored appends the text of the key stored as b (key.s).
func (kk keyKind) appendStored(buf, b []byte) []byte {
	if kk == kindInteger {
		return strconv.AppendInt(buf, int64(binary.BigEndian.Uint64(b)^1<<63), 10)
	}
	return append(buf, b...)
}

func (kk keyKind) fromStore(b []byte) key {
	if kk == kindInteger {
		n := int64(binary.BigEndian.Uint64(b) ^ 1<<63)
		return kk.fromString(fmt.Sprint(n))
	}
	return key{s: string(b)}
}

const (
	fKnown = 1 << iota
	fRead
	fAtFSet
	fAtFKnown
	fMatched
	fTouched
	fOutSeen
	fMember
	fBased
	fPendAct
)

func (ks *keyState) encode(buf []byte) []byte {
	var fl uint64
	for i, b := range []bool{ks.known, ks.read, ks.atFSet, ks.atFKnown, ks.matched, ks.touched, ks.outSeen, ks.member, ks.based, ks.pendAct} {
		if b {
			fl |= 1 << i
		}
	}
	buf = binary.AppendUvarint(buf, fl)
	buf = binary.AppendVarint(buf, int64(ks.unit))
	buf = binary.AppendVarint(buf, ks.outTag)
	for _, s := range []string{ks.sigma, ks.out, ks.r, ks.win, ks.atF} {
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	buf = binary.AppendUvarint(buf, uint64(len(ks.pend)))
	for _, e := range ks.pend {
		buf = e.encodeRest(buf)
	}
	return buf
}

func (e *entry) encodeRest(buf []byte) []byte {
	buf = binary.AppendVarint(buf, e.tag)
	buf = binary.AppendVarint(buf, e.line)
	buf = binary.AppendUvarint(buf, uint64(len(e.v)))
	return append(buf, e.v...)
}

// dec reads what encode wrote; a short record sets bad.
type dec struct {
	b   []byte
	bad bool
}

func (d *dec) uvarint() uint64 {
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *dec) varint() int64 {
	x, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *dec) str() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad, d.b = true, nil
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *dec) entryRest(k key) entry {
	e := entry{k: k}
	e.tag = d.varint()
	e.line = d.varint()
	e.v = d.str()
	return e
}

func decodeState(k key, b []byte) (*keyState, error) {
	d := dec{b: b}
	fl := d.uvarint()
	ks := &keyState{k: k}
	for i, p := range []*bool{&ks.known, &ks.read, &ks.atFSet, &ks.atFKnown, &ks.matched, &ks.touched, &ks.outSeen, &ks.member, &ks.based, &ks.pendAct} {
		*p = fl&(1<<i) != 0
	}
	ks.unit = int32(d.varint())
	ks.outTag = d.varint()
	for _, p := range []*string{&ks.sigma, &ks.out, &ks.r, &ks.win, &ks.atF} {
		*p = d.str()
	}
	n := d.uvarint()
	for i := uint64(0); i < n && !d.bad; i++ {
		ks.pend = append(ks.pend, d.entryRest(k))
	}
	if d.bad || len(d.b) != 0 {
		return nil, errors.New("a corrupt key state")
	}
	return ks, nil
}

// stateBytes estimates a resident state's memory: the struct, its two
// table slots (the table is at most half full), its members pointer, and
// its strings, taken as the mean record line (key and image) twice over.
func stateBytes(meanLine int64) int64 {
	return int64(unsafe.Sizeof(keyState{})) + 2*int64(unsafe.Sizeof(slot{})) + 8 + 2*meanLine
}

// evict writes every resident state to the store and empties the table.
// It runs only between records, when no state is held by pointer.
func (v *verifier) evict() {
	if v.sp == nil {
		if v.sp, v.spillErr = openSpill(v.opt.Dir, v.opt.Mem); v.spillErr != nil {
			return
		}
	}
	v.sp.wrote()
	wb := v.sp.db.NewWriteBatch()
	var kb, vb []byte
	v.keys.each(func(ks *keyState) {
		kb = v.kind.storeKey(kb[:0], ks.k)
		vb = ks.encode(vb[:0])
		// the batch keeps the slices: copy them
		v.sp.fail(wb.Set(append([]byte(nil), kb...), append([]byte(nil), vb...)))
	})
	v.sp.fail(wb.Flush())
	v.stats.Spills++
	v.keys.clear()
	v.sorted = nil
	for i := range v.units {
		v.units[i].members = v.units[i].members[:0]
	}
	v.lastKS, v.lastRaw = nil, v.lastRaw[:0]
}

// fault reads k's spilled state back into the table; nil if it has none.
func (v *verifier) fault(k key) *keyState {
	if v.sp == nil {
		return nil
	}
	var ks *keyState
	v.keyBuf = v.kind.storeKey(v.keyBuf[:0], k)
	err := func() error {
		it, err := v.sp.reader().Get(v.keyBuf)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return it.Value(func(b []byte) error {
			ks, err = decodeState(k, b)
			return err
		})
	}()
	if err != nil {
		v.sp.fail(err)
		return nil
	}
	if ks != nil {
		v.keys.put(ks)
		if ks.member {
			v.units[ks.unit].members = append(v.units[ks.unit].members, ks)
		}
	}
	return ks
}

// lookup is k's state, resident or faulted in; nil if it has none.
func (v *verifier) lookup(k key) *keyState {
	if ks := v.keys.get(k); ks != nil {
		return ks
	}
	return v.fault(k)
}

// spilledRange calls fn, in key order, with the spilled (not resident)
// states of keys in iv. A state fn changes (it returns true) is written back.
func (v *verifier) spilledRange(iv interval, fn func(*keyState) bool) {
	if v.sp == nil {
		return
	}
	var lo, hi []byte
	if iv.hasLo {
		lo = v.kind.storeKey(nil, iv.lo)
	}
	if iv.hasHi {
		hi = v.kind.storeKey(nil, iv.hi)
	}
	var wb *badger.WriteBatch
	err := v.sp.db.View(func(txn *badger.Txn) error {
		o := badger.DefaultIteratorOptions
		o.PrefetchValues = false
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Seek(lo); it.Valid(); it.Next() {
			item := it.Item()
			kb := item.Key()
			if hi != nil && string(kb) >= string(hi) {
				break
			}
			k := v.kind.fromStore(kb)
			if v.keys.get(k) != nil {
				continue // resident: the table's copy rules
			}
			var ks *keyState
			if err := item.Value(func(b []byte) (err error) {
				ks, err = decodeState(k, b)
				return err
			}); err != nil {
				return err
			}
			if fn(ks) { // written behind the scan, which does not see it
				if wb == nil {
					v.sp.wrote()
					wb = v.sp.db.NewWriteBatch()
				}
				v.sp.fail(wb.Set(item.KeyCopy(nil), ks.encode(nil)))
			}
		}
		return nil
	})
	v.sp.fail(err)
	if wb != nil {
		v.sp.fail(wb.Flush())
	}
}

// spilledKey calls fn with k's state if it is spilled and not resident.
func (v *verifier) spilledKey(k key, fn func(*keyState) bool) {
	if v.sp == nil || v.keys.get(k) != nil {
		return
	}
	s, _ := v.kind.succ(k)
	v.spilledRange(interval{lo: k, hi: s, hasLo: true, hasHi: true}, fn)
}

// eachMember calls fn with unit i's members in key order: the resident
// ones merged with the spilled ones. fn's changes to a spilled state are
// kept when it returns true.
func (v *verifier) eachMember(i int, fn func(*keyState) bool) {
	u := &v.units[i]
	v.sortMembers(u)
	if v.sp == nil {
		for _, ks := range u.members {
			fn(ks)
		}
		return
	}
	// Members lie in the unit's domain (state and read check it), which
	// is read in key order; the resident members are merged in.
	res := u.members
	a := 0
	mine := func(ks *keyState) bool {
		if int(ks.unit) != i {
			return false
		}
		for a < len(res) && v.kind.cmp(res[a].k, ks.k) < 0 {
			fn(res[a])
			a++
		}
		return fn(ks)
	}
	if u.dom.ranges {
		for _, iv := range u.dom.ivs {
			v.spilledRange(iv, mine)
		}
	} else {
		for _, k := range u.dom.list {
			v.spilledKey(k, mine)
		}
	}
	for ; a < len(res); a++ {
		fn(res[a])
	}
}

// eachSorted calls fn with every state, in key order. The resident
// states' order is kept for the next call while no state is made or
// evicted (the virtual-cut check and the cut both walk it).
func (v *verifier) eachSorted(fn func(*keyState)) {
	if len(v.sorted) != v.keys.n {
		v.sorted = v.sortStates(v.sorted[:0])
	}
	res := v.sorted
	a := 0
	v.spilledRange(interval{unit: -1}, func(ks *keyState) bool {
		for a < len(res) && v.kind.cmp(res[a].k, ks.k) < 0 {
			fn(res[a])
			a++
		}
		fn(ks)
		return false
	})
	for ; a < len(res); a++ {
		fn(res[a])
	}
}

// sortStates appends the resident states to res in key order. They are
// sorted by a copy of their keys beside them: compared through the
// pointers, most of the time went to fetching scattered states.
func (v *verifier) sortStates(res []*keyState) []*keyState {
	type byKey struct {
		n  int64
		s  string
		ks *keyState
	}
	all := make([]byKey, 0, v.keys.n)
	v.keys.each(func(ks *keyState) { all = append(all, byKey{ks.k.n, ks.k.s, ks}) })
	if v.kind == kindInteger {
		slices.SortFunc(all, func(a, b byKey) int { return cmp.Compare(a.n, b.n) })
	} else {
		slices.SortFunc(all, func(a, b byKey) int { return strings.Compare(a.s, b.s) })
	}
	for _, b := range all {
		res = append(res, b.ks)
	}
	return res
}

// queue is a FIFO of entries: s[h:] in memory, then n entries in a file,
// then back. The file is used only once the queue passes its budget; it is
// appended by one handle and read by another, and starts afresh whenever
// it has been read to its end.
type queue struct {
	s    []entry
	h    int
	back []entry
	n    int64 // entries in the file
	path string
	wf   *os.File
	w    *bufio.Writer
	rf   *os.File
	r    *bufio.Reader
	kind keyKind
	buf  []byte
	err  error
}

func (q *queue) push(e entry) {
	if q.n == 0 && len(q.back) == 0 {
		q.s = append(q.s, e)
		return
	}
	q.back = append(q.back, e)
}

// front is the first entry, nil for none.
func (q *queue) front() *entry {
	if q.h < len(q.s) {
		return &q.s[q.h]
	}
	return q.refill()
}

func (q *queue) pop() {
	q.h++
	if q.h == len(q.s) {
		q.s, q.h = q.s[:0], 0
	} else if q.h > 1024 && q.h > len(q.s)/2 {
		q.s, q.h = append(q.s[:0], q.s[q.h:]...), 0
	}
}

// mem is the number of entries held in memory.
func (q *queue) mem() int { return len(q.s) - q.h + len(q.back) }

func (q *queue) reset() {
	q.s, q.h, q.back, q.n = nil, 0, nil, 0
}

// refill moves the next block of the file, or back, into s.
func (q *queue) refill() *entry {
	q.s, q.h = q.s[:0], 0
	if q.n > 0 {
		if q.r == nil {
			rf, err := os.Open(q.path)
			if err != nil {
				q.fail(err)
				return nil
			}
			q.rf, q.r = rf, bufio.NewReaderSize(rf, 64<<10)
		}
		for i := 0; i < 4096 && q.n > 0; i++ {
			e, err := q.read()
			if err != nil {
				q.fail(err)
				return nil
			}
			q.s = append(q.s, e)
			q.n--
		}
		if q.n == 0 { // read to its end: start it afresh
			q.rf.Close()
			q.rf, q.r = nil, nil
			if err := q.wf.Truncate(0); err != nil {
				q.fail(err)
				return nil
			}
		}
	} else if len(q.back) > 0 {
		q.s, q.back = q.back, q.s
	}
	if len(q.s) == 0 {
		return nil
	}
	return &q.s[0]
}

func (q *queue) fail(err error) {
	if q.err == nil {
		q.err = fmt.Errorf("certify: spilled stream buffer: %w", err)
	}
	q.reset()
}

// spillTo moves to the file in dir all entries after the first keep (and
// after those already behind the file).
func (q *queue) spillTo(dir string, keep int) {
	if q.wf == nil {
		f, err := os.CreateTemp(dir, "queue-")
		if err != nil {
			q.fail(err)
			return
		}
		f.Close()
		if f, err = os.OpenFile(f.Name(), os.O_WRONLY|os.O_APPEND, 0); err != nil {
			q.fail(err)
			return
		}
		q.path, q.wf, q.w = f.Name(), f, bufio.NewWriterSize(f, 64<<10)
	}
	from := q.h + keep
	if q.n > 0 || len(q.back) > 0 {
		from = len(q.s)
	}
	for i := from; i < len(q.s); i++ {
		q.write(&q.s[i])
	}
	q.s = q.s[:max(from, q.h)]
	for i := range q.back {
		q.write(&q.back[i])
	}
	q.back = q.back[:0]
	if err := q.w.Flush(); err != nil {
		q.fail(err)
	}
}

func (q *queue) write(e *entry) {
	q.buf = binary.AppendUvarint(q.buf[:0], uint64(len(e.k.s)))
	q.buf = append(q.buf, e.k.s...)
	q.buf = e.encodeRest(q.buf)
	q.w.Write(q.buf) // an error stays in w and comes back from Flush
	q.n++
}

func (q *queue) read() (entry, error) {
	n, err := binary.ReadUvarint(q.r)
	if err != nil {
		return entry{}, err
	}
	kb := make([]byte, n)
	if _, err := io.ReadFull(q.r, kb); err != nil {
		return entry{}, err
	}
	e := entry{k: q.kind.fromString(string(kb))}
	if e.tag, err = binary.ReadVarint(q.r); err != nil {
		return e, err
	}
	if e.line, err = binary.ReadVarint(q.r); err != nil {
		return e, err
	}
	if n, err = binary.ReadUvarint(q.r); err != nil {
		return e, err
	}
	vb := make([]byte, n)
	if _, err := io.ReadFull(q.r, vb); err != nil {
		return e, err
	}
	e.v = string(vb)
	return e, nil
}

func (q *queue) close() {
	for _, f := range []*os.File{q.wf, q.rf} {
		if f != nil {
			f.Close()
		}
	}
}

// budget sets, before a batch, how many states and backlog entries stay
// in memory: a quarter of Options.Mem for the states, a sixteenth for each
// side of the backlog; the rest is the collector's room and the store's.
func (v *verifier) budget(b *batch) {
	v.lineBytes += int64(len(b.buf))
	mean := v.lineBytes / max(1, v.stats.Lines+int64(len(b.lines)))
	if v.part != nil && v.part.mean > 0 {
		mean = v.part.mean // a part's batches hold only its own lines whole
	}
	share := v.opt.Mem / 4
	if v.part != nil && v.part.local {
		share = v.opt.Mem / 2 // a part of a local split holds little else
	}
	v.maxKeys = int(share / stateBytes(mean))
	v.maxQueue = int(v.opt.Mem / 16 / (int64(unsafe.Sizeof(entry{})) + mean))
}

// spillNow runs between records: states and backlog over budget go to disk.
func (v *verifier) spillNow() {
	if v.keys.n > v.maxKeys {
		v.evict()
	}
	for _, q := range []*queue{&v.exp, &v.act} {
		if q.mem() > v.maxQueue && v.spillErr == nil {
			if v.sp == nil {
				if v.sp, v.spillErr = openSpill(v.opt.Dir, v.opt.Mem); v.spillErr != nil {
					break
				}
			}
			q.spillTo(v.sp.dir, v.maxQueue/2)
			v.stats.Spills++
		}
	}
	if v.spillErr != nil { // go on in memory; the run reports the error
		v.maxKeys, v.maxQueue = int(^uint(0)>>1), int(^uint(0)>>1)
	}
}

func (v *verifier) spillFailed() error {
	for _, err := range []error{v.spillErr, v.exp.err, v.act.err} {
		if err != nil {
			return err
		}
	}
	if v.sp != nil {
		return v.sp.err
	}
	return nil
}

func (v *verifier) closeSpill() {
	v.exp.close()
	v.act.close()
	if v.sp != nil {
		v.sp.close()
	}
}

// peek is k's state, resident or a copy of the spilled one; nil for none.
func (v *verifier) peek(k key) *keyState {
	if ks := v.keys.get(k); ks != nil {
		return ks
	}
	var got *keyState
	v.spilledKey(k, func(ks *keyState) bool { got = ks; return false })
	return got
}

// MinMem is the least budget a verification keeps to (Options.Mem).
const MinMem = 64 << 20

// memoryLimit sets the runtime's soft memory limit under a budget of at
// least 64 MiB, leaving an eighth, at most 128 MiB, for what the runtime
// does not manage (the binary, the store's mapped tables); it returns what
// restores the old limit. A limit already set is left alone.
func memoryLimit(budget int64) (restore func()) {
	if budget >= MinMem {
		if old := debug.SetMemoryLimit(-1); old == math.MaxInt64 {
			debug.SetMemoryLimit(budget - min(budget/8, 128<<20))
			return func() { debug.SetMemoryLimit(old) }
		}
	}
	return func() {}
}
