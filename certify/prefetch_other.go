//go:build !amd64

package certify

import "unsafe"

// prefetch is a hint where the processor has one (prefetch_amd64.s).
func prefetch(unsafe.Pointer) {}
