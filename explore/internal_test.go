package explore

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// The ordered table agrees with a map, across growth, for fingerprints in
// every shard and at both ends of the range, and stays under 16 bytes a
// fingerprint.
func TestSeenSet(t *testing.T) {
	n := 1 << 20
	if raceEnabled {
		n = 1 << 16
	}
	r := rand.New(rand.NewPCG(1, 2))
	var s seenSet
	want := map[uint64]bool{}
	fps := []uint64{1, 2, math.MaxUint64, math.MaxUint64 - 1, 1 << 56, 1<<56 - 1}
	for len(fps) < n {
		fps = append(fps, r.Uint64()|1)
	}
	for i, fp := range fps {
		if got := s.insert(fp); got == want[fp] {
			t.Fatalf("insert #%d %x: new=%v, want %v", i, fp, got, !want[fp])
		}
		want[fp] = true
	}
	for _, fp := range fps[:1000] {
		if s.insert(fp) {
			t.Fatalf("re-insert %x reported new", fp)
		}
	}
	if s.len() != uint64(len(want)) {
		t.Fatalf("len %d, want %d", s.len(), len(want))
	}
	for fp := range want {
		if !s.has(fp) {
			t.Fatalf("lost %x", fp)
		}
	}
	for range n {
		if fp := r.Uint64() | 1; s.has(fp) != want[fp] {
			t.Fatalf("has(%x) wrong", fp)
		}
	}
	var all []uint64
	s.each(0, seenShards, func(fp uint64) { all = append(all, fp) })
	if !slices.IsSorted(all) || len(all) != len(want) {
		t.Fatal("each is not the sorted set")
	}
	if b := float64(s.bytes()) / float64(len(want)); b > 16 {
		t.Fatalf("%.1f bytes per fingerprint", b)
	}
}

// Concurrent offers leave each fingerprint with its smallest key, and
// exactly one offer of that key is told it won last.
func TestLevelMap(t *testing.T) {
	const fps, keysPer, workers = 20000, 4, 4
	var lm levelMap
	lm.reset(fps, workers)
	var offers [][2]uint64
	for i := range fps {
		for k := range keysPer {
			offers = append(offers, [2]uint64{uint64(i)*0x9e3779b97f4a7c15 | 1, uint64(k*fps + i)})
		}
	}
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(offers), func(i, j int) { offers[i], offers[j] = offers[j], offers[i] })
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for _, o := range offers[w*len(offers)/workers : (w+1)*len(offers)/workers] {
				if _, _, _, full := lm.insert(o[0], o[1]); full {
					t.Error("full")
				}
			}
		})
	}
	wg.Wait()
	for i := range fps {
		if got := lm.winner(uint64(i)*0x9e3779b97f4a7c15 | 1); got != uint64(i)+1 {
			t.Fatalf("fp #%d: winner %d, want key %d", i, got-1, i)
		}
	}
	if lm.winner(12345678) != 0 {
		t.Fatal("absent fingerprint has a winner")
	}
}

func TestBloom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 100000
	b := newBloom(n)
	in := make([]uint64, n)
	for i := range in {
		in[i] = r.Uint64()
		b.add(in[i])
	}
	for _, fp := range in {
		if !b.has(fp) {
			t.Fatal("false negative")
		}
	}
	fp := 0
	for range n {
		if b.has(r.Uint64()) {
			fp++
		}
	}
	if rate := float64(fp) / n; rate > 0.005 {
		t.Fatalf("false positive rate %.4f", rate)
	}
}

// Fingerprints written out over several flushes are all found by lookup,
// and nothing else is.
func TestDiskSeen(t *testing.T) {
	d, err := openDisk(t.TempDir(), 1<<20) // cache limit 256 KiB: ~20k fingerprints
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	r := rand.New(rand.NewPCG(7, 8))
	var all []uint64
	for range 8 {
		level := make([]uint64, 10000)
		for i := range level {
			level[i] = r.Uint64() | 1
		}
		all = append(all, level...)
		if err := d.remember(context.Background(), [][]uint64{level}, 2); err != nil {
			t.Fatal(err)
		}
	}
	if len(d.filters) < 2 || d.stored+d.cache.len() != uint64(len(all)) {
		t.Fatalf("%d flushes, %d stored + %d cached, want %d", len(d.filters), d.stored, d.cache.len(), len(all))
	}
	query := slices.Clone(all)
	for range 10000 {
		query = append(query, r.Uint64()|1)
	}
	found, err := d.lookup(query, 2)
	if err != nil {
		t.Fatal(err)
	}
	var want []uint64
	for _, fp := range all {
		if !d.cache.has(fp) {
			want = append(want, fp)
		}
	}
	slices.Sort(want)
	slices.Sort(found)
	if !slices.Equal(found, want) {
		t.Fatalf("found %d fingerprints, want %d", len(found), len(want))
	}
}
