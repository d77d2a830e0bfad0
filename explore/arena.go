package explore

import (
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cutcheck/cutcheck/internal/huge"
)

// slotArena holds the level map's table outside the Go heap, in address
// space reserved once for the run, of which each level uses what it needs.
// A wider level then faults in only the pages no level before it touched,
// and a table outgrown by its level is never garbage held beside the larger
// one that replaces it. Made afresh for every wider level, as the Go heap
// makes it, the table was faulted in again at each (on parallel-4, 2.2 GB
// of new pages for a widest table of 482 MiB, each 4 KiB page about 10 µs
// on a virtual machine) and the run's peak held the old table beside the
// new. Where address space cannot be reserved, the table is a heap slice
// as before.
type slotArena struct {
	mem    []byte      // the reservation; nil when none
	used   int         // bytes from mem's start that may be resident
	heap   []levelSlot // the table when there is no reservation
	noMaps bool        // a reservation failed: the heap from then on
}

const slotSize = int(unsafe.Sizeof(levelSlot{}))

// offHeap is what every arena may hold resident, counted by heldMemory and
// taken off the runtime's memory limit (memoryLimit).
var offHeap atomic.Int64

// slots returns a table of n slots, not cleared, reserving at least
// reserve bytes of address space, and four times the table, when it
// reserves (address space costs nothing until touched). A table at most a
// quarter of what the arena has touched returns the rest to the system, as
// a heap table four times too large was replaced.
func (a *slotArena) slots(n int, reserve int64) []levelSlot {
	size := n * slotSize
	if size > len(a.mem) {
		a.unreserve()
		if !a.noMaps {
			a.mem = mapAnon(max(4*int64(size), reserve))
			a.noMaps = a.mem == nil
		}
		if a.mem == nil {
			if c := cap(a.heap); c < n || c > 4*n {
				a.heap = nil
				a.heap = huge.Make[levelSlot](n, n)
			}
			return a.heap[:n]
		}
		a.heap = nil
		huge.Advise(unsafe.Pointer(unsafe.SliceData(a.mem)), uintptr(len(a.mem)))
	}
	switch {
	case size > a.used:
		a.account(size - a.used)
		a.used = size
	case size <= a.used/4:
		keep := (size + pageSize - 1) &^ (pageSize - 1)
		if keep < a.used && dropPages(a.mem[keep:a.used]) {
			a.account(keep - a.used)
			a.used = keep
		}
	}
	return unsafe.Slice((*levelSlot)(unsafe.Pointer(unsafe.SliceData(a.mem))), n)
}

// trim returns every page the arena holds to the system, keeping its
// reservation: the run is going to disk and wants its memory back.
func (a *slotArena) trim() {
	if a.used > 0 && dropPages(a.mem[:a.used]) {
		a.account(-a.used)
		a.used = 0
	}
	a.heap = nil
}

// release gives the arena's memory back; no table taken from it may be
// used after.
func (a *slotArena) release() {
	a.heap = nil
	a.unreserve()
}

func (a *slotArena) unreserve() {
	if a.mem == nil {
		return
	}
	a.account(-a.used)
	unmap(a.mem)
	a.mem, a.used = nil, 0
}

func (a *slotArena) account(delta int) {
	limitMu.Lock()
	defer limitMu.Unlock()
	if off := offHeap.Add(int64(delta)); limitBase > 0 {
		debug.SetMemoryLimit(max(limitBase-off, minMemoryLimit))
	}
}

// limitBase is the runtime memory limit a run set (memoryLimit), before
// what the arenas hold is taken off it; 0 when no run has set one.
var (
	limitMu   sync.Mutex
	limitBase int64
)

const pageSize = 4096
