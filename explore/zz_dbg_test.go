package explore

import (
	"math/rand/v2"
	"testing"
)

func TestZZDbg(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s seenSet
	for i := 0; i < 1<<21; i++ { s.insert(r.Uint64() | 1) }
	sh := &s.shards[7]
	t.Logf("n=%d pages=%d count=%d pool=%d total=%d", sh.n, len(sh.pages), sh.count, s.pool.bytes(), s.bytes())
}
