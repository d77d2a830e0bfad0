package explore

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestZZIns(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const N = 1 << 24
	fps := make([]uint64, N)
	for i := range fps { fps[i] = r.Uint64() | 1 }
	for rep := 0; rep < 3; rep++ {
		var s seenSet
		t0 := time.Now()
		const B = N / 256
		for i := 0; i < N; i += B {
			s.insertAll([][]uint64{fps[i:i+B]}, 1)
		}
		t.Logf("insert %v/op  %.2f B/state", time.Since(t0)/N, float64(s.bytes())/N)
	}
}
