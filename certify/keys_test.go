package certify

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// owner finds a key's unit among many ranges, in any order of keys, as a
// look at every range does: the last range found, which it tries first,
// answers only for a key in its own stretch.
func TestOwnerManyRanges(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{3, 64, 200} {
		v := &verifier{kind: kindInteger}
		for u := range n { // unit u owns [10u, 10u+5): gaps between
			lo, hi := int64(10*u), int64(10*u+5)
			v.rangeOwn = append(v.rangeOwn, interval{lo: kindInteger.fromString(strconv.FormatInt(lo, 10)),
				hi: kindInteger.fromString(strconv.FormatInt(hi, 10)), hasLo: true, hasHi: true, unit: u})
		}
		for range 5000 {
			k := r.Int64N(int64(10*n+20)) - 10
			want := -1
			if k >= 0 && k%10 < 5 && k/10 < int64(n) {
				want = int(k / 10)
			}
			if got := v.owner(kindInteger.fromString(strconv.FormatInt(k, 10))); got != want {
				t.Fatalf("%d ranges: key %d owned by %d, want %d", n, k, got, want)
			}
		}
	}
}
