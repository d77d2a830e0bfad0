package explore

import "unsafe"

// hugeMin is the least allocation given huge pages (see adviseHuge).
const hugeMin = 4 << 20

// makeLarge is make([]E, n, c), with huge pages when large.
func makeLarge[E any](n, c int) []E {
	s := make([]E, n, c)
	var e E
	if size := uintptr(c) * unsafe.Sizeof(e); size >= hugeMin {
		adviseHuge(unsafe.Pointer(unsafe.SliceData(s)), size)
	}
	return s
}
