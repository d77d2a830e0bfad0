package certify

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cespare/xxhash/v2"
)

// A local split: when the keys in scope outgrow the budget, one pass
// partitions the bundle by key into buckets on disk (each bucket the full
// lines of its keys) and a skeleton of every line (its kind, its bucket,
// and for a log event its position and transaction label), then the
// verification runs as parts (shard.go), one after another, each holding
// the states of its buckets' keys only. A part reads its own skeleton
// (distribute) and its own buckets: another part's line is a stub, which
// does to the part what the line would (a position, a label, a count), and
// the lines between a part's own that only count are one run. Every line
// is read and scanned twice, and sequentially: no state goes to the store
// and comes back at random.

const buckets = 256

// Skeleton record kinds (the stub kinds of scanned).
const (
	skBlank  = iota // an empty line
	skGlobal        // a line every part reads whole (header, keyless, malformed)
	skEvent         // a log event, owned by a bucket
	skEntry
	skRead
	skBase
	skRun // stubs of consecutive events and entries between the log's marks
)

// marked reports whether p is a mark; *mk holds the marks not yet passed
// (positions only grow).
func marked(mk *[]int64, p int64) bool {
	m := *mk
	for len(m) > 0 && m[0] < p {
		m = m[1:]
	}
	*mk = m
	return len(m) > 0 && m[0] == p
}

func bucketOf(kb []byte) int { return int(xxhash.Sum64(kb) % buckets) }

// stub is another part's line: what it does to this part.
func (v *verifier) stub(rec *scanned) *Failure {
	switch rec.stub {
	case skEvent:
		if v.phase < 2 {
			v.enterLog()
		}
		v.stats.Events++
		return v.logEvent(rec.p, rec.x, rec.hasX, nil, nil)
	case skEntry:
		if v.phase < 2 {
			v.enterLog()
		}
		v.stats.Entries++
	case skRead:
		if v.phase > 1 {
			return s1(v.stats.Lines, "observed rows must come before the log")
		}
		v.phase = 1
		v.stats.Reads++
	case skBase:
		if v.phase > 0 {
			return s1(v.stats.Lines, "base observations must come before reads and the log")
		}
	case skRun:
		// Each event of the run is the one after the last (distribute
		// checks), at no mark: logEvent would only count it, label it and
		// move the position. Its reads come before the log, its bases
		// before the reads, and no run holds lines of two phases.
		if rec.run.reads > 0 {
			v.phase = 1
			v.stats.Reads += rec.run.reads
		}
		if rec.run.events+rec.run.entries > 0 && v.phase < 2 {
			v.enterLog()
		}
		v.stats.Lines += rec.run.lines - 1
		v.stats.Entries += rec.run.entries
		if rec.run.events > 0 {
			v.stats.Events += rec.run.events
			v.pos, v.lastTxn, v.lastHas = rec.p, rec.x, rec.hasX
			v.unlabeled = v.unlabeled || rec.run.unlabeled
		}
	}
	return nil
}

// run counts what a skRun stub stands for.
type run struct {
	lines, reads, events, entries int64
	unlabeled                     bool
}

// marks are the log positions where an event may do more than count:
// the start and the frontier, each unit's edges, and the positions after
// them (a unit closes, a low edge is compared, a transaction is split).
// nil when runs are not made (executed-set coordinates resolve edges as
// the log goes).
func marks(h *Header) []int64 {
	if h == nil || h.Coordinates != "position" {
		return nil
	}
	m := []int64{h.Run.Start, h.Run.Start + 1, h.Certificate.Frontier, h.Certificate.Frontier + 1}
	for _, u := range h.Units {
		for _, c := range []*int64{u.Lo, u.Hi} {
			if c != nil {
				m = append(m, *c, *c+1)
			}
		}
	}
	slices.Sort(m)
	return slices.Compact(m)
}

// partition is the split's files: the skeleton, the global lines, the buckets.
type partition struct {
	header  *Header // nil if the first line is none
	dir     string
	lines   int64
	keys    float64 // the distinct keys, estimated
	bytes   int64   // of the lines
	counted [buckets]int64
}

func (pt *partition) path(name string) string { return filepath.Join(pt.dir, name) }

func bucketName(b int) string { return fmt.Sprintf("bucket-%03d", b) }

// kmv estimates the number of distinct keys from the least hashes seen
// (k minimum values).
type kmv struct {
	least []uint64 // sorted, at most kmvSize
}

const kmvSize = 1024

func (e *kmv) add(h uint64) {
	if len(e.least) == kmvSize && h >= e.least[kmvSize-1] {
		return
	}
	i, found := slices.BinarySearch(e.least, h)
	if found {
		return
	}
	e.least = slices.Insert(e.least, i, h)
	if len(e.least) > kmvSize {
		e.least = e.least[:kmvSize]
	}
}

func (e *kmv) estimate() float64 {
	if len(e.least) < kmvSize {
		return float64(len(e.least))
	}
	return float64(kmvSize-1) / (float64(e.least[kmvSize-1]) / math.MaxUint64)
}

// writePartition reads the bundle once into dir's skeleton and buckets.
func writePartition(r io.Reader, dir string, stop <-chan struct{}, progress func(stage string, s Stats)) (*partition, error) {
	pt := &partition{dir: dir}
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	open := func(name string) (*bufio.Writer, error) {
		f, err := os.Create(pt.path(name))
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		return bufio.NewWriterSize(f, 64<<10), nil
	}
	skel, err := open("skeleton")
	if err != nil {
		return nil, err
	}
	global, err := open("global")
	if err != nil {
		return nil, err
	}
	var bw [buckets]*bufio.Writer // made when a bucket gets its first line
	batches, free := make(chan *batch, 4), make(chan *batch, 4)
	done := make(chan struct{})
	defer close(done)
	go scanLines(r, batches, free, done)
	var (
		kind      keyKind
		header    bool
		est       kmv
		rec       []byte
		kb        []byte
		lastP     int64
		lastX     int64
		readError error
	)
	full := func(w *bufio.Writer, raw []byte) {
		rec = binary.AppendUvarint(rec[:0], uint64(len(raw)))
		w.Write(rec)
		w.Write(raw)
	}
	for b := range batches {
		if stopped(stop) {
			return nil, ErrStopped
		}
		progress("partitioning", Stats{Lines: pt.lines})
		for i := range b.lines {
			l := &b.lines[i]
			pt.lines++
			pt.bytes += int64(len(l.raw))
			if len(bytes.TrimSpace(l.raw)) == 0 {
				skel.WriteByte(skBlank)
				continue
			}
			if !header { // the header: every part reads it, and it names the key kind
				header = true
				if h, f := parseHeader(l.raw); f == nil {
					pt.header = h
					if h.Keys == "integer" {
						kind = kindInteger
					}
				}
				skel.WriteByte(skGlobal)
				full(global, l.raw)
				continue
			}
			sk, raw, p, x, hasX := classify(l)
			var k key
			var err error
			if sk != skGlobal {
				k, err = kind.parse(raw)
			}
			if sk == skGlobal || err != nil {
				skel.WriteByte(skGlobal)
				full(global, l.raw)
				continue
			}
			kb = kind.storeKey(kb[:0], k)
			h := xxhash.Sum64(kb)
			est.add(h)
			bk := int(h % buckets)
			pt.counted[bk]++
			rec = append(rec[:0], sk, byte(bk))
			if sk == skEvent {
				rec = binary.AppendVarint(rec, p-lastP-1)
				lastP = p
				if hasX {
					rec = append(rec, 1)
					rec = binary.AppendVarint(rec, x-lastX)
					lastX = x
				} else {
					rec = append(rec, 0)
				}
			}
			skel.Write(rec)
			if bw[bk] == nil {
				if bw[bk], err = open(bucketName(bk)); err != nil {
					return nil, err
				}
			}
			full(bw[bk], l.raw)
		}
		if b.err != nil {
			readError = b.err
			break
		}
		select {
		case free <- b:
		default:
		}
	}
	if readError != nil {
		return nil, readError
	}
	for _, w := range append(bw[:], skel, global) {
		if w == nil {
			continue
		}
		if err := w.Flush(); err != nil {
			return nil, err
		}
	}
	pt.keys = est.estimate()
	return pt, nil
}

// classify is a line's skeleton kind, its key and, for a log event, its
// position and label; skGlobal for a line every part must read whole (a
// malformed one, a keyless event, an unknown kind: their failures are
// every part's).
func classify(l *scanned) (sk byte, key []byte, p, x int64, hasX bool) {
	fs := l.fields
	if l.err != nil || len(fs) == 0 {
		return skGlobal, nil, 0, 0, false
	}
	switch fs[0].name {
	case "p":
		n, err := parseInt(fs[0].raw)
		if err != nil {
			return skGlobal, nil, 0, 0, false
		}
		p = n
		for _, f := range fs[1:] {
			switch f.name {
			case "k":
				key = f.raw
			case "x":
				n, err := parseInt(f.raw)
				if err != nil {
					return skGlobal, nil, 0, 0, false
				}
				x, hasX = n, true
			}
		}
		if key == nil {
			return skGlobal, nil, 0, 0, false
		}
		return skEvent, key, p, x, hasX
	case "out":
		return skEntry, fs[0].raw, 0, 0, false
	case "base":
		return skBase, fs[0].raw, 0, 0, false
	case "read":
		for _, f := range fs[1:] {
			if f.name == "k" {
				return skRead, f.raw, 0, 0, false
			}
		}
	}
	return skGlobal, nil, 0, 0, false
}

// Records of a part's own skeleton (distribute writes them).
const (
	pkOwn    = iota // the next line of a bucket of the part's: the bucket
	pkGlobal        // the next global line
	pkStub          // another part's line that does more than count: kind, p, label
	pkRun           // what the lines since the part's last record add up to
)

// totals are what the skeleton's lines add up to so far.
type totals struct {
	lines, reads, events, entries, unlabeled int64
}

// distribute reads the skeleton once and writes each of n parts its own
// skeleton: its own lines, the lines every part reads, other parts' lines
// that do more than count, and between them one run record of what the
// other lines add up to (the difference of running totals). A part then
// reads only its own records, not every line's. A read or a base
// observation counts only while the log's phases allow it (a read before
// the log, a base before the reads); once a global line has come after the
// header, whose kind the skeleton does not know, each is a stub as before.
func (pt *partition) distribute(n int, partOf func(bucket int) int, stop <-chan struct{}, progress func(stage string, s Stats)) error {
	in, err := os.Open(pt.path("skeleton"))
	if err != nil {
		return err
	}
	defer in.Close()
	outs := make([]*bufio.Writer, n)
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for j := range outs {
		f, err := os.Create(pt.path(fmt.Sprintf("part-%d.skeleton", j)))
		if err != nil {
			return err
		}
		files = append(files, f)
		outs[j] = bufio.NewWriterSize(f, 32<<10)
	}
	var (
		t          totals
		seen       = make([]totals, n) // the totals at each part's last record
		lastP      int64
		lastX      int64 // the last event's label (0: none)
		lastHas    bool
		baseX      int64 // the last label, which the next is written after
		phase      int   // 0 base, 1 reads, 2 log, as the verifier's; -1 unknown
		globals    int
		rec        []byte
		mk         = marks(pt.header)
		coalesceLg = mk != nil
	)
	flush := func(j int) { // part j's run up to here
		s := &seen[j]
		if t.lines == s.lines {
			return
		}
		rec = append(rec[:0], pkRun)
		rec = binary.AppendUvarint(rec, uint64(t.lines-s.lines))
		rec = binary.AppendUvarint(rec, uint64(t.reads-s.reads))
		rec = binary.AppendUvarint(rec, uint64(t.events-s.events))
		rec = binary.AppendUvarint(rec, uint64(t.entries-s.entries))
		if t.events > s.events { // the last event is the run's
			flags := byte(0)
			if t.unlabeled > s.unlabeled {
				flags |= 1
			}
			if lastHas {
				flags |= 2
			}
			rec = append(rec, flags)
			rec = binary.AppendVarint(rec, lastP)
			rec = binary.AppendVarint(rec, lastX)
		}
		outs[j].Write(rec)
		*s = t
	}
	sr := &skelReader{r: in, buf: make([]byte, 64<<10)}
	for sr.more() {
		if t.lines%4096 == 0 {
			if stopped(stop) {
				return ErrStopped
			}
			progress("distributing", Stats{Lines: t.lines})
		}
		sk := sr.byte()
		switch sk {
		case skBlank:
			t.lines++
			continue
		case skGlobal:
			if globals++; globals > 1 {
				phase = -1 // unknown from here: reads and bases are stubs
			}
			for j := range outs {
				flush(j)
				outs[j].WriteByte(pkGlobal)
			}
			t.lines++
			for j := range seen {
				seen[j] = t
			}
			continue
		}
		bk := sr.byte()
		var p, x int64
		hasX, next := false, true
		if sk == skEvent {
			d := sr.varint()
			next, p = d == 0, lastP+1+d
			if sr.byte() == 1 {
				x, hasX = baseX+sr.varint(), true
				baseX = x
			}
		}
		if sr.short {
			return io.ErrUnexpectedEOF
		}
		count := false // the line only counts, to every part but its own
		to := phase    // the phase it moves to
		switch sk {
		case skEvent:
			count, to = coalesceLg && next && !marked(&mk, p), 2
		case skEntry:
			count, to = coalesceLg, 2
		case skRead:
			count, to = phase == 0 || phase == 1, 1
		case skBase:
			count = phase == 0
		}
		if phase < 0 {
			to = -1
		}
		owner := partOf(int(bk))
		if count && to != phase {
			for j := range outs { // no run straddles a change of phase
				flush(j)
			}
		}
		if !count {
			for j := range outs {
				flush(j)
				if j != owner {
					rec = append(rec[:0], pkStub, sk)
					rec = binary.AppendVarint(rec, p)
					if hasX {
						rec = append(rec, 1)
					} else {
						rec = append(rec, 0)
					}
					rec = binary.AppendVarint(rec, x)
					outs[j].Write(rec)
				}
			}
		}
		flush(owner)
		outs[owner].Write([]byte{pkOwn, bk})
		t.lines++
		switch sk {
		case skEvent:
			t.events++
			lastP, lastX, lastHas = p, x, hasX
			if !hasX {
				t.unlabeled++
			}
		case skEntry:
			t.entries++
		case skRead:
			t.reads++
		}
		if count {
			seen[owner] = t
		} else {
			for j := range seen {
				seen[j] = t
			}
		}
		if to > phase || to < 0 {
			phase = to
		}
	}
	if sr.err != io.EOF {
		return sr.err
	}
	for j, w := range outs {
		flush(j)
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// partLines feeds part j's verifier from its own skeleton (distribute),
// with its own buckets' lines and the global ones read whole, in batches
// as scanLines makes them.
func (pt *partition) partLines(j, lo, hi int, out chan<- *batch, free <-chan *batch, done <-chan struct{}) {
	defer close(out)
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	fail := func(err error) {
		select {
		case out <- &batch{err: err}:
		case <-done:
		}
	}
	open := func(name string) *bufio.Reader {
		f, err := os.Open(pt.path(name))
		if err != nil {
			return nil
		}
		files = append(files, f)
		return bufio.NewReaderSize(f, 64<<10)
	}
	skel, global := open(fmt.Sprintf("part-%d.skeleton", j)), open("global")
	if skel == nil || global == nil {
		fail(errors.New("certify: a split's skeleton is missing"))
		return
	}
	own := make([]*bufio.Reader, buckets)
	for b := lo; b < hi; b++ {
		if pt.counted[b] == 0 {
			continue
		}
		if own[b] = open(bucketName(b)); own[b] == nil {
			fail(errors.New("certify: a split's bucket is missing"))
			return
		}
	}
	sr := &skelReader{r: skel, buf: make([]byte, 64<<10)}
	for {
		b := nextBatch(free)
		var err error
		for len(b.lines) < 4096 && len(b.buf) < 1<<20 {
			if !sr.more() {
				if err = sr.err; err == io.EOF {
					err = drained(append([]*bufio.Reader{global}, own[lo:hi]...))
				}
				break
			}
			rec := scanned{}
			var from *bufio.Reader
			ok := true
			switch sr.byte() {
			case pkOwn:
				if bk := int(sr.byte()); bk >= lo && bk < hi && own[bk] != nil {
					from = own[bk]
				} else {
					ok = false
				}
			case pkGlobal:
				from = global
			case pkStub:
				rec.stub, rec.p = sr.byte(), sr.varint()
				rec.hasX = sr.byte() == 1
				rec.x = sr.varint()
			case pkRun:
				rec.stub = skRun
				r := &rec.run
				r.lines, r.reads, r.events, r.entries = int64(sr.uvarint()), int64(sr.uvarint()), int64(sr.uvarint()), int64(sr.uvarint())
				if r.events > 0 {
					flags := sr.byte()
					r.unlabeled, rec.hasX = flags&1 != 0, flags&2 != 0
					rec.p, rec.x = sr.varint(), sr.varint()
				}
			default:
				ok = false
			}
			if !ok || sr.short {
				err = errors.New("a part's skeleton is damaged")
				break
			}
			if from != nil {
				var n uint64
				if n, err = binary.ReadUvarint(from); err != nil {
					err = unexpected(err)
					break
				}
				start := len(b.buf)
				b.buf = slices.Grow(b.buf, int(n))[:start+int(n)]
				if _, err = io.ReadFull(from, b.buf[start:]); err != nil {
					err = unexpected(err)
					break
				}
				b.ends = append(b.ends, len(b.buf))
			} else {
				b.ends = append(b.ends, -1)
			}
			b.lines = append(b.lines, rec)
		}
		if err != nil && err != io.EOF {
			fail(fmt.Errorf("certify: reading a split's files: %w", err))
			return
		}
		// The lines are scanned once the batch's buffer no longer moves.
		start := 0
		for i := range b.lines {
			end := b.ends[i]
			if end < 0 {
				continue
			}
			l := &b.lines[i]
			l.raw = b.buf[start:end]
			first := len(b.fbuf)
			if fs, e := scanObject(l.raw, b.fbuf); e != nil {
				l.err = e
			} else {
				b.fbuf, l.fields = fs, fs[first:]
				l.key = lineKey(l.fields)
			}
			start = end
		}
		select {
		case out <- b:
		case <-done:
			return
		}
		if err == io.EOF {
			return
		}
	}
}

// unexpected is err, but a file's end where the skeleton says a line
// follows is an error, not the end of the part.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// drained is io.EOF if each file (nil for none) has been read to its end
// as the skeleton ends: a part reads every line of its files.
func drained(files []*bufio.Reader) error {
	for _, f := range files {
		if f == nil {
			continue
		}
		if _, err := f.Peek(1); err != io.EOF {
			if err == nil {
				err = errors.New("a file holds more lines than its skeleton")
			}
			return err
		}
	}
	return io.EOF
}

// skelReader reads a skeleton (the split's, or a part's) from a buffer it
// refills, decoding in place: bufio's ReadByte a byte at a time and
// binary's varint readers over it were most of a part's feeding.
type skelReader struct {
	r     io.Reader
	buf   []byte
	i, n  int
	err   error // the read's: io.EOF once the file is read to its end
	short bool  // a record ended before its fields did
}

// skelMax bounds a skeleton record: the longest is a part's run record
// (kind, four counts, flags, position and label).
const skelMax = 2 + 6*binary.MaxVarintLen64

// more buffers a whole record, unless the file ends first; false when
// nothing is left, s.err saying why (io.EOF at the end).
func (s *skelReader) more() bool {
	if s.n-s.i < skelMax && s.err == nil {
		s.n = copy(s.buf, s.buf[s.i:s.n])
		s.i = 0
		for s.n < skelMax && s.err == nil {
			m, err := s.r.Read(s.buf[s.n:])
			s.n += m
			s.err = err
		}
	}
	return s.i < s.n
}

// byte, uvarint and varint read a record's next field; past the buffered
// bytes they set short and return 0.
func (s *skelReader) byte() byte {
	if s.i >= s.n {
		s.short = true
		return 0
	}
	s.i++
	return s.buf[s.i-1]
}

func (s *skelReader) uvarint() uint64 {
	x, m := binary.Uvarint(s.buf[s.i:s.n])
	if m <= 0 {
		s.short = true
		return 0
	}
	s.i += m
	return x
}

func (s *skelReader) varint() int64 { return unzigzag(s.uvarint()) }

// unzigzag is the signed varint a uvarint encodes, as binary.Varint reads it.
func unzigzag(u uint64) int64 {
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

// verifyInParts verifies r as a local split: a partition pass, then as
// many parts as the budget needs, one after another, and their merge.
func verifyInParts(r io.Reader, opt Options) (*Result, error) {
	parent := opt.Dir
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, spillDirPrefix)
	if err != nil {
		return nil, fmt.Errorf("certify: spill directory: %w", err)
	}
	owner, err := claimDir(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer func() {
		os.RemoveAll(dir)
		owner.Close()
	}()
	every := &verifier{opt: opt} // (only its progress)
	pt, err := writePartition(r, dir, opt.Stop, func(stage string, s Stats) { every.stats = s; every.progress(stage) })
	if err != nil {
		return nil, fmt.Errorf("certify: partitioning the bundle: %w", err)
	}
	mean := pt.bytes / max(1, pt.lines)
	// A part holds its keys' states in half the budget (budget), with a
	// fifth to spare for the estimate's error and the buckets' imbalance.
	n := int(math.Ceil(1.25 * pt.keys * float64(stateBytes(mean)) / float64(max(1, opt.Mem/2))))
	n = min(max(n, 2), buckets)
	if opt.Parts > 0 {
		n = opt.Parts
	}
	var partOf [buckets]int
	for j := range n {
		for b := j * buckets / n; b < (j+1)*buckets/n; b++ {
			partOf[b] = j
		}
	}
	if err := pt.distribute(n, func(b int) int { return partOf[b] }, opt.Stop, func(stage string, s Stats) { every.stats = s; every.progress(stage) }); err != nil {
		return nil, fmt.Errorf("certify: writing the parts' skeletons: %w", err)
	}
	popt := opt
	progress := opt.OnProgress != nil && opt.Progress > 0
	if progress { // one interval apart across the parts: a part may take less
		last := time.Now()
		popt.Progress = 1
		popt.OnProgress = func(stage string, s Stats) {
			if now := time.Now(); now.Sub(last) >= opt.Progress {
				last = now
				opt.OnProgress(stage, s)
			}
		}
	}
	parts := make([]*Part, n)
	files := make([][3]io.Reader, n)
	opened := make([][3]*os.File, n)
	defer func() {
		for _, fs := range opened {
			for _, f := range fs {
				if f != nil {
					f.Close()
				}
			}
		}
	}()
	for j := range n {
		if parts[j], files[j], err = pt.verifyPart(j, n, mean, popt, &opened[j]); err != nil {
			return nil, err
		}
	}
	if progress { // (once: the merge reports nothing more)
		opt.OnProgress("merging", Stats{})
	}
	res, err := MergeParts(parts, files)
	if err != nil && stopped(opt.Stop) {
		return nil, ErrStopped // (the merge's error names the streams)
	}
	if err != nil {
		return nil, err
	}
	res.Stats.Parts = n
	return res, nil
}

// verifyPart verifies part j of n from the split's files, its streams
// written to files in the split's directory (fs, for the caller to close)
// and returned read from their start, for the merge.
func (pt *partition) verifyPart(j, n int, mean int64, opt Options, fs *[3]*os.File) (*Part, [3]io.Reader, error) {
	var w [3]io.Writer
	var rd [3]io.Reader
	for i, name := range PartFileNames {
		f, err := os.Create(pt.path(fmt.Sprintf("part-%d.%s", j, name)))
		if err != nil {
			return nil, rd, err
		}
		fs[i], w[i] = f, f
	}
	v := &verifier{opt: opt, part: newPartRun(Split{Index: j, Count: n}, w)}
	v.part.local, v.part.lo, v.part.hi, v.part.mean = true, j*buckets/n, (j+1)*buckets/n, mean
	ch, free := make(chan *batch, 4), make(chan *batch, 4)
	done := make(chan struct{})
	go pt.partLines(j, v.part.lo, v.part.hi, ch, free, done)
	res, err := v.runBatches(ch, free)
	close(done)
	for range ch { // the feeder has ended: its files are closed
	}
	if err != nil {
		v.part.close()
		return nil, rd, err
	}
	part, err := v.partOf(res)
	if err != nil {
		return nil, rd, err
	}
	for i, f := range fs {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, rd, err
		}
		rd[i] = stopReader{f, opt.Stop}
	}
	return part, rd, nil
}
