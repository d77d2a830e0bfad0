package explore

import (
	"syscall"
	"unsafe"
)

// adviseHuge asks the kernel to back the memory at p, n bytes long, with
// huge pages where whole ones fit. The Go heap gets them only where the
// system gives them to every process; elsewhere each 4 KiB page costs a
// fault on first touch, which on a virtual machine takes longer than
// anything the engine then does with the page.
func adviseHuge(p unsafe.Pointer, n uintptr) {
	const huge = 2 << 20
	beg := (uintptr(p) + huge - 1) &^ (huge - 1)
	end := (uintptr(p) + n) &^ (huge - 1)
	if beg < end {
		syscall.Syscall(syscall.SYS_MADVISE, beg, end-beg, syscall.MADV_HUGEPAGE) // a hint: errors are ignored
	}
}
