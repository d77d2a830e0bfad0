package certify

import "unsafe"

// prefetch asks the processor to bring p's cache line in without waiting
// for it: unlike a load, it neither faults nor holds up what follows.
//
//go:noescape
func prefetch(p unsafe.Pointer)
