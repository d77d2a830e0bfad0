package certify

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// A split verification: N parts each verify the keys they own (a key's
// hash picks its part) over the whole bundle, and a merge combines them
// into exactly the answer of one whole verification. Every obligation but
// one is judged key by key or on the header and the log's shape, which
// every part sees: each part keeps the first failure of each rank with
// where it was found (a stamp: the line, the step within it, the key), and
// the merge takes, rank by rank, the failure a whole run meets first. The
// one global obligation is the prefix's order across keys (window-discard
// and point splice compare the whole stream, §6): a part writes the
// discipline's entries and the recorded ones it owns, each with its place,
// and the merge compares the two merged streams in order. The cut's digest
// is over the keys in key order: a part writes its present keys in key
// order and the merge hashes their merge.

// PartFormat names the split-verification result format; merge refuses any other.
const PartFormat = "cutcheck-certify-part/1"

// Split is one part of an N-way split verification: the keys whose hash
// is Index modulo Count.
type Split struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

func (s Split) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// stepEvent orders an event's own entry after the units closing at it.
const stepEvent = 1 << 32

// stamp is where a failure or an entry was met, in the order one whole
// verification meets them: the line (the finish's stages follow the last
// line), the step within it (the unit closing, then the event's own
// entry), and for what is judged key by key the key, in store order.
type stamp struct {
	Line int64  `json:"line"`
	Step int64  `json:"step,omitempty"`
	Key  []byte `json:"key,omitempty"`
}

func (a stamp) cmp(b stamp) int {
	if c := cmp.Compare(a.Line, b.Line); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Step, b.Step); c != 0 {
		return c
	}
	return bytes.Compare(a.Key, b.Key)
}

// Part is one part's result, bound to its bundle (SHA-256) and its split.
type Part struct {
	Format     string   `json:"format"`
	Split      Split    `json:"split"`
	Bundle     string   `json:"bundle_sha256"`
	Require    string   `json:"require,omitempty"` // Options.Require, as JSON
	Keys       string   `json:"keys,omitempty"`
	Discipline string   `json:"discipline,omitempty"`
	Stop       *Placed  `json:"stop,omitempty"` // a failure that ends the verification
	Fails      []Placed `json:"fails,omitempty"`
	Cut        *Cut     `json:"cut,omitempty"` // without its digest
	Assumes    []string `json:"assumes,omitempty"`
	Stats      Stats    `json:"stats"`
	// Files are the part's three streams (the discipline's entries, the
	// recorded ones, the present keys): records and SHA-256.
	Files [3]PartFile `json:"files"`
}

// PartFile describes one of a part's streams.
type PartFile struct {
	Records int64  `json:"records"`
	SHA256  string `json:"sha256"`
}

// Placed is a failure with the rank of its obligation and where it was met.
type Placed struct {
	Rank    int      `json:"rank"`
	At      stamp    `json:"at"`
	Failure *Failure `json:"failure"`
}

// The part's streams, in Part.Files order.
const (
	fileExp = iota
	fileAct
	fileCut
)

// PartFileNames name the streams, for the files a caller keeps them in.
var PartFileNames = [3]string{"expected", "recorded", "cut"}

type partRun struct {
	split Split
	// A part of a local split (partition.go) owns the keys of buckets
	// lo..hi-1 instead.
	local  bool
	lo, hi int
	mean   int64 // the bundle's mean line, for the budget

	s   [3]*streamWriter
	n   [3]int64
	kb  []byte
	buf []byte
}

// owns says whether k is this part's key (every key without a split).
func (v *verifier) owns(k key) bool {
	p := v.part
	if p == nil || p.split.Count == 1 {
		return true
	}
	p.kb = v.kind.storeKey(p.kb[:0], k)
	if p.local {
		b := bucketOf(p.kb)
		return p.lo <= b && b < p.hi
	}
	return xxhash.Sum64(p.kb)%uint64(p.split.Count) == uint64(p.split.Index)
}

// expect queues an entry of the discipline's emission; a part of a
// whole-stream comparison writes it out, placed, for the merge.
func (v *verifier) expect(e entry) {
	if v.part != nil && v.h.Discipline != RangeMerge {
		v.part.write(fileExp, v.at, v.kind, &e)
		return
	}
	v.exp.push(e)
}

// record queues a recorded entry, or writes it out as expect does.
func (v *verifier) record(e entry) {
	if v.part != nil && v.h.Discipline != RangeMerge {
		v.part.write(fileAct, stamp{Line: e.line}, v.kind, &e)
		return
	}
	v.act.push(e)
}

// write appends a record: line, step, key, value, tag.
func (p *partRun) write(file int, at stamp, kk keyKind, e *entry) {
	b := binary.AppendUvarint(p.buf[:0], uint64(at.Line))
	b = binary.AppendUvarint(b, uint64(at.Step))
	p.kb = kk.storeKey(p.kb[:0], e.k)
	b = binary.AppendUvarint(b, uint64(len(p.kb)))
	b = append(b, p.kb...)
	b = binary.AppendUvarint(b, uint64(len(e.v)))
	b = append(b, e.v...)
	b = binary.AppendVarint(b, e.tag)
	p.put(file, b)
}

func (p *partRun) put(file int, b []byte) {
	p.buf = b
	p.s[file].write(b) // a write error is the close's
	p.n[file]++
}

// partRecord is a record read back: an entry (at, key, value, tag) or a
// present key of the cut (key, value). key and v alias the reader's
// buffers: they hold until the reader has read one more record.
type partRecord struct {
	at  stamp
	key []byte
	v   []byte
	tag int64
}

// entry is the record as the verifier's entry, for a failure's report.
func (r *partRecord) entry(kk keyKind, line int64) *entry {
	return &entry{k: kk.fromStore(r.key), v: string(r.v), tag: r.tag, line: line}
}

// partReader reads a part's stream from a buffer of its own, hashing the
// bytes as they come: bufio's Peek and ReadFull a field at a time were
// most of the merge.
type partReader struct {
	r       io.Reader
	h       hash.Hash
	buf     []byte // buf[at:end] read and not yet decoded
	at, end int
	rerr    error // the last read's (io.EOF once the stream has ended)
	n       int64 // records read
	err     error
	bufs    [2][]byte // a record's bytes, in turn: the last one read holds
	turn    int
}

func newPartReader(r io.Reader, h hash.Hash) *partReader {
	return &partReader{r: r, h: h, buf: make([]byte, 64<<10)}
}

// fill reads until k bytes are buffered or the stream has ended.
func (pr *partReader) fill(k int) {
	if pr.end-pr.at >= k || pr.rerr != nil {
		return
	}
	pr.end = copy(pr.buf, pr.buf[pr.at:pr.end])
	pr.at = 0
	for pr.end < k && pr.rerr == nil {
		m, err := pr.r.Read(pr.buf[pr.end:])
		pr.h.Write(pr.buf[pr.end : pr.end+m])
		pr.end += m
		pr.rerr = err
	}
	if pr.rerr != nil && pr.rerr != io.EOF {
		pr.err = pr.rerr
	}
}

// nextCut reads a cut record: a present key and its value.
func (pr *partReader) nextCut(r *partRecord) bool {
	if !pr.more() {
		return false
	}
	buf := pr.take()
	buf = pr.field(buf)
	kl := len(buf)
	buf = pr.field(buf)
	return pr.done(r, buf, kl)
}

// next reads an entry record; false at the end or on an error.
func (pr *partReader) next(r *partRecord) bool {
	if !pr.more() {
		return false
	}
	r.at.Line = int64(pr.uvarint())
	r.at.Step = int64(pr.uvarint())
	buf := pr.take()
	buf = pr.field(buf)
	kl := len(buf)
	buf = pr.field(buf)
	r.tag = pr.varint()
	if !pr.done(r, buf, kl) {
		return false
	}
	r.at.Key = r.key
	return true
}

// more reports whether a record follows.
func (pr *partReader) more() bool {
	if pr.err != nil {
		return false
	}
	pr.fill(1)
	return pr.err == nil && pr.at < pr.end
}

// take is the buffer for the next record, not the last one's.
func (pr *partReader) take() []byte {
	pr.turn ^= 1
	return pr.bufs[pr.turn][:0]
}

// done ends a record read into buf, its key the first kl bytes.
func (pr *partReader) done(r *partRecord, buf []byte, kl int) bool {
	pr.bufs[pr.turn] = buf
	if pr.err != nil {
		return false
	}
	r.key, r.v = buf[:kl:kl], buf[kl:]
	pr.n++
	return true
}

// field appends a length-prefixed byte string to b.
func (pr *partReader) field(b []byte) []byte {
	n := pr.uvarint()
	if pr.err != nil {
		return b
	}
	if n > 1<<30 {
		pr.err = errors.New("a record longer than 1 GiB")
		return b
	}
	for left := int(n); left > 0; {
		if pr.at == pr.end {
			if pr.fill(1); pr.at == pr.end {
				if pr.err == nil { // as io.ReadFull says it
					pr.err = io.ErrUnexpectedEOF
					if left == int(n) {
						pr.err = io.EOF
					}
				}
				return b
			}
		}
		m := min(left, pr.end-pr.at)
		b = append(b, pr.buf[pr.at:pr.at+m]...)
		pr.at += m
		left -= m
	}
	return b
}

// uvarint decodes in the reader's buffer; near the end of the stream (or
// on a malformed varint) binary's reader says what is wrong.
func (pr *partReader) uvarint() uint64 {
	if pr.err != nil {
		return 0
	}
	pr.fill(binary.MaxVarintLen64)
	if x, m := binary.Uvarint(pr.buf[pr.at:pr.end]); m > 0 {
		pr.at += m
		return x
	}
	if pr.err == nil {
		_, pr.err = binary.ReadUvarint(bytes.NewReader(pr.buf[pr.at:pr.end]))
	}
	return 0
}

func (pr *partReader) varint() int64 { return unzigzag(pr.uvarint()) }

// hashingReader hashes what is read through it; rest reads the remainder,
// once the verification has stopped reading, so that the digest is of
// the whole bundle however early the verification stopped.
type hashingReader struct {
	mu     sync.Mutex
	r      io.Reader
	h      hash.Hash
	closed bool
}

func (t *hashingReader) Read(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return 0, io.EOF
	}
	n, err := t.r.Read(p)
	t.h.Write(p[:n])
	return n, err
}

func (t *hashingReader) rest() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if _, err := io.Copy(t.h, t.r); err != nil {
		return "", err
	}
	return hex.EncodeToString(t.h.Sum(nil)), nil
}

// VerifyPart verifies part sp of a split verification of the bundle r and
// writes the part's three streams to w (in PartFileNames order; the caller
// keeps them beside the Part). Restrict, Segment and KeepState are for a
// whole verification only. The error is for reading r or writing w.
func VerifyPart(r io.Reader, opt Options, sp Split, w [3]io.Writer) (*Part, error) {
	if opt.Restrict != nil || opt.Segment != nil || opt.KeepState {
		return nil, errors.New("certify: a split verification takes no restriction, segment or kept state")
	}
	if sp.Count < 1 || sp.Index < 0 || sp.Index >= sp.Count {
		return nil, fmt.Errorf("certify: part %d of %d", sp.Index, sp.Count)
	}
	defer memoryLimit(opt.Mem)()
	in := &hashingReader{r: r, h: sha256.New()}
	v := &verifier{opt: opt, part: newPartRun(sp, w)}
	defer v.part.close()
	res, err := v.run(in)
	if err != nil {
		return nil, err
	}
	part, err := v.partOf(res)
	if err != nil {
		return nil, err
	}
	if part.Bundle, err = in.rest(); err != nil {
		return nil, err
	}
	return part, nil
}

func newPartRun(sp Split, w [3]io.Writer) *partRun {
	p := &partRun{split: sp}
	for i := range w {
		p.s[i] = newStreamWriter(w[i])
	}
	return p
}

// close ends the streams' writers, for a part that ends without a result.
func (p *partRun) close() {
	for _, s := range p.s {
		s.close()
	}
}

// streamWriter hashes and writes a part's stream on another goroutine, a
// chunk at a time: the verifier only copies its records. Three chunks go
// round (free holds them all once close has handed over the last).
type streamWriter struct {
	cur        []byte
	full, free chan []byte
	done       chan error
	h          hash.Hash
	closed     bool
	err        error
}

func newStreamWriter(w io.Writer) *streamWriter {
	const chunk = 64 << 10
	s := &streamWriter{cur: make([]byte, 0, chunk), full: make(chan []byte, 2), free: make(chan []byte, 3), done: make(chan error, 1), h: sha256.New()}
	s.free <- make([]byte, 0, chunk)
	s.free <- make([]byte, 0, chunk)
	go func() {
		var err error
		for b := range s.full {
			s.h.Write(b)
			if err == nil {
				_, err = w.Write(b)
			}
			s.free <- b[:0]
		}
		s.done <- err
	}()
	return s
}

func (s *streamWriter) write(b []byte) {
	if len(s.cur)+len(b) > cap(s.cur) && len(s.cur) > 0 {
		s.full <- s.cur
		s.cur = <-s.free
	}
	s.cur = append(s.cur, b...)
}

// close writes what is left and waits for the writer: the write error, if
// any, and then the stream's SHA-256 are final.
func (s *streamWriter) close() error {
	if !s.closed {
		s.closed = true
		if len(s.cur) > 0 {
			s.full <- s.cur
		}
		close(s.full)
		s.err = <-s.done
	}
	return s.err
}

// partOf is a finished part's result; it flushes the part's streams.
func (v *verifier) partOf(res *Result) (*Part, error) {
	p := v.part
	part := &Part{Format: PartFormat, Split: p.split, Stats: v.stats}
	part.Stats.Units, part.Stats.ScopeKeys = len(v.units), v.nkeys
	if v.opt.Require != nil {
		b, _ := json.Marshal(v.opt.Require)
		part.Require = string(b)
	}
	if v.h != nil {
		part.Keys, part.Discipline = v.h.Keys, v.h.Discipline
	}
	ranked := false
	for rank, f := range v.fails {
		if f != nil {
			part.Fails = append(part.Fails, Placed{Rank: rank, At: v.stamps[rank], Failure: f})
			ranked = ranked || f == res.Failure
		}
	}
	switch {
	case res.Failure != nil && !ranked:
		part.Stop = &Placed{At: v.at, Failure: res.Failure}
	case res.Verdict == Accept:
		part.Cut, part.Assumes = res.Cut, res.Assumes
	}
	p.close()
	for i, s := range p.s {
		if s.err != nil {
			return nil, s.err
		}
		part.Files[i] = PartFile{Records: p.n[i], SHA256: hex.EncodeToString(s.h.Sum(nil))}
	}
	return part, nil
}

// writeCut writes a present key of a part's cut (cut calls it in key order).
func (p *partRun) writeCut(kk keyKind, ks *keyState) {
	p.kb = kk.storeKey(p.kb[:0], ks.k)
	b := binary.AppendUvarint(p.buf[:0], uint64(len(p.kb)))
	b = append(b, p.kb...)
	b = binary.AppendUvarint(b, uint64(len(ks.out)))
	b = append(b, ks.out...)
	p.put(fileCut, b)
}

// ErrParts is MergeParts' error for parts that are not one whole split of
// one bundle (another bundle, another split, a part missing or twice, a
// stream that is not the one the part describes).
var ErrParts = errors.New("certify: the parts")

// MergeParts combines the parts of one split verification, whose streams
// files[i] holds (in PartFileNames order), into the whole verification's
// answer: its verdict, first failure, scope, frontier, digest and
// assumptions. Stats are the parts' sums (a run a part stopped counts the
// keys every part made). The error is ErrParts, or one reading files.
func MergeParts(parts []*Part, files [][3]io.Reader) (*Result, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrParts, fmt.Sprintf(format, a...))
	}
	if len(parts) == 0 || len(files) != len(parts) {
		return nil, bad("none given")
	}
	p0 := parts[0]
	n := p0.Split.Count
	if len(parts) > n {
		return nil, bad("%d of a split into %d", len(parts), n)
	}
	byIndex := make([]int, n)
	for i := range byIndex {
		byIndex[i] = -1
	}
	for i, p := range parts {
		switch {
		case p.Format != PartFormat:
			return nil, bad("part %v is %q, not %s", p.Split, p.Format, PartFormat)
		case p.Bundle != p0.Bundle:
			return nil, bad("part %v is of another bundle (SHA-256 %.16s, not %.16s)", p.Split, p.Bundle, p0.Bundle)
		case p.Split.Count != n:
			return nil, bad("part %v is of a split into %d, not %d", p.Split, p.Split.Count, n)
		case p.Require != p0.Require:
			return nil, bad("part %v requires another scope", p.Split)
		case p.Split.Index < 0 || p.Split.Index >= n:
			return nil, bad("part %v has no place in the split", p.Split)
		case byIndex[p.Split.Index] >= 0:
			return nil, bad("part %v is given twice", p.Split)
		}
		byIndex[p.Split.Index] = i
	}
	for i, at := range byIndex {
		if at < 0 {
			return nil, bad("part %v is missing", Split{Index: i, Count: n})
		}
	}
	stats := Stats{Units: p0.Stats.Units}
	for _, p := range parts {
		stats.Lines = max(stats.Lines, p.Stats.Lines)
		stats.Events = max(stats.Events, p.Stats.Events)
		stats.Entries = max(stats.Entries, p.Stats.Entries)
		stats.Reads = max(stats.Reads, p.Stats.Reads)
		stats.ScopeKeys += p.Stats.ScopeKeys
		stats.Spills += p.Stats.Spills
	}
	// A failure that ends the run: the one met first.
	var stopAt *Placed
	for _, p := range parts {
		if p.Stop != nil && (stopAt == nil || p.Stop.At.cmp(stopAt.At) < 0) {
			stopAt = p.Stop
		}
	}
	if stopAt != nil {
		for _, p := range parts {
			if p.Stop == stopAt {
				stats.Lines, stats.Events, stats.Entries, stats.Reads = p.Stats.Lines, p.Stats.Events, p.Stats.Entries, p.Stats.Reads
			}
		}
		res := stop(stopAt.Failure)
		res.Stats = stats
		return res, nil
	}
	kind := kindString
	if p0.Keys == "integer" {
		kind = kindInteger
	}
	readers := make([][3]*partReader, n)
	for i := range parts {
		for f := range 3 {
			h := sha256.New() // of every byte read: each stream is read to its end
			readers[i][f] = newPartReader(files[i][f], h)
		}
	}
	// The first failure of each rank, in the order a whole run meets them.
	var first [nRanks]*Placed
	for _, p := range parts {
		for j := range p.Fails {
			pl := &p.Fails[j]
			if pl.Rank < 0 || pl.Rank >= nRanks || pl.Failure == nil {
				return nil, bad("part %v names an unknown obligation", p.Split)
			}
			if first[pl.Rank] == nil || pl.At.cmp(first[pl.Rank].At) < 0 {
				first[pl.Rank] = pl
			}
		}
	}
	lower := false // a failure ranked before the prefix's
	for _, pl := range first[:rDiscipline] {
		lower = lower || pl != nil
	}
	if p0.Discipline != RangeMerge && !lower {
		f, err := comparePrefix(p0.Discipline, kind, readers)
		if err != nil {
			return nil, err
		}
		if f != nil {
			first[rDiscipline] = &Placed{Rank: rDiscipline, Failure: f}
		}
	}
	var res *Result
	for _, pl := range first {
		if pl != nil {
			res = &Result{Verdict: Reject, Failure: pl.Failure}
			break
		}
	}
	if res == nil {
		for _, p := range parts {
			if p.Cut == nil {
				return nil, bad("part %v has no cut and no failure", p.Split)
			}
		}
		c := *p0.Cut
		c.Present, c.State = 0, nil
		for _, p := range parts {
			c.Present += p.Cut.Present
		}
		digest, err := mergeCut(kind, readers)
		if err != nil {
			return nil, err
		}
		c.Digest = digest
		res = &Result{Verdict: Accept, Cut: &c, Assumes: p0.Assumes}
	}
	// Every stream, read to its end, must be the one its part describes.
	var rec partRecord
	for i, p := range parts {
		for f := range 3 {
			pr := readers[i][f]
			if f == fileCut {
				for pr.nextCut(&rec) {
				}
			} else {
				for pr.next(&rec) {
				}
			}
			if pr.err == io.EOF {
				pr.err = io.ErrUnexpectedEOF // inside a record
			}
			if pr.err != nil {
				return nil, bad("part %v's %s stream is not the one it wrote: %v", p.Split, PartFileNames[f], pr.err)
			}
			if pr.n != p.Files[f].Records || hex.EncodeToString(pr.h.Sum(nil)) != p.Files[f].SHA256 {
				return nil, bad("part %v's %s stream is not the one it wrote", p.Split, PartFileNames[f])
			}
		}
	}
	res.Stats = stats
	return res, nil
}

// merged yields the records of the parts' streams in order: a tree of
// losers over the streams by their next record, so that each record costs
// one comparison a level.
type merged struct {
	rs   []*partReader
	cur  []partRecord // each stream's next record
	live []bool       // whether the stream has one
	t    []int        // t[0] the stream that won, t[1:] each match's loser
	read func(*partReader, *partRecord) bool
	less func(a, b *partRecord) bool
}

func newMerged(rs []*partReader, read func(*partReader, *partRecord) bool, less func(a, b *partRecord) bool) *merged {
	m := &merged{rs: rs, cur: make([]partRecord, len(rs)), live: make([]bool, len(rs)), t: make([]int, len(rs)), read: read, less: less}
	for i, r := range rs {
		m.live[i] = read(r, &m.cur[i])
	}
	if len(rs) > 0 {
		m.t[0] = m.play(1)
	}
	return m
}

// play plays the matches below node (stream i is node len(rs)+i), keeps
// each one's loser and returns the winner.
func (m *merged) play(node int) int {
	if node >= len(m.rs) {
		return node - len(m.rs)
	}
	a, b := m.play(2*node), m.play(2*node+1)
	if m.beats(b, a) {
		a, b = b, a
	}
	m.t[node] = b
	return a
}

// beats says whether stream i's record goes before stream j's: an ended
// stream goes last, and of two equal records the one asking first.
func (m *merged) beats(i, j int) bool {
	return m.live[i] && (!m.live[j] || !m.less(&m.cur[j], &m.cur[i]))
}

// next puts the least record left in rec, which holds until the next
// call; false when every stream has ended.
func (m *merged) next(rec *partRecord) bool {
	if len(m.rs) == 0 || !m.live[m.t[0]] {
		return false
	}
	w := m.t[0]
	*rec = m.cur[w]
	m.live[w] = m.read(m.rs[w], &m.cur[w])
	for node := (w + len(m.rs)) / 2; node > 0; node /= 2 {
		if l := m.t[node]; m.beats(l, w) {
			m.t[node], w = w, l
		}
	}
	m.t[0] = w
	return true
}

// comparePrefix compares the discipline's entries with the recorded ones,
// both merged into stream order, as compare does in one whole run. The
// discipline's side is merged on another goroutine.
func comparePrefix(discipline string, kind keyKind, readers [][3]*partReader) (*Failure, error) {
	side := func(f int, less func(a, b *partRecord) bool) *merged {
		rs := make([]*partReader, len(readers))
		for i := range readers {
			rs[i] = readers[i][f]
		}
		return newMerged(rs, (*partReader).next, less)
	}
	exp := mergeAhead(side(fileExp, func(a, b *partRecord) bool { return a.at.cmp(b.at) < 0 }))
	defer exp.stop()
	act := side(fileAct, func(a, b *partRecord) bool { return a.at.Line < b.at.Line })
	var e, a partRecord
	for n := int64(0); ; n++ {
		okE, okA := exp.next(&e), act.next(&a)
		switch {
		case !okE && !okA:
			return nil, nil
		case !okA:
			return prefixFailure(discipline, n, e.entry(kind, 0), nil), nil
		case !okE:
			return prefixFailure(discipline, n, nil, a.entry(kind, a.at.Line)), nil
		case !bytes.Equal(e.key, a.key) || !bytes.Equal(e.v, a.v) || e.tag != a.tag:
			return prefixFailure(discipline, n+1, e.entry(kind, 0), a.entry(kind, a.at.Line)), nil
		}
	}
}

// ahead is a merge run on another goroutine, its records handed over in
// batches (copied: a stream's buffers are reused as it reads on).
type ahead struct {
	full, free chan *recBatch
	done       chan struct{}
	cur        *recBatch
	i          int
}

type recBatch struct {
	recs []partRecord
	buf  []byte
	ends []int // of each record's key, then of its value, in buf
}

func mergeAhead(m *merged) *ahead {
	a := &ahead{full: make(chan *recBatch, 2), free: make(chan *recBatch, 4), done: make(chan struct{})}
	for range 3 {
		a.free <- &recBatch{}
	}
	go func() {
		defer close(a.full)
		var rec partRecord
		for more := true; more; {
			var b *recBatch
			select {
			case b = <-a.free:
			case <-a.done:
				return
			}
			b.recs, b.buf, b.ends = b.recs[:0], b.buf[:0], b.ends[:0]
			for len(b.recs) < 4096 {
				if more = m.next(&rec); !more {
					break
				}
				b.buf = append(b.buf, rec.key...)
				b.ends = append(b.ends, len(b.buf))
				b.buf = append(b.buf, rec.v...)
				b.ends = append(b.ends, len(b.buf))
				b.recs = append(b.recs, rec)
			}
			start := 0 // the slices are taken once buf no longer moves
			for i := range b.recs {
				r := &b.recs[i]
				k, v := b.ends[2*i], b.ends[2*i+1]
				r.key, r.v = b.buf[start:k:k], b.buf[k:v:v]
				r.at.Key = r.key
				start = v
			}
			select {
			case a.full <- b:
			case <-a.done:
				return
			}
		}
	}()
	return a
}

// next is merged.next's: rec holds until the next call.
func (a *ahead) next(rec *partRecord) bool {
	for a.cur == nil || a.i == len(a.cur.recs) {
		if a.cur != nil {
			a.free <- a.cur
		}
		var ok bool
		if a.cur, ok = <-a.full; !ok {
			a.cur = nil
			return false
		}
		a.i = 0
	}
	*rec = a.cur.recs[a.i]
	a.i++
	return true
}

// stop ends the goroutine and waits for it: its streams are read on after.
func (a *ahead) stop() {
	close(a.done)
	for range a.full {
	}
}

// mergeCut is the digest of the parts' present keys in key order (cut).
func mergeCut(kind keyKind, readers [][3]*partReader) (string, error) {
	rs := make([]*partReader, len(readers))
	for i := range readers {
		rs[i] = readers[i][fileCut]
	}
	m := newMerged(rs, (*partReader).nextCut, func(a, b *partRecord) bool { return bytes.Compare(a.key, b.key) < 0 })
	h := sha256.New()
	var buf, kb []byte
	var rec partRecord
	for m.next(&rec) {
		kb = kind.appendStored(kb[:0], rec.key)
		buf = cutLine(buf[:0], kb, rec.v)
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// cutLine is a present key's line of the cut's digest.
func cutLine[K, V string | []byte](buf []byte, k K, out V) []byte {
	buf = append(buf, k...)
	buf = append(buf, '\t')
	buf = append(buf, out...)
	return append(buf, '\n')
}
