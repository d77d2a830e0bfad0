package explore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/cutcheck/cutcheck/internal/huge"
)

// traceStore keeps, for every level, the discovery keys of its states in
// level order, and nothing else of the graph. The key of state i of level d
// names its parent (key>>16, an index into level d-1) and the action taken
// there (key&0xffff); a level-0 key is the state's position in Init.
//
// A level's keys are increasing, so they are delta-coded: in blocks of at
// most 256, each block's first key is kept whole and every other key as two
// uvarints, the parent's distance from the previous key's parent and the
// action. That is about 2 bytes a state instead of 8. Blocks start at every
// run of keys handed to add (so that runs are coded in parallel) and every
// 256 keys within a run. The coded bytes live in memory, or in a file once
// the run has spilled; the block index stays in memory.
type traceStore struct {
	levels []levelKeys
	mem    int64 // coded bytes and index held in memory

	f   *os.File
	w   *bufio.Writer
	end int64 // bytes in the file
}

const keyBlock = 256

type levelKeys struct {
	n      uint64
	starts []uint64 // per block: the level index of its first key
	first  []uint64 // per block: its first key
	offs   []int64  // per block: where its coded keys start (in data or the file)
	data   []byte   // nil once written to the file
	end    int64    // where the level's coded keys end
}

// add appends a level, given as runs of keys in order, coding the runs on
// workers goroutines.
func (t *traceStore) add(runs [][]uint64, workers int) error {
	lk := code(runs, workers)
	t.levels = append(t.levels, lk)
	t.mem += int64(len(lk.data)) + int64(len(lk.first))*24
	if t.f == nil {
		return nil
	}
	return t.write(len(t.levels) - 1)
}

// begin starts a level that extend adds a part at a time, for a level whose
// keys are not all in memory at once. The store must be on file.
func (t *traceStore) begin() {
	t.levels = append(t.levels, levelKeys{end: t.end})
}

// extend appends runs of keys, which follow every key added so far, to the
// level begun last, writing them to the file.
func (t *traceStore) extend(runs [][]uint64, workers int) error {
	c := code(runs, workers)
	lk := &t.levels[len(t.levels)-1]
	for b := range c.first {
		lk.starts = append(lk.starts, lk.n+c.starts[b])
		lk.first = append(lk.first, c.first[b])
		lk.offs = append(lk.offs, t.end+c.offs[b])
	}
	if _, err := t.w.Write(c.data); err != nil {
		return fmt.Errorf("explore: writing trace keys: %w", err)
	}
	t.end += int64(len(c.data))
	lk.end = t.end
	lk.n += c.n
	t.mem += int64(len(c.first)) * 24
	return nil
}

// code delta-codes runs of keys as one level, in memory.
func code(runs [][]uint64, workers int) levelKeys {
	parts := make([]levelKeys, len(runs))
	forEachIndex(len(runs), workers, nil, func(_, r int) error {
		keys, p := runs[r], &parts[r]
		p.data = make([]byte, 0, 3*len(keys))
		var prev uint64
		for i, k := range keys {
			if i%keyBlock == 0 {
				p.starts = append(p.starts, uint64(i))
				p.first = append(p.first, k)
				p.offs = append(p.offs, int64(len(p.data)))
			} else {
				p.data = binary.AppendUvarint(p.data, k>>16-prev>>16)
				p.data = binary.AppendUvarint(p.data, k&0xffff)
			}
			prev = k
		}
		return nil
	})
	var blocks, size int
	for _, p := range parts {
		blocks += len(p.first)
		size += len(p.data)
	}
	lk := levelKeys{
		starts: make([]uint64, 0, blocks),
		first:  make([]uint64, 0, blocks),
		offs:   make([]int64, 0, blocks),
		data:   huge.Make[byte](0, size),
	}
	for r, p := range parts {
		for b := range p.first {
			lk.starts = append(lk.starts, lk.n+p.starts[b])
			lk.first = append(lk.first, p.first[b])
			lk.offs = append(lk.offs, int64(len(lk.data))+p.offs[b])
		}
		lk.data = append(lk.data, p.data...)
		lk.n += uint64(len(runs[r]))
	}
	lk.end = int64(len(lk.data))
	return lk
}

// write moves level d's coded keys to the file.
func (t *traceStore) write(d int) error {
	lk := &t.levels[d]
	if _, err := t.w.Write(lk.data); err != nil {
		return fmt.Errorf("explore: writing trace keys: %w", err)
	}
	for b := range lk.offs {
		lk.offs[b] += t.end
	}
	lk.end += t.end
	t.end += int64(len(lk.data))
	t.mem -= int64(len(lk.data))
	lk.data = nil
	return nil
}

// spill moves the store to f; later levels are appended there.
func (t *traceStore) spill(f *os.File) error {
	t.f, t.w = f, bufio.NewWriterSize(f, 1<<20)
	for d := range t.levels {
		if t.levels[d].data != nil {
			if err := t.write(d); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *traceStore) onDisk() bool { return t.f != nil }

// bytes is the memory held by the store: coded keys not yet in the file,
// and the block index (24 bytes a block).
func (t *traceStore) bytes() int64 { return t.mem }

// key returns the key of state i of level d.
func (t *traceStore) key(d int, i uint64) (uint64, error) {
	if d >= len(t.levels) || i >= t.levels[d].n {
		return 0, fmt.Errorf("explore: no state %d at level %d", i, d)
	}
	lk := &t.levels[d]
	b, _ := slices.BinarySearch(lk.starts, i+1)
	b-- // the last block starting at or before i
	k := lk.first[b]
	if i == lk.starts[b] {
		return k, nil
	}
	end := lk.end
	if b+1 < len(lk.offs) {
		end = lk.offs[b+1]
	}
	coded := lk.data
	if coded == nil {
		if err := t.w.Flush(); err != nil {
			return 0, err
		}
		coded = make([]byte, end-lk.offs[b])
		if _, err := t.f.ReadAt(coded, lk.offs[b]); err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("explore: reading trace keys: %w", err)
		}
	} else {
		coded = coded[lk.offs[b]:end]
	}
	for range i - lk.starts[b] {
		dp, n := binary.Uvarint(coded)
		j, m := binary.Uvarint(coded[max(n, 0):])
		if n <= 0 || m <= 0 {
			return 0, fmt.Errorf("explore: corrupt trace keys at level %d", d)
		}
		coded = coded[n+m:]
		k = (k>>16+dp)<<16 | j
	}
	return k, nil
}

// errNondeterministic is returned when re-executing a trace does not
// reproduce it: a model method depends on something besides its arguments.
var errNondeterministic = errors.New("explore: the model is not deterministic: re-running a trace gave a different path")

// path rebuilds the states from an initial state to state i of level d by
// walking the keys back to level 0 and re-executing the recorded actions.
func (e *engine[S, A]) path(d int, i uint64) ([]Step[S, A], error) {
	steps, _, err := e.pathOf(d, i)
	return steps, err
}

// pathOf is path, with the positions that lead there: the initial state's
// index, then each action's (Violation.Path).
func (e *engine[S, A]) pathOf(d int, i uint64) ([]Step[S, A], []int, error) {
	acts := make([]int, d)
	for l := d; l >= 1; l-- {
		k, err := e.trace.key(l, i)
		if err != nil {
			return nil, nil, err
		}
		acts[l-1] = int(k & 0xffff)
		i = k >> 16
	}
	k0, err := e.trace.key(0, i)
	if err != nil {
		return nil, nil, err
	}
	inits := e.m.Init()
	if k0 >= uint64(len(inits)) {
		return nil, nil, errNondeterministic
	}
	steps := make([]Step[S, A], 0, d+2)
	steps = append(steps, Step[S, A]{State: inits[k0]})
	for _, j := range acts {
		st, err := e.step(&steps[len(steps)-1].State, j)
		if err != nil {
			return nil, nil, err
		}
		steps = append(steps, st)
	}
	return steps, append([]int{int(k0)}, acts...), nil
}

// step re-executes action j of s.
func (e *engine[S, A]) step(s *S, j int) (Step[S, A], error) {
	acts := e.m.Actions(s, nil)
	if j >= len(acts) {
		return Step[S, A]{}, errNondeterministic
	}
	t := *s
	if !e.m.Next(s, acts[j], &t) {
		return Step[S, A]{}, errNondeterministic
	}
	return Step[S, A]{Action: acts[j], HasAction: true, State: t}, nil
}
