package certify

import (
	"encoding/binary"
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
}
