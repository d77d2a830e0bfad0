// Package huge allocates large slices on huge pages where the system
// gives them only on request (transparent huge pages in "madvise" mode).
// The Go heap gets them only where the system gives them to every
// process; elsewhere each 4 KiB page costs a fault on first touch and a
// TLB entry on every touch, and a table touched at random misses the TLB
// on nearly every access once it outgrows a few megabytes.
package huge

import "unsafe"

// Min is the least allocation given huge pages.
const Min = 4 << 20

// Make is make([]E, n, c), with huge pages when large.
func Make[E any](n, c int) []E {
	s := make([]E, n, c)
	var e E
	if size := uintptr(c) * unsafe.Sizeof(e); size >= Min {
		Advise(unsafe.Pointer(unsafe.SliceData(s)), size)
	}
	return s
}
