package explore

import (
	"fmt"
	"runtime/metrics"
)

// Memory per state. A run samples the memory the process holds from the
// system — everything the Go runtime has mapped (heap, stacks, its own
// structures) less what it has returned, and the level map's table, which
// lives outside the runtime (arena.go) — on every progress tick and
// around each level's commit, where a level's tables and the next frontier
// are live at once, and keeps the largest sample (Stats.MemPeak). Divided
// by the distinct states it is the bytes per state a run needs at its
// peak, everything included: seen-set, level map, frontier, traces,
// buffers. Memory outside the runtime (the executable's code) is not
// counted. Runs in one process share it: a run does not start from zero
// after another.

var memSamples = []metrics.Sample{
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
}

// heldMemory is what the runtime holds from the system now.
func heldMemory() uint64 {
	s := [2]metrics.Sample{memSamples[0], memSamples[1]}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64() - s[1].Value.Uint64() + uint64(offHeap.Load())
}

// sampleMemory raises the run's memory peak to what is held now.
func (e *engine[S, A]) sampleMemory() {
	held := heldMemory()
	for {
		old := e.memPeak.Load()
		if held <= old || e.memPeak.CompareAndSwap(old, held) {
			return
		}
	}
}

// bytesPerState is peak over distinct (0 without states).
func bytesPerState(peak, distinct uint64) float64 {
	if distinct == 0 {
		return 0
	}
	return float64(peak) / float64(distinct)
}

// byteSize renders n bytes in MiB, or GiB from 10 GiB on.
func byteSize(n uint64) string {
	if n >= 10<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
