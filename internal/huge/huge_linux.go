package huge

import (
	"syscall"
	"unsafe"
)

// Advise asks the kernel to back the memory at p, n bytes long, with huge
// pages where whole ones fit. It is a hint: errors are ignored.
func Advise(p unsafe.Pointer, n uintptr) {
	const page = 2 << 20
	beg := (uintptr(p) + page - 1) &^ (page - 1)
	end := (uintptr(p) + n) &^ (page - 1)
	if beg < end {
		syscall.Syscall(syscall.SYS_MADVISE, beg, end-beg, syscall.MADV_HUGEPAGE)
	}
}
