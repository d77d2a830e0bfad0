package explore

import "syscall"

// mapAnon reserves n bytes of private anonymous memory, not committed
// (MAP_NORESERVE): pages are backed only once touched. nil on failure.
func mapAnon(n int64) []byte {
	if int64(int(n)) != n {
		return nil
	}
	b, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	return b
}

func unmap(b []byte) { syscall.Munmap(b) }

// dropPages returns b's pages to the system; they read as zero after.
func dropPages(b []byte) bool {
	return syscall.Madvise(b, syscall.MADV_DONTNEED) == nil
}
