package certify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// The external sort hands back every record in key order, equal keys in
// the order they were added, in memory, across runs and across more runs
// than a merge reads at once, and twice.
func TestExtSort(t *testing.T) {
	for _, limit := range []int{1 << 30, 1 << 16, 2000} {
		dir := t.TempDir()
		s := newExtSort(dir, "t", limit)
		rng := rand.New(rand.NewPCG(3, 4))
		type rec struct {
			key uint16
			seq int
		}
		var want []rec
		for i := range 40_000 {
			k := uint16(rng.IntN(500))
			want = append(want, rec{k, i})
			s.add(binary.BigEndian.AppendUint16(nil, k), fmt.Appendf(nil, "%d", i))
		}
		slices.SortStableFunc(want, func(a, b rec) int { return int(a.key) - int(b.key) })
		for pass := range 2 {
			var got []rec
			if err := s.pass(func(k, p []byte) bool {
				var i int
				fmt.Sscan(string(p), &i)
				got = append(got, rec{binary.BigEndian.Uint16(k), i})
				return true
			}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("limit %d pass %d: %d records, not in order", limit, pass, len(got))
			}
		}
		runs := len(s.runs)
		if limit < 1<<20 && runs < 5 || limit > 1<<20 && runs != 0 || runs > fanIn || limit == 2000 && s.merged == 0 {
			t.Errorf("limit %d: %d runs, %d merged", limit, runs, s.merged)
		}
		s.remove()
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("runs left behind: %d files", len(left))
		}
	}
	// Stopped, the merging of runs ends with ErrStopped and leaves nothing.
	dir := t.TempDir()
	s := newExtSort(dir, "t", 2000)
	for i := range 40_000 {
		s.add(binary.BigEndian.AppendUint16(nil, uint16(i*7919)), nil)
	}
	stop := make(chan struct{})
	close(stop)
	s.stop = stop
	if err := s.pass(func(k, p []byte) bool { return true }); !errors.Is(err, ErrStopped) || len(s.runs) <= fanIn {
		t.Errorf("stopped: %v, %d runs", err, len(s.runs))
	}
	s.remove()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("stopped: left behind: %d files", len(left))
	}
}

// untouchedAnswers answers as putting every written key to every question
// does, for questions apart (the gaps between chunks) and overlapping.
func TestUntouchedAnswers(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 300 {
		sp, err := openDbzSpool(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		c := &dbzConverter{sp: sp, integer: true}
		if c.touched, err = sp.file("touched"); err != nil {
			t.Fatal(err)
		}
		var keys []int64
		for range rng.IntN(30) {
			k := int64(rng.IntN(60))
			keys = append(keys, k)
			c.touch(dkey{i: k})
		}
		var asked [][2]*dkey
		lo := int64(-1)
		for range 1 + rng.IntN(6) {
			var a *dkey
			if round%2 == 1 || lo >= 0 || rng.IntN(2) == 0 { // apart: increasing, a nil lower bound first only
				a = &dkey{i: lo + int64(rng.IntN(5))}
			}
			if round%2 == 1 {
				a = &dkey{i: int64(rng.IntN(60))} // anywhere: overlapping
			}
			b := &dkey{i: int64(rng.IntN(60))}
			if a != nil && round%2 == 0 {
				b = &dkey{i: a.i + 1 + int64(rng.IntN(10))}
			}
			if round%2 == 0 {
				lo = b.i + int64(rng.IntN(3))
			}
			asked = append(asked, [2]*dkey{a, b})
		}
		got, err := c.untouchedAnswers(asked)
		if err != nil {
			t.Fatal(err)
		}
		for i, q := range asked {
			want := true
			for _, k := range keys {
				if (q[0] == nil || k > q[0].i) && k < q[1].i {
					want = false
				}
			}
			if got[i] != want {
				t.Fatalf("round %d question %d (%v, %v): %v, want %v (keys %v)", round, i, q[0], q[1], got[i], want, keys)
			}
		}
		c.touched.f.Close()
		sp.close()
	}
}

// A stream's placed positions are found again as a slice of them is: a
// redelivery at its highest position from memory, further back from the
// file by binary search.
func TestStreamRedelivered(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for round := range 100 {
		sp, err := openDbzSpool(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		c := &dbzConverter{sp: sp}
		type placed struct {
			pos dbzPos
			sum [16]byte
		}
		var seen []placed
		pos := dbzPos{}
		for i := range 200 {
			e := &dbzEvent{stream: 0, pos: pos}
			e.sum[0] = byte(rng.IntN(4))
			if i > 0 && rng.IntN(4) == 0 { // back to a position passed, or one never placed
				e.pos = dbzPos{uint64(rng.IntN(int(pos[0]) + 2)), uint64(rng.IntN(3))}
			} else if rng.IntN(3) > 0 {
				pos[0]++
				pos[1] = uint64(rng.IntN(3))
				e.pos = pos
			}
			want := false
			var hi dbzPos
			if len(seen) > 0 {
				hi = seen[len(seen)-1].pos
			}
			for _, p := range seen {
				want = want || p.pos == e.pos && p.sum == e.sum
			}
			want = want && len(seen) > 0 && !hi.less(e.pos)
			if err := c.sequence(e); err != nil {
				t.Fatal(err)
			}
			if e.redelivery != want {
				t.Fatalf("round %d event %d at %v: redelivery %v, want %v", round, i, e.pos, e.redelivery, want)
			}
			if c.orderFail != nil {
				break // a position going back that is not a redelivery ends the order
			}
			if !e.redelivery {
				seen = append(seen, placed{e.pos, e.sum})
			}
		}
		for _, s := range c.seq {
			if s != nil {
				s.f.Close()
			}
		}
		sp.close()
	}
}
