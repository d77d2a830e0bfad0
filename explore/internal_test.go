package explore

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// The ordered table agrees with a map, across growth, for fingerprints in
// every shard and at both ends of the range, and stays under 12 bytes a
// fingerprint.
func TestSeenSet(t *testing.T) {
	n := 1 << 21 // 8k a shard: paged tables that grow
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
	for range n / 4 {
		if fp := r.Uint64() | 1; s.has(fp) != want[fp] {
			t.Fatalf("has(%x) wrong", fp)
		}
	}
	var all []uint64
	s.each(0, seenShards, func(fp uint64) { all = append(all, fp) })
	if !slices.IsSorted(all) || len(all) != len(want) {
		t.Fatal("each is not the sorted set")
	}
	if b := float64(s.bytes()) / float64(len(want)); b > 12 {
		t.Fatalf("%.1f bytes per fingerprint", b)
	}
}

// Concurrent offers leave each fingerprint with its smallest key, and
// exactly one offer of that key is told it won last.
func TestLevelMap(t *testing.T) {
	const fps, keysPer, workers = 20000, 4, 4
	var lm levelMap
	var a slotArena
	defer a.release()
	lm.reset(fps, workers, &a, 0)
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
				if _, _, _, full, _ := lm.insert(o[0], o[1]); full {
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
	b := newBloom(n, maxBloomBits)
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
	for range 3 * maxRuns {
		level := make([]uint64, 10000)
		for i := range level {
			level[i] = r.Uint64() | 1
		}
		all = append(all, level...)
		if err := d.remember(context.Background(), [][]uint64{level}, 2); err != nil {
			t.Fatal(err)
		}
	}
	// Each flush writes a run and each merge another: past maxRuns flushes
	// there are fewer runs than written.
	if d.nextID <= maxRuns+1 || len(d.runs) >= int(d.nextID) || d.stored+d.cache.len() != uint64(len(all)) {
		t.Fatalf("%d runs written, %d left, %d stored + %d cached, want %d", d.nextID, len(d.runs), d.stored, d.cache.len(), len(all))
	}
	var runs uint64
	for _, r := range d.runs {
		runs += r.n
	}
	if runs != d.stored {
		t.Fatalf("runs hold %d, stored %d", runs, d.stored)
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

// Keys read back from the delta-coded store, in memory and from its file,
// are the keys put in.
func TestTraceStore(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var levels [][]uint64
	for d := range 5 {
		var keys []uint64
		k := uint64(0)
		for range 1000 * d {
			k += uint64(r.IntN(3)) << 16
			k = k&^0xffff | uint64(r.IntN(70000)&0xffff)
			keys = append(keys, k)
			k |= 0xffff // the next key is larger
		}
		slices.Sort(keys)
		levels = append(levels, slices.Compact(keys))
	}
	check := func(ts *traceStore) {
		t.Helper()
		for d, keys := range levels {
			for i, want := range keys {
				if got, err := ts.key(d, uint64(i)); err != nil || got != want {
					t.Fatalf("level %d key %d: %x %v, want %x", d, i, got, err, want)
				}
			}
		}
	}
	var ts traceStore
	for _, keys := range levels[:3] {
		mid := len(keys) / 3
		if err := ts.add([][]uint64{keys[:mid], nil, keys[mid:]}, 2); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "trace"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := ts.spill(f); err != nil {
		t.Fatal(err)
	}
	for _, keys := range levels[3:] {
		if err := ts.add([][]uint64{keys}, 2); err != nil {
			t.Fatal(err)
		}
	}
	check(&ts)
	index := int64(0)
	for _, lk := range ts.levels {
		index += int64(len(lk.first)) * 24
	}
	if ts.bytes() != index {
		t.Fatalf("%d bytes in memory, want the %d of the index", ts.bytes(), index)
	}
}

// Moving to disk between levels, with the frontier still in memory, gives
// the same result as staying in memory.
func TestSpillBetweenLevels(t *testing.T) {
	m := Model[rotorState, int](rotor{n: 12, bad: -1})
	want := run(t, m, Options{Workers: 2})
	e, err := newEngine(m, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	ctx := context.Background()
	e.start = time.Now()
	if v, err := e.initLevel(ctx); v != nil || err != nil {
		t.Fatal(v, err)
	}
	for range 5 {
		outs, v, err := e.expand(ctx)
		if v != nil || err != nil {
			t.Fatal(v, err)
		}
		if err := e.commit(ctx, outs); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.toDisk(ctx, true); err != nil {
		t.Fatal(err)
	}
	if e.front.file == nil {
		t.Fatal("frontier not moved to a file")
	}
	got, err := e.levels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Stats.OnDisk {
		t.Fatal("not on disk")
	}
	if g, w := zeroTimes(got), zeroTimes(want); !reflect.DeepEqual(g, w) {
		t.Fatalf("got %+v\nwant %+v", g, w)
	}
}

// Fingerprints crowded at the top of one shard's range pile up past its
// home slots, into the overflow tail, which grows page by page and forces
// the table to grow when exhausted.
func TestSeenSetCrowdedTail(t *testing.T) {
	var s seenSet
	r := rand.New(rand.NewPCG(11, 12))
	want := map[uint64]bool{}
	for range 12000 {
		fp := 3<<56 | (1<<56 - 1 - r.Uint64()>>20) // the top 2⁻¹² of shard 3
		s.insert(fp)
		want[fp] = true
	}
	for fp := range want {
		if !s.has(fp) {
			t.Fatalf("lost %x", fp)
		}
	}
	if s.len() != uint64(len(want)) {
		t.Fatalf("len %d, want %d", s.len(), len(want))
	}
	var all []uint64
	s.each(0, seenShards, func(fp uint64) { all = append(all, fp) })
	if !slices.IsSorted(all) || len(all) != len(want) {
		t.Fatal("each is not the sorted set")
	}
}

// TestGCPercentRestored: a run lowers the collector's percent and puts the
// default back after; a setting of the program's own is left alone.
func TestGCPercentRestored(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set")
	}
	restore := gcPercent()
	if got := debug.SetGCPercent(runGCPercent); got != runGCPercent {
		t.Errorf("during a run the percent is %d, want %d", got, runGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(50); got != 100 {
		t.Errorf("after a run the percent is %d, want 100", got)
	}
	restore = gcPercent() // the program's 50 stays
	if got := debug.SetGCPercent(100); got != 50 {
		t.Errorf("a program's percent became %d, want 50", got)
	}
	restore()
}

// TestSlabsReuse: place copies a batch at its exact size, runs are
// 8-aligned, and a released set's chunks are handed out again.
func TestSlabsReuse(t *testing.T) {
	var s slabs
	var meta, data slabSet
	mc, dc := slabCursor{set: &meta}, slabCursor{set: &data}
	var sc batch
	for i := range 100 {
		sc.add(uint64(i+1), uint64(i)<<16, []byte{byte(i), byte(i), 1})
	}
	var b batch
	b.place(&s, &sc, &mc, &dc, slabMinBits, true)
	if cap(b.fps) != 100 || cap(b.keys) != 100 || cap(b.ends) != 100 || cap(b.data) != 300 {
		t.Fatalf("capacities %d %d %d %d, want 100, 100, 100 and 300", cap(b.fps), cap(b.keys), cap(b.ends), cap(b.data))
	}
	for i := range 100 {
		if b.fps[i] != uint64(i+1) || b.keys[i] != uint64(i)<<16 || string(b.state(b.data, i)) != string([]byte{byte(i), byte(i), 1}) {
			t.Fatalf("state %d differs", i)
		}
	}
	if r := s.alloc(&dc, 3, slabMinBits); uintptr(unsafe.Pointer(&r[0]))%8 != 0 {
		t.Fatal("a run is not 8-aligned")
	}
	first := &meta.chunks[0][0]
	s.release(&meta)
	if len(meta.chunks) != 0 || s.bytes() != 1<<slabMinBits {
		t.Fatalf("released: %d chunks left, %d bytes free", len(meta.chunks), s.bytes())
	}
	mc = slabCursor{set: &meta}
	if r := s.alloc(&mc, 8, slabMinBits); &r[0] != first {
		t.Fatal("a released chunk was not reused")
	}
}

// The level map's arena counts what it may hold resident: a wider table
// adds its new pages, a table a quarter of what was touched returns the
// rest, a table beyond the reservation moves to a new one, and release
// gives everything back. Every table it hands out is usable, and reset
// clears what an earlier level left.
func TestSlotArena(t *testing.T) {
	base := offHeap.Load()
	var a slotArena
	held := func() int64 { return offHeap.Load() - base }
	const mib = 1 << 20
	s := a.slots(mib/slotSize, 4*mib)
	if a.mem == nil {
		t.Skip("no reservation here: the table is a heap slice")
	}
	if len(a.mem) != 4*mib || held() != mib {
		t.Fatalf("reserved %d, holds %d; want 4 MiB, 1 MiB", len(a.mem), held())
	}
	for i := range s {
		s[i].fp.Store(uint64(i) + 1)
	}
	s = a.slots(2*mib/slotSize, 0)
	if held() != 2*mib || s[mib/slotSize-1].fp.Load() != mib/uint64(slotSize) {
		t.Fatalf("holds %d after growing to 2 MiB, or lost what it held", held())
	}
	a.slots(mib/slotSize, 0) // half: kept
	if held() != 2*mib {
		t.Fatalf("holds %d after a table half as large; want 2 MiB kept", held())
	}
	s = a.slots(100, 0) // under a quarter: the rest returned
	if held() != pageSize || s[0].fp.Load() != 1 {
		t.Fatalf("holds %d after a 1,600-byte table; want one page, its contents kept", held())
	}
	if s = a.slots(2*mib/slotSize, 0); s[mib/slotSize].fp.Load() != 0 {
		t.Fatal("a returned page does not read as zero")
	}
	s = a.slots(8*mib/slotSize, 0) // beyond the reservation
	s[len(s)-1].fp.Store(1)
	if len(a.mem) != 32*mib || held() != 8*mib {
		t.Fatalf("reserved %d, holds %d; want 32 MiB, 8 MiB", len(a.mem), held())
	}
	var lm levelMap
	lm.reset(10, 1, &a, 0)
	if lm.slots[0].fp.Load() != 0 {
		t.Fatal("reset does not clear the table")
	}
	a.trim()
	if held() != 0 || len(a.mem) == 0 {
		t.Fatalf("holds %d after trim, reservation %d", held(), len(a.mem))
	}
	a.slots(mib/slotSize, 0)
	a.release()
	if held() != 0 || a.mem != nil {
		t.Fatalf("holds %d after release", held())
	}
	// Without a reservation the table is a heap slice, reused while it is
	// large enough and not four times too large.
	h := slotArena{noMaps: true}
	first := unsafe.SliceData(h.slots(1000, 0))
	if unsafe.SliceData(h.slots(900, 0)) != first || unsafe.SliceData(h.slots(200, 0)) == first || held() != 0 {
		t.Fatal("a heap table is not reused as it was, or is counted outside the heap")
	}
}
