package certify

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// extSort orders records too many to hold: each is a key and a payload,
// ordered by the key's bytes, records of equal keys in the order they were
// added. Records are buffered up to limit bytes, then sorted and written as
// a run file in dir; each pass reads the runs merged, so the memory is the
// buffer and one read buffer a run. A converter's events and labels go
// through one (debezium.go).
type extSort struct {
	dir, name string
	limit     int
	// The buffer is blocks taken as they fill (so a small sort holds
	// little) and kept for the next run: blocks[:used] hold held bytes of
	// records, each uvarint key length, uvarint payload length, key,
	// payload, at offs (block<<32 | offset).
	blocks [][]byte
	used   int
	held   int
	offs   []uint64
	runs   []string
	merged int             // runs made by merging runs
	stop   <-chan struct{} // once closed, a merge of runs ends with ErrStopped
	err    error
}

// sortBlock is the size of the buffer's blocks (a larger record has one
// of its own).
const sortBlock = 1 << 20

func newExtSort(dir, name string, limit int) *extSort {
	return &extSort{dir: dir, name: name, limit: limit}
}

// add appends a record; an error writing a run is kept for pass. A record
// that does not fit under the limit writes the run first.
func (s *extSort) add(key, payload []byte) {
	n := 2*binary.MaxVarintLen64 + len(key) + len(payload)
	if len(s.offs) > 0 && (s.held+n > s.limit || 8*len(s.offs) > s.limit/8) {
		if s.err == nil {
			s.err = s.spill()
		}
		s.used, s.held, s.offs = 0, 0, s.offs[:0]
	}
	if s.used == 0 || len(s.blocks[s.used-1])+n > cap(s.blocks[s.used-1]) {
		switch {
		case s.used == len(s.blocks):
			s.blocks = append(s.blocks, make([]byte, 0, max(sortBlock, n)))
		case cap(s.blocks[s.used]) < n:
			s.blocks[s.used] = make([]byte, 0, n)
		default:
			s.blocks[s.used] = s.blocks[s.used][:0]
		}
		s.used++
	}
	b := s.blocks[s.used-1]
	off := len(b)
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = binary.AppendUvarint(b, uint64(len(payload)))
	b = append(append(b, key...), payload...)
	s.blocks[s.used-1], s.held = b, s.held+len(b)-off
	s.offs = append(s.offs, uint64(s.used-1)<<32|uint64(off))
}

// at is the buffer from a record's start.
func (s *extSort) at(o uint64) []byte { return s.blocks[o>>32][o&(1<<32-1):] }

// record splits a record at the start of b.
func record(b []byte) (key, payload []byte, n int) {
	kl, a := binary.Uvarint(b)
	pl, c := binary.Uvarint(b[a:])
	at := a + c
	return b[at : at+int(kl)], b[at+int(kl) : at+int(kl)+int(pl)], at + int(kl) + int(pl)
}

// sortBuf orders the buffered records (stable: equal keys keep their order).
func (s *extSort) sortBuf() {
	slices.SortStableFunc(s.offs, func(a, b uint64) int {
		ka, _, _ := record(s.at(a))
		kb, _, _ := record(s.at(b))
		return bytes.Compare(ka, kb)
	})
}

// spill writes the buffer as a run.
func (s *extSort) spill() error {
	s.sortBuf()
	name := filepath.Join(s.dir, fmt.Sprintf("%s-%d", s.name, len(s.runs)))
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	for _, off := range s.offs {
		b := s.at(off)
		_, _, n := record(b)
		w.Write(b[:n])
	}
	if err = w.Flush(); err == nil {
		err = f.Close()
	} else {
		f.Close()
	}
	s.runs = append(s.runs, name)
	s.used, s.held, s.offs = 0, 0, s.offs[:0]
	return err
}

// pass calls each on every record in order, until each returns false. It
// may be called again: the records stay until remove.
func (s *extSort) pass(each func(key, payload []byte) bool) error {
	if s.err != nil {
		return fmt.Errorf("certify: writing a sort run: %w", s.err)
	}
	if len(s.runs) == 0 {
		s.sortBuf()
		for _, off := range s.offs {
			if k, p, _ := record(s.at(off)); !each(k, p) {
				return nil
			}
		}
		return nil
	}
	if len(s.offs) > 0 {
		if err := s.spill(); err != nil {
			return fmt.Errorf("certify: writing a sort run: %w", err)
		}
	}
	// at most fanIn runs are read at once: the earliest are merged into
	// one run until so many are left (each a read buffer and a file)
	for len(s.runs) > fanIn {
		name := filepath.Join(s.dir, fmt.Sprintf("%s-m%d", s.name, s.merged))
		s.merged++
		if err := s.mergeInto(s.runs[:fanIn], name); err != nil {
			return err
		}
		for _, r := range s.runs[:fanIn] {
			os.Remove(r)
		}
		s.runs = append([]string{name}, s.runs[fanIn:]...)
	}
	return merge(s.runs, each)
}

// fanIn is how many runs a merge reads at once.
const fanIn = 64

// mergeInto merges runs into one run file.
func (s *extSort) mergeInto(runs []string, name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	var werr error
	var hdr []byte
	n := 0
	err = merge(runs, func(k, p []byte) bool {
		if n++; n%4096 == 0 && stopped(s.stop) {
			werr = ErrStopped
			return false
		}
		hdr = binary.AppendUvarint(hdr[:0], uint64(len(k)))
		hdr = binary.AppendUvarint(hdr, uint64(len(p)))
		w.Write(hdr)
		w.Write(k)
		_, werr = w.Write(p)
		return werr == nil
	})
	if err = cmpErr(err, werr); err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}

// merge calls each on the records of sorted runs in order: of equal keys,
// the earlier run's first.
func merge(runs []string, each func(key, payload []byte) bool) error {
	h := &runHeap{}
	defer func() {
		for _, r := range h.all {
			r.f.Close()
		}
	}()
	for i, name := range runs {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		r := &runReader{f: f, r: bufio.NewReaderSize(f, 1<<16), i: i}
		h.all = append(h.all, r)
		if ok, err := r.next(); err != nil {
			return err
		} else if ok {
			h.rs = append(h.rs, r)
		}
	}
	heap.Init(h)
	for len(h.rs) > 0 {
		r := h.rs[0]
		if !each(r.key, r.payload) {
			return nil
		}
		ok, err := r.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return nil
}

// remove deletes the runs.
func (s *extSort) remove() {
	for _, name := range s.runs {
		os.Remove(name)
	}
	s.runs, s.blocks, s.used, s.held, s.offs = nil, nil, 0, 0, nil
}

type runReader struct {
	f            *os.File
	r            *bufio.Reader
	i            int
	rec          []byte
	key, payload []byte
}

func (r *runReader) next() (bool, error) {
	kl, err := binary.ReadUvarint(r.r)
	if err == io.EOF {
		return false, nil
	}
	pl, err2 := binary.ReadUvarint(r.r)
	if err != nil || err2 != nil {
		return false, fmt.Errorf("certify: reading a sort run: %v", cmpErr(err, err2))
	}
	n := int(kl + pl)
	if cap(r.rec) < n {
		r.rec = make([]byte, n)
	}
	r.rec = r.rec[:n]
	if _, err := io.ReadFull(r.r, r.rec); err != nil {
		return false, fmt.Errorf("certify: reading a sort run: %w", err)
	}
	r.key, r.payload = r.rec[:kl], r.rec[kl:]
	return true, nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// runHeap merges runs: the least key first, and of equal keys the
// earlier run's, which holds the records added earlier.
type runHeap struct{ rs, all []*runReader }

func (h *runHeap) Len() int { return len(h.rs) }
func (h *runHeap) Less(a, b int) bool {
	if c := bytes.Compare(h.rs[a].key, h.rs[b].key); c != 0 {
		return c < 0
	}
	return h.rs[a].i < h.rs[b].i
}
func (h *runHeap) Swap(a, b int) { h.rs[a], h.rs[b] = h.rs[b], h.rs[a] }
func (h *runHeap) Push(x any)    { h.rs = append(h.rs, x.(*runReader)) }
func (h *runHeap) Pop() any {
	r := h.rs[len(h.rs)-1]
	h.rs = h.rs[:len(h.rs)-1]
	return r
}
